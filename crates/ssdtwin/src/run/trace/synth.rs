//! Synthetic client traces generated lazily from data: the
//! `atsb-*-synthetic` generators (TOML files under
//! `crates/ssdtwin/workloads/`, compiled in) and any generator file of the
//! same form. A generator is a trace source like a file: it is replayed,
//! summarised (`trace stats`) and exported (`trace convert`, `trace
//! generate`) through the same reader, one request at a time, without
//! materialising the trace.
//!
//! Models an application mix as *phases* (photo editing, gaming, a file
//! copy, ...), each with its own read/write mix, request sizes,
//! sequentiality, locality, concurrency, think time and address region.
//! The trace is a sequence of *segments*: a segment is one phase's
//! activity (a geometric number of requests of mean `segment`), followed
//! by an idle gap (exponential, mean `idle`; a replay with
//! `dependent:25` or `capped-idle:25` shortens it as AnandTech's playback does). Within a
//! segment the phase issues *groups*: a group is one direction and one
//! request size, `1 + Geometric` requests of mean `iodepth` issued at the
//! same instant (an application with that many I/Os in flight), then an
//! exponential think time of mean `think`. A group is sequential with
//! probability `sequential` (each request begins where the previous
//! request of its direction ended, as `trace stats` counts it) or random:
//! each request at a 4 KiB-aligned offset near the previous one
//! (within 8 MiB, probability `locality`: "pseudo-random") or anywhere in
//! the phase's region ("fully random").
//!
//! Each segment goes to the phase furthest behind its `share` of the
//! requests drawn so far (the segments' lengths are random, so the order
//! of the phases is irregular while their shares stay exact). The trace
//! has exactly `requests` requests.
//!
//! Each request carries its group ([`GroupMark`]): `dependent:25` replay
//! (the suites') issues a group once the previous one has completed and
//! the think time (or the idle gap, capped) has elapsed, so a slow drive
//! stretches the trace instead of queueing it without bound. The
//! generator records no drive: in its groups' marks, the whole gap
//! between two groups is idle (every group completes at once).
//!
//! Two optional fields make a generator reproduce published totals
//! exactly rather than on average (the PCMark generators use both; the
//! ATSB ones neither, so their streams are unchanged): `exact = true`
//! gives each phase exactly its share of the requests (largest-remainder
//! quotas; a segment ends early when its phase's quota is reached) and
//! gives each request the size furthest behind its weight instead of a
//! random size per group, so counts match the tables exactly and bytes to
//! within a request; `duration = "58.4s"` scales every think time and idle gap so
//! that the last request is issued exactly that long after the first
//! (the generator is run once, untimed, when it is opened, to measure
//! the unscaled length).
//!
//! A generator file may instead hold a `[copy]` table: a file copy
//! ([`super::copy`]: files, bytes, chunk, and the side of the copy the
//! drive is on), which then draws every request.
//!
//! Left out: trims and flushes (the published figures have none),
//! file-system metadata patterns and read-after-write dependencies
//! within a group (its requests are independent, issued at once).

use std::collections::BTreeMap;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use super::copy::{CopyDef, FileCopy};
use super::{GroupMark, TraceOp};
use crate::error::TraceError;
use crate::run::workload::fio::{parse_size, parse_time};

/// The built-in generators: (name, TOML source).
pub const BUILTIN: &[(&str, &str)] = &[
    ("atsb-destroyer-synthetic", include_str!("../../../workloads/atsb-destroyer-synthetic.toml")),
    ("atsb-heavy-synthetic", include_str!("../../../workloads/atsb-heavy-synthetic.toml")),
    ("atsb-light-synthetic", include_str!("../../../workloads/atsb-light-synthetic.toml")),
    ("pcmark8-photoshop-light-synthetic", include_str!("../../../workloads/pcmark8-photoshop-light-synthetic.toml")),
    ("pcmark8-photoshop-heavy-synthetic", include_str!("../../../workloads/pcmark8-photoshop-heavy-synthetic.toml")),
    ("pcmark8-indesign-synthetic", include_str!("../../../workloads/pcmark8-indesign-synthetic.toml")),
    ("pcmark8-illustrator-synthetic", include_str!("../../../workloads/pcmark8-illustrator-synthetic.toml")),
    ("pcmark8-after-effects-synthetic", include_str!("../../../workloads/pcmark8-after-effects-synthetic.toml")),
    ("pcmark8-word-synthetic", include_str!("../../../workloads/pcmark8-word-synthetic.toml")),
    ("pcmark8-excel-synthetic", include_str!("../../../workloads/pcmark8-excel-synthetic.toml")),
    ("pcmark8-powerpoint-synthetic", include_str!("../../../workloads/pcmark8-powerpoint-synthetic.toml")),
    (
        "pcmark8-world-of-warcraft-synthetic",
        include_str!("../../../workloads/pcmark8-world-of-warcraft-synthetic.toml"),
    ),
    ("pcmark8-battlefield-3-synthetic", include_str!("../../../workloads/pcmark8-battlefield-3-synthetic.toml")),
    ("vantage-windows-defender-synthetic", include_str!("../../../workloads/vantage-windows-defender-synthetic.toml")),
    ("vantage-gaming-synthetic", include_str!("../../../workloads/vantage-gaming-synthetic.toml")),
    ("vantage-photo-gallery-synthetic", include_str!("../../../workloads/vantage-photo-gallery-synthetic.toml")),
    ("vantage-vista-startup-synthetic", include_str!("../../../workloads/vantage-vista-startup-synthetic.toml")),
    ("vantage-movie-maker-synthetic", include_str!("../../../workloads/vantage-movie-maker-synthetic.toml")),
    ("vantage-media-center-synthetic", include_str!("../../../workloads/vantage-media-center-synthetic.toml")),
    ("vantage-media-player-synthetic", include_str!("../../../workloads/vantage-media-player-synthetic.toml")),
    (
        "vantage-application-loading-synthetic",
        include_str!("../../../workloads/vantage-application-loading-synthetic.toml"),
    ),
    ("pcmark10-cps1-synthetic", include_str!("../../../workloads/pcmark10-cps1-synthetic.toml")),
    ("pcmark10-cps2-synthetic", include_str!("../../../workloads/pcmark10-cps2-synthetic.toml")),
    ("pcmark10-cps3-synthetic", include_str!("../../../workloads/pcmark10-cps3-synthetic.toml")),
];

/// Names of the built-in generators.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// Whether `source` names a generator (a built-in name, or a file whose
/// name ends in `.toml`) rather than a trace file.
pub fn is_generator(source: &str) -> bool {
    BUILTIN.iter().any(|(n, _)| *n == source) || source.ends_with(".toml")
}

/// A generator file as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorFile {
    /// Identifier, e.g. `atsb-destroyer-synthetic`.
    pub name: String,
    /// One line saying what it is.
    pub title: String,
    /// Where its figures come from.
    #[serde(default)]
    pub source: String,
    /// Requests in the trace.
    pub requests: u64,
    /// Seed of every random draw.
    pub seed: u64,
    /// Addresses span `[0, span)` (a size, decimal unless KiB/MiB/GiB).
    pub span: String,
    /// The recorded duration (first to last request) the trace is scaled
    /// to, a fio time (`"58.4s"`); absent: whatever the gaps add up to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    /// Exact shares and sizes (see the module docs) instead of random
    /// draws.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
    /// The figures the trace is meant to have (checked by the tests).
    pub published: Published,
    /// The application phases.
    #[serde(rename = "phase", default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseDef>,
    /// A file copy instead of phases ([`super::copy`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<CopyDef>,
}

/// The figures a generator aims at, and whether they are published or
/// chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// `published` (with a source) or `chosen` (no figure found).
    pub status: String,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Bytes read (10^9 = 1 GB).
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Mean requests outstanding while the drive is busy.
    pub queue_depth: f64,
    /// Fraction of requests that continue the previous one of their
    /// direction.
    pub sequential: f64,
    /// Idle cap of the review's playback, ms (`inf`: idle replayed whole;
    /// 0: idle removed).
    pub idle_cap_ms: f64,
    /// Sequential reads (requests that continue the previous read), when
    /// published by kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential_reads: Option<u64>,
    /// Sequential writes, when published by kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential_writes: Option<u64>,
    /// Reads as a percentage of the requests, when that is what was
    /// published (the counts above then carry it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_percent: Option<f64>,
    /// Recorded duration, s, when published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// Files, when the trace is a file copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<u64>,
}

/// One application phase as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseDef {
    /// Name, e.g. `photo-editing`.
    pub name: String,
    /// Share of the trace's requests.
    pub share: f64,
    /// Share of the phase's requests that are reads.
    pub read_fraction: f64,
    /// Share of the phase's requests in sequential groups.
    pub sequential: f64,
    /// Share of random requests near the previous one (within 8 MiB).
    pub locality: f64,
    /// Mean requests issued together (a group).
    pub iodepth: f64,
    /// Mean think time between groups (fio time, e.g. `"1ms"`).
    pub think: String,
    /// Mean requests per segment.
    pub segment: u64,
    /// Mean idle after a segment (fio time).
    pub idle: String,
    /// Part of the span addressed, as fractions `[from, to)`.
    pub region: [f64; 2],
    /// Read sizes and their weights, e.g. `{ "4KiB" = 0.5, "128KiB" = 0.5 }`.
    pub read_sizes: BTreeMap<String, f64>,
    /// Write sizes and their weights.
    pub write_sizes: BTreeMap<String, f64>,
}

/// The source text of a generator (built-in name or file).
pub fn source_text(source: &str) -> Result<String, TraceError> {
    if let Some((_, s)) = BUILTIN.iter().find(|(n, _)| *n == source) {
        return Ok(s.to_string());
    }
    std::fs::read_to_string(source).map_err(|e| TraceError::Io { file: source.to_string(), message: e.to_string() })
}

/// Read a generator (built-in name or `.toml` file).
pub fn load(source: &str) -> Result<GeneratorFile, TraceError> {
    let text = source_text(source)?;
    toml::from_str(&text)
        .map_err(|e| TraceError::Generator { file: source.to_string(), reason: e.to_string().trim_end().to_string() })
}

/// One phase, ready to draw from.
#[derive(Debug, Clone)]
struct PhaseRt {
    read_fraction: f64,
    sequential: f64,
    locality: f64,
    /// Success probability of the geometric extra group size.
    group_p: f64,
    think_ns: f64,
    /// Success probability of the geometric segment length.
    segment_p: f64,
    idle_ns: f64,
    lo: u64,
    hi: u64,
    /// (cumulative weight, bytes), reads then writes.
    sizes: [Vec<(f64, u64)>; 2],
    /// `exact`: each size's weight (normalised) and the requests given
    /// that size so far, reads then writes.
    exact_sizes: [Vec<(f64, u64)>; 2],
}

/// A request drawn by the generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynthRequest {
    /// Issue time from the start, ns.
    pub time_ns: u64,
    /// Read or write.
    pub op: TraceOp,
    /// Byte offset.
    pub offset: u64,
    /// Bytes.
    pub len: u64,
    /// The request's group: the first of each group starts it, with the
    /// whole gap since the previous group's start as idle (the generator
    /// records no drive: each group completes at once); the others join.
    pub group: GroupMark,
}

/// A generator streaming its trace.
#[derive(Debug, Clone)]
pub struct Generator {
    name: String,
    span: u64,
    phases: Vec<PhaseRt>,
    /// Each phase's share of the requests.
    shares: Vec<f64>,
    /// Requests drawn by each phase so far.
    drawn: Vec<u64>,
    /// Requests drawn so far.
    drawn_total: u64,
    rng: Pcg64Mcg,
    left: u64,
    now_ns: f64,
    phase: usize,
    segment_left: u64,
    group_left: u64,
    group_dir: usize,
    group_len: u64,
    group_seq: bool,
    last_end: [Option<u64>; 2],
    /// Issue time of the previous group, ns (`None` before the first).
    prev_group_ns: Option<f64>,
    /// The next request is its group's first.
    group_first: bool,
    /// `exact`: each phase's quota of the requests (`None`: shares kept
    /// on average only).
    quotas: Option<Vec<u64>>,
    /// Multiplies every drawn time (`duration`; 1 otherwise).
    time_scale: f64,
    /// A file copy's stream, which then draws every request.
    copy: Option<Box<FileCopy>>,
}

/// Most requests in one group.
const MAX_GROUP: u64 = 256;

/// Reach of a "pseudo-random" request from the previous one, bytes.
const NEAR_BYTES: u64 = 8 << 20;

fn geometric_p(mean_extra: f64) -> f64 {
    // 1 + Geometric(p) on {0, 1, ...} has mean 1 + (1 - p) / p.
    1.0 / (1.0 + mean_extra.max(0.0))
}

/// Each share's whole number of `n` requests, summing to `n` (largest
/// remainders get the leftover requests; ties to the earlier phase).
fn quotas(shares: &[f64], n: u64) -> Vec<u64> {
    let exact: Vec<f64> = shares.iter().map(|s| s * n as f64).collect();
    let mut q: Vec<u64> = exact.iter().map(|x| x.floor() as u64).collect();
    let mut order: Vec<usize> = (0..q.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - q[b] as f64).total_cmp(&(exact[a] - q[a] as f64)).then(a.cmp(&b)));
    let short = n.saturating_sub(q.iter().sum());
    for &i in order.iter().cycle().take(short as usize) {
        q[i] += 1;
    }
    q
}

impl Generator {
    /// Validate a generator file and start its stream.
    pub fn new(def: &GeneratorFile, origin: &str) -> Result<Generator, TraceError> {
        let bad = |at: &str, reason: String| TraceError::Generator {
            file: origin.to_string(),
            reason: format!("{at}: {reason}"),
        };
        let span = parse_size(&def.span, 1000, 0).map_err(|r| bad("field `span`", r))?;
        if span < 1 << 20 {
            return Err(bad("field `span`", format!("{span} bytes is less than 1 MiB")));
        }
        if def.requests == 0 {
            return Err(bad("field `requests`", "a trace needs at least one request".into()));
        }
        let copy = match &def.copy {
            None if def.phases.is_empty() => {
                return Err(bad("[[phase]]", "a generator needs at least one phase (or a [copy] table)".into()))
            }
            None => None,
            Some(_) if !def.phases.is_empty() => {
                return Err(bad("[copy]", "a generator has [[phase]] tables or a [copy] table, not both".into()))
            }
            Some(_) if def.exact || def.duration.is_some() => {
                return Err(bad("[copy]", "`exact` and `duration` shape phases; a copy has neither".into()))
            }
            Some(c) => Some(Box::new(
                FileCopy::new(c, span, def.requests).map_err(|(f, r)| bad(&format!("[copy], field `{f}`"), r))?,
            )),
        };
        let mut phases = Vec::new();
        let mut weights = Vec::new();
        for p in &def.phases {
            let at = format!("phase `{}`", p.name);
            let frac = |f: &str, x: f64| {
                if (0.0..=1.0).contains(&x) {
                    Ok(x)
                } else {
                    Err(bad(&format!("{at}, field `{f}`"), format!("{x} is not between 0 and 1")))
                }
            };
            frac("read_fraction", p.read_fraction)?;
            frac("sequential", p.sequential)?;
            frac("locality", p.locality)?;
            if !(p.share > 0.0 && p.share.is_finite()) {
                return Err(bad(&format!("{at}, field `share`"), format!("{} is not above 0", p.share)));
            }
            if !(p.iodepth >= 1.0 && p.iodepth <= MAX_GROUP as f64) {
                return Err(bad(
                    &format!("{at}, field `iodepth`"),
                    format!("{} is not between 1 and {MAX_GROUP}", p.iodepth),
                ));
            }
            if p.segment == 0 {
                return Err(bad(&format!("{at}, field `segment`"), "a segment has at least one request".into()));
            }
            let [a, b] = p.region;
            if !(0.0 <= a && a < b && b <= 1.0) {
                return Err(bad(&format!("{at}, field `region`"), format!("[{a}, {b}] is not 0 ≤ from < to ≤ 1")));
            }
            let think_ns = parse_time(&p.think, 1_000_000_000).map_err(|r| bad(&format!("{at}, field `think`"), r))?;
            let idle_ns = parse_time(&p.idle, 1_000_000_000).map_err(|r| bad(&format!("{at}, field `idle`"), r))?;
            let lo = ((span as f64 * a) as u64) / 4096 * 4096;
            let hi = ((span as f64 * b) as u64) / 4096 * 4096;
            let mut sizes: [Vec<(f64, u64)>; 2] = [Vec::new(), Vec::new()];
            let mut exact_sizes: [Vec<(f64, u64)>; 2] = [Vec::new(), Vec::new()];
            for (k, (field, table)) in
                [("read_sizes", &p.read_sizes), ("write_sizes", &p.write_sizes)].into_iter().enumerate()
            {
                let at = format!("{at}, field `{field}`");
                let need = if k == 0 { p.read_fraction > 0.0 } else { p.read_fraction < 1.0 };
                if table.is_empty() && need {
                    return Err(bad(&at, "needs at least one size".into()));
                }
                let total: f64 = table.values().sum();
                let mut cum = 0.0;
                for (s, &w) in table {
                    let bytes = parse_size(s, 1000, 0).map_err(|r| bad(&at, r))?;
                    if bytes == 0 || bytes % 512 != 0 || bytes > hi - lo {
                        return Err(bad(
                            &at,
                            format!("`{s}` is not a multiple of 512 bytes within the phase's region"),
                        ));
                    }
                    if bytes > super::MAX_REQUEST_BYTES {
                        return Err(bad(&at, format!("`{s}` is 4 GiB or more; requests must be shorter than 4 GiB")));
                    }
                    if !(w >= 0.0 && w.is_finite()) {
                        return Err(bad(&at, format!("weight {w} of `{s}` is not 0 or more")));
                    }
                    cum += w / total;
                    sizes[k].push((cum, bytes));
                    exact_sizes[k].push((w / total, 0));
                }
                if let Some(last) = sizes[k].last_mut() {
                    last.0 = f64::INFINITY;
                }
            }
            weights.push(p.share);
            phases.push(PhaseRt {
                read_fraction: p.read_fraction,
                sequential: p.sequential,
                locality: p.locality,
                group_p: geometric_p(p.iodepth - 1.0),
                think_ns: think_ns as f64,
                segment_p: geometric_p(p.segment as f64 - 1.0),
                idle_ns: idle_ns as f64,
                lo,
                hi,
                sizes,
                exact_sizes,
            });
        }
        let total: f64 = weights.iter().sum();
        let shares: Vec<f64> = weights.iter().map(|w| w / total).collect();
        let quotas = def.exact.then(|| quotas(&shares, def.requests));
        let mut g = Generator {
            name: def.name.clone(),
            span,
            phases,
            drawn: vec![0; shares.len()],
            shares,
            drawn_total: 0,
            rng: Pcg64Mcg::seed_from_u64(def.seed),
            left: def.requests,
            now_ns: 0.0,
            phase: 0,
            segment_left: 0,
            group_left: 0,
            group_dir: 0,
            group_len: 0,
            group_seq: false,
            last_end: [None; 2],
            prev_group_ns: None,
            group_first: false,
            quotas,
            time_scale: 1.0,
            copy,
        };
        if let Some(d) = &def.duration {
            let want = parse_time(d, 1_000_000_000).map_err(|r| bad("field `duration`", r))?;
            // The unscaled length: the last request's time once every
            // request is drawn (a clone, so the stream starts afresh).
            let mut probe = g.clone();
            while probe.next_request().is_some() {}
            if probe.now_ns <= 0.0 {
                return Err(bad("field `duration`", "the trace's gaps are all zero; nothing to scale".into()));
            }
            g.time_scale = want as f64 / probe.now_ns;
        }
        Ok(g)
    }

    /// Open a built-in generator or a generator file.
    pub fn open(source: &str) -> Result<Generator, TraceError> {
        Generator::new(&load(source)?, source)
    }

    /// The generator's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Addresses lie in `[0, span)`.
    pub fn span(&self) -> u64 {
        self.span
    }

    /// 1 + Geometric(p): at least 1, capped at `cap`.
    #[inline]
    fn geometric(&mut self, p: f64, cap: u64) -> u64 {
        if p >= 1.0 {
            return 1;
        }
        let u: f64 = self.rng.random::<f64>();
        let k = ((1.0 - u).ln() / (1.0 - p).ln()).floor();
        1 + (k as u64).min(cap - 1)
    }

    #[inline]
    fn exponential(&mut self, mean: f64) -> f64 {
        if mean <= 0.0 {
            return 0.0;
        }
        -mean * (1.0 - self.rng.random::<f64>()).ln()
    }

    /// The next request, `None` after the last.
    #[inline]
    pub fn next_request(&mut self) -> Option<SynthRequest> {
        if let Some(c) = self.copy.as_deref_mut() {
            return c.next_request();
        }
        if self.left == 0 {
            return None;
        }
        if self.group_left == 0 {
            self.start_group();
        }
        self.left -= 1;
        self.group_left -= 1;
        self.segment_left = self.segment_left.saturating_sub(1);
        self.drawn[self.phase] += 1;
        self.drawn_total += 1;
        if self.quotas.is_some() {
            self.group_len = self.exact_size();
        }
        let p = &self.phases[self.phase];
        let (lo, hi, len, dir) = (p.lo, p.hi, self.group_len, self.group_dir);
        let offset = match self.last_end[dir] {
            Some(end) if self.group_seq && end + len <= hi => end,
            prev => {
                let slots = (hi - lo - len) / 4096 + 1;
                match prev {
                    Some(end) if self.rng.random::<f64>() < p.locality => {
                        let reach = NEAR_BYTES / 4096;
                        let here = (end.clamp(lo, hi - len) - lo) / 4096;
                        let from = here.saturating_sub(reach);
                        let to = (here + reach).min(slots - 1);
                        lo + self.rng.random_range(from..=to) * 4096
                    }
                    _ => lo + self.rng.random_range(0..slots) * 4096,
                }
            }
        };
        self.last_end[dir] = Some(offset + len);
        let now = self.now_ns * self.time_scale;
        let group = if std::mem::take(&mut self.group_first) {
            let idle = self.prev_group_ns.map_or(0, |prev| now as u64 - prev as u64);
            self.prev_group_ns = Some(now);
            GroupMark::Starts { idle_ns: idle }
        } else {
            GroupMark::Joins
        };
        Some(SynthRequest {
            time_ns: now as u64,
            op: if dir == 0 { TraceOp::Read } else { TraceOp::Write },
            offset,
            len,
            group,
        })
    }

    /// Draw the next group (and, at a segment's end, the idle gap and the
    /// next segment's phase); sets the group's issue time.
    fn start_group(&mut self) {
        if self.segment_left == 0 {
            let first = self.now_ns == 0.0 && self.last_end == [None; 2];
            if !first {
                let idle = self.phases[self.phase].idle_ns;
                self.now_ns += self.exponential(idle);
            }
            let total = self.drawn_total as f64;
            let behind = |i: usize| self.shares[i] * total - self.drawn[i] as f64;
            let open = |i: usize| self.quotas.as_ref().is_none_or(|q| self.drawn[i] < q[i]);
            let first_open = (0..self.shares.len()).find(|&i| open(i)).unwrap_or(0);
            self.phase = (0..self.shares.len()).filter(|&i| open(i)).fold(first_open, |best, i| {
                if behind(i) > behind(best) {
                    i
                } else {
                    best
                }
            });
            let p = self.phases[self.phase].segment_p;
            self.segment_left = self.geometric(p, u64::MAX);
            if let Some(q) = &self.quotas {
                self.segment_left = self.segment_left.min(q[self.phase] - self.drawn[self.phase]).max(1);
            }
            // A new activity starts somewhere new (in an exact trace a
            // sequential activity continues the previous request of its
            // direction, so that its requests are counted sequential as
            // the published tables count them).
            if self.quotas.is_none() {
                self.last_end = [None; 2];
            }
        } else {
            let think = self.phases[self.phase].think_ns;
            self.now_ns += self.exponential(think);
        }
        let p = &self.phases[self.phase];
        let (read_fraction, sequential, group_p) = (p.read_fraction, p.sequential, p.group_p);
        self.group_dir = usize::from(self.rng.random::<f64>() >= read_fraction);
        self.group_seq = self.rng.random::<f64>() < sequential;
        let u: f64 = self.rng.random::<f64>();
        let sizes = &self.phases[self.phase].sizes[self.group_dir];
        self.group_len = sizes.iter().find(|(c, _)| u < *c).map_or(4096, |&(_, b)| b);
        self.group_left = self.geometric(group_p, MAX_GROUP);
        if let Some(q) = &self.quotas {
            // Exact: the group ends with its phase's quota and segment.
            let left = (q[self.phase] - self.drawn[self.phase]).min(self.segment_left).max(1);
            self.group_left = self.group_left.min(left);
        }
        self.group_first = true;
    }

    /// Exact: the size of the next request, the one furthest behind its
    /// weight among the requests of this phase and direction so far.
    /// Kept out of line: only exact generators call it.
    #[inline(never)]
    fn exact_size(&mut self) -> u64 {
        let dir = self.group_dir;
        let table = &mut self.phases[self.phase].exact_sizes[dir];
        let given: u64 = table.iter().map(|&(_, c)| c).sum::<u64>() + 1;
        let lag = |&(w, c): &(f64, u64)| w * given as f64 - c as f64;
        match (0..table.len()).reduce(|a, b| if lag(&table[b]) > lag(&table[a]) { b } else { a }) {
            Some(k) => {
                table[k].1 += 1;
                self.phases[self.phase].sizes[dir][k].1
            }
            None => self.group_len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_stream() {
        for (name, _) in BUILTIN {
            let mut g = Generator::open(name).unwrap();
            let n = load(name).unwrap().requests.min(10_000);
            let mut last = 0;
            for _ in 0..n {
                let r = g.next_request().unwrap();
                assert!(r.time_ns >= last);
                assert!(r.offset + r.len <= g.span());
                last = r.time_ns;
            }
        }
    }

    #[test]
    fn exact_request_count() {
        let mut def = load("atsb-light-synthetic").unwrap();
        def.requests = 1234;
        let mut g = Generator::new(&def, "test").unwrap();
        let mut n = 0;
        while g.next_request().is_some() {
            n += 1;
        }
        assert_eq!(n, 1234);
    }

    #[test]
    fn quotas_add_up_by_largest_remainder() {
        // 2.5, 1.25, 1.25 of 5: the floors give 4, the largest remainder
        // the fifth.
        assert_eq!(quotas(&[0.5, 0.25, 0.25], 5), [3, 1, 1]);
        // Equal remainders: the earlier phase first.
        assert_eq!(quotas(&[1.0 / 3.0; 3], 4), [2, 1, 1]);
        assert_eq!(quotas(&[0.7, 0.3], 0), [0, 0]);
    }

    #[test]
    fn exact_phases_and_duration() {
        // Light's phases with exact quotas and a fixed length: every phase
        // draws its share, the last request comes at the duration.
        let mut def = load("atsb-light-synthetic").unwrap();
        def.requests = 10_000;
        def.exact = true;
        def.duration = Some("100s".into());
        let mut g = Generator::new(&def, "test").unwrap();
        let mut last = 0;
        while let Some(r) = g.next_request() {
            last = r.time_ns;
        }
        let total: f64 = def.phases.iter().map(|p| p.share).sum();
        let want = quotas(&def.phases.iter().map(|p| p.share / total).collect::<Vec<_>>(), 10_000);
        assert_eq!(g.drawn, want);
        assert!(last.abs_diff(100_000_000_000) <= 1, "{last}");
    }

    #[test]
    fn bad_field_is_named() {
        let mut def = load("atsb-light-synthetic").unwrap();
        def.phases[0].read_fraction = 1.5;
        let e = Generator::new(&def, "x.toml").unwrap_err().to_string();
        assert!(e.contains("x.toml") && e.contains("read_fraction"), "{e}");
    }
}
