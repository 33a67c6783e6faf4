//! Trace addresses to drive byte offsets: byte address = address ×
//! sector size + offset; a request beyond the drive is an error, wrapped
//! modulo the capacity, or scaled (`--lba-scale`).
//!
//! Scaling maps the trace's span onto the capacity in 1 MiB chunks
//! ([`SCALE_CHUNK_BYTES`]): the chunk's index is scaled, the offset within
//! it kept, and a request that begins where the previous one of its kind
//! (read, write, trim) ended in the trace continues it on the drive, so
//! sequential runs stay sequential however many chunks they cross. A run
//! re-read from its start follows the same path; left out: a random
//! access into a run that crossed a chunk boundary maps by its own chunk,
//! not necessarily where the run put that data.

use super::{AddressMap, OutOfRange, TraceFormat, TraceOp, TraceReader, TraceRequest, TraceSpec};
use crate::error::TraceError;

/// Trace addresses to drive byte offsets.
pub(super) struct Mapper {
    sector: u64,
    /// The format gives lengths in sectors (else bytes).
    len_in_sectors: bool,
    offset: i64,
    policy: OutOfRange,
    capacity: u64,
    /// `--lba-scale`: (capacity, span) when the span exceeds the capacity.
    pub(super) scale: Option<(u64, u64)>,
    /// `--lba-scale`: per kind (read, write, trim), where the previous
    /// request ended in the trace and where it ended on the drive.
    run_end: [(i128, u64); 3],
}

/// `--lba-scale` maps addresses in chunks of this many bytes: the chunk's
/// index is scaled, the offset within it kept.
pub const SCALE_CHUNK_BYTES: u64 = 1 << 20;

impl Mapper {
    pub(super) fn new(spec: &TraceSpec, format: TraceFormat, capacity: u64) -> Result<Mapper, TraceError> {
        let AddressMap { sector_bytes, offset, out_of_range } = spec.address;
        let sector = sector_bytes.unwrap_or(format.default_sector_bytes());
        if sector == 0 {
            return Err(TraceError::Option {
                option: "--sector-size 0".into(),
                reason: "must be at least 1 byte".into(),
            });
        }
        let mut m = Mapper {
            sector,
            len_in_sectors: matches!(format, TraceFormat::Mqsim | TraceFormat::Blkparse),
            offset,
            policy: out_of_range,
            capacity,
            scale: None,
            run_end: [(-1, 0); 3],
        };
        let known = match out_of_range {
            OutOfRange::Scale => TraceReader::open(&spec.file, Some(format))?.known_span(),
            _ => None,
        };
        if let (OutOfRange::Scale, Some(span)) = (out_of_range, known) {
            // A generator knows its span: no first pass.
            let span = (span as i128 + offset as i128).max(0) as u64;
            if span > capacity {
                m.scale = Some((capacity, span));
            }
        } else if out_of_range == OutOfRange::Scale {
            // A first pass over the file finds the highest address.
            let mut r = TraceReader::open(&spec.file, Some(format))?;
            r.set_blkparse_dispatch(spec.blkparse_dispatch);
            let mut span = 0u64;
            let mut n = 0u64;
            while let Some(req) = r.next_request()? {
                if spec.device.is_some_and(|d| d != req.device) || req.op == TraceOp::Flush {
                    continue;
                }
                if spec.max_requests.is_some_and(|max| n >= max) {
                    break;
                }
                n += 1;
                let end = m.byte(&req).max(0) as u128 + m.len_bytes(&req) as u128;
                span = span.max(end.min(u64::MAX as u128) as u64);
            }
            if span > capacity {
                m.scale = Some((capacity, span));
            }
        }
        Ok(m)
    }

    #[inline]
    pub(super) fn len_bytes(&self, req: &TraceRequest) -> u64 {
        if self.len_in_sectors {
            req.len.saturating_mul(self.sector)
        } else {
            req.len
        }
    }

    #[inline]
    fn byte(&self, req: &TraceRequest) -> i128 {
        req.address as i128 * self.sector as i128 + self.offset as i128
    }

    #[inline]
    pub(super) fn map(&mut self, req: &TraceRequest, len: u64, file: &str) -> Result<u64, TraceError> {
        let cap = self.capacity as i128;
        let out = |offset: i128| TraceError::OutOfRange {
            file: file.to_string(),
            line: req.line,
            offset,
            len,
            capacity: self.capacity,
        };
        if len > u32::MAX as u64 {
            return Err(TraceError::Parse {
                file: file.to_string(),
                line: req.line,
                field: "size",
                reason: format!("{len} bytes: requests of 4 GiB or more are not supported"),
            });
        }
        let byte = self.byte(req);
        let len_i = len as i128;
        let fit = |b: i128| -> Result<u64, TraceError> {
            if len_i > cap {
                return Err(out(b));
            }
            Ok(if b + len_i > cap { (cap - len_i) as u64 } else { b as u64 })
        };
        match self.policy {
            OutOfRange::Error => {
                if byte < 0 || byte + len_i > cap {
                    return Err(out(byte));
                }
                Ok(byte as u64)
            }
            OutOfRange::Wrap => fit(byte.rem_euclid(cap)),
            OutOfRange::Scale => {
                let b = byte.max(0);
                let Some((num, den)) = self.scale else { return fit(b) };
                // A request that continues the previous one of its kind
                // in the trace continues it on the drive (when it fits):
                // sequential runs stay sequential across chunks.
                let k = match req.op {
                    TraceOp::Read => 0,
                    TraceOp::Write => 1,
                    _ => 2,
                };
                let (trace_end, drive_end) = self.run_end[k];
                let mapped = if b == trace_end && drive_end as i128 + len_i <= cap {
                    drive_end
                } else {
                    let chunk = SCALE_CHUNK_BYTES as i128;
                    fit((b / chunk * num as i128 / den as i128) * chunk + b % chunk)?
                };
                self.run_end[k] = (b + len_i, mapped + len);
                Ok(mapped)
            }
        }
    }
}
