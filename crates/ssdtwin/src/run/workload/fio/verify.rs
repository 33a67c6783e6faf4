//! fio's verification options (options.c; backend.c `do_verify`, io_u.c
//! `check_get_verify`): `verify=TYPE` with `do_verify=1` (fio's default)
//! makes a write job read back every block it wrote once its writes are
//! done; `verify_backlog=N` reads back `verify_backlog_batch` (default N)
//! of them after every N writes instead, the rest at the end. The
//! checksum type, header and pattern options shape only the data, which
//! the twin does not store: they stay host options. What the twin issues
//! is in [`crate::run::source`].
//! A mixed pattern (`rw`, `randrw`, `trimwrite`) verifies its writes the
//! same way (its own reads are plain reads, as fio's). With `loops`, each
//! loop's writes are verified before the next loop (backend.c
//! `thread_main`); a write or read/write job's loops are fio's passes,
//! which an `io_size` or an offset modifier shapes. `verify_only` skips the writes (fio's `do_dry_run`
//! counts them without I/O) and reads back what they would have written.

use super::options::Entry;
use super::values::invalid;
use crate::error::JobError;
use crate::run::workload::{IoSpec, RwPattern, Verify};

/// fio's `verify` types (options.c); `0` is none.
const TYPES: &[&str] = &[
    "md5",
    "crc64",
    "crc32",
    "crc32c-intel",
    "crc32c",
    "crc16",
    "crc7",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
    "meta",
    "pattern",
    "pattern_hdr",
    "null",
];

/// The options as read so far (later ones win).
#[derive(Debug)]
pub(super) struct VerifyOptions {
    /// `verify` (where written) when not `0`.
    on: Option<String>,
    do_verify: bool,
    verify: Verify,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            on: None,
            do_verify: true,
            verify: Verify { backlog: 0, batch: 0, only: false, read_back: true },
        }
    }
}

impl VerifyOptions {
    /// Read one option (one the table gives to this module:
    /// [`super::table::Reader::Verify`]).
    pub(super) fn apply(&mut self, (key, v, at): &Entry, kb_base: u64) -> Result<(), JobError> {
        let key = key.as_str();
        match key {
            "verify" => match v.as_str() {
                "0" => self.on = None,
                t if TYPES.contains(&t) => self.on = Some(at.clone()),
                _ => {
                    return Err(invalid(
                        at,
                        key,
                        format!("`{v}` is not 0 or one of fio's types ({})", TYPES.join(", ")),
                    ))
                }
            },
            "do_verify" => {
                self.do_verify = match v.as_str() {
                    "" | "1" | "true" => true,
                    "0" | "false" => false,
                    _ => return Err(invalid(at, key, format!("`{v}` is not 0 or 1"))),
                }
            }
            "verify_backlog" => {
                self.verify.backlog = super::values::parse_size(v, kb_base, 0)
                    .map_err(|_| invalid(at, key, format!("`{v}` is not a number of blocks")))?
            }
            "verify_only" => self.verify.only = super::parse_bool(v).map_err(|r| invalid(at, key, r))?,
            "verify_backlog_batch" => {
                self.verify.batch =
                    v.parse().map_err(|_| invalid(at, key, format!("`{v}` is not a whole number of blocks")))?
            }
            _ => unreachable!("the table gives {key} to another reader"),
        }
        Ok(())
    }

    /// The job's verification (`None`: none, or a job that does not
    /// write, whose reads fio checks without issuing more) for `spec` on a
    /// drive of `capacity` bytes.
    pub(super) fn finish(mut self, spec: &IoSpec, capacity: u64) -> Result<Option<Verify>, JobError> {
        self.verify.read_back = self.on.is_some() && self.do_verify;
        if !self.verify.read_back && !self.verify.only {
            return Ok(None);
        }
        if matches!(spec.rw, RwPattern::Read | RwPattern::RandRead | RwPattern::Trim | RwPattern::RandTrim) {
            return Ok(None);
        }
        // fio's write phase ends at the span's end or when the loops'
        // bytes are used up (backend.c `do_io`, `keep_running`): a loop is
        // one pass of the span, verified after it, only when io_size is
        // the span and the pass has an end.
        // Write and read/write jobs' passes follow fio's (the source's
        // `VerifyPasses`); a trimwrite's loops are whole passes of the span.
        let span = spec.size.unwrap_or(capacity.saturating_sub(spec.offset));
        let passes =
            matches!(spec.rw, RwPattern::Write | RwPattern::RandWrite | RwPattern::ReadWrite | RwPattern::RandRw);
        let one_pass = !spec.time_based && (passes || spec.io_size.is_none_or(|b| b == span));
        if spec.loops > 1 && !one_pass {
            let at = self.on.unwrap_or_default();
            return Err(invalid(
                &at,
                "verify",
                "verify with loops above 1 is modelled when each loop is one pass of the span \
                 (no time_based, and for trimwrite no io_size other than size)",
            ));
        }
        Ok(Some(self.verify))
    }
}
