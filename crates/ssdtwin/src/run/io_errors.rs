//! How a fio job treats the drive's error statuses: the error number a
//! Linux host sees for each, and fio's `continue_on_error` and
//! `ignore_error` (options.c, td_error.c, backend.c `break_on_this_error`,
//! io_u.c `io_completed`; fio 3.42).
//!
//! - **Error numbers** (Linux `drivers/nvme/host/core.c`
//!   `nvme_error_status` and `block/blk-core.c` `blk_errors`): Unrecovered
//!   Read Error is a medium error, ENODATA; Too Many Active Zones is
//!   EOVERFLOW and Too Many Open Zones ETOOMANYREFS (the kernel patch
//!   "nvme: translate zone resource errors", 2020; fio's zbd.c names
//!   EOVERFLOW the active limit); every other status the twin returns
//!   (the zone statuses Zone Is Full, Zone Invalid Write, ... and
//!   Namespace is Write Protected) falls to the default, EIO.
//! - **Classes**: an error is a read error when the command read, else a
//!   write error (trims too), and EILSEQ (a verify mismatch) a verify
//!   error (`td_error_type`).
//! - **`continue_on_error`** (`none`, `read`, `write`, `io`, `verify`,
//!   `all`, `0`, `1`) names the classes a job may go on after. Within a
//!   class only *non-fatal* errors are gone on after: by default EIO and
//!   EILSEQ (`__NON_FATAL_ERR`); `ignore_error=READ,WRITE,VERIFY`, each a
//!   `:`-separated list of names (`EIO`) or numbers, replaces a class's
//!   list and adds the class to `continue_on_error`. Options apply in
//!   order: a later `continue_on_error` replaces the classes an earlier
//!   `ignore_error` added.
//! - **What happens**: a command that fails is not counted in the job's
//!   bytes, I/Os or latencies. A non-fatal error adds to the job's error
//!   count (`total_err`, `first_error`) and the job goes on; any other
//!   ends the job with that error number.
//!
//! Left out: the twin never compares data, so verify errors (EILSEQ)
//! do not arise.

use serde::{Deserialize, Serialize};

use crate::model::drive::IoError;
use crate::model::ftl::zones::ZoneStatus;

/// EIO.
pub const EIO: i32 = 5;
/// ENODATA: a medium error (`BLK_STS_MEDIUM`).
pub const ENODATA: i32 = 61;
/// EOVERFLOW: the zone active-resource limit (`BLK_STS_ZONE_ACTIVE_RESOURCE`).
pub const EOVERFLOW: i32 = 75;
/// EILSEQ: a verify mismatch.
pub const EILSEQ: i32 = 84;
/// ETOOMANYREFS: the zone open-resource limit (`BLK_STS_ZONE_OPEN_RESOURCE`).
pub const ETOOMANYREFS: i32 = 109;

/// The error number a Linux host gets for the drive's status `e`.
pub fn errno_of(e: IoError) -> i32 {
    match e {
        IoError::Media => ENODATA,
        IoError::Zone(ZoneStatus::TooManyActiveZones) => EOVERFLOW,
        IoError::Zone(ZoneStatus::TooManyOpenZones) => ETOOMANYREFS,
        IoError::ReadOnly | IoError::Zone(_) => EIO,
    }
}

/// The error classes of `continue_on_error` (bits of [`OnError::classes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// A read failed.
    Read = 0,
    /// A write or trim failed.
    Write = 1,
    /// Data read back was not what was written (EILSEQ).
    Verify = 2,
}

impl ErrorClass {
    /// The class of error `errno` on a command that read (`read`) or not
    /// (`td_error_type`).
    pub fn of(read: bool, errno: i32) -> ErrorClass {
        if errno == EILSEQ {
            ErrorClass::Verify
        } else if read {
            ErrorClass::Read
        } else {
            ErrorClass::Write
        }
    }
}

/// A job's `continue_on_error` and `ignore_error` (the default: every
/// error ends the job).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OnError {
    /// The classes the job goes on after (bit [`ErrorClass`]); fio's
    /// `all` sets every bit.
    pub classes: u16,
    /// Per class, the non-fatal error numbers `ignore_error` gave (empty:
    /// fio's default, EIO and EILSEQ).
    #[serde(default, skip_serializing_if = "no_lists")]
    pub ignore: [Vec<i32>; 3],
}

fn no_lists(l: &[Vec<i32>; 3]) -> bool {
    l.iter().all(Vec::is_empty)
}

impl OnError {
    /// Every error ends the job (fio's default).
    pub fn is_default(&self) -> bool {
        *self == OnError::default()
    }

    /// Whether `continue_on_error` is in effect (fio then reports the
    /// error count: `total_err`, `first_error`).
    #[inline]
    pub fn any(&self) -> bool {
        self.classes != 0
    }

    /// Whether the job goes on after error `errno` of `class`
    /// (`td_non_fatal_error`).
    pub fn non_fatal(&self, class: ErrorClass, errno: i32) -> bool {
        if self.classes & (1 << class as u16) == 0 {
            return false;
        }
        let list = &self.ignore[class as usize];
        if list.is_empty() {
            errno == EIO || errno == EILSEQ
        } else {
            list.contains(&errno)
        }
    }

    /// `continue_on_error=v` (`None`: not one of fio's values).
    pub fn set_classes(&mut self, v: &str) -> Option<()> {
        self.classes = match v {
            "none" | "0" => 0,
            "read" => 1,
            "write" => 2,
            "io" => 3,
            "verify" => 4,
            "all" | "1" => 0xffff,
            _ => return None,
        };
        Some(())
    }

    /// `ignore_error=v`: up to three `:`-separated lists (read, write,
    /// verify), each entry an error name or a (decimal or 0x hex) number;
    /// or fio's message for a bad one.
    pub fn set_ignored(&mut self, v: &str) -> Result<(), String> {
        for (class, list) in v.split(',').enumerate() {
            if class >= 3 {
                return Err("Illegal error type (a list each for read, write and verify errors)".into());
            }
            let mut errnos = Vec::new();
            for name in list.trim().split(':') {
                if name.is_empty() {
                    break;
                }
                let n = errno_named(name).unwrap_or(0);
                if n == 0 {
                    return Err(format!("Unknown error {name}, please use number value"));
                }
                errnos.push(n);
            }
            if !errnos.is_empty() {
                self.classes |= 1 << class;
                self.ignore[class] = errnos;
            }
        }
        Ok(())
    }
}

/// Linux's error names in error-number order from 1 (EWOULDBLOCK and
/// EDEADLOCK are the aliases of EAGAIN and EDEADLK); the names fio's
/// `ignore_error` takes.
const NAMES: &[&str] = &[
    "EPERM",
    "ENOENT",
    "ESRCH",
    "EINTR",
    "EIO",
    "ENXIO",
    "E2BIG",
    "ENOEXEC",
    "EBADF",
    "ECHILD",
    "EAGAIN",
    "ENOMEM",
    "EACCES",
    "EFAULT",
    "ENOTBLK",
    "EBUSY",
    "EEXIST",
    "EXDEV",
    "ENODEV",
    "ENOTDIR",
    "EISDIR",
    "EINVAL",
    "ENFILE",
    "EMFILE",
    "ENOTTY",
    "ETXTBSY",
    "EFBIG",
    "ENOSPC",
    "ESPIPE",
    "EROFS",
    "EMLINK",
    "EPIPE",
    "EDOM",
    "ERANGE",
    "EDEADLK",
    "ENAMETOOLONG",
    "ENOLCK",
    "ENOSYS",
    "ENOTEMPTY",
    "ELOOP",
    "EWOULDBLOCK",
    "ENOMSG",
    "EIDRM",
    "ECHRNG",
    "EL2NSYNC",
    "EL3HLT",
    "EL3RST",
    "ELNRNG",
    "EUNATCH",
    "ENOCSI",
    "EL2HLT",
    "EBADE",
    "EBADR",
    "EXFULL",
    "ENOANO",
    "EBADRQC",
    "EBADSLT",
    "EDEADLOCK",
    "EBFONT",
    "ENOSTR",
    "ENODATA",
    "ETIME",
    "ENOSR",
    "ENONET",
    "ENOPKG",
    "EREMOTE",
    "ENOLINK",
    "EADV",
    "ESRMNT",
    "ECOMM",
    "EPROTO",
    "EMULTIHOP",
    "EDOTDOT",
    "EBADMSG",
    "EOVERFLOW",
    "ENOTUNIQ",
    "EBADFD",
    "EREMCHG",
    "ELIBACC",
    "ELIBBAD",
    "ELIBSCN",
    "ELIBMAX",
    "ELIBEXEC",
    "EILSEQ",
    "ERESTART",
    "ESTRPIPE",
    "EUSERS",
    "ENOTSOCK",
    "EDESTADDRREQ",
    "EMSGSIZE",
    "EPROTOTYPE",
    "ENOPROTOOPT",
    "EPROTONOSUPPORT",
    "ESOCKTNOSUPPORT",
    "EOPNOTSUPP",
    "EPFNOSUPPORT",
    "EAFNOSUPPORT",
    "EADDRINUSE",
    "EADDRNOTAVAIL",
    "ENETDOWN",
    "ENETUNREACH",
    "ENETRESET",
    "ECONNABORTED",
    "ECONNRESET",
    "ENOBUFS",
    "EISCONN",
    "ENOTCONN",
    "ESHUTDOWN",
    "ETOOMANYREFS",
    "ETIMEDOUT",
    "ECONNREFUSED",
    "EHOSTDOWN",
    "EHOSTUNREACH",
    "EALREADY",
    "EINPROGRESS",
    "ESTALE",
    "EUCLEAN",
    "ENOTNAM",
    "ENAVAIL",
    "EISNAM",
    "EREMOTEIO",
    "EDQUOT",
    "ENOMEDIUM",
    "EMEDIUMTYPE",
    "ECANCELED",
    "ENOKEY",
    "EKEYEXPIRED",
    "EKEYREVOKED",
    "EKEYREJECTED",
    "EOWNERDEAD",
    "ENOTRECOVERABLE",
    "ERFKILL",
    "EHWPOISON",
];

/// The error number `name` stands for: a Linux name starting with `E`,
/// else a decimal or `0x` hex number (its absolute value); 0: unknown.
fn errno_named(name: &str) -> Option<i32> {
    if name.starts_with('E') {
        return match name {
            "EWOULDBLOCK" => Some(11),
            "EDEADLOCK" => Some(35),
            _ => NAMES.iter().position(|&n| n == name).map(|i| i as i32 + 1),
        };
    }
    let n = match name.strip_prefix("0x").or_else(|| name.strip_prefix("0X")) {
        Some(hex) => i64::from_str_radix(hex, 16).ok()?,
        None => name.parse::<i64>().ok()?,
    };
    i32::try_from(n.unsigned_abs()).ok()
}

/// The C library's text of error `errno` for the statuses the twin
/// returns and fio's own (fio's `strerror` in its output).
pub fn strerror(errno: i32) -> &'static str {
    match errno {
        EIO => "Input/output error",
        ENODATA => "No data available",
        EOVERFLOW => "Value too large for defined data type",
        ETOOMANYREFS => "Too many references: cannot splice",
        EILSEQ => "Invalid or incomplete multibyte or wide character",
        22 => "Invalid argument",
        110 => "Connection timed out",
        _ => "Unknown error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_linux_error_numbers() {
        assert_eq!(errno_named("EIO"), Some(EIO));
        assert_eq!(errno_named("ENODATA"), Some(ENODATA));
        assert_eq!(errno_named("EOVERFLOW"), Some(EOVERFLOW));
        assert_eq!(errno_named("EILSEQ"), Some(EILSEQ));
        assert_eq!(errno_named("ETOOMANYREFS"), Some(ETOOMANYREFS));
        assert_eq!(errno_named("EHWPOISON"), Some(133));
        assert_eq!(errno_named("EWOULDBLOCK"), Some(11));
        assert_eq!(errno_named("0x4b"), Some(75));
        assert_eq!(errno_named("-5"), Some(5));
        assert_eq!(errno_named("EBOGUS"), None);
    }

    #[test]
    fn classes_and_lists_follow_fio() {
        let mut e = OnError::default();
        assert!(!e.non_fatal(ErrorClass::Write, EIO));
        e.set_classes("write").unwrap();
        assert!(e.non_fatal(ErrorClass::Write, EIO));
        assert!(!e.non_fatal(ErrorClass::Read, EIO));
        assert!(!e.non_fatal(ErrorClass::Write, EOVERFLOW));
        e.set_ignored(",EOVERFLOW:ETOOMANYREFS").unwrap();
        assert!(e.non_fatal(ErrorClass::Write, EOVERFLOW));
        // The list replaces fio's default.
        assert!(!e.non_fatal(ErrorClass::Write, EIO));
        e.set_ignored("ENODATA").unwrap();
        assert!(e.non_fatal(ErrorClass::Read, ENODATA));
        // A later continue_on_error replaces the classes.
        e.set_classes("none").unwrap();
        assert!(!e.non_fatal(ErrorClass::Read, ENODATA));
        assert!(e.set_ignored("EIO,EIO,EIO,EIO").is_err());
        assert!(e.set_ignored("EBOGUS").is_err());
    }
}
