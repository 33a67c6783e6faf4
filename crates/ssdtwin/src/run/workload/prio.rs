//! The I/O priorities a job's commands carry, in fio's terms: the job's
//! own (`prioclass`/`prio`) and per command (`cmdprio_percentage`,
//! `cmdprio_bssplit`), as the host interface's submission-queue
//! arbitration reads them ([`crate::model::arbitration`]). Left out: fio's
//! `ioprio` classes' meaning to the host's block layer (the twin has no
//! host I/O scheduler; only the drive's arbitration sees them).

use serde::{Deserialize, Serialize};

/// A job's I/O priorities (fio's `prioclass`/`prio` and `cmdprio*`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobPrio {
    /// The job's ioprio value (class << 13 | level; 0: none set).
    pub ioprio: u16,
    /// Reads' and writes' per-command priorities (trims have none).
    pub cmd: [CmdPrio; 2],
    /// fio's `log_prio`: the latency logs carry each command's priority.
    pub log_prio: bool,
}

/// Which commands of a direction carry a priority of their own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum CmdPrio {
    /// None: every command the job's.
    None,
    /// `cmdprio_percentage` of the commands carry `ioprio`.
    Share {
        /// Percent of the commands.
        percentage: u32,
        /// Their ioprio value.
        ioprio: u16,
    },
    /// `cmdprio_bssplit`: by block size, sorted by it.
    BySize(Vec<BsPrio>),
}

/// One entry of `cmdprio_bssplit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BsPrio {
    /// Block size, bytes.
    pub bs: u32,
    /// Percent of the commands of that size.
    pub percentage: u32,
    /// Their ioprio value.
    pub ioprio: u16,
}
