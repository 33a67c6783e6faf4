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
    seed: u64,
    /// fio's `randrepeat`: passes re-seed.
    repeat: bool,
    /// The ioprio of the last command issued: what fio's io_u still
    /// carries when a verify read reuses it.
    last: u16,
}

impl PrioState {
    /// The job's priority state (`None`: it sets no priority).
    pub(crate) fn of(spec: &IoSpec) -> Option<PrioState> {
        let p = spec.prio.clone()?;
        let (seed, repeat) = match &spec.fio {
            Some(f) => (seed_of(f.randseed, f.randrepeat, f.thread_number, PRIO_CMDS), f.randrepeat),
            None => (seed_of(spec.randseed, false, 1, PRIO_CMDS), false),
        };
        Some(PrioState { last: p.ioprio, spec: p, rng: Taus88::new(seed), seed, repeat })
    }

    /// fio's `clear_io_state` re-seeds `prio_state` with the others (with
    /// `randrepeat`, the default) before each pass after the first and
    /// before the verify phase: a pass's priorities repeat the first's.
    pub(crate) fn reseed(&mut self) {
        if self.repeat {
            self.rng = Taus88::new(self.seed);
        }
    }

    /// The ioprio of a verify read of `cmd`'s blocks. fio's verify reads
    /// skip `get_io_u`'s reset to the job's priority (backend.c
    /// `do_verify`, io_u.c `check_get_verify`), so each keeps the one its
    /// io_u carried, and the engine's draw (`fio_cmdprio_set_ioprio`)
    /// changes it only on a hit, only for a job that reads. The twin
    /// takes the last command's priority for the io_u's (fio's with
    /// `iodepth=1`; deeper, fio reuses whichever io_u completed last).
    pub(crate) fn verify_read(&mut self, cmd: Command) -> u16 {
        if let Some(v) = self.draw(cmd) {
            self.last = v;
        }
        self.last
    }

    /// The job's own ioprio value (`prioclass`/`prio`), which its FLUSHes
    /// carry.
    pub(crate) fn job(&self) -> u16 {
        self.spec.ioprio
    }

    /// The ioprio value of `cmd`, the job's next command.
    pub(crate) fn next(&mut self, cmd: Command) -> u16 {
        let v = self.draw(cmd).unwrap_or(self.spec.ioprio);
        self.last = v;
        v
    }

    /// The engine's draw for `cmd` (fio's `fio_cmdprio_set_ioprio`): its
    /// `cmdprio` value on a hit, `None` on a miss or with no `cmdprio`
    /// for its direction (no draw then).
    fn draw(&mut self, cmd: Command) -> Option<u16> {
        let d = match cmd.kind {
            IoKind::Read => 0,
            IoKind::Write => 1,
            IoKind::Trim => return None,
        };
        match &self.spec.cmd[d] {
            CmdPrio::None => None,
            CmdPrio::Share { percentage, ioprio } => (self.rng.between(0, 99) < *percentage).then_some(*ioprio),
            CmdPrio::BySize(entries) => {
                let of_size = || entries.iter().filter(|e| e.bs == cmd.len);
                let total: u32 = of_size().map(|e| e.percentage).sum();
                if total == 0 {
                    return None;
                }
                let r = self.rng.between(0, 99);
                let mut acc = 0;
                for e in of_size() {
                    acc += e.percentage;
                    if r < acc {
                        return Some(e.ioprio);
                    }
                }
                None
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
