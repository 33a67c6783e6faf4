//! The blocks a verifying job has written and not yet read back: fio's
//! io piece log (iolog.c `log_io_piece`, backend.c `get_next_verify`).
//!
//! With fio's random map (a random pattern without `norandommap`) each
//! block is written once per pass, and fio keeps a list in the order
//! written, read back from its head. Otherwise a block may be written
//! again, and fio keeps an rb-tree by offset: a write that overlaps
//! logged ones replaces them (its `io_hist_len` drops by each), and the
//! lowest offset is read back first. Left out: fio's per-file order
//! (the twin has one file).

use std::collections::{BTreeMap, VecDeque};

/// Written and not yet read back: (offset, length).
#[derive(Debug, Clone)]
pub(crate) enum WriteLog {
    /// In the order written (fio's `io_hist_list`).
    Ordered(VecDeque<(u64, u32)>),
    /// By offset, overlaps replaced (fio's `io_hist_tree`).
    Sorted(BTreeMap<u64, u32>),
}

impl WriteLog {
    /// An empty log: `sorted` without fio's random map.
    pub(crate) fn new(sorted: bool) -> WriteLog {
        if sorted {
            WriteLog::Sorted(BTreeMap::new())
        } else {
            WriteLog::Ordered(VecDeque::new())
        }
    }

    /// A write of `len` bytes at `offset` was issued.
    pub(crate) fn push(&mut self, offset: u64, len: u32) {
        match self {
            WriteLog::Ordered(q) => q.push_back((offset, len)),
            WriteLog::Sorted(t) => {
                let end = offset + len as u64;
                // The one starting before it, if it reaches into it.
                if let Some((&o, &l)) = t.range(..offset).next_back() {
                    if o + l as u64 > offset {
                        t.remove(&o);
                    }
                }
                // Those starting inside it (or at its offset).
                while let Some((&o, _)) = t.range(offset..end).next() {
                    t.remove(&o);
                }
                t.insert(offset, len);
            }
        }
    }

    /// The next block to read back.
    pub(crate) fn pop(&mut self) -> Option<(u64, u32)> {
        match self {
            WriteLog::Ordered(q) => q.pop_front(),
            WriteLog::Sorted(t) => t.pop_first(),
        }
    }

    /// Entries logged (fio's `io_hist_len`).
    pub(crate) fn len(&self) -> usize {
        match self {
            WriteLog::Ordered(q) => q.len(),
            WriteLog::Sorted(t) => t.len(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes logged.
    pub(crate) fn bytes(&self) -> u64 {
        match self {
            WriteLog::Ordered(q) => q.iter().map(|e| e.1 as u64).sum(),
            WriteLog::Sorted(t) => t.values().map(|&l| l as u64).sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::WriteLog;

    /// fio's rb-tree: a write overlapping logged ones replaces every one
    /// it touches, and reads come back lowest offset first.
    #[test]
    fn a_sorted_log_replaces_overlaps_and_pops_by_offset() {
        let mut l = WriteLog::new(true);
        l.push(8192, 4096);
        l.push(0, 8192);
        l.push(16384, 4096);
        assert_eq!(l.len(), 3);
        // 4096..12288 overlaps [0, 8192) and [8192, 12288).
        l.push(4096, 8192);
        assert_eq!(l.len(), 2);
        assert_eq!(l.pop(), Some((4096, 8192)));
        assert_eq!(l.pop(), Some((16384, 4096)));
        assert_eq!(l.pop(), None);
        let mut o = WriteLog::new(false);
        o.push(8192, 4096);
        o.push(8192, 4096);
        assert_eq!((o.len(), o.pop()), (2, Some((8192, 4096))));
    }
}
