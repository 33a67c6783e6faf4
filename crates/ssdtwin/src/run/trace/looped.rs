//! A trace as an endless stream of commands, for aging (`age` with
//! `trace=`): the file's requests in order, read and mapped to the drive
//! as a replay reads them ([`super::replay::Requests`]), and from the
//! start again when the file ends, for as many days as the phase asks.
//!
//! Timing is not used (aging is untimed). A pass over the whole file that
//! writes and trims nothing is an error, not an endless loop.

use super::address::Mapper;
use super::replay::Requests;
use super::TraceSpec;
use crate::error::TraceError;
use crate::model::drive::{Command, IoKind};

/// A trace's requests as commands, looping.
pub struct LoopedTrace {
    spec: TraceSpec,
    capacity: u64,
    requests: Requests,
    /// Writes and trims since the file was (re)opened.
    changes_this_pass: u64,
}

impl LoopedTrace {
    /// Open `spec`'s trace for a drive of `capacity` bytes.
    pub fn open(spec: &TraceSpec, capacity: u64) -> Result<LoopedTrace, TraceError> {
        let reader = super::open(spec)?;
        let mapper = Mapper::new(spec, reader.format(), capacity)?;
        let requests = Requests::new(reader, mapper, spec);
        Ok(LoopedTrace { spec: spec.clone(), capacity, requests, changes_this_pass: 0 })
    }

    /// The next read, write or trim.
    pub fn next_command(&mut self) -> Result<Command, TraceError> {
        loop {
            if let Some((cmd, _, _)) = self.requests.read()? {
                self.changes_this_pass += u64::from(cmd.kind != IoKind::Read);
                return Ok(cmd);
            }
            if self.changes_this_pass == 0 {
                return Err(TraceError::Option {
                    option: format!("trace={}", self.spec.file),
                    reason: "an age phase needs a trace that writes or trims".into(),
                });
            }
            *self = LoopedTrace::open(&self.spec, self.capacity)?;
        }
    }
}
