//! Python steps the device: a host-side program (an I/O scheduler, a cache,
//! a prefetcher) submits commands to the device core
//! ([`ssdtwin::run::device::Device`]) one at a time or in batches and
//! moves its virtual clock, as the library's own drivers do. Plain Rust:
//! `lib.rs` wraps it in the `_ssdtwin.Stepper` class (releasing the GIL
//! while it simulates) and `python/ssdtwin/_device.py` in `ssdtwin.Device`.
//!
//! What this adds to the device core is host bookkeeping only, no
//! simulation: command ids (0, 1, 2, … in submission order), the checks a
//! host's driver would make before a command reaches the drive (op known,
//! offset and length multiples of 4 KiB and inside the drive, time not going
//! back), flushes delivered as completions (the core returns a flush's
//! completion time and leaves its delivery to the caller: a timer of the
//! core carries it; Zone Management Send is delivered the same way, with
//! the status the drive gave it), and completions gathered into columns
//! (little-endian `i64`/`u8` buffers that numpy reads without a copy).
//! Writes may carry a placement identifier (`[fdp]` drives) and Zone
//! Append's completion carries the offset the drive wrote it at (`[zns]`
//! drives).
//!
//! The clock only moves in the library's one loop,
//! [`ssdtwin::run::driver::drive_until`], with the host's side as its
//! workload (`Collect`: each completion, a flush's timer included, becomes
//! a record held for the caller):
//! - [`Stepper::run_until`]`(t)`: every event up to `t`, background work
//!   included, the clock ends at `t`;
//! - [`Stepper::run_until_idle`]: events until nothing is outstanding, the
//!   clock ends at the last completion (the host may submit at once, as a
//!   closed-loop driver does; idle work has not started);
//! - a submission at a later time (`at`) first runs the events up to it;
//!   completions on the way are held and returned first by the next call.

use std::collections::VecDeque;

use std::convert::Infallible;

use ssdtwin::model::drive::{Command, IoError, IoKind};
use ssdtwin::model::ftl::zones::ZoneAction;
use ssdtwin::run::device::{Completion, Device};
use ssdtwin::run::driver::{drive_until, Timer, TimerKind, Workload};

/// Op codes, in the order of `ssdtwin.Device.OPS`: I/O, flush, Zone
/// Append, Zone Management Send's actions, then the Reclaim Unit Handle
/// Update.
pub const OPS: [&str; 11] = [
    "read",
    "write",
    "trim",
    "flush",
    "append",
    "zone_open",
    "zone_close",
    "zone_finish",
    "zone_reset",
    "zone_offline",
    "ruh_update",
];
/// Op code of a flush.
pub const FLUSH: u8 = 3;
/// Op code of a Zone Append.
pub const APPEND: u8 = 4;
/// Op code of the first Zone Management Send action.
pub const ZONE_OPEN: u8 = 5;
/// Zone Management Send's actions, in op-code order from [`ZONE_OPEN`].
const ZONE_ACTIONS: [ZoneAction; 5] =
    [ZoneAction::Open, ZoneAction::Close, ZoneAction::Finish, ZoneAction::Reset, ZoneAction::Offline];
/// Op code of the Reclaim Unit Handle Update (I/O Management Send).
pub const RUH_UPDATE: u8 = 10;
/// The offset of a Zone Management Send applied to every zone (Select
/// All) in its completion (−1 as `i64`).
pub const ALL_ZONES: u64 = u64::MAX;
/// Status names, in the order of their codes (`ssdtwin.Device.STATUSES`).
pub const STATUSES: [&str; 14] = [
    "ok",
    "media_error",
    "read_only",
    // Zoned namespaces: ZoneStatus::ALL's order (3 + its index).
    "invalid_opcode",
    "invalid_field",
    "lba_out_of_range",
    "zone_boundary_error",
    "zone_is_full",
    "zone_is_read_only",
    "zone_is_offline",
    "zone_invalid_write",
    "too_many_active_zones",
    "too_many_open_zones",
    "invalid_zone_state_transition",
];
/// Commands' granularity: offsets and lengths are multiples of it.
pub const BLOCK: u64 = 4096;

/// One delivered completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Command id.
    pub id: u64,
    /// Op code (index in [`OPS`]).
    pub op: u8,
    /// Byte offset (0 for a flush).
    pub offset: u64,
    /// Bytes (0 for a flush).
    pub length: u64,
    /// Submitted at, ns.
    pub submit_ns: u64,
    /// Completed at, ns.
    pub complete_ns: u64,
    /// Status code (index in [`STATUSES`]).
    pub status: u8,
}

/// Completions as columns: `id`, `offset`, `length`, `submit_ns`,
/// `complete_ns` as little-endian `i64`, `op` and `status` as `u8`.
#[derive(Debug, Default, Clone)]
pub struct Columns {
    /// Number of completions.
    pub len: usize,
    /// Command ids.
    pub id: Vec<u8>,
    /// Op codes.
    pub op: Vec<u8>,
    /// Offsets.
    pub offset: Vec<u8>,
    /// Lengths.
    pub length: Vec<u8>,
    /// Submission times.
    pub submit_ns: Vec<u8>,
    /// Completion times.
    pub complete_ns: Vec<u8>,
    /// Status codes.
    pub status: Vec<u8>,
}

impl Columns {
    fn with_capacity(n: usize) -> Columns {
        let b = || Vec::with_capacity(8 * n);
        Columns {
            len: 0,
            id: b(),
            op: Vec::with_capacity(n),
            offset: b(),
            length: b(),
            submit_ns: b(),
            complete_ns: b(),
            status: Vec::with_capacity(n),
        }
    }

    #[inline]
    fn push(&mut self, r: Record) {
        self.len += 1;
        self.id.extend_from_slice(&(r.id as i64).to_le_bytes());
        self.op.push(r.op);
        self.offset.extend_from_slice(&(r.offset as i64).to_le_bytes());
        self.length.extend_from_slice(&(r.length as i64).to_le_bytes());
        self.submit_ns.extend_from_slice(&(r.submit_ns as i64).to_le_bytes());
        self.complete_ns.extend_from_slice(&(r.complete_ns as i64).to_le_bytes());
        self.status.push(r.status);
    }
}

/// A command waiting for its completion: its id, and for a flush or a
/// zone management command (which the core does not track) when it was
/// submitted, what it was and the status it will complete with.
#[derive(Debug, Clone, Copy)]
struct Pending {
    id: u64,
    submit_ns: u64,
    op: u8,
    offset: u64,
    status: u8,
}

/// The device core with a host's bookkeeping (see the module docs).
#[derive(Debug, Clone)]
pub struct Stepper {
    device: Device,
    host: Host,
    next_id: u64,
    user_bytes: u64,
}

/// What the host keeps about its commands between steps.
#[derive(Debug, Clone, Default)]
struct Host {
    /// Pending commands by the core's tag (I/O) or timer's source (flush).
    pending: Vec<Pending>,
    free: Vec<u32>,
    /// Flushes and zone management commands submitted and not delivered.
    flushes: u64,
    /// Completions delivered and not yet returned to the caller.
    held: VecDeque<Record>,
}

/// The host as the loop's workload: every completion (and a flush's
/// timer) becomes a held record; done after `limit` of them.
struct Collect<'h> {
    host: &'h mut Host,
    limit: usize,
    got: usize,
}

impl Workload for Collect<'_> {
    type Error = Infallible;

    #[inline]
    fn on_completion(&mut self, _dev: &mut Device, c: &Completion) -> Result<(), Infallible> {
        let h = &mut *self.host;
        let p = h.pending[c.tag as usize];
        h.free.push(c.tag);
        h.held.push_back(Record {
            id: p.id,
            op: p.op,
            offset: c.cmd.offset,
            length: u64::from(c.cmd.len),
            submit_ns: c.submitted_ns,
            complete_ns: c.done_ns,
            status: status_of(c.error),
        });
        self.got += 1;
        Ok(())
    }

    #[inline]
    fn on_timer(&mut self, dev: &mut Device, t: Timer) -> Result<(), Infallible> {
        let h = &mut *self.host;
        let p = h.pending[t.source as usize];
        h.free.push(t.source);
        h.flushes -= 1;
        h.held.push_back(Record {
            id: p.id,
            op: p.op,
            offset: p.offset,
            length: 0,
            submit_ns: p.submit_ns,
            complete_ns: dev.now(),
            status: p.status,
        });
        self.got += 1;
        Ok(())
    }

    #[inline]
    fn done(&self) -> bool {
        self.got >= self.limit
    }
}

fn kind_of(op: u8) -> IoKind {
    match op {
        0 => IoKind::Read,
        1 | APPEND => IoKind::Write,
        _ => IoKind::Trim,
    }
}

fn status_of(e: Option<IoError>) -> u8 {
    match e {
        None => 0,
        Some(IoError::Media) => 1,
        Some(IoError::ReadOnly) => 2,
        Some(IoError::Zone(s)) => 3 + s.index() as u8,
    }
}

impl Stepper {
    /// Step `device` from its current time.
    pub fn new(device: Device) -> Stepper {
        let user_bytes = device.drive().user_bytes();
        Stepper { device, host: Host::default(), next_id: 0, user_bytes }
    }

    /// The device core.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Virtual time, ns.
    pub fn now(&self) -> u64 {
        self.device.now()
    }

    /// Bytes the host may address.
    pub fn user_bytes(&self) -> u64 {
        self.user_bytes
    }

    /// Commands submitted whose completion has not been returned yet.
    pub fn outstanding(&self) -> u64 {
        u64::from(self.device.outstanding()) + self.host.flushes + self.host.held.len() as u64
    }

    /// Why a command may not be submitted (`Ok`: it may). Zone
    /// management goes through [`Stepper::zone_management`].
    pub fn check(&self, op: u8, offset: u64, length: u64) -> Result<(), String> {
        if op >= ZONE_OPEN {
            return Err(match OPS.get(op as usize) {
                Some(name) if op == RUH_UPDATE => format!("{name} is a placement command: submit it with ruh_update"),
                Some(name) => format!("{name} is a zone management command: submit it with zone_management"),
                None => format!("op code {op} is not one of 0..={} ({})", APPEND, OPS[..=APPEND as usize].join(", ")),
            });
        }
        if op == FLUSH {
            return Ok(());
        }
        let name = OPS[op as usize];
        if offset % BLOCK != 0 {
            return Err(format!("{name}: offset {offset} is not a multiple of 4096"));
        }
        if length == 0 || length % BLOCK != 0 {
            return Err(format!("{name}: length {length} is not a positive multiple of 4096"));
        }
        if length > u64::from(u32::MAX) {
            return Err(format!("{name}: length {length} is over 4 GiB"));
        }
        if offset.checked_add(length).is_none_or(|end| end > self.user_bytes) {
            return Err(format!(
                "{name}: [{offset}, {offset} + {length}) is beyond the drive's {} bytes",
                self.user_bytes
            ));
        }
        Ok(())
    }

    fn check_time(&self, at: u64) -> Result<(), String> {
        if at < self.now() {
            return Err(format!("time would go backwards: {at} ns is before now ({} ns)", self.now()));
        }
        Ok(())
    }

    /// Submit one command at `at` (default: now), after the checks of
    /// [`Stepper::check`]. Returns its id.
    /// A write may carry a `placement` identifier (reclaim group ×
    /// handles + handle, `[fdp]` drives: one the drive does not have goes
    /// to the default handle and counts an Invalid Placement Identifier
    /// event); a Zone Append names the zone by its first byte and completes
    /// with the offset the drive wrote it at.
    pub fn submit(
        &mut self,
        op: u8,
        offset: u64,
        length: u64,
        at: Option<u64>,
        placement: Option<u32>,
    ) -> Result<u64, String> {
        self.check(op, offset, length)?;
        if placement.is_some() && op != 1 {
            return Err(format!("{}: only writes carry a placement identifier", OPS[op as usize]));
        }
        if let Some(t) = at {
            self.check_time(t)?;
            self.hold_until(t);
        }
        Ok(self.submit_checked(op, offset, length, placement))
    }

    /// Zone Management Send at `at` (default: now): `op` one of the
    /// `zone_*` op codes, on the zone starting at byte `zslba` (`None`:
    /// Select All). Delivered as a completion (length 0, offset `zslba` or
    /// [`ALL_ZONES`]) when the drive completes it — a reset when its
    /// blocks are erased — with the drive's status (a refused command
    /// completes after the controller's time with its NVMe status).
    pub fn zone_management(&mut self, op: u8, zslba: Option<u64>, at: Option<u64>) -> Result<u64, String> {
        let Some(&action) = op.checked_sub(ZONE_OPEN).and_then(|i| ZONE_ACTIONS.get(i as usize)) else {
            return Err(format!(
                "op code {op} is not a zone management command ({})",
                OPS[ZONE_OPEN as usize..RUH_UPDATE as usize].join(", ")
            ));
        };
        self.management(at, op, zslba.unwrap_or(ALL_ZONES), |d| d.zone_send(action, zslba))
    }

    /// A management command `op` at `at` (or now), issued by `issue`
    /// (which returns its completion time): delivered as a completion
    /// with `offset` and the drive's status, and counted with the
    /// flushes (commands that move no data).
    fn management(
        &mut self,
        at: Option<u64>,
        op: u8,
        offset: u64,
        issue: impl FnOnce(&mut Device) -> u64,
    ) -> Result<u64, String> {
        if let Some(t) = at {
            self.check_time(t)?;
            self.hold_until(t);
        }
        let id = self.next_id;
        self.next_id += 1;
        let submit_ns = self.now();
        let done = issue(&mut self.device);
        let status = status_of(self.device.drive().last_error());
        let slot = self.pending_slot(Pending { id, submit_ns, op, offset, status });
        Timer { source: slot, kind: TimerKind::Submit }.set(&mut self.device, done);
        self.host.flushes += 1;
        Ok(id)
    }

    /// Reclaim Unit Handle Update (I/O Management Send) of the placement
    /// identifiers `pids` at `at` (or now): each handle leaves its reclaim
    /// unit. Delivered as a completion (op [`RUH_UPDATE`], offset and
    /// length 0) when its padding programs are done, with the drive's
    /// status (*Invalid Field in Command* for a placement the drive does
    /// not have, *Invalid Command Opcode* without `[fdp]`).
    pub fn ruh_update(&mut self, pids: &[u32], at: Option<u64>) -> Result<u64, String> {
        self.management(at, RUH_UPDATE, 0, |d| d.update_handles(pids))
    }

    /// Zone Management Receive (Report Zones): every zone as (first byte,
    /// capacity in bytes, write pointer in bytes when it has one, state
    /// name); empty for a conventional namespace. Not a timed command.
    pub fn report_zones(&self) -> Vec<(u64, u64, Option<u64>, &'static str)> {
        self.device
            .drive()
            .report_zones()
            .into_iter()
            .map(|z| {
                (z.start as u64 * BLOCK, z.capacity as u64 * BLOCK, z.wp.map(|w| w as u64 * BLOCK), z.state.name())
            })
            .collect()
    }

    /// Submit `ops.len()` commands (columns: op codes, offsets and lengths
    /// as little-endian `i64`, times as little-endian `i64` or none for
    /// "now"), in order, each at its time. Nothing is submitted unless
    /// every command passes the checks. Returns the first id (the others
    /// follow it).
    pub fn submit_many(
        &mut self,
        ops: &[u8],
        offsets: &[u8],
        lengths: &[u8],
        at: Option<&[u8]>,
    ) -> Result<u64, String> {
        let n = ops.len();
        let words = |b: &[u8], what: &str| -> Result<Vec<u64>, String> {
            if b.len() != 8 * n {
                return Err(format!("{what}: {} values for {n} ops", b.len() / 8));
            }
            b.chunks_exact(8)
                .enumerate()
                .map(|(i, c)| {
                    let v = i64::from_le_bytes(c.try_into().expect("8 bytes"));
                    u64::try_from(v).map_err(|_| format!("command {i}: {what} {v} is negative"))
                })
                .collect()
        };
        let offsets = words(offsets, "offset")?;
        let lengths = words(lengths, "length")?;
        let times = at.map(|a| words(a, "time")).transpose()?;
        for i in 0..n {
            self.check(ops[i], offsets[i], lengths[i]).map_err(|e| format!("command {i}: {e}"))?;
        }
        if let Some(ts) = &times {
            let mut prev = self.now();
            for (i, &t) in ts.iter().enumerate() {
                if t < prev {
                    return Err(format!(
                        "command {i}: time would go backwards: {t} ns is before {prev} ns ({})",
                        if i == 0 { "now" } else { "the previous command's time" }
                    ));
                }
                prev = t;
            }
        }
        let first = self.next_id;
        for i in 0..n {
            if let Some(ts) = &times {
                self.hold_until(ts[i]);
            }
            self.submit_checked(ops[i], offsets[i], lengths[i], None);
        }
        Ok(first)
    }

    /// A slot for `entry` among the pending commands.
    fn pending_slot(&mut self, entry: Pending) -> u32 {
        let h = &mut self.host;
        match h.free.pop() {
            Some(s) => {
                h.pending[s as usize] = entry;
                s
            }
            None => {
                h.pending.push(entry);
                h.pending.len() as u32 - 1
            }
        }
    }

    fn submit_checked(&mut self, op: u8, offset: u64, length: u64, placement: Option<u32>) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let slot = self.pending_slot(Pending { id, submit_ns: self.now(), op, offset, status: 0 });
        let cmd = Command { kind: kind_of(op), offset, len: length as u32 };
        match (op, placement) {
            (FLUSH, _) => {
                let done = self.device.flush();
                Timer { source: slot, kind: TimerKind::Submit }.set(&mut self.device, done);
                self.host.flushes += 1;
            }
            (APPEND, _) => {
                self.device.submit_append(cmd, slot);
            }
            (_, Some(pid)) => {
                self.device.submit_placed(cmd, pid, slot);
            }
            _ => {
                self.device.submit(cmd, slot);
            }
        }
        id
    }

    /// Run the loop up to `until`, holding at most `limit` more
    /// completions (the clock stops at the last one when the limit is
    /// reached first).
    #[inline]
    fn collect(&mut self, until: u64, limit: usize) {
        let mut w = Collect { host: &mut self.host, limit, got: 0 };
        let Ok(()) = drive_until(&mut self.device, &mut w, until);
    }

    /// Run the events up to `t` (≥ now), holding the completions for the
    /// next call that returns completions.
    fn hold_until(&mut self, t: u64) {
        self.collect(t, usize::MAX);
    }

    fn take_held(&mut self) -> Columns {
        let mut cols = Columns::with_capacity(self.host.held.len());
        for r in self.host.held.drain(..) {
            cols.push(r);
        }
        cols
    }

    /// Advance the clock to `t` (not before now): the completions up to
    /// then, in completion order (with those held since the last call).
    pub fn run_until(&mut self, t: u64) -> Result<Columns, String> {
        self.check_time(t)?;
        self.hold_until(t);
        Ok(self.take_held())
    }

    /// Run until no command is outstanding: every outstanding command's
    /// completion, in completion order; the clock stops at the last one.
    pub fn run_until_idle(&mut self) -> Columns {
        // Each command outstanding completes once; nothing is submitted
        // meanwhile.
        let n = self.device.outstanding() as usize + self.host.flushes as usize;
        self.collect(u64::MAX, n);
        self.take_held()
    }

    /// The next completion (advancing the clock to it), or `None` when
    /// nothing is outstanding (the clock unchanged). With `until`, only a
    /// completion at or before it: `None` with the clock at `until` when
    /// there is none (not before now).
    pub fn next_completion(&mut self, until: Option<u64>) -> Result<Option<Record>, String> {
        if let Some(t) = until {
            self.check_time(t)?;
        }
        if self.host.held.is_empty() {
            match until {
                Some(t) => self.collect(t, 1),
                None if self.device.outstanding() == 0 && self.host.flushes == 0 => {}
                None => self.collect(u64::MAX, 1),
            }
        }
        Ok(self.host.held.pop_front())
    }
}
