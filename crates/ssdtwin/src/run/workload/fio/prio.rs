//! fio's I/O priorities (fio 3.33: options.c `prio`, `prioclass`;
//! engines/cmdprio.c and the libaio/io_uring engines' `cmdprio*`
//! options): a job's commands carry the Linux ioprio value of
//! `prioclass`/`prio` (backend.c: set when either is given, the class
//! defaulting to best effort, os/os-linux.h `ioprio_value`), and with
//! `cmdprio_percentage` (or `cmdprio_bssplit`) that share of its reads
//! and writes carries `cmdprio_class`/`cmdprio` instead (the class
//! defaulting to real time), drawn per command from fio's own generator
//! (`rand_between(prio_state, 0, 99) < percentage`). What the drive
//! makes of a priority is the host interface's arbitration
//! ([`crate::model::arbitration`]). Left out: `priohint` and
//! `cmdprio_hint` (hints for the kernel's I/O scheduler; fio 3.33 has
//! neither).

use super::options::Entry;
use super::values::{block_size, invalid};
use crate::error::JobError;
use crate::model::arbitration::ioprio;
use crate::run::workload::{BsPrio, CmdPrio, JobPrio, RwPattern};

/// The options as read so far (later ones win).
#[derive(Debug, Default)]
pub(super) struct PrioOptions {
    prio: Option<u16>,
    prioclass: Option<u16>,
    percentage: [u32; 2],
    class: [u16; 2],
    level: [u16; 2],
    bssplit: Option<(String, String)>,
    log_prio: bool,
    /// Where `cmdprio_percentage` was written (it and `cmdprio_bssplit`
    /// exclude each other).
    percentage_at: Option<String>,
}

/// fio's `FIO_OPT_INT` with a second offset: `A` for reads and writes,
/// `A,B` for reads and writes apart; each within `lo..=hi`.
fn pair(at: &str, key: &str, v: &str, lo: u32, hi: u32) -> Result<[u32; 2], JobError> {
    let one = |s: &str| -> Result<u32, JobError> {
        let n = s.trim().parse::<u32>().map_err(|_| invalid(at, key, format!("`{s}` is not a whole number")))?;
        if n < lo || n > hi {
            return Err(invalid(at, key, format!("{n} is not {lo} to {hi}")));
        }
        Ok(n)
    };
    match v.split_once(',') {
        Some((r, w)) => Ok([one(r)?, if w.trim().is_empty() { one(r)? } else { one(w)? }]),
        None => {
            let n = one(v)?;
            Ok([n, n])
        }
    }
}

impl PrioOptions {
    /// Read one option (one the table gives to this module:
    /// [`super::table::Reader::Prio`]).
    pub(super) fn apply(&mut self, (key, v, at): &Entry) -> Result<(), JobError> {
        let key = key.as_str();
        match key {
            "prio" => self.prio = Some(pair(at, key, v, 0, 7)?[0] as u16),
            "prioclass" => self.prioclass = Some(pair(at, key, v, 0, 3)?[0] as u16),
            "cmdprio_percentage" => {
                self.percentage = pair(at, key, v, 0, 100)?;
                self.percentage_at = Some(at.clone());
            }
            "cmdprio_class" => self.class = pair(at, key, v, 1, 3)?.map(|c| c as u16),
            "cmdprio" => self.level = pair(at, key, v, 0, 7)?.map(|c| c as u16),
            "cmdprio_bssplit" => self.bssplit = Some((v.clone(), at.clone())),
            "log_prio" => {
                self.log_prio = match v.as_str() {
                    "" | "1" | "true" => true,
                    "0" | "false" => false,
                    _ => return Err(invalid(at, key, format!("`{v}` is not 0 or 1"))),
                }
            }
            _ => unreachable!("the table gives {key} to another reader"),
        }
        Ok(())
    }

    /// The job's priorities (`None`: none given, every command at ioprio
    /// 0 as a job without them).
    pub(super) fn finish(self, kb_base: u64, rw: RwPattern) -> Result<Option<JobPrio>, JobError> {
        let job = if self.prio.is_some() || self.prioclass.is_some() {
            let class = self.prioclass.filter(|&c| c != 0).unwrap_or(ioprio::CLASS_BE);
            ioprio::value(class, self.prio.unwrap_or(0), 0)
        } else {
            0
        };
        // cmdprio.c: the class defaults to real time.
        let class = self.class.map(|c| if c == 0 { ioprio::CLASS_RT } else { c });
        let cmd = |d: usize| ioprio::value(class[d], self.level[d], 0);
        let mut per_dir = [CmdPrio::None, CmdPrio::None];
        if let Some((text, at)) = &self.bssplit {
            if let Some(p) = &self.percentage_at {
                if self.percentage != [0, 0] {
                    return Err(invalid(
                        p,
                        "cmdprio_percentage",
                        "cmdprio_percentage and cmdprio_bssplit options are mutually exclusive",
                    ));
                }
            }
            let mut dirs = text.split(',');
            let first = dirs.next().unwrap_or("");
            let second = dirs.next();
            for (d, part) in [first, second.unwrap_or(first)].into_iter().enumerate() {
                let entries = bssplit(at, part, kb_base, cmd(d))?;
                if !entries.is_empty() {
                    per_dir[d] = CmdPrio::BySize(entries);
                }
            }
        } else {
            for (d, slot) in per_dir.iter_mut().enumerate() {
                if self.percentage[d] > 0 {
                    *slot = CmdPrio::Share { percentage: self.percentage[d], ioprio: cmd(d) };
                }
            }
        }
        // cmdprio.c `fio_cmdprio_gen_perc` and its bssplit twin: a
        // direction the job does not do (`td_read`, `td_write`) gets no
        // cmdprio, so its verify reads draw nothing.
        let reads = matches!(rw, RwPattern::Read | RwPattern::RandRead | RwPattern::ReadWrite | RwPattern::RandRw);
        let writes = !matches!(rw, RwPattern::Read | RwPattern::RandRead | RwPattern::Trim | RwPattern::RandTrim);
        for (d, on) in [reads, writes].into_iter().enumerate() {
            if !on {
                per_dir[d] = CmdPrio::None;
            }
        }
        let used = job != 0 || per_dir.iter().any(|c| *c != CmdPrio::None) || self.log_prio;
        Ok(used.then_some(JobPrio { ioprio: job, cmd: per_dir, log_prio: self.log_prio }))
    }
}

/// One direction's `cmdprio_bssplit` (`bs/perc[/class/level[/hint]]:...`;
/// options.c `split_parse_prio_ddir`): entries of zero percent dropped,
/// sorted by block size, at most 100% per block size.
fn bssplit(at: &str, text: &str, kb_base: u64, implicit: u16) -> Result<Vec<BsPrio>, JobError> {
    let key = "cmdprio_bssplit";
    let mut out = Vec::new();
    for e in text.split(':').take_while(|e| !e.is_empty()) {
        let f: Vec<&str> = e.split('/').collect();
        if ![2, 4, 5].contains(&f.len()) {
            return Err(invalid(at, key, format!("`{e}` is not bs/percentage[/class/level[/hint]]")));
        }
        let bs = block_size(f[0], kb_base).map_err(|r| invalid(at, key, r))?;
        let perc = f[1]
            .parse::<u32>()
            .ok()
            .filter(|p| *p <= 100)
            .ok_or_else(|| invalid(at, key, format!("`{}` is not a percentage", f[1])))?;
        let prio = if f.len() >= 4 {
            let class = f[2].parse::<u16>().ok().filter(|c| (1..=3).contains(c));
            let level = f[3].parse::<u16>().ok().filter(|l| *l <= 7);
            // fio 3.36's fifth field, the I/O priority hint (bits 3–12).
            let hint = f.get(4).map_or(Some(0), |h| h.parse::<u16>().ok().filter(|h| *h < 1024));
            match (class, level, hint) {
                (Some(c), Some(l), Some(h)) => ioprio::value(c, l, h),
                _ => {
                    return Err(invalid(
                        at,
                        key,
                        format!("`{e}`: the class is 1 to 3, the level 0 to 7, the hint 0 to 1023"),
                    ))
                }
            }
        } else {
            implicit
        };
        if perc > 0 {
            out.push(BsPrio { bs, percentage: perc, ioprio: prio });
        }
    }
    out.sort_by_key(|b| b.bs);
    let mut i = 0;
    while i < out.len() {
        let total: u32 = out[i..].iter().take_while(|b| b.bs == out[i].bs).map(|b| b.percentage).sum();
        if total > 100 {
            return Err(invalid(at, key, format!("total percentage for bs {} exceeds 100", out[i].bs)));
        }
        i += out[i..].iter().take_while(|b| b.bs == out[i].bs).count();
    }
    Ok(out)
}
