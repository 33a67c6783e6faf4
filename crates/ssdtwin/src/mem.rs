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
    use super::HugeVec;

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
}
