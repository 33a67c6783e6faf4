//! fio's flush options (options.c; io_u.c `get_rw_ddir`, backend.c
//! `do_io`): `fsync=N` and `fdatasync=N` queue a sync after every N
//! writes issued (on a block device `fsync` and `fdatasync` both end in
//! the drive's FLUSH: Linux's `blkdev_fsync` ignores the data-only flag),
//! `end_fsync` and `fsync_on_close` one FLUSH when the job's I/O is done,
//! and `sync` opens the device with O_SYNC (`sync`, `1`) or O_DSYNC
//! (`dsync`): Linux then sends every direct write with Force Unit Access
//! (block/fops.c `dio_bio_write_op`), emulated by a write and a FLUSH on
//! a device that has a volatile write cache but no FUA (block/blk-flush.c);
//! the `io_uring_cmd` and `sg` engines' `writefua` sets FUA directly.
//! What the twin does with them is in [`crate::run::source`].
//! Left out: `sync_file_range` (writes back the page cache, which a
//! direct job does not use), `write_barrier` (no engine of fio issues
//! barriers), `end_syncfs` (a file system's).

use super::options::Entry;
use super::values::invalid;
use crate::error::JobError;
use crate::run::workload::Syncs;

/// The options as read so far (later ones win).
#[derive(Debug, Default)]
pub(super) struct SyncOptions {
    syncs: Syncs,
    end_fsync: bool,
    fsync_on_close: bool,
    writefua: bool,
}

/// fio's boolean: empty (a bare switch), 0/1, true/false.
fn boolean(at: &str, key: &str, v: &str) -> Result<bool, JobError> {
    match v {
        "" | "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(invalid(at, key, format!("`{v}` is not 0 or 1"))),
    }
}

impl SyncOptions {
    /// Read one option (one the table gives to this module:
    /// [`super::table::Reader::Sync`]).
    pub(super) fn apply(&mut self, (key, v, at): &Entry) -> Result<(), JobError> {
        let key = key.as_str();
        let count = || v.parse::<u32>().map_err(|_| invalid(at, key, format!("`{v}` is not a whole number of writes")));
        match key {
            "fsync" => self.syncs.fsync = count()?,
            "fdatasync" => self.syncs.fdatasync = count()?,
            "end_fsync" => self.end_fsync = boolean(at, key, v)?,
            "fsync_on_close" => self.fsync_on_close = boolean(at, key, v)?,
            "writefua" => self.writefua = boolean(at, key, v)?,
            "sync" => {
                self.syncs.fua = match v.as_str() {
                    "none" | "0" | "false" => false,
                    "sync" | "1" | "true" | "dsync" => true,
                    _ => return Err(invalid(at, key, format!("`{v}` is not one of none, 0, sync, 1, dsync"))),
                }
            }
            _ => unreachable!("the table gives {key} to another reader"),
        }
        Ok(())
    }

    /// The job's flushes (`None`: none asked for).
    pub(super) fn finish(self) -> Option<Syncs> {
        let syncs =
            Syncs { end: self.end_fsync || self.fsync_on_close, fua: self.syncs.fua || self.writefua, ..self.syncs };
        (syncs != Syncs::default()).then_some(syncs)
    }
}
