//! fio's `write_iolog`: the list of a job's commands in fio 3.33's iolog
//! format (version 3, iolog.c `init_iolog_write`, `log_io_u`,
//! `log_file`), which `fio --read_iolog` and ssdtwin's own trace replay
//! (`trace_format=iolog`) read:
//!
//! ```text
//! fio version 3 iolog
//! 0 JOB.0.0 add
//! 0 JOB.0.0 open
//! 12 JOB.0.0 write 0 4096
//! 20 JOB.0.0 sync 0 0
//! 1021 JOB.0.0 close
//! ```
//!
//! Each line starts with the time in µs since the job started (virtual
//! time), then fio's file name (`filename`, or `JOB.CLONE.0` as fio names
//! a job's file), then the action: `add`, `open`, `close`, or a command
//! at its issue with its offset and length in bytes (`read`, `write`,
//! `trim`; a FLUSH is `sync` with the offset of the last write and length
//! 0, as fio logs its io_u). A verify phase closes and reopens the file
//! before its reads, as fio's does. Jobs naming the same file write
//! their parts in job order (fio's run concurrently and append their
//! buffers as they fill). Written to a temporary beside the final name
//! and renamed at the end of the run. Left out: fio appends to a file
//! that exists, the twin replaces it; the close and open fio logs when a
//! pass over the span starts again.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use crate::model::drive::{Command, IoKind};
use crate::run::logs::FinishedLog;
use crate::run::workload::IoLogSpec;

/// A job's iolog being written.
pub(crate) struct IoLog {
    file_name: String,
    path: PathBuf,
    tmp: PathBuf,
    out: BufWriter<File>,
    last_write: u64,
    error: Option<std::io::Error>,
}

impl IoLog {
    /// Open job number `job_no`'s iolog (its header written).
    pub(crate) fn open(spec: &IoLogSpec, job_no: usize) -> Result<IoLog, crate::Error> {
        let path = PathBuf::from(&spec.path);
        let tmp = PathBuf::from(format!("{}.ssdtwin-{}-{job_no}.tmp", path.display(), std::process::id()));
        let file = crate::fsio::create_temp(&tmp).map_err(|e| log_error(&tmp, e))?;
        let mut log = IoLog {
            file_name: spec.file_name.clone(),
            path,
            tmp,
            out: BufWriter::new(file),
            last_write: 0,
            error: None,
        };
        let head = writeln!(log.out, "fio version 3 iolog");
        log.check(head);
        log.file(0, "add");
        log.file(0, "open");
        Ok(log)
    }

    fn check(&mut self, r: std::io::Result<()>) {
        if let Err(e) = r {
            self.error.get_or_insert(e);
        }
    }

    /// A file action (`open`, `close`) `rel_ns` after the job started.
    pub(crate) fn file(&mut self, rel_ns: u64, what: &str) {
        let r = writeln!(self.out, "{} {} {what}", rel_ns / 1000, self.file_name);
        self.check(r);
    }

    /// A command issued `rel_ns` after the job started.
    pub(crate) fn io(&mut self, rel_ns: u64, cmd: Command) {
        let what = match cmd.kind {
            IoKind::Read => "read",
            IoKind::Write => {
                self.last_write = cmd.offset;
                "write"
            }
            IoKind::Trim => "trim",
        };
        let r = writeln!(self.out, "{} {} {what} {} {}", rel_ns / 1000, self.file_name, cmd.offset, cmd.len);
        self.check(r);
    }

    /// A FLUSH issued `rel_ns` after the job started.
    pub(crate) fn sync(&mut self, rel_ns: u64) {
        let r = writeln!(self.out, "{} {} sync {} 0", rel_ns / 1000, self.file_name, self.last_write);
        self.check(r);
    }

    /// The job ended `rel_ns` after it started: the file's close, and the
    /// log to rename.
    pub(crate) fn finish(mut self, rel_ns: u64) -> Result<FinishedLog, crate::Error> {
        self.file(rel_ns, "close");
        let flushed = self.out.flush();
        self.check(flushed);
        match self.error.take() {
            Some(e) => {
                crate::fsio::remove_temp(&self.tmp);
                Err(log_error(&self.tmp, e))
            }
            None => Ok(FinishedLog { path: self.path, tmp: self.tmp }),
        }
    }
}

fn log_error(path: &std::path::Path, e: std::io::Error) -> crate::Error {
    crate::Error::Log { path: path.display().to_string(), source: e }
}
