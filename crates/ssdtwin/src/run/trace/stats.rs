//! Statistics of a trace, gathered while it streams past: counts and bytes
//! per direction, sizes, sequentiality, footprint, inter-arrival times,
//! the recorded queue depth, and the requests skipped and why.
//!
//! Memory is fixed except for the footprint, a sparse bitmap of the 4 KiB
//! pages touched (one bit per page, in chunks of 16 MiB of addresses):
//! it grows with the distinct data touched, not with the trace's length,
//! and stops at [`MAX_CHUNKS`] chunks (256 MiB of bitmap, 8 TiB of
//! addresses): beyond, the footprint is a lower bound
//! ([`TraceStats::footprint_complete`] false), so that no trace can make
//! the statistics allocate in proportion to what it says.
//!
//! Left out: per-process or per-file breakdowns, and the queue depth of
//! traces that do not record response times (MSR's are used, and
//! blkparse's completion events paired with their queue or dispatch
//! events by device and sector; fio, MQSim, SPC and generators have none).

use std::collections::HashMap;

use hdrhistogram::Histogram;
use serde::Serialize;

use super::TraceOp;
use crate::units::fmt_ns;

/// Size buckets: up to 512 B, 1 KiB, ... 16 MiB, then larger.
const SIZE_BUCKETS: usize = 17;

/// Pages per footprint chunk (4096 × 4 KiB = 16 MiB of addresses).
const CHUNK_PAGES: u64 = 4096;

/// Why requests of a trace were not replayed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Flushes and syncs (not modelled: the write buffer is power-safe).
    pub flush: u64,
    /// Requests of length 0.
    pub zero_length: u64,
    /// Requests of another device than the one selected.
    pub other_device: u64,
    /// Requests after the `max_requests` limit.
    pub over_limit: u64,
}

/// Statistics of a trace's requests.
#[derive(Debug, Clone, Serialize)]
pub struct TraceStats {
    /// Requests counted (reads, writes and trims; not the skipped ones).
    pub requests: u64,
    /// Reads, writes, trims.
    pub ios: [u64; 3],
    /// Bytes read, written, trimmed.
    pub bytes: [u64; 3],
    /// Requests skipped, by reason.
    pub skipped: Skipped,
    /// Requests that begin where the previous request of the same
    /// direction ended.
    pub sequential: u64,
    /// Lowest byte address touched.
    pub lowest_byte: u64,
    /// One past the highest byte address touched.
    pub highest_byte: u64,
    /// Distinct bytes touched, counted in 4 KiB pages (a lower bound when
    /// `footprint_complete` is false).
    pub footprint_bytes: u64,
    /// False when the footprint's bitmap reached [`MAX_CHUNKS`] and later
    /// pages were not counted (the field is left out of the JSON when
    /// true).
    #[serde(skip_serializing_if = "is_true")]
    pub footprint_complete: bool,
    /// Requests by size: `size_histogram[i]` counts sizes up to `512 << i`
    /// bytes (larger ones in the last).
    pub size_histogram: [u64; SIZE_BUCKETS],
    /// Recorded time from the first to the last request, ns.
    pub recorded_ns: u64,
    /// Requests whose recorded time is earlier than the one before.
    pub out_of_order: u64,
    /// Sum of recorded response times, ns (formats that record them);
    /// written as at most `u64::MAX` (JSON numbers stop there).
    #[serde(serialize_with = "at_most_u64")]
    pub response_sum_ns: Option<u128>,
    /// Longest gap between consecutive requests, ns.
    pub inter_arrival_max_ns: u64,
    #[serde(skip)]
    inter_arrival: Histogram<u64>,
    #[serde(skip)]
    last_time: Option<u64>,
    #[serde(skip)]
    last_end: [Option<u64>; 3],
    /// Footprint chunks below [`DENSE_CHUNKS`], indexed directly.
    #[serde(skip)]
    dense: Vec<Option<Box<Chunk>>>,
    /// Footprint chunks above (addresses beyond 16 TiB).
    #[serde(skip)]
    sparse: HashMap<u64, Box<Chunk>>,
    /// Page ranges waiting to be marked: a range is marked [`DEFER`]
    /// requests after its bitmap word was requested from memory.
    #[serde(skip)]
    pending: [(u64, u64); DEFER],
    #[serde(skip)]
    pending_at: usize,
    /// Chunks allocated (dense and sparse).
    #[serde(skip)]
    chunks: usize,
}

fn at_most_u64<S: serde::Serializer>(v: &Option<u128>, s: S) -> Result<S::Ok, S::Error> {
    v.map(|x| u64::try_from(x).unwrap_or(u64::MAX)).serialize(s)
}

fn is_true(b: &bool) -> bool {
    *b
}

/// Most footprint chunks kept: 2¹⁹ × 512 B = 256 MiB of bitmap, 8 TiB of
/// distinct 16 MiB address regions.
pub const MAX_CHUNKS: usize = 1 << 19;

/// Requests between the prefetch of a footprint word and its update.
const DEFER: usize = 8;

/// One bit per 4 KiB page of 16 MiB of addresses.
type Chunk = [u64; (CHUNK_PAGES / 64) as usize];

/// Chunks indexed directly (16 TiB of addresses; 8 MiB of pointers at
/// most); higher addresses go to a hash map.
const DENSE_CHUNKS: u64 = 1 << 20;

impl Default for TraceStats {
    fn default() -> TraceStats {
        TraceStats {
            requests: 0,
            ios: [0; 3],
            bytes: [0; 3],
            skipped: Skipped::default(),
            sequential: 0,
            lowest_byte: u64::MAX,
            highest_byte: 0,
            footprint_bytes: 0,
            footprint_complete: true,
            size_histogram: [0; SIZE_BUCKETS],
            recorded_ns: 0,
            out_of_order: 0,
            response_sum_ns: None,
            inter_arrival_max_ns: 0,
            inter_arrival: Histogram::new_with_bounds(1, 10_000_000_000_000_000, 2).expect("valid histogram bounds"),
            last_time: None,
            last_end: [None; 3],
            dense: Vec::new(),
            sparse: HashMap::new(),
            pending: [(0, 0); DEFER],
            pending_at: 0,
            chunks: 0,
        }
    }
}

impl TraceStats {
    /// Count a request of `op` at byte `offset`, `len` bytes, recorded at
    /// `time_ns`.
    #[inline]
    pub fn record(&mut self, op: TraceOp, offset: u64, len: u64, time_ns: u64, response_ns: Option<u64>) {
        let kind = match op {
            TraceOp::Read => 0,
            TraceOp::Write => 1,
            TraceOp::Trim => 2,
            TraceOp::Flush => {
                self.skipped.flush += 1;
                return;
            }
        };
        if len == 0 {
            self.skipped.zero_length += 1;
            return;
        }
        self.requests += 1;
        self.ios[kind] += 1;
        self.bytes[kind] = self.bytes[kind].saturating_add(len);
        if self.last_end[kind] == Some(offset) {
            self.sequential += 1;
        }
        let end = offset.saturating_add(len);
        self.last_end[kind] = Some(end);
        self.lowest_byte = self.lowest_byte.min(offset);
        self.highest_byte = self.highest_byte.max(end);
        let bucket = (64 - (len.saturating_sub(1) >> 9).leading_zeros()) as usize;
        self.size_histogram[bucket.min(SIZE_BUCKETS - 1)] += 1;
        if let Some(last) = self.last_time {
            if time_ns < last {
                self.out_of_order += 1;
            } else {
                self.inter_arrival.saturating_record(time_ns - last);
                self.inter_arrival_max_ns = self.inter_arrival_max_ns.max(time_ns - last);
            }
        }
        self.last_time = Some(time_ns);
        self.recorded_ns = self.recorded_ns.max(time_ns);
        if let Some(r) = response_ns {
            let sum = self.response_sum_ns.get_or_insert(0);
            *sum = sum.saturating_add(r as u128);
        }
        let first = offset / 4096;
        self.prefetch_page(first);
        let (a, b) = std::mem::replace(&mut self.pending[self.pending_at], (first, end.div_ceil(4096)));
        self.pending_at = (self.pending_at + 1) % DEFER;
        self.touch(a, b);
    }

    /// Mark the footprint of the requests still pending: call once the
    /// last request is recorded, before reading `footprint_bytes`.
    pub fn finish(&mut self) {
        for i in 0..DEFER {
            let (a, b) = std::mem::take(&mut self.pending[i]);
            self.touch(a, b);
        }
    }

    /// Hint the CPU to load the footprint word of `page`.
    #[inline(always)]
    fn prefetch_page(&self, page: u64) {
        let chunk = page / CHUNK_PAGES;
        if let Some(Some(bits)) = self.dense.get(chunk as usize) {
            let word = &bits[((page % CHUNK_PAGES) / 64) as usize];
            #[cfg(target_arch = "x86_64")]
            // SAFETY: prefetching a valid reference has no observable effect.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((word as *const u64).cast())
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = word;
        }
    }

    fn touch(&mut self, first: u64, end: u64) {
        if end.saturating_sub(first) / CHUNK_PAGES >= MAX_CHUNKS as u64 {
            // More than the whole budget in one request.
            self.footprint_complete = false;
            return;
        }
        let mut page = first;
        while page < end {
            let chunk = page / CHUNK_PAGES;
            let chunk_end = ((chunk + 1) * CHUNK_PAGES).min(end);
            let (from, to) = (page % CHUNK_PAGES, (chunk_end - 1) % CHUNK_PAGES + 1);
            page = chunk_end;
            let Some(bits) = self.chunk(chunk) else {
                self.footprint_complete = false;
                continue;
            };
            // Whole words at a time: the pages from..to of the chunk.
            let mut added = 0;
            let mut i = from;
            while i < to {
                let (w, b) = ((i / 64) as usize, i % 64);
                let n = (to - i).min(64 - b);
                let mask = if n == 64 { u64::MAX } else { ((1u64 << n) - 1) << b };
                added += (mask & !bits[w]).count_ones() as u64;
                bits[w] |= mask;
                i += n;
            }
            self.footprint_bytes += added * 4096;
        }
    }

    /// The bitmap of footprint chunk `chunk`, allocated on first use;
    /// `None` once [`MAX_CHUNKS`] are allocated.
    #[inline]
    fn chunk(&mut self, chunk: u64) -> Option<&mut Chunk> {
        let full = self.chunks >= MAX_CHUNKS;
        let slot = if chunk < DENSE_CHUNKS {
            let i = chunk as usize;
            if i >= self.dense.len() {
                if full {
                    return None;
                }
                self.dense.resize_with(i + 1, || None);
            }
            &mut self.dense[i]
        } else {
            if full && !self.sparse.contains_key(&chunk) {
                return None;
            }
            let entry = self.sparse.entry(chunk);
            return Some(entry.or_insert_with(|| {
                self.chunks += 1;
                Box::new([0; (CHUNK_PAGES / 64) as usize])
            }));
        };
        if slot.is_none() {
            if full {
                return None;
            }
            self.chunks += 1;
        }
        Some(slot.get_or_insert_with(|| Box::new([0; (CHUNK_PAGES / 64) as usize])))
    }

    /// Fraction of requests that are sequential (0 with no request).
    pub fn sequential_fraction(&self) -> f64 {
        ratio(self.sequential as f64, self.requests as f64)
    }

    /// Mean inter-arrival time, ns (exact: recorded span over gaps).
    pub fn inter_arrival_mean_ns(&self) -> f64 {
        ratio(self.recorded_ns as f64, self.requests.saturating_sub(1) as f64)
    }

    /// Inter-arrival time at percentile `p`, ns.
    pub fn inter_arrival_percentile_ns(&self, p: f64) -> u64 {
        self.inter_arrival.value_at_percentile(p)
    }

    /// Mean number of requests outstanding that the recorded response
    /// times imply (Little's law: Σ response / recorded duration); `None`
    /// when the format records no response time.
    pub fn recorded_queue_depth(&self) -> Option<f64> {
        let sum = self.response_sum_ns?;
        (self.recorded_ns > 0).then(|| sum as f64 / self.recorded_ns as f64)
    }

    /// Size bucket labels, as in [`TraceStats::size_histogram`].
    pub fn size_label(bucket: usize) -> String {
        let bytes = 512u64 << bucket;
        let label = |b: u64| {
            if b >= 1 << 20 {
                format!("{}M", b >> 20)
            } else if b >= 1024 {
                format!("{}K", b >> 10)
            } else {
                format!("{b}")
            }
        };
        if bucket + 1 == SIZE_BUCKETS {
            format!(">{}", label(bytes >> 1))
        } else {
            format!("≤{}", label(bytes))
        }
    }

    /// The statistics as JSON, with the derived figures.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).expect("stats serialise");
        let sizes: serde_json::Map<String, serde_json::Value> = self
            .size_histogram
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (TraceStats::size_label(i), n.into()))
            .collect();
        v["size_histogram"] = sizes.into();
        v["sequential_fraction"] = self.sequential_fraction().into();
        if self.requests == 0 {
            v["lowest_byte"] = 0.into();
        }
        v["inter_arrival_ns"] = serde_json::json!({
            "mean": self.inter_arrival_mean_ns(),
            "p50": self.inter_arrival_percentile_ns(50.0),
            "p99": self.inter_arrival_percentile_ns(99.0),
            "max": self.inter_arrival_max_ns,
        });
        v["recorded_queue_depth"] = self.recorded_queue_depth().into();
        v
    }

    /// A readable summary (what `ssdtwin trace stats` prints).
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let total_bytes: u64 = self.bytes.iter().sum();
        out.push_str(&format!("requests: {}", self.requests));
        for (i, name) in ["reads", "writes", "trims"].iter().enumerate() {
            out.push_str(&format!(
                ", {} {} ({:.1}% by count, {:.1}% by bytes)",
                self.ios[i],
                name,
                100.0 * ratio(self.ios[i] as f64, self.requests as f64),
                100.0 * ratio(self.bytes[i] as f64, total_bytes as f64)
            ));
        }
        out.push('\n');
        out.push_str(&format!(
            "bytes: {} read, {} written, {} trimmed\n",
            gb(self.bytes[0]),
            gb(self.bytes[1]),
            gb(self.bytes[2])
        ));
        let s = &self.skipped;
        out.push_str(&format!(
            "skipped: {} flushes/syncs, {} zero-length, {} of other devices, {} beyond the request limit\n",
            s.flush, s.zero_length, s.other_device, s.over_limit
        ));
        let span = self.highest_byte.saturating_sub(self.lowest_byte.min(self.highest_byte));
        out.push_str(&format!(
            "span: bytes {}..{} ({}), footprint (distinct 4 KiB pages touched) {}{}\n",
            if self.requests == 0 { 0 } else { self.lowest_byte },
            self.highest_byte,
            gb(span),
            if self.footprint_complete { "" } else { "at least " },
            gb(self.footprint_bytes)
        ));
        if !self.footprint_complete {
            out.push_str(&format!(
                "footprint: counted in the first {} distinct 16 MiB regions only (the bitmap's limit)\n",
                MAX_CHUNKS
            ));
        }
        out.push_str(&format!(
            "sequential: {:.1}% of requests continue the previous one of their direction\n",
            100.0 * self.sequential_fraction()
        ));
        out.push_str("sizes:");
        for (i, &n) in self.size_histogram.iter().enumerate() {
            if n > 0 {
                out.push_str(&format!(
                    " {} {:.1}%",
                    TraceStats::size_label(i),
                    100.0 * ratio(n as f64, self.requests as f64)
                ));
            }
        }
        out.push('\n');
        out.push_str(&format!(
            "recorded duration: {:.3} s; inter-arrival mean {} p50 {} p99 {} max {}{}\n",
            self.recorded_ns as f64 / 1e9,
            fmt_ns(self.inter_arrival_mean_ns()),
            fmt_ns(self.inter_arrival_percentile_ns(50.0) as f64),
            fmt_ns(self.inter_arrival_percentile_ns(99.0) as f64),
            fmt_ns(self.inter_arrival_max_ns as f64),
            if self.out_of_order > 0 {
                format!("; {} requests out of time order", self.out_of_order)
            } else {
                String::new()
            }
        ));
        match self.recorded_queue_depth() {
            Some(qd) => out.push_str(&format!("recorded queue depth (Σ response time / duration): {qd:.2}\n")),
            None => out.push_str("recorded queue depth: n/a (the format records no response times)\n"),
        }
        out
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// Bytes in human units (B, kB, MB, GB).
pub(crate) fn gb(bytes: u64) -> String {
    if bytes >= 1_000_000_000 {
        format!("{:.2} GB", bytes as f64 / 1e9)
    } else if bytes >= 1_000_000 {
        format!("{:.2} MB", bytes as f64 / 1e6)
    } else if bytes >= 1000 {
        format!("{:.1} kB", bytes as f64 / 1e3)
    } else {
        format!("{bytes} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_buckets() {
        let mut s = TraceStats::default();
        for len in [512, 513, 4096, 4097, 1 << 30] {
            s.record(TraceOp::Read, 0, len, 0, None);
        }
        assert_eq!(s.size_histogram[0], 1);
        assert_eq!(s.size_histogram[1], 1);
        assert_eq!(s.size_histogram[3], 1);
        assert_eq!(s.size_histogram[4], 1);
        assert_eq!(s.size_histogram[SIZE_BUCKETS - 1], 1);
        assert_eq!(TraceStats::size_label(3), "≤4K");
        assert_eq!(TraceStats::size_label(SIZE_BUCKETS - 1), ">16M");
    }

    #[test]
    fn footprint_counts_distinct_pages() {
        let mut s = TraceStats::default();
        s.record(TraceOp::Write, 0, 8192, 0, None);
        s.record(TraceOp::Read, 4096, 8192, 1, None);
        s.record(TraceOp::Write, 100 << 30, 512, 2, None);
        s.finish();
        assert_eq!(s.footprint_bytes, 4 * 4096);
        assert_eq!(s.sequential, 0);
        s.record(TraceOp::Write, (100 << 30) + 512, 512, 3, None);
        assert_eq!(s.sequential, 1);
    }

    #[test]
    fn footprint_stops_at_its_budget() {
        let mut s = TraceStats::default();
        let chunk = CHUNK_PAGES * 4096;
        // One chunk each, far apart (some beyond 16 TiB, in the sparse map).
        for i in 0..MAX_CHUNKS as u64 + 10 {
            s.record(TraceOp::Write, i * 3 * chunk, chunk, i, None);
        }
        s.finish();
        assert!(!s.footprint_complete);
        assert_eq!(s.footprint_bytes, MAX_CHUNKS as u64 * chunk);
        assert_eq!(s.chunks, MAX_CHUNKS);
        // A chunk already kept still counts.
        let before = s.footprint_bytes;
        s.record(TraceOp::Write, 0, chunk, 0, None);
        s.finish();
        assert_eq!(s.footprint_bytes, before);
        assert!(s.summary().contains("at least"));
        assert_eq!(s.to_json()["footprint_complete"], false);
    }

    #[test]
    fn an_absurd_request_is_counted_without_allocating() {
        let mut s = TraceStats::default();
        s.record(TraceOp::Trim, 1 << 40, 1 << 62, 0, None);
        s.record(TraceOp::Trim, u64::MAX - 10, u64::MAX, 1, None);
        s.record(TraceOp::Read, 0, 4096, 2, None);
        s.finish();
        assert_eq!(s.requests, 3);
        assert_eq!(s.bytes[2], u64::MAX, "saturates");
        // The last page of the address space (the second request's end
        // saturates there) and the read's.
        assert_eq!(s.footprint_bytes, 2 * 4096);
        assert!(!s.footprint_complete);
        assert_eq!(s.chunks, 2);
        let complete = TraceStats::default();
        assert!(complete.to_json().get("footprint_complete").is_none(), "left out when complete");
    }
}
