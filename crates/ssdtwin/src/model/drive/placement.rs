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
        if cmd.kind == super::IoKind::Write {
            self.place_next(pid);
        }
        self.submit(cmd, t)
    }

    /// The next write submitted carries placement identifier `pid` (what
    /// [`Drive::submit_placed`] does before submitting a write; a host
    /// loop that submits through [`Drive::submit`] on one path for plain
    /// and placed writes alike sets it first). Only a write takes it: set
    /// it for writes only.
    #[inline]
    pub fn place_next(&mut self, pid: u32) {
        self.next_pid = pid;
    }

    /// Take back the placement identifier [`Drive::place_next`] set (0
    /// if none): a host that holds the command before it reaches the
    /// drive (an arbitrated submission queue) keeps it with the command.
    #[inline]
    pub fn take_placement(&mut self) -> u32 {
        std::mem::take(&mut self.next_pid)
    }

    /// Reclaim Unit Handle Update (I/O Management Send, management
    /// operation 01h) of the placement identifiers `pids` at time `t`: each
    /// handle leaves its reclaim unit ([`crate::model::ftl::Ftl::update_handles`]).
    /// Timed as a flush is: a controller core's command overhead, then the
    /// padding programs. Returns its completion time; a refused command
    /// sets [`Drive::last_error`] and costs the controller time only.
    pub fn update_handles(&mut self, pids: &[u32], t: u64) -> u64 {
        self.last_error = None;
        self.last_t = t;
        self.ftl.set_clock(self.clock_base_ns + t);
        let entered = self.host.admit(t);
        let ready = self.cores.process(entered);
        let done = match self.ftl.update_handles(pids) {
            Err(s) => {
                self.last_error = Some(IoError::Zone(s));
                ready
            }
            Ok(_) => {
                let (last, _) = self.schedule_ops(ready, ready);
                last.max(ready)
            }
        };
        self.host.occupy_until(done);
        self.power.busy(t, done);
        done
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
