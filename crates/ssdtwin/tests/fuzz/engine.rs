//! The mutation engine: seeded mutations of corpus inputs (bit flips,
//! interesting bytes, insertions, deletions, duplicated ranges, numbers
//! replaced by extreme ones, lines spliced from other inputs, truncation),
//! a time budget, and the allocation guard. Left out: coverage feedback
//! (cargo-fuzz's, for long campaigns: docs/testing.md).

use std::alloc::{GlobalAlloc, Layout, System};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Largest single allocation allowed; a larger one fails (and aborts the
/// test binary, naming its size).
const MAX_ONE: usize = 256 << 20;

/// Most bytes live at once, over every target running in parallel.
pub const MAX_LIVE: usize = 1 << 30;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, refusing allocations over [`MAX_ONE`] and
/// counting the bytes live.
struct Guard;

// SAFETY: every call is forwarded to `System` with the same layout.
unsafe impl GlobalAlloc for Guard {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_ONE {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded as given.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note_alloc(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_ONE {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded as given.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note_alloc(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as given.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > MAX_ONE {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded as given.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            note_alloc(new_size);
        }
        p
    }
}

fn note_alloc(size: usize) {
    let now = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

#[global_allocator]
static GUARD: Guard = Guard;

/// Most bytes live at once so far.
pub fn peak_bytes() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// A seeded generator (SplitMix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Bytes that mean something to text parsers.
const BYTES: &[u8] = b"\0\xff\n\r\t ,.-+#[]=\"'%:/_eEkKmMgGpPxX0123456789\x80\xc3";

/// Numbers at the edges: overflow, huge sizes and counts, odd floats.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "1000000000000000",
    "36028797018963968",
    "1152921504606846976",
    "1e308",
    "-1e308",
    "1e-308",
    "nan",
    "inf",
    "-0",
    "0.0000000001",
    "16e",
    "1p",
    "8z",
];

/// Longest input made (the parsers' own line limits are larger).
const MAX_INPUT: usize = 1 << 16;

/// `input` changed by one to four mutations; `corpus` gives lines to
/// splice.
pub fn mutate(rng: &mut Rng, input: &[u8], corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut b = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = b.len();
        let at = rng.below(len + 1);
        match rng.below(10) {
            0 if len > 0 => b[at.min(len - 1)] ^= 1 << rng.below(8),
            1 if len > 0 => b[at.min(len - 1)] = BYTES[rng.below(BYTES.len())],
            2 => {
                let n = 1 + rng.below(8);
                let bytes: Vec<u8> = (0..n).map(|_| BYTES[rng.below(BYTES.len())]).collect();
                b.splice(at..at, bytes);
            }
            3 if len > 0 => {
                let end = (at + 1 + rng.below(len / 4 + 1)).min(len);
                b.drain(at.min(len - 1)..end);
            }
            4 if len > 0 => {
                let from = rng.below(len);
                let end = (from + 1 + rng.below(256)).min(len);
                let piece = b[from..end].to_vec();
                b.splice(at..at, piece);
            }
            5 | 6 => replace_number(rng, &mut b),
            7 => {
                let other = &corpus[rng.below(corpus.len())];
                let lines: Vec<&[u8]> = other.split(|&c| c == b'\n').collect();
                let line = lines[rng.below(lines.len())];
                let at = line_start(&b, at);
                let mut piece = line.to_vec();
                piece.push(b'\n');
                b.splice(at..at, piece);
            }
            8 => {
                // Repeat a line: many requests, sections or tables.
                let start = line_start(&b, at);
                let end = b[start..].iter().position(|&c| c == b'\n').map_or(b.len(), |i| start + i + 1);
                let line = b[start..end].to_vec();
                for _ in 0..1 + rng.below(64) {
                    b.splice(start..start, line.iter().copied());
                }
            }
            _ => b.truncate(at),
        }
        b.truncate(MAX_INPUT);
    }
    b
}

fn line_start(b: &[u8], at: usize) -> usize {
    b[..at.min(b.len())].iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1)
}

/// Replace a run of digits with one of [`NUMBERS`].
fn replace_number(rng: &mut Rng, b: &mut Vec<u8>) {
    let digits: Vec<usize> = (0..b.len()).filter(|&i| b[i].is_ascii_digit()).collect();
    if digits.is_empty() {
        return;
    }
    let mut start = digits[rng.below(digits.len())];
    while start > 0 && b[start - 1].is_ascii_digit() {
        start -= 1;
    }
    let mut end = start;
    while end < b.len() && (b[end].is_ascii_digit() || b[end] == b'_') {
        end += 1;
    }
    let n = NUMBERS[rng.below(NUMBERS.len())];
    b.splice(start..end, n.bytes());
}

/// Seconds each target runs (`SSDTWIN_FUZZ_SECS`, default 2).
fn budget() -> Duration {
    let secs = std::env::var("SSDTWIN_FUZZ_SECS").ok().and_then(|s| s.parse::<f64>().ok()).unwrap_or(2.0);
    Duration::from_secs_f64(secs.max(0.0))
}

/// Run `target` on the corpus, then on mutations of it until the budget
/// is spent; returns how many inputs ran. A panic saves the input and
/// names it.
pub fn fuzz(name: &str, corpus: &[Vec<u8>], mut target: impl FnMut(&[u8])) -> u64 {
    assert!(!corpus.is_empty());
    let seed = std::env::var("SSDTWIN_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed);
    let mut rng = Rng::new(seed ^ name.bytes().fold(0u64, |h, c| h.wrapping_mul(31).wrapping_add(c as u64)));
    let (start, budget) = (Instant::now(), budget());
    let mut pool: Vec<Vec<u8>> = corpus.to_vec();
    let mut runs = 0u64;
    let mut i = 0;
    while i < corpus.len() || start.elapsed() < budget {
        let input = if i < corpus.len() {
            corpus[i].clone()
        } else {
            let parent = &pool[rng.below(pool.len())];
            mutate(&mut rng, parent, corpus)
        };
        i += 1;
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| target(&input)));
        runs += 1;
        if let Err(panic) = outcome {
            let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
            let _ = std::fs::create_dir_all(&dir);
            let path = dir.join(format!("{name}-{seed}-{runs}"));
            let _ = std::fs::write(&path, &input);
            eprintln!("fuzz target {name} (seed {seed}) panicked on the input saved as {}", path.display());
            std::panic::resume_unwind(panic);
        }
        // Keep some mutants as parents: mutations accumulate.
        if pool.len() < 4096 && rng.below(4) == 0 {
            pool.push(input);
        }
    }
    assert!(peak_bytes() < MAX_LIVE, "{name}: {} bytes live at the peak", peak_bytes());
    println!("fuzz {name}: {runs} inputs in {:.1} s, seed {seed}", start.elapsed().as_secs_f64());
    runs
}

/// An error's message: not empty.
pub fn message(e: &dyn std::fmt::Display) -> String {
    let m = e.to_string();
    assert!(!m.trim().is_empty(), "an error without a message");
    m
}
