//! A write job's verify phase (`verify`, `do_verify`, `verify_backlog`):
//! what a [`Source`] does with its [`Verify`].
//!
//! As fio (backend.c `do_verify`, iolog.c `log_io_piece`, io_u.c
//! `check_get_verify`): every write issued is logged; once the job's
//! writes (and its end FLUSH) are done, each logged block is read back
//! once, at the job's `iodepth` — in the order written when the job has
//! fio's random map (a random pattern without `norandommap`, which writes
//! each block once per pass), otherwise by offset, a write replacing
//! the logged ones it overlaps (fio's rb-tree: [`super::verify_log`]). The reads
//! are the job's read statistics, and each direction has its own runtime
//! as in fio's JSON (backend.c `update_runtime`): the writes' is the
//! write phase, the reads' the verify phase, plus the write phase for a
//! job that reads there too (a mixed pattern, or `verify_backlog`). With
//! `verify_backlog=N`, whenever a write leaves a multiple of N blocks
//! written and not yet read back, the next
//! `verify_backlog_batch` (default N) commands read back the oldest
//! blocks not yet verified; they do not count toward the job's size, and
//! the verify phase reads the rest. A job that ended with an error or was
//! stopped (steady state, `exitall`, a latency target's end) verifies
//! nothing, as fio skips `do_verify` after `td->terminate`.
//!
//! With `loops`, each loop writes, then verifies what it wrote, and the
//! runtimes add up over the loops (backend.c `thread_main`). A write
//! job's loop is one pass ([`VerifyPasses`]): its writes end at the
//! span's end (or a full random map), or when all the loops' writes
//! reach `io_size` (else `size`) × `loops`; after the loops, passes go
//! on while the bytes written and read back are a block or more short
//! of `io_size` (else `size`: fio clears the files' done state before
//! verifying, so a pass shorter than the span, an offset modifier's,
//! does not end the job). With
//! `verify_only`, a loop's writes are a dry run (fio's `do_dry_run`): the
//! generator's commands are counted in the job's statistics, without
//! latency and without I/O, in no time, and the verify phase reads them
//! back.
//!
//! The twin stores no data, so nothing is compared: the reads are issued
//! and counted. Left out: the log grows by one entry per write (16
//! bytes) until verified, as fio's io pieces do.

use super::verify_log::WriteLog;
use super::Source;
use crate::model::drive::{Command, IoKind};
use crate::run::device::Device;
use crate::run::workload::{IoSpec, RwPattern, Verify};

/// A job's writes to verify and where its verification is.
#[derive(Debug, Clone)]
pub(crate) struct VerifyState {
    spec: Verify,
    /// Written and not yet read back.
    log: WriteLog,
    /// Backlog reads still to issue now.
    batch_left: u64,
    /// When the verify phase began, and the write phase's runtime.
    phase: Option<(u64, u64)>,
    /// Loops still to write and verify after this one.
    loops_left: u32,
    /// A write loop's limits (bytes, commands, deadline), kept while a
    /// verify phase has its own.
    write_limits: Option<(u64, u64, Option<u64>)>,
    /// When the current write loop began (`None`: the first, from the ramp's end).
    loop_start: Option<u64>,
    /// Runtimes so far (read, write), ns.
    runtime: [u64; 2],
    /// `verify_only`: this loop's dry run is done.
    dry_done: bool,
    /// A write job's passes (`None`: a loop is the job's byte limit).
    passes: Option<VerifyPasses>,
    /// `number_ios` × `loops`: the commands of every pass, verify reads
    /// included, that end the writes (fio's `exceeds_number_ios` counts
    /// `io_blocks`, which no pass resets).
    ios_budget: Option<u64>,
    /// Commands issued so far, in every pass and phase.
    ios_total: u64,
}

/// How much a verifying write job's passes write, as backend.c decides
/// (`do_io` and `io_bytes_exceeded`, `keep_running`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct VerifyPasses {
    /// Bytes of a whole pass (at most `cap`).
    pass: u64,
    /// The writes of all passes together stop at this (`io_size` or
    /// `size`, × `loops`).
    cap: u64,
    /// Passes after the loops go on while `done` is a block short of it.
    limit: u64,
    /// fio's `td_max_bs`.
    max_bs: u64,
    /// Bytes the passes issued so far (writes, and a mixed pattern's
    /// own reads).
    written: u64,
    /// Bytes written and read back so far (fio's `io_bytes`).
    done: u64,
}

impl VerifyPasses {
    pub(crate) fn new(pass: u64, cap: u64, limit: u64, max_bs: u64) -> VerifyPasses {
        VerifyPasses { pass, cap, limit, max_bs, written: 0, done: 0 }
    }

    /// The next pass's byte limit.
    pub(crate) fn next_pass(&self) -> u64 {
        self.pass.min(self.cap - self.written.min(self.cap))
    }

    /// Whether the pass just issued ended because the sequence did (the
    /// span's end, a full map) rather than at the bytes' cap.
    fn ended_naturally(&self) -> bool {
        self.written < self.cap
    }

    /// Whether `keep_running` starts another pass once the loops are done.
    fn short(&self) -> bool {
        self.done < self.limit && self.limit - self.done >= self.max_bs
    }
}

impl VerifyState {
    pub(crate) fn new(spec: Verify, io: &IoSpec, passes: Option<VerifyPasses>) -> VerifyState {
        let random = matches!(io.rw, RwPattern::RandWrite | RwPattern::RandRw | RwPattern::RandRead);
        let random_map = random && !io.norandommap;
        VerifyState {
            spec,
            log: WriteLog::new(!random_map),
            batch_left: 0,
            phase: None,
            loops_left: io.loops.saturating_sub(1),
            ios_budget: io.number_ios.map(|n| n.saturating_mul(io.loops as u64)).filter(|_| spec.read_back),
            ios_total: 0,
            write_limits: None,
            loop_start: None,
            runtime: [0; 2],
            dry_done: false,
            passes,
        }
    }

    /// A write was issued.
    pub(super) fn written(&mut self, cmd: Command) {
        if !self.spec.read_back {
            return;
        }
        self.ios_total += 1;
        self.log.push(cmd.offset, cmd.len);
        if let Some(p) = &mut self.passes {
            p.written += cmd.len as u64;
            p.done += cmd.len as u64;
        }
        // fio's check_get_verify: a batch starts when the writes logged
        // and not yet read back (`io_hist_len`) are a multiple of N.
        // A batch left over (the log ran dry first) goes on instead.
        if self.spec.backlog != 0 && self.batch_left == 0 && self.log.len() as u64 % self.spec.backlog == 0 {
            self.batch_left = if self.spec.batch == 0 { self.spec.backlog } else { self.spec.batch };
        }
    }

    /// Whether writes wait to be read back.
    pub(super) fn has_logged(&self) -> bool {
        !self.log.is_empty()
    }

    /// A mixed pattern's own read (or trim) was issued: it counts toward
    /// the pass as the writes do.
    pub(super) fn issued_other(&mut self, cmd: Command) {
        self.ios_total += 1;
        if let Some(p) = &mut self.passes {
            p.written += cmd.len as u64;
            p.done += cmd.len as u64;
        }
    }
}

impl Source {
    /// The write phase's bytes are issued, but a backlog batch is still
    /// due and the pass ended with the sequence: fio's `get_io_u` checks
    /// for verify reads before it finds the files done, so the batch is
    /// read before the pass ends (at the bytes' cap, `do_io` stops first).
    #[cold]
    #[inline(never)]
    pub(super) fn backlog_at_pass_end(&self) -> bool {
        self.verify.as_ref().is_some_and(|v| {
            v.phase.is_none()
                && v.batch_left > 0
                && !v.log.is_empty()
                && v.passes.as_ref().is_some_and(|p| p.ended_naturally())
        })
    }

    /// Before a submission: a verify read is due (the verify phase, or a
    /// backlog batch): issue it instead (`true`).
    pub(super) fn verify_instead(&mut self, dev: &mut Device, me: u32) -> bool {
        let v = self.verify.as_mut().expect("a job with verify");
        if v.spec.only && !v.dry_done {
            v.dry_done = true;
            // Without read-back, fio's loops are dry runs one after another.
            let rounds = if v.spec.read_back { 1 } else { v.loops_left as u64 + 1 };
            let (bytes, ios) = (self.byte_limit.saturating_mul(rounds), self.ios_limit.saturating_mul(rounds));
            while self.issued < bytes && self.issued_ios < ios {
                let cmd = self.gen.next_command();
                if cmd.kind == IoKind::Write {
                    v.written(cmd);
                }
                if let Some(st) = &mut self.stats {
                    st.dirs[cmd.kind as usize].ios += 1;
                    st.dirs[cmd.kind as usize].bytes += cmd.len as u64;
                }
                self.issued += cmd.len as u64;
                self.issued_ios += 1;
            }
            if !self.start_verify(dev.now()) {
                return true;
            }
        }
        let v = self.verify.as_mut().expect("a job with verify");
        let in_phase = v.phase.is_some();
        if !in_phase && v.batch_left == 0 {
            return false;
        }
        // An empty log leaves a backlog batch for the writes to come
        // (fio's `verify_batch` is spent only by reads).
        if v.log.is_empty() {
            return false;
        }
        if !in_phase {
            v.batch_left -= 1;
        }
        self.read_back_now(dev, me)
    }

    /// Read back the oldest write not yet verified now (`false`: none).
    pub(super) fn read_back_now(&mut self, dev: &mut Device, me: u32) -> bool {
        let v = self.verify.as_mut().expect("a job with verify");
        let in_phase = v.phase.is_some();
        let Some((offset, len)) = v.log.pop() else {
            return false;
        };
        v.ios_total += 1;
        let backlog_counts = !in_phase && v.ios_budget.is_some();
        if let Some(p) = &mut v.passes {
            p.done += len as u64;
        }
        let now = dev.now();
        let cmd = Command { kind: IoKind::Read, offset, len };
        if let Some(l) = self.iolog.as_mut() {
            l.io(now - self.start, cmd);
        }
        // A verify read keeps the priority its io_u carried, changed only
        // by a hit of the engine's draw (`PrioState::verify_read`).
        let ioprio = self.prio.as_mut().map(|p| p.verify_read(cmd));
        super::sync::submit_at(dev, cmd, me, ioprio);
        if backlog_counts {
            // fio's number_ios counts the backlog's reads with the writes.
            self.ios_limit = self.ios_limit.saturating_sub(1);
        }
        if in_phase {
            // The verify phase's limits are its reads.
            self.issued += len as u64;
            self.seg_issued += len as u64;
            self.issued_ios += 1;
        }
        self.count_submitted(now);
        true
    }

    /// The job's writes are done at `now`: start its verify phase
    /// (`true`), or, once it is over, note the directions' runtimes and
    /// start the next loop's writes if there is one (`true`).
    pub(super) fn verify_at_end(&mut self, dev: &mut Device, me: u32, now: u64) -> bool {
        let stopped = self.error != 0 || self.stop;
        let v = self.verify.as_mut().expect("a job with verify");
        if let Some((start, write_ns)) = v.phase.take() {
            let reads_too = v.spec.backlog != 0 || matches!(self.spec.rw, RwPattern::ReadWrite | RwPattern::RandRw);
            v.runtime[0] += now - start + if reads_too { write_ns } else { 0 };
            v.runtime[1] += write_ns;
            if let Some(st) = &mut self.stats {
                st.dir_ns = Some([v.runtime[0], v.runtime[1], v.runtime[1]]);
            }
            let (mut bytes, ios, deadline) = v.write_limits.expect("kept when the verify phase began");
            let within = v.ios_budget.is_none_or(|b| v.ios_total < b);
            let another = match &v.passes {
                Some(p) => (v.loops_left > 0 || p.short() && within) && p.next_pass() > 0,
                None => v.loops_left > 0,
            };
            if !another || stopped || deadline.is_some_and(|d| now >= d) {
                return false;
            }
            // The next loop: its writes, then their verification.
            v.loops_left = v.loops_left.saturating_sub(1);
            if let Some(p) = &v.passes {
                bytes = p.next_pass();
            }
            v.loop_start = Some(now);
            v.dry_done = false;
            if let Some(z) = self.zbd.as_mut() {
                z.new_loop(dev.drive());
            }
            self.byte_limit = bytes;
            self.ios_limit = v.ios_budget.map_or(ios, |b| b.saturating_sub(v.ios_total));
            self.deadline = deadline;
            self.issued = 0;
            self.issued_ios = 0;
            self.seg_issued = 0;
            self.fill(dev, me);
            return self.outstanding + self.pending > 0;
        }
        if stopped {
            return false;
        }
        if !self.start_verify(now) {
            // A backlog read everything back already: an empty verify
            // phase, then the next pass as after any other.
            let v = self.verify.as_mut().expect("a job with verify");
            let write_ns = now.saturating_sub(v.loop_start.unwrap_or(self.ramp_end));
            v.phase = Some((now, write_ns));
            v.write_limits.get_or_insert((self.byte_limit, self.ios_limit, self.deadline));
            return self.verify_at_end(dev, me, now);
        }
        self.fill(dev, me);
        self.outstanding + self.pending > 0
    }

    /// Begin the verify phase at `now`: the logged writes become the
    /// job's limits (`false`: nothing to verify).
    fn start_verify(&mut self, now: u64) -> bool {
        let v = self.verify.as_mut().expect("a job with verify");
        if v.log.is_empty() {
            return false;
        }
        // fio's clear_io_state before do_verify re-seeds the priorities.
        if let Some(p) = self.prio.as_mut() {
            p.reseed();
        }
        let write_ns = if v.spec.only { 0 } else { now.saturating_sub(v.loop_start.unwrap_or(self.ramp_end)) };
        v.phase = Some((now, write_ns));
        v.write_limits.get_or_insert((self.byte_limit, self.ios_limit, self.deadline));
        if let Some(l) = self.iolog.as_mut() {
            // fio closes and reopens the job's files before do_verify.
            l.file(now - self.start, "close");
            l.file(now - self.start, "open");
        }
        self.byte_limit = v.log.bytes();
        self.ios_limit = v.log.len() as u64;
        self.issued = 0;
        self.issued_ios = 0;
        self.seg_issued = 0;
        self.deadline = None;
        true
    }
}
