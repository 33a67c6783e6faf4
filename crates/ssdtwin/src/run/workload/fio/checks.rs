//! Checks of a job that need several of its options at once, each as
//! fio makes it (init.c): the span lies inside the drive, the strided-zone options agree, a `sequence`
//! distribution's blocks lie in the span. Used by
//! [`super::phase`] and, for clones, by the job file parser.

use super::options::Entry;
use super::values::invalid;
use crate::error::JobError;
use crate::run::workload::{Distribution, IoSpec, Strided};

/// `sequence` distributions: `random_sequence_stride` (`stride`) applied,
/// and fio's error (at run time there) for a listed block past the span.
pub(super) fn sequences(spec: &mut IoSpec, stride: bool, entries: &[Entry], capacity: u64) -> Result<(), JobError> {
    let span = spec.size.unwrap_or(capacity.saturating_sub(spec.offset)).min(capacity);
    let bs: [u64; 3] = std::array::from_fn(|k| spec.bs_of(k) as u64);
    let dirs = spec.distributions.iter_mut().flatten().enumerate();
    for (k, d) in std::iter::once((0, &mut spec.distribution)).chain(dirs) {
        let Distribution::Sequence { blocks, stride: s } = d else { continue };
        *s = stride;
        let max = span / bs[k].max(1);
        if let Some(b) = blocks.iter().find(|&&b| b as u64 >= max) {
            let at = entries.iter().rev().find(|e| e.0 == "random_distribution").map_or("", |e| e.2.as_str());
            return Err(invalid(
                at,
                "random_distribution",
                format!("fio: sequence access block {b} in base pattern out of bounds (max {max})"),
            ));
        }
    }
    Ok(())
}

/// fio's `zonemode=strided` from its options (init.c: a `zonesize` alone
/// means strided, `zonemode=none` with one is an error, strided needs
/// one; `zonerange` defaults to `zonesize`).
pub(super) fn strided(
    mode: &Option<(bool, String)>,
    zone: &[Option<(u64, String)>; 3],
    bs: u32,
) -> Result<Option<Strided>, JobError> {
    let size = zone[0].as_ref().filter(|z| z.0 > 0);
    match (mode, size) {
        // fio 3.33's zonemode defaults to none: a zonesize alone is this
        // error too (init.c, fixup_options).
        (Some((false, _)) | None, Some((_, at))) => {
            Err(invalid(at, "zonesize", "--zonemode=none and --zonesize are not compatible (as in fio)"))
        }
        (Some((true, at)), None) => {
            Err(invalid(at, "zonemode", "--zonesize must be specified when using --zonemode=strided (as in fio)"))
        }
        (_, None) => Ok(None),
        (_, Some(&(size, _))) => {
            let range = zone[1].as_ref().map_or(size, |z| z.0).max(1);
            if range < bs as u64 {
                let at = zone[1].as_ref().or(zone[0].as_ref()).map_or("", |z| z.1.as_str());
                return Err(invalid(at, "zonerange", format!("a zone of {range} bytes is smaller than one block")));
            }
            Ok(Some(Strided { size, range, skip: zone[2].as_ref().map_or(0, |z| z.0) }))
        }
    }
}

/// Check that the span lies inside the drive; an error names the option
/// at fault (`offset`, `size` or `bs`).
pub(super) fn check_fits(spec: &IoSpec, capacity: u64) -> Result<(), (&'static str, String)> {
    if spec.offset % 512 != 0 {
        return Err(("offset", format!("offset {} is not a multiple of 512", spec.offset)));
    }
    if spec.offset >= capacity {
        return Err(("offset", format!("offset {} is beyond the drive's {} bytes", spec.offset, capacity)));
    }
    let span = spec.size.unwrap_or(capacity - spec.offset);
    if spec.offset + span > capacity {
        let option = if spec.size.is_some() { "size" } else { "offset" };
        return Err((
            option,
            format!("offset {} + size {} is beyond the drive's {} bytes", spec.offset, span, capacity),
        ));
    }
    if span < spec.bs as u64 {
        return Err(("bs", format!("the span ({span} bytes) is smaller than one block ({} bytes)", spec.bs)));
    }
    Ok(())
}
