//! A job's I/O priorities on the way to the drive: the ioprio value each
//! command carries, chosen as fio's engines/cmdprio.c
//! `fio_cmdprio_set_ioprio` chooses it (the job's own, or with the
//! percentage for its direction, or its block size's entries under
//! `cmdprio_bssplit`, a command's own, drawn with
//! `rand_between(prio_state, 0, 99)` from fio's Tausworthe generator
//! seeded for `FIO_RAND_PRIO_CMDS`). The options are read in
//! [`crate::run::workload::fio::prio`].

use crate::model::drive::{Command, IoKind};
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
