//! Large flat arrays for the mapping tables, on huge pages where the OS
//! allows.
//!
//! The logical-to-physical and reverse maps of a terabyte drive are
//! gigabytes of `u32` touched at random: with 4 KiB pages nearly every
//! access also misses the TLB, and the page walks, not the cache misses,
//! bound the simulator. [`HugeVec`] asks Linux for transparent huge pages
//! (`madvise(MADV_HUGEPAGE)`, which works when THP is `always` or
//! `madvise`, the common defaults) before its pages are first touched, so
//! one TLB entry covers 2 MiB. Elsewhere, or when the kernel declines, it
//! is a plain vector. Clones are advised too.
//!
//! [`PackedU32`] keeps a copy of such an array compactly (a prepared drive
//! kept to start several tests from): runs of arithmetic progressions,
//! which is what the maps of sequentially written data are.

use std::ops::{Deref, DerefMut};

/// A fixed-length vector whose memory is advised to use huge pages.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct HugeVec<T>(Vec<T>);

/// Arrays smaller than this stay on normal pages.
const HUGE_MIN_BYTES: usize = 4 << 20;

impl<T: Copy> HugeVec<T> {
    /// `n` copies of `value`.
    pub fn filled(n: usize, value: T) -> HugeVec<T> {
        let mut v = Vec::with_capacity(n);
        advise_huge(&mut v);
        v.resize(n, value);
        HugeVec(v)
    }
}

impl<T: Copy> Clone for HugeVec<T> {
    fn clone(&self) -> HugeVec<T> {
        let mut v = Vec::with_capacity(self.0.len());
        advise_huge(&mut v);
        v.extend_from_slice(&self.0);
        HugeVec(v)
    }
}

impl<T> Deref for HugeVec<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> DerefMut for HugeVec<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

/// Saved as a plain sequence (drive images).
impl<T: serde::Serialize> serde::Serialize for HugeVec<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// Loaded from a plain sequence, then advised like a new one.
impl<'de, T: serde::Deserialize<'de> + Copy> serde::Deserialize<'de> for HugeVec<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<HugeVec<T>, D::Error> {
        let v = Vec::<T>::deserialize(d)?;
        let mut h = Vec::with_capacity(v.len());
        advise_huge(&mut h);
        h.extend_from_slice(&v);
        Ok(HugeVec(h))
    }
}

impl<T> HugeVec<T> {
    /// Move the contents out, leaving an empty vector (a snapshot holds the
    /// large arrays apart from the rest of the drive).
    pub fn take(&mut self) -> HugeVec<T> {
        HugeVec(std::mem::take(&mut self.0))
    }
}

/// Entries per chunk of a [`PackedU32`]: each chunk is encoded as runs or
/// kept raw, whichever is smaller, so a partly random array costs at most
/// its raw size.
const PACK_CHUNK: usize = 1 << 16;

/// Columns shorter than this are kept raw (not worth a level of runs).
const PACK_MIN_RUN_COLUMN: usize = 16;

/// A `u32` array packed as runs of arithmetic progressions (`first`,
/// `first + step`, ... with wrapping arithmetic), the runs' own columns
/// (firsts, steps, lengths) packed the same way in turn: a sequentially
/// written drive's maps — consecutive slots a program unit long, the units
/// striped over the dies, so the units' first slots step by a die's stride
/// and then by a unit — and unmapped ranges (runs of `NONE`) shrink by
/// orders of magnitude; a chunk that does not shrink is kept as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackedU32 {
    len: usize,
    chunks: Vec<PackedChunk>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum PackedChunk {
    /// The runs' first values, steps and lengths, each packed.
    Runs(Box<[PackedU32; 3]>),
    Raw(Box<[u32]>),
}

impl PackedU32 {
    /// Pack `values`.
    pub fn pack(values: &[u32]) -> PackedU32 {
        let chunks = values.chunks(PACK_CHUNK).map(pack_chunk).collect();
        PackedU32 { len: values.len(), chunks }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Heap bytes the packed form holds.
    pub fn heap_bytes(&self) -> usize {
        self.chunks.len() * std::mem::size_of::<PackedChunk>()
            + self
                .chunks
                .iter()
                .map(|c| match c {
                    PackedChunk::Runs(cols) => cols.iter().map(|c| c.heap_bytes()).sum::<usize>() + 3 * 32,
                    PackedChunk::Raw(r) => r.len() * 4,
                })
                .sum::<usize>()
    }

    /// Write the entries into `out`, reusing its memory when it has the
    /// right length (no second array alongside it); otherwise it is
    /// allocated anew.
    pub fn unpack_into(&self, out: &mut HugeVec<u32>) {
        if out.len() != self.len {
            *out = HugeVec::filled(self.len, 0);
        }
        self.unpack_to(out);
    }

    /// Write the entries into `dst` (exactly `len` long).
    fn unpack_to(&self, dst: &mut [u32]) {
        debug_assert_eq!(dst.len(), self.len);
        for (chunk, dst) in self.chunks.iter().zip(dst.chunks_mut(PACK_CHUNK)) {
            match chunk {
                PackedChunk::Raw(r) => dst.copy_from_slice(r),
                PackedChunk::Runs(cols) => {
                    let [firsts, steps, lens] = cols.as_ref().each_ref().map(|c| {
                        let mut v = vec![0; c.len];
                        c.unpack_to(&mut v);
                        v
                    });
                    let mut at = 0;
                    for ((&first, &step), &n) in firsts.iter().zip(&steps).zip(&lens) {
                        let n = n as usize;
                        let mut v = first;
                        for x in &mut dst[at..at + n] {
                            *x = v;
                            v = v.wrapping_add(step);
                        }
                        at += n;
                    }
                }
            }
        }
    }
}

/// One chunk as runs (their columns packed in turn), or raw when the runs
/// would not be smaller.
fn pack_chunk(a: &[u32]) -> PackedChunk {
    if a.len() < PACK_MIN_RUN_COLUMN {
        return PackedChunk::Raw(a.into());
    }
    // Runs cost three words each: past this many they are no smaller.
    let limit = a.len() / 3;
    let (mut firsts, mut steps, mut lens) = (Vec::new(), Vec::new(), Vec::new());
    let mut i = 0;
    while i < a.len() {
        if firsts.len() >= limit {
            return PackedChunk::Raw(a.into());
        }
        let first = a[i];
        let Some(&second) = a.get(i + 1) else {
            firsts.push(first);
            steps.push(0);
            lens.push(1);
            break;
        };
        let step = second.wrapping_sub(first);
        let mut prev = second;
        let mut j = i + 2;
        while j < a.len() && a[j].wrapping_sub(prev) == step {
            prev = a[j];
            j += 1;
        }
        firsts.push(first);
        steps.push(step);
        lens.push((j - i) as u32);
        i = j;
    }
    if firsts.len() >= limit {
        return PackedChunk::Raw(a.into());
    }
    PackedChunk::Runs(Box::new([PackedU32::pack(&firsts), PackedU32::pack(&steps), PackedU32::pack(&lens)]))
}

/// Advise the kernel to back the (not yet touched) capacity of `v` with
/// huge pages. Only whole 4 KiB pages inside the allocation are advised.
fn advise_huge<T>(v: &mut Vec<T>) {
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < HUGE_MIN_BYTES {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = v.as_mut_ptr() as usize;
        let first = start.next_multiple_of(PAGE);
        let end = (start + bytes) / PAGE * PAGE;
        if end > first {
            // SAFETY: the range lies inside the vector's own allocation;
            // MADV_HUGEPAGE changes how pages are backed, never their
            // contents, and a refusal is harmless.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{HugeVec, PackedU32, PACK_CHUNK};

    #[test]
    fn filled_and_cloned_vectors_hold_their_values() {
        let mut v = HugeVec::filled(3 << 20, u32::MAX);
        v[12345] = 7;
        let c = v.clone();
        assert_eq!(c.len(), 3 << 20);
        assert_eq!(c[12345], 7);
        assert!(c.iter().enumerate().all(|(i, &x)| x == if i == 12345 { 7 } else { u32::MAX }));
        assert!(HugeVec::filled(0, 0u32).is_empty());
    }

    #[test]
    fn packed_arrays_unpack_to_the_same_values() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let n = 3 * PACK_CHUNK + 1234;
        // Sequential runs with jumps, constant runs, a random chunk, and
        // wrapping steps: every kind of chunk and run boundary.
        let mut a: Vec<u32> = (0..n as u32).map(|i| (i / 64) * 1000 + i % 64).collect();
        a[PACK_CHUNK..2 * PACK_CHUNK].iter_mut().for_each(|x| *x = rng.random());
        a[2 * PACK_CHUNK..2 * PACK_CHUNK + 500].iter_mut().for_each(|x| *x = u32::MAX);
        for (k, x) in a[2 * PACK_CHUNK + 500..2 * PACK_CHUNK + 600].iter_mut().enumerate() {
            *x = (u32::MAX - 3).wrapping_add(k as u32 * 2); // wraps past zero
        }
        let p = PackedU32::pack(&a);
        assert_eq!(p.len(), n);
        // The random chunk is kept raw; the rest packs small.
        assert!(p.heap_bytes() < PACK_CHUNK * 4 + n / 64 * 12 + 4096, "{} bytes", p.heap_bytes());
        let mut out = HugeVec::filled(n, 5);
        p.unpack_into(&mut out);
        assert_eq!(&out[..], &a[..]);
        // Into a vector of another length: allocated anew.
        let mut other = HugeVec::filled(3, 0);
        p.unpack_into(&mut other);
        assert_eq!(&other[..], &a[..]);
        // Empty and one-entry arrays.
        let mut e = HugeVec::filled(0, 0);
        PackedU32::pack(&[]).unpack_into(&mut e);
        assert!(e.is_empty());
        PackedU32::pack(&[9]).unpack_into(&mut e);
        assert_eq!(&e[..], &[9]);
    }
}
