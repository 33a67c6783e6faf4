//! The job parser's view of fio's option table ([`super::table`]): which
//! options it reads, which describe only the host, and the error for
//! options it does not know or refuses (each named with where it was
//! written; a refused option with the table's reason). What each option
//! means is in [`super::phase`], [`super::jobctl`] and [`super`].

use super::table::{self, Class, Reader};
use crate::error::JobError;

/// Whether the twin reads `key` (fio's option with fio's meaning, or
/// ssdtwin's own), by any of its spellings.
pub fn is_known(key: &str) -> bool {
    matches!(table::lookup(key).map(|d| d.class), Some(Class::Fio(_) | Class::Twin(_)))
}

/// Whether `key` only describes the host (accepted, ignored).
pub fn is_host_only(key: &str) -> bool {
    matches!(table::lookup(key).map(|d| d.class), Some(Class::Host))
}

/// Whether `key` decides when a job runs or how it is reported (read by
/// the job file parser, not by a phase).
pub fn is_schedule(key: &str) -> bool {
    matches!(table::lookup(key).map(|d| d.class), Some(Class::Fio(Reader::Schedule)))
}

/// The host-only options as a set (`HOST_ONLY.contains(&key)`), for
/// callers that ask the table through it.
pub const HOST_ONLY: HostOnly = HostOnly;

/// The set of host-only options of the table.
#[derive(Debug, Clone, Copy)]
pub struct HostOnly;

impl HostOnly {
    /// Whether `key` only describes the host.
    pub fn contains(&self, key: &&str) -> bool {
        is_host_only(key)
    }
}

/// One option: (key, value, where it was written).
pub type Entry = (String, String, String);

/// Whether the entry stops the job: an option the table does not know, or
/// a refused one given a value other than fio's default.
pub(super) fn is_unusable((k, v, _): &Entry) -> bool {
    match table::lookup(k) {
        None => true,
        Some(d) => matches!(d.class, Class::Refused(_)) && !d.is_inert(v),
    }
}

/// fio's check of a host-only option's value, by its kind (parse.c): a
/// boolean is 0 or 1 (or the twin's `true`, `false`, nothing), a whole
/// number starts with a digit (fio reads `4k`, `-1`, `0x10`). The twin
/// ignores the option, but fio would stop at the value, so it does too.
pub(super) fn host_value_error((k, v, at): &Entry) -> Option<JobError> {
    let d = table::lookup(k).filter(|d| d.class == Class::Host)?;
    let v = v.trim();
    let why = match d.kind {
        table::Kind::Bool if !matches!(v, "0" | "1" | "" | "true" | "false") => "a boolean is 0 or 1",
        table::Kind::Int if !v.trim_start_matches('-').starts_with(|c: char| c.is_ascii_digit()) => {
            "it takes a whole number"
        }
        _ => return None,
    };
    Some(JobError::Invalid {
        origin: at.clone(),
        option: k.clone(),
        reason: format!("fio fails parsing `{k}={v}`: {why} (the twin ignores the option, which describes the host)"),
    })
}

/// The error naming every unknown or refused option of a file, each with
/// its line; a refused option says why.
pub(super) fn unknown_error(unusable: &[&Entry]) -> JobError {
    let first_at = unusable[0].2.clone();
    let reason = |k: &str| match table::lookup(k).map(|d| d.class) {
        Some(Class::Refused(why)) => Some(why),
        _ => None,
    };
    let any_refused = unusable.iter().any(|(k, _, _)| reason(k).is_some());
    let option = unusable
        .iter()
        .enumerate()
        .map(|(i, (k, _, at))| {
            let at = if i == 0 { String::new() } else { format!(" ({at})") };
            let why = reason(k).map(|r| format!(" — fio's option, not modelled: {r}")).unwrap_or_default();
            format!("`{k}`{at}{why}")
        })
        .collect::<Vec<_>>()
        .join(if any_refused { "; " } else { ", " });
    if unusable.iter().all(|(k, _, _)| reason(k).is_some()) {
        return JobError::Refused { origin: first_at, option };
    }
    let known = table::all()
        .filter(|d| matches!(d.class, Class::Fio(_) | Class::Twin(_)))
        .map(|d| d.name)
        .collect::<Vec<_>>()
        .join(", ");
    JobError::UnknownOption { origin: first_at, option, known }
}
