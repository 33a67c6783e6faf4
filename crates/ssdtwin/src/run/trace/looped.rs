//! A trace as an endless stream of commands, for aging (`age` with
//! `trace=`): the file's requests in order, mapped to the drive as a
//! replay maps them, and from the start again when the file ends, for as
//! many days as the phase asks.
//!
//! Timing is not used (aging is untimed); flushes, zero-length requests
//! and other devices' requests are skipped. A pass over the whole file
//! that writes and trims nothing is an error, not an endless loop.

use super::address::Mapper;
use super::{TraceOp, TraceReader, TraceSpec};
use crate::error::TraceError;
use crate::model::drive::{Command, IoKind};

/// A trace's requests as commands, looping.
pub struct LoopedTrace {
    spec: TraceSpec,
    capacity: u64,
    reader: TraceReader,
    mapper: Mapper,
    /// Writes and trims since the file was (re)opened.
    changes_this_pass: u64,
    /// Requests taken since the file was (re)opened (for `max_requests`).
    taken: u64,
}

impl LoopedTrace {
    /// Open `spec`'s trace for a drive of `capacity` bytes.
    pub fn open(spec: &TraceSpec, capacity: u64) -> Result<LoopedTrace, TraceError> {
        let reader = super::open(spec)?;
        let mapper = Mapper::new(spec, reader.format(), capacity)?;
        Ok(LoopedTrace { spec: spec.clone(), capacity, reader, mapper, changes_this_pass: 0, taken: 0 })
    }

    /// The next read, write or trim.
    pub fn next_command(&mut self) -> Result<Command, TraceError> {
        loop {
            let limit = self.spec.max_requests.is_some_and(|m| self.taken >= m);
            let req = if limit { None } else { self.reader.next_request()? };
            let Some(req) = req else {
                if self.changes_this_pass == 0 {
                    return Err(TraceError::Option {
                        option: format!("trace={}", self.spec.file),
                        reason: "an age phase needs a trace that writes or trims".into(),
                    });
                }
                *self = LoopedTrace::open(&self.spec, self.capacity)?;
                continue;
            };
            if self.spec.device.is_some_and(|d| d != req.device) {
                continue;
            }
            let kind = match req.op {
                TraceOp::Read => IoKind::Read,
                TraceOp::Write => IoKind::Write,
                TraceOp::Trim => IoKind::Trim,
                TraceOp::Flush => continue,
            };
            let len = self.mapper.len_bytes(&req);
            if len == 0 {
                continue;
            }
            let offset = self.mapper.map(&req, len, self.reader.file())?;
            self.taken += 1;
            self.changes_this_pass += u64::from(kind != IoKind::Read);
            return Ok(Command { kind, offset, len: len as u32 });
        }
    }
}
