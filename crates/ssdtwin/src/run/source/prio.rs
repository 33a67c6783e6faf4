//! A job's I/O priorities on the way to the drive: the ioprio value each
//! command carries, chosen as fio's engines/cmdprio.c
//! `fio_cmdprio_set_ioprio` chooses it (the job's own, or with the
//! percentage for its direction, or its block size's entries under
//! `cmdprio_bssplit`, a command's own, drawn with
//! `rand_between(prio_state, 0, 99)` from fio's Tausworthe generator
//! seeded for `FIO_RAND_PRIO_CMDS`). The options are read in
//! [`crate::run::workload::fio::prio`].

use crate::model::drive::{Command, IoKind};
use crate::run::stats::DirStats;
use crate::run::workload::generator::fio_rand::{seed_of, Taus88};
use crate::run::workload::{CmdPrio, IoSpec, JobPrio};

/// fio's seed purpose of `prio_state` (fio.h, `FIO_RAND_PRIO_CMDS`).
const PRIO_CMDS: u64 = 19;

/// The priorities of one job's commands.
#[derive(Debug, Clone)]
pub(crate) struct PrioState {
    spec: JobPrio,
    rng: Taus88,
}

impl PrioState {
    /// The job's priority state (`None`: it sets no priority).
    pub(crate) fn of(spec: &IoSpec) -> Option<PrioState> {
        let p = spec.prio.clone()?;
        let seed = match &spec.fio {
            Some(f) => seed_of(f.randseed, f.randrepeat, f.thread_number, PRIO_CMDS),
            None => seed_of(spec.randseed, false, 1, PRIO_CMDS),
        };
        Some(PrioState { spec: p, rng: Taus88::new(seed) })
    }

    /// The ioprio value of `cmd`, the job's next command.
    pub(crate) fn next(&mut self, cmd: Command) -> u16 {
        let job = self.spec.ioprio;
        let d = match cmd.kind {
            IoKind::Read => 0,
            IoKind::Write => 1,
            IoKind::Trim => return job,
        };
        match &self.spec.cmd[d] {
            CmdPrio::None => job,
            CmdPrio::Share { percentage, ioprio } => {
                if self.rng.between(0, 99) < *percentage {
                    *ioprio
                } else {
                    job
                }
            }
            CmdPrio::BySize(entries) => {
                let of_size = || entries.iter().filter(|e| e.bs == cmd.len);
                let total: u32 = of_size().map(|e| e.percentage).sum();
                if total == 0 {
                    return job;
                }
                let r = self.rng.between(0, 99);
                let mut acc = 0;
                for e in of_size() {
                    acc += e.percentage;
                    if r < acc {
                        return e.ioprio;
                    }
                }
                job
            }
        }
    }
}

/// Completion latency per priority, as fio keeps it when a job uses
/// `cmdprio*` (stat.c `clat_prio`): for reads and writes with per-command
/// priorities, one entry per ioprio value in fio's order (the job's own
/// first, then each `cmdprio` value as cmdprio.c assigns them).
#[derive(Debug, Clone, Default)]
pub struct PrioLat {
    /// Reads' and writes' entries: ioprio value and its statistics.
    pub dirs: [Vec<(u16, DirStats)>; 2],
}

impl PrioLat {
    /// The entries of a job (`None`: no direction has per-command
    /// priorities).
    pub(crate) fn of(spec: &IoSpec) -> Option<PrioLat> {
        let p = spec.prio.as_ref()?;
        let mut out = PrioLat::default();
        for (d, cmd) in p.cmd.iter().enumerate() {
            let values: Vec<u16> = match cmd {
                CmdPrio::None => continue,
                CmdPrio::Share { ioprio, .. } => vec![*ioprio],
                CmdPrio::BySize(entries) => entries.iter().map(|e| e.ioprio).collect(),
            };
            let mut list = vec![(p.ioprio, DirStats::default())];
            for v in values {
                if list.iter().all(|(x, _)| *x != v) {
                    list.push((v, DirStats::default()));
                }
            }
            out.dirs[d] = list;
        }
        (!out.dirs.iter().all(Vec::is_empty)).then_some(out)
    }

    /// A completion of direction `k` at priority `ioprio`.
    #[inline]
    pub(crate) fn record(&mut self, k: usize, ioprio: u16, bytes: u64, lat_ns: u64) {
        if let Some((_, d)) = self.dirs.get_mut(k).and_then(|l| l.iter_mut().find(|(v, _)| *v == ioprio)) {
            d.record(bytes, lat_ns);
        }
    }

    /// Add another job's entries (a reporting group), matching by value.
    pub fn merge(&mut self, other: &PrioLat) {
        for (mine, theirs) in self.dirs.iter_mut().zip(&other.dirs) {
            for (v, s) in theirs {
                match mine.iter_mut().find(|(x, _)| x == v) {
                    Some((_, d)) => d.merge(s),
                    None => mine.push((*v, s.clone())),
                }
            }
        }
    }
}
