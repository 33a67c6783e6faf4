//! Flexible data placement on the drive (`[fdp]`): writes that carry a
//! placement identifier, the FDP statistics, and the NVMe statuses'
//! names. The placement itself is [`crate::model::ftl::fdp`].

use super::{Command, Drive, IoError};
use crate::model::ftl::fdp::FdpStatistics;

impl Drive {
    /// [`Drive::submit`] of a write carrying placement identifier `pid`
    /// (reclaim group × handles + handle; a read or trim ignores it, as
    /// does a drive without `[fdp]`). A write without one
    /// ([`Drive::submit`]) goes through placement 0, the default.
    pub fn submit_placed(&mut self, cmd: Command, pid: u32, t: u64) -> u64 {
        let mut cmd = cmd;
        self.submit_inner(&mut cmd, t, false, pid)
    }

    /// The FDP statistics log page (`None`: no `[fdp]`).
    pub fn fdp_statistics(&self) -> Option<FdpStatistics> {
        self.ftl.fdp_statistics()
    }
}

impl IoError {
    /// The NVMe status's name (e.g. "Zone Invalid Write").
    pub fn name(self) -> &'static str {
        match self {
            IoError::Media => "Unrecovered Read Error",
            IoError::ReadOnly => "Namespace is Write Protected",
            IoError::Zone(s) => s.name(),
        }
    }
}
