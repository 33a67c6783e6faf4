//! File-copy traces: what a drive sees of a desktop file copy, generated
//! from a generator file's `[copy]` table (the `pcmark10-cps*-synthetic`
//! generators) instead of application phases.
//!
//! Models: `files` files of `bytes` bytes in all, copied one after the
//! other by a copy engine that moves each file in requests of `chunk`
//! bytes, in file order, the last request of a file its remainder. Each
//! file takes whole clusters of `cluster` bytes (the file system's
//! allocation unit): the sizes are as equal as whole clusters allow (the
//! first files one cluster more) and add up to `bytes` rounded down to a
//! whole cluster. The files lie one after the other from address 0, as a
//! fresh volume allocates them. Which requests reach the drive depends on
//! the side of the copy the drive is on (`side`):
//!
//! - `write`: files copied *to* the drive from another drive: only the
//!   destination's writes, to the files' addresses (which later traces
//!   read);
//! - `read`: files copied *from* the drive to another drive: only the
//!   source's reads of the files;
//! - `read-write`: a copy made *on* the drive: each chunk read from the
//!   files and then written to the copy, which lies right after them.
//!
//! Each file's requests are one group ([`GroupMark`]), all at time 0: a
//! copy has no recorded pace of its own (the engine issues the next
//! request when one completes), so it is replayed closed-loop with the
//! engine's requests outstanding (`closed:QD`); see the generators'
//! headers for the chunk and queue depth and their sources.
//!
//! Leaves out: the creation, closing and metadata of each file (the file
//! system's own small writes), and the other drive of a `read` or `write`
//! copy, whose side is not the drive under test.

use serde::{Deserialize, Serialize};

use super::synth::SynthRequest;
use super::{GroupMark, TraceOp};
use crate::run::workload::fio::parse_size;

/// A generator file's `[copy]` table as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CopyDef {
    /// Files copied.
    pub files: u64,
    /// Their bytes in all (a size; decimal units: `2.37GB` is 2.37 × 10^9).
    pub bytes: String,
    /// The side of the copy the drive is on: `write`, `read` or
    /// `read-write`.
    pub side: String,
    /// Bytes of each request of the copy (a size, e.g. `1MiB`).
    pub chunk: String,
    /// Allocation unit of the file system (a size, e.g. `4KiB`).
    pub cluster: String,
}

/// A file copy streaming its requests.
#[derive(Debug, Clone)]
pub struct FileCopy {
    files: u64,
    /// Clusters of every file, and the number of files with one more.
    clusters: u64,
    longer: u64,
    cluster: u64,
    chunk: u64,
    reads: bool,
    writes: bool,
    /// Where the copy made on the drive begins (`read-write`).
    copy_at: u64,
    /// The file being copied, its first byte, and the bytes of it done.
    file: u64,
    file_at: u64,
    done: u64,
    /// `read-write`: the chunk just read is to be written next.
    write_next: bool,
}

/// A field of `[copy]` and what is wrong with it.
pub type Invalid = (&'static str, String);

impl FileCopy {
    /// Validate a `[copy]` table against the generator's span and stated
    /// request count.
    pub fn new(def: &CopyDef, span: u64, requests: u64) -> Result<FileCopy, Invalid> {
        let size = |field: &'static str, s: &str| parse_size(s, 1000, 0).map_err(|r| (field, r));
        let bytes = size("bytes", &def.bytes)?;
        let chunk = size("chunk", &def.chunk)?;
        let cluster = size("cluster", &def.cluster)?;
        if cluster == 0 || cluster % 512 != 0 {
            return Err(("cluster", format!("`{}` is not a positive multiple of 512 bytes", def.cluster)));
        }
        if chunk == 0 || chunk % cluster != 0 || chunk > super::MAX_REQUEST_BYTES {
            return Err(("chunk", format!("`{}` is not a whole number of clusters below 4 GiB", def.chunk)));
        }
        if def.files == 0 {
            return Err(("files", "a copy needs at least one file".into()));
        }
        let (reads, writes) = match def.side.as_str() {
            "write" => (false, true),
            "read" => (true, false),
            "read-write" => (true, true),
            other => return Err(("side", format!("`{other}` is not write, read or read-write"))),
        };
        let total_clusters = bytes / cluster;
        if total_clusters < def.files {
            return Err(("bytes", format!("{bytes} bytes do not give each of {} files a cluster", def.files)));
        }
        let copy = FileCopy {
            files: def.files,
            clusters: total_clusters / def.files,
            longer: total_clusters % def.files,
            cluster,
            chunk,
            reads,
            writes,
            copy_at: total_clusters * cluster,
            file: 0,
            file_at: 0,
            done: 0,
            write_next: false,
        };
        let end = if reads && writes { 2 * copy.copy_at } else { copy.copy_at };
        if end > span {
            return Err(("bytes", format!("the copy reaches byte {end}, beyond the generator's span of {span}")));
        }
        let want = copy.requests();
        if requests != want {
            return Err((
                "files",
                format!("the copy makes {want} requests, but the file's `requests` says {requests}"),
            ));
        }
        Ok(copy)
    }

    /// Bytes of file `i`.
    fn file_bytes(&self, i: u64) -> u64 {
        (self.clusters + u64::from(i < self.longer)) * self.cluster
    }

    /// Requests of the whole copy.
    pub fn requests(&self) -> u64 {
        let per_file = |clusters: u64| (clusters * self.cluster).div_ceil(self.chunk);
        let chunks = self.longer * per_file(self.clusters + 1) + (self.files - self.longer) * per_file(self.clusters);
        chunks * (u64::from(self.reads) + u64::from(self.writes))
    }

    /// The next request, `None` after the last.
    #[inline]
    pub fn next_request(&mut self) -> Option<SynthRequest> {
        if self.file == self.files {
            return None;
        }
        let size = self.file_bytes(self.file);
        let len = (size - self.done).min(self.chunk);
        let starts = self.done == 0 && !self.write_next;
        let (op, offset) = if self.reads && !self.write_next {
            (TraceOp::Read, self.file_at + self.done)
        } else {
            let base = if self.reads { self.copy_at } else { 0 };
            (TraceOp::Write, base + self.file_at + self.done)
        };
        // Read-write: the chunk is written after it is read.
        self.write_next = self.reads && self.writes && !self.write_next;
        if !self.write_next {
            self.done += len;
            if self.done == size {
                self.file += 1;
                self.file_at += size;
                self.done = 0;
            }
        }
        let group = if starts { GroupMark::Starts { idle_ns: 0 } } else { GroupMark::Joins };
        Some(SynthRequest { time_ns: 0, op, offset, len, group })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(side: &str) -> CopyDef {
        CopyDef { files: 3, bytes: "40000B".into(), side: side.into(), chunk: "8KiB".into(), cluster: "4KiB".into() }
    }

    fn all(c: &mut FileCopy) -> Vec<(TraceOp, u64, u64, bool)> {
        std::iter::from_fn(|| c.next_request())
            .map(|r| (r.op, r.offset, r.len, matches!(r.group, GroupMark::Starts { .. })))
            .collect()
    }

    #[test]
    fn files_take_whole_clusters_and_chunks_by_hand() {
        // 40000 B = 9 clusters of 4096 (36864 B, the rest dropped): 3
        // files of 3 clusters (12288 B), each an 8 KiB chunk and a 4 KiB
        // remainder.
        use TraceOp::{Read, Write};
        let mut c = FileCopy::new(&def("write"), 1 << 20, 6).unwrap();
        let want = [0, 8192, 12288, 20480, 24576, 32768];
        let lens = [8192, 4096, 8192, 4096, 8192, 4096];
        let got = all(&mut c);
        for (k, r) in got.iter().enumerate() {
            assert_eq!(*r, (Write, want[k], lens[k], k % 2 == 0), "request {k}");
        }
        // A copy on the drive: read a chunk, write it after the files.
        let mut c = FileCopy::new(&def("read-write"), 1 << 20, 12).unwrap();
        let got = all(&mut c);
        assert_eq!(
            got[..4],
            [
                (Read, 0, 8192, true),
                (Write, 36864, 8192, false),
                (Read, 8192, 4096, false),
                (Write, 45056, 4096, false)
            ]
        );
        assert_eq!(got.len(), 12);
        // Uneven: 10 clusters over 3 files gives the first one 4 (two full
        // chunks), the others 3.
        let mut d = def("read");
        d.bytes = "40960B".into();
        let mut c = FileCopy::new(&d, 1 << 20, 6).unwrap();
        let got = all(&mut c);
        assert_eq!(got.iter().map(|r| r.2).sum::<u64>(), 40960);
        assert_eq!(got[..3], [(Read, 0, 8192, true), (Read, 8192, 8192, false), (Read, 16384, 8192, true)]);
    }

    #[test]
    fn bad_copies_are_named() {
        for (field, change, want) in [
            ("side", "sideways", "not write"),
            ("files", "", "12 requests"),
            ("chunk", "6000B", "whole number of clusters"),
            ("bytes", "4KiB", "do not give"),
        ] {
            let mut d = def("read-write");
            match field {
                "side" => d.side = change.into(),
                "chunk" => d.chunk = change.into(),
                "bytes" => d.bytes = change.into(),
                _ => {}
            }
            let e = FileCopy::new(&d, 1 << 20, 6).unwrap_err();
            assert_eq!(e.0, field, "{e:?}");
            assert!(e.1.contains(want), "{e:?}");
        }
        let e = FileCopy::new(&def("read-write"), 40000, 12).unwrap_err();
        assert!(e.1.contains("beyond the generator's span"), "{e:?}");
    }
}
