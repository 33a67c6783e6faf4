//! fio options and job files (the subset that describes a workload).
//!
//! Job files use fio's INI syntax: `[global]` sets defaults for the
//! sections after it, every other section is a job. As in fio, jobs start
//! together and share the drive unless `stonewall` (wait for every job
//! before it), `wait_for=NAME`, or `startdelay` orders them; `numjobs=N`
//! makes N clones (each `offset_increment` further into the drive) that
//! run concurrently; `new_group`/`stonewall` start a new reporting group.
//! ssdtwin's own sections `idle=TIME` and `secure_erase=1` are barriers:
//! they start when every job before them has finished, and the jobs after
//! them wait for them (an idle host cannot overlap with I/O).
//!
//! Values follow fio: sizes take `k`/`m`/`g`/`t` suffixes (powers of two
//! by default; `kb_base=1000` switches to fio's SI mode) or a percentage of
//! the drive (`size=50%`); times take `us`/`ms`/`s`/`m`/`h` suffixes, with
//! fio's default units (seconds for `runtime`, `ramp_time`, `startdelay`,
//! microseconds for `thinktime` and `max_latency`). Options that only
//! describe the host side of a real fio run (`ioengine`, `direct`,
//! `filename`, `verify*`, ...) are accepted, have no effect, and are
//! listed in [`JobFile::ignored`]; any other unknown option is an error
//! naming file, line and option.
//!
//! The latency target, steady-state detection and log options are read
//! by [`super::fio_jobctl`]. Left out (errors naming the option):
//! `fsync`/`fdatasync`, verification, zoned block devices.

use super::{Burst, Distribution, IoSpec, Job, Phase, Rate, RwPattern, Sequencer, SizeChoice};
use crate::error::JobError;

/// Options that change the simulated workload.
pub const KNOWN: &[&str] = &[
    "name",
    "rw",
    "readwrite",
    "rw_sequencer",
    "bs",
    "blocksize",
    "bsrange",
    "blocksize_range",
    "bssplit",
    "blockalign",
    "ba",
    "bs_unaligned",
    "iodepth",
    "numjobs",
    "offset",
    "offset_increment",
    "size",
    "filesize",
    "io_size",
    "io_limit",
    "number_ios",
    "loops",
    "runtime",
    "time_based",
    "rwmixread",
    "rwmixwrite",
    "thinktime",
    "thinktime_blocks",
    "thinktime_spin",
    "ramp_time",
    "startdelay",
    "randseed",
    "randrepeat",
    "norandommap",
    "percentage_random",
    "random_distribution",
    "rate",
    "rate_iops",
    "rate_min",
    "rate_iops_min",
    "rate_process",
    "rate_cycle",
    "max_latency",
    "kb_base",
    "stonewall",
    "wait_for_previous",
    "wait_for",
    "new_group",
    "group_reporting",
    "burst_size",
    "duty_cycle",
    "idle",
    "apst",
    "secure_erase",
    "trace",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "latency_run",
    "ss",
    "steadystate",
    "ss_dur",
    "steadystate_duration",
    "ss_ramp",
    "steadystate_ramp_time",
    "write_bw_log",
    "write_iops_log",
    "write_lat_log",
    "write_hist_log",
    "log_avg_msec",
    "log_hist_msec",
    "log_hist_coarseness",
    "per_job_logs",
    "log_offset",
    "retention",
    "age",
    "per_day",
];

/// Options that decide when a job runs or how it is reported, handled by
/// [`parse_job_file`] rather than by the phase.
const SCHEDULE: &[&str] =
    &["stonewall", "wait_for_previous", "wait_for", "new_group", "group_reporting", "startdelay", "offset_increment"];

/// fio options accepted for compatibility that do not change a
/// simulation: they describe the host (engine, files, CPU, buffers,
/// verification, fio's own reporting). Any option starting with
/// `verify` counts too.
pub const HOST_ONLY: &[&str] = &[
    "ioengine",
    "direct",
    "buffered",
    "filename",
    "filename_format",
    "directory",
    "unlink",
    "unlink_each_loop",
    "thread",
    "threads",
    "random_generator",
    "cpus_allowed",
    "cpus_allowed_policy",
    "cpumask",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "nice",
    "prio",
    "prioclass",
    "description",
    "invalidate",
    "refill_buffers",
    "scramble_buffers",
    "zero_buffers",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "buffer_pattern",
    "dedupe_percentage",
    "percentile_list",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "significant_figures",
    "io_submit_mode",
    "iodepth_batch",
    "iodepth_batch_submit",
    "iodepth_batch_complete",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete_max",
    "iodepth_low",
    "clocksource",
    "gtod_reduce",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "fadvise_hint",
    "create_on_open",
    "create_serialize",
    "file_service_type",
    "nrfiles",
    "openfiles",
    "allow_mounted_write",
    "overwrite",
    "fallocate",
    "pre_read",
    "end_fsync",
    "fsync_on_close",
    "exitall",
    "exitall_on_error",
    "continue_on_error",
    "ignore_error",
    "hugepage-size",
    "mem",
    "iomem",
    "iomem_align",
    "mem_align",
    "sqthread_poll",
    "fixedbufs",
    "registerfiles",
    "hipri",
    "lockmem",
    "uid",
    "gid",
    "exec_prerun",
    "exec_postrun",
    "cgroup",
    "eta",
    "bwavgtime",
    "iopsavgtime",
    "unified_rw_reporting",
];

/// fio options that change the workload and that ssdtwin does not model
/// yet: an error that names them.
const NOT_SUPPORTED: &[&str] = &["fsync", "fdatasync", "write_barrier", "zonemode"];

/// Whether `key` only describes the host.
pub fn is_host_only(key: &str) -> bool {
    HOST_ONLY.contains(&key) || key.starts_with("verify")
}

/// One option: (key, value, where it was written).
pub(super) type Entry = (String, String, String);

/// Options in the order given, each with where it came from.
#[derive(Debug, Clone, Default)]
pub struct JobOptions {
    entries: Vec<Entry>,
}

impl JobOptions {
    /// No options.
    pub fn new() -> JobOptions {
        JobOptions::default()
    }

    /// Add `key=value`; `origin` names where it was written.
    pub fn push(&mut self, key: &str, value: &str, origin: &str) {
        self.entries.push((key.to_string(), value.to_string(), origin.to_string()));
    }

    /// Whether no options were given.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Build one phase from the options (later options win).
    /// `capacity` is the drive's user capacity, for percentages and
    /// range checks.
    pub fn to_phase(&self, default_name: &str, capacity: u64) -> Result<Phase, JobError> {
        build_phase(default_name, &self.entries, capacity)
    }
}

/// One job of a job file, with the options that decide when it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct JobEntry {
    /// What the job does.
    pub phase: Phase,
    /// The section's own options as written (fio's `job options`).
    pub options: Vec<(String, String)>,
    /// Wait for every job before this one (`stonewall`,
    /// `wait_for_previous`; implied for idle and secure-erase sections and
    /// for the jobs after them).
    pub stonewall: bool,
    /// Start a new reporting group (`new_group`, implied by `stonewall`).
    pub new_group: bool,
    /// Wait for the job of this name (`wait_for`).
    pub wait_for: Option<String>,
    /// Delay from when the job may start, ns (`startdelay`).
    pub startdelay_ns: u64,
    /// Report clones (and the group) as one (`group_reporting`).
    pub group_reporting: bool,
    /// Clone number among the job's `numjobs` (0 for the first).
    pub clone: u32,
}

/// A parsed job file: its jobs in order and what was accepted but ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFile {
    /// Jobs in file order (a section with `numjobs=N` gives N entries).
    pub jobs: Vec<JobEntry>,
    /// `[global]` options as written (fio's `global options`).
    pub global: Vec<(String, String)>,
    /// Options accepted because they only describe the host, each once.
    pub ignored: Vec<String>,
}

impl JobFile {
    /// The jobs as a sequence of phases (the order of the file).
    pub fn to_job(&self) -> Job {
        Job { phases: self.jobs.iter().map(|j| j.phase.clone()).collect() }
    }
}

/// Parse fio's command-line job options (`--name=value` pairs after the
/// program's own options, in order) into a job file: options before the
/// first `--name` are global, and each `--name` starts a job, as in fio.
/// `origin` names them in messages.
pub fn parse_command_line(
    pairs: &[(String, String)],
    origin: &str,
    capacity: u64,
    defaults: &JobOptions,
) -> Result<JobFile, JobError> {
    let mut text = String::from("[global]\n");
    let mut lines = vec![String::new(); 1];
    for (k, v) in pairs {
        if k == "name" {
            text.push_str(&format!("[{v}]\n"));
        } else {
            text.push_str(&format!("{k}={v}\n"));
        }
        lines.push(format!("{origin} (--{k})"));
    }
    parse_lines(&text, &|i| lines.get(i).cloned().unwrap_or_default(), origin, capacity, defaults)
}

/// Parse a job file. `origin` is its path (for messages); `defaults` apply
/// before the file's own options (the command line's `--seed` as
/// `randseed`, say), so `[global]` and the sections override them.
pub fn parse_job_file(text: &str, origin: &str, capacity: u64, defaults: &JobOptions) -> Result<JobFile, JobError> {
    parse_lines(text, &|i| format!("{origin}:{}", i + 1), origin, capacity, defaults)
}

fn parse_lines(
    text: &str,
    at_line: &dyn Fn(usize) -> String,
    origin: &str,
    capacity: u64,
    defaults: &JobOptions,
) -> Result<JobFile, JobError> {
    let mut global: Vec<Entry> = defaults.entries.clone();
    let mut global_written: Vec<(String, String)> = Vec::new();
    let mut sections: Vec<(String, Vec<Entry>, Vec<Entry>)> = Vec::new();
    let mut in_global = false;
    for (i, raw) in text.lines().enumerate() {
        let at = at_line(i);
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest.strip_suffix(']').ok_or_else(|| JobError::Syntax {
                origin: at.clone(),
                line: raw.to_string(),
                reason: "a section header must end with `]`".into(),
            })?;
            let name = name.trim();
            if name.is_empty() {
                return Err(JobError::Syntax {
                    origin: at,
                    line: raw.to_string(),
                    reason: "empty section name".into(),
                });
            }
            in_global = name == "global";
            if !in_global {
                // Each section sees [global] as it stands here.
                sections.push((name.to_string(), global.clone(), Vec::new()));
            }
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (line, ""),
        };
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(JobError::Syntax {
                origin: at,
                line: raw.to_string(),
                reason: "expected `option=value`".into(),
            });
        }
        let entry = (key.to_string(), value.to_string(), at.clone());
        if in_global {
            global_written.push((key.to_string(), value.to_string()));
            global.push(entry);
        } else if let Some((_, _, opts)) = sections.last_mut() {
            opts.push(entry);
        } else {
            return Err(JobError::Syntax {
                origin: at,
                line: raw.to_string(),
                reason: "option outside a section (start with [global] or [jobname])".into(),
            });
        }
    }
    if sections.is_empty() {
        return Err(JobError::Syntax {
            origin: origin.to_string(),
            line: String::new(),
            reason: "the file has no job section".into(),
        });
    }
    // Every unknown option in the file at once.
    let all: Vec<&Entry> = sections.iter().flat_map(|(_, g, o)| g.iter().chain(o)).collect();
    let mut seen = std::collections::BTreeSet::new();
    // A section that replays a trace (`trace=FILE`) also takes the
    // replay's options.
    let unknown: Vec<&Entry> = sections
        .iter()
        .flat_map(|(_, g, o)| {
            let replays = g.iter().chain(o).any(|(k, _, _)| k == "trace");
            g.iter()
                .chain(o)
                .filter(move |(k, _, _)| !(replays && crate::run::trace::options::OPTIONS.contains(&k.as_str())))
        })
        .filter(|(k, _, _)| !is_host_only(k) && !KNOWN.contains(&k.as_str()))
        .filter(|(k, _, at)| seen.insert((k.clone(), at.clone())))
        .collect();
    if !unknown.is_empty() {
        return Err(unknown_error(&unknown));
    }
    let mut ignored: Vec<String> = Vec::new();
    for (k, _, _) in &all {
        if is_host_only(k) && !ignored.contains(k) {
            ignored.push(k.clone());
        }
    }
    let mut jobs = Vec::new();
    let mut barrier_before = false;
    for (name, global_here, opts) in sections {
        // [global] I/O options do not apply to idle, secure-erase and
        // retention sections; an age section's workload takes them. All
        // four run alone.
        let quiet = opts.iter().any(|(k, _, _)| matches!(k.as_str(), "idle" | "secure_erase" | "retention"));
        let barrier = quiet || opts.iter().any(|(k, _, _)| k == "age");
        let entries: Vec<Entry> =
            if quiet { opts.clone() } else { global_here.into_iter().chain(opts.clone()).collect() };
        let mut stonewall = barrier || barrier_before;
        let mut new_group = false;
        let mut wait_for = None;
        let mut startdelay_ns = 0;
        let mut group_reporting = false;
        let mut offset_increment = 0u64;
        let mut numjobs = 1u32;
        let kb_base = kb_base_of(&entries)?;
        for (k, v, at) in &entries {
            let flag = || parse_bool(v).map_err(|r| invalid(at, k, r));
            match k.as_str() {
                "stonewall" | "wait_for_previous" => stonewall |= flag()?,
                "new_group" => new_group |= flag()?,
                "group_reporting" => group_reporting = flag()?,
                "wait_for" => wait_for = Some(v.clone()),
                "startdelay" => {
                    startdelay_ns = parse_time(v, 1_000_000_000).map_err(|r| invalid(at, k, r))?;
                }
                "offset_increment" => {
                    offset_increment = parse_size(v, kb_base, capacity).map_err(|r| invalid(at, k, r))?;
                }
                "numjobs" => numjobs = v.parse().unwrap_or(1),
                _ => {}
            }
        }
        barrier_before = barrier;
        let phase = build_phase(&name, &entries, capacity)?;
        let options: Vec<(String, String)> = opts.iter().map(|(k, v, _)| (k.clone(), v.clone())).collect();
        let clones = if let Phase::Io(_) = phase { numjobs.max(1) } else { 1 };
        for clone in 0..clones {
            let mut phase = phase.clone();
            if let Phase::Io(spec) = &mut phase {
                if clones > 1 {
                    // Clones are separate jobs (fio's threads): each with its
                    // own queue, seed and offset.
                    spec.numjobs = 1;
                    spec.offset += clone as u64 * offset_increment;
                    spec.randseed = spec.randseed.wrapping_add((clone as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                    let at = entries.iter().rev().find(|e| e.0 == "offset_increment").or(entries.first());
                    check_fits(spec, capacity).map_err(|(o, r)| {
                        invalid(at.map_or(origin, |e| e.2.as_str()), o, format!("clone {clone}: {r}"))
                    })?;
                }
            }
            jobs.push(JobEntry {
                phase,
                options: options.clone(),
                stonewall: stonewall && clone == 0,
                new_group: (new_group || stonewall) && clone == 0,
                wait_for: wait_for.clone(),
                startdelay_ns,
                group_reporting,
                clone,
            });
        }
    }
    for j in &jobs {
        if let Some(w) = &j.wait_for {
            if !jobs.iter().any(|o| o.phase.name() == w) {
                return Err(invalid(origin, "wait_for", format!("no job named `{w}`")));
            }
        }
    }
    Ok(JobFile { jobs, global: global_written, ignored })
}

fn unknown_error(unknown: &[&Entry]) -> JobError {
    let first_at = unknown[0].2.clone();
    let option = unknown
        .iter()
        .enumerate()
        .map(|(i, (k, _, at))| {
            let why = if NOT_SUPPORTED.contains(&k.as_str()) { " (fio option not supported by ssdtwin)" } else { "" };
            if i == 0 {
                format!("`{k}`{why}")
            } else {
                format!("`{k}`{why} ({at})")
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    JobError::UnknownOption { origin: first_at, option, known: KNOWN.join(", ") }
}

fn kb_base_of(entries: &[Entry]) -> Result<u64, JobError> {
    let mut kb_base = 1024u64;
    for (k, v, at) in entries {
        if k == "kb_base" {
            kb_base = match v.as_str() {
                "1024" => 1024,
                "1000" => 1000,
                _ => return Err(invalid(at, k, format!("`{v}` is not 1000 or 1024"))),
            };
        }
    }
    Ok(kb_base)
}

fn invalid(origin: &str, option: &str, reason: impl Into<String>) -> JobError {
    JobError::Invalid { origin: origin.to_string(), option: option.to_string(), reason: reason.into() }
}

fn build_phase(default_name: &str, entries: &[(String, String, String)], capacity: u64) -> Result<Phase, JobError> {
    if entries.iter().any(|(k, _, _)| k == "trace") {
        return crate::run::trace::options::job_phase(default_name, entries);
    }
    // kb_base first: it changes how every size is read.
    let kb_base = kb_base_of(entries)?;
    let mut spec = IoSpec::new(default_name, RwPattern::Read);
    let mut rw_given = false;
    let mut idle: Option<(u64, String)> = None;
    let mut retention: Option<(u64, String)> = None;
    let mut age: Option<(u64, String)> = None;
    let mut per_day: Option<(crate::run::lifetime::PerDay, String)> = None;
    let mut secure_erase: Option<String> = None;
    let mut apst_given = false;
    let mut burst_size: Option<(u64, String)> = None;
    let mut duty: Option<(f64, String)> = None;
    let mut other_io_option: Option<String> = None;
    let unknown: Vec<&Entry> =
        entries.iter().filter(|(k, _, _)| !is_host_only(k) && !KNOWN.contains(&k.as_str())).collect();
    if !unknown.is_empty() {
        return Err(unknown_error(&unknown));
    }
    let mut bs_given: Option<[Option<u32>; 3]> = None;
    let mut ranges: Option<[SizeChoice; 3]> = None;
    let mut bs_unaligned = false;
    let mut rate = Rate { bytes_per_s: [0; 3], iops: [0; 3], poisson: false };
    let mut rate_given = false;
    let mut modifier: Option<u64> = None;
    let mut sequencer = Sequencer::Sequential;
    let mut zoned_abs: Option<(Vec<Option<AbsZones>>, String)> = None;
    let mut control = super::fio_jobctl::Control::default();
    for entry in entries {
        let (k, v, at) = entry;
        let key = k.as_str();
        if is_host_only(key) || SCHEDULE.contains(&key) {
            continue;
        }
        let size = || parse_size(v, kb_base, capacity).map_err(|r| invalid(at, key, r));
        let int = || v.parse::<u64>().map_err(|_| invalid(at, key, format!("`{v}` is not a whole number")));
        // Options that do not make a phase an I/O phase: the seed (the
        // command line always gives one) and APST are harmless in an idle
        // or secure-erase phase.
        if !matches!(
            key,
            "name" | "idle" | "kb_base" | "randseed" | "randrepeat" | "secure_erase" | "apst" | "retention"
        ) {
            other_io_option.get_or_insert_with(|| key.to_string());
        }
        match key {
            "name" => spec.name = v.clone(),
            "rw" | "readwrite" => {
                let (pattern, m) = match v.split_once(':') {
                    Some((p, m)) => (p, Some(m)),
                    None => (v.as_str(), None),
                };
                spec.rw = RwPattern::parse(pattern).ok_or_else(|| {
                    invalid(at, key, format!("`{v}` is not one of read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim, trimwrite (with an optional `:N`)"))
                })?;
                modifier = match m {
                    None => None,
                    Some(m) if spec.rw.is_random() => {
                        Some(m.parse::<u64>().map_err(|_| invalid(at, key, format!("`{m}` is not a number of I/Os")))?)
                    }
                    Some(m) => Some(parse_size(m, kb_base, capacity).map_err(|r| invalid(at, key, r))?),
                };
                rw_given = true;
            }
            "rw_sequencer" => {
                sequencer = match v.as_str() {
                    "sequential" => Sequencer::Sequential,
                    "identical" => Sequencer::Identical,
                    _ => return Err(invalid(at, key, format!("`{v}` is not sequential or identical"))),
                }
            }
            "bs" | "blocksize" => {
                let mut dirs = [None; 3];
                for (i, part) in per_direction(v).into_iter().enumerate() {
                    if let Some(p) = part {
                        dirs[i] = Some(block_size(p, kb_base).map_err(|r| invalid(at, key, r))?);
                    }
                }
                if let Some(b) = dirs[0].or(dirs[1]).or(dirs[2]) {
                    spec.bs = dirs[0].unwrap_or(b);
                }
                bs_given = Some(dirs);
            }
            "bsrange" | "blocksize_range" => {
                let mut dirs: [SizeChoice; 3] = std::array::from_fn(|_| SizeChoice { choices: vec![] });
                for (i, part) in per_direction(v).into_iter().enumerate() {
                    let Some(p) = part else { continue };
                    let (lo, hi) =
                        p.split_once('-').ok_or_else(|| invalid(at, key, format!("`{p}` is not MIN-MAX")))?;
                    let lo = block_size(lo, kb_base).map_err(|r| invalid(at, key, r))?;
                    let hi = block_size(hi, kb_base).map_err(|r| invalid(at, key, r))?;
                    if hi < lo {
                        return Err(invalid(at, key, format!("`{p}`: the maximum is below the minimum")));
                    }
                    dirs[i].choices = (1..=hi / lo).map(|m| (lo * m, 1)).collect();
                }
                ranges = Some(dirs);
            }
            "bssplit" => {
                let mut dirs: [SizeChoice; 3] = std::array::from_fn(|_| SizeChoice { choices: vec![] });
                for (i, part) in per_direction(v).into_iter().enumerate() {
                    if let Some(p) = part {
                        dirs[i].choices = bssplit(p, kb_base).map_err(|r| invalid(at, key, r))?;
                    }
                }
                ranges = Some(dirs);
            }
            "blockalign" | "ba" => {
                let parts = per_direction(v);
                let b = parts.iter().flatten().next().copied().unwrap_or("4k");
                spec.blockalign = Some(block_size(b, kb_base).map_err(|r| invalid(at, key, r))?);
            }
            "bs_unaligned" => bs_unaligned = parse_bool(v).map_err(|r| invalid(at, key, r))?,
            "random_distribution" => {
                // fio's per-direction list: one value for all, or
                // `read,write[,trim]`.
                let mut dirs: [(Distribution, Option<AbsZones>); 3] = Default::default();
                for (i, part) in per_direction(v).into_iter().enumerate() {
                    dirs[i] = distribution(part.unwrap_or("random"), at, kb_base, capacity)?;
                }
                zoned_abs = Some((dirs.iter().map(|d| d.1.clone()).collect(), at.clone()));
                let [r, w, t] = dirs.map(|d| d.0);
                if r == w && w == t {
                    spec.distribution = r;
                    spec.distributions = None;
                } else {
                    spec.distribution = r.clone();
                    spec.distributions = Some([r, w, t]);
                }
            }
            "rate" | "rate_iops" => {
                for (i, part) in per_direction(v).into_iter().enumerate() {
                    let Some(p) = part else { continue };
                    if key == "rate" {
                        rate.bytes_per_s[i] = parse_size(p, kb_base, capacity).map_err(|r| invalid(at, key, r))?;
                    } else {
                        rate.iops[i] =
                            p.parse().map_err(|_| invalid(at, key, format!("`{p}` is not a whole number")))?;
                    }
                }
                rate_given = true;
            }
            "rate_process" => {
                rate.poisson = match v.as_str() {
                    "linear" => false,
                    "poisson" => true,
                    _ => return Err(invalid(at, key, format!("`{v}` is not linear or poisson"))),
                }
            }
            // Checks of the achieved rate, not limits: the twin reports the
            // rate reached; they do not change the commands.
            "rate_min" | "rate_iops_min" | "rate_cycle" => {}
            "thinktime_blocks" => {
                let n = int()?;
                if n == 0 {
                    return Err(invalid(at, key, "must be at least 1"));
                }
                spec.thinktime_blocks = n as u32;
            }
            // Spinning or sleeping: the same time passes for the drive.
            "thinktime_spin" => {
                parse_time(v, 1_000).map_err(|r| invalid(at, key, r))?;
            }
            "number_ios" => spec.number_ios = Some(int()?).filter(|&n| n > 0),
            "loops" => spec.loops = int()?.max(1) as u32,
            "max_latency" => {
                spec.max_latency_ns = Some(parse_time(v, 1_000).map_err(|r| invalid(at, key, r))?).filter(|&t| t > 0)
            }
            // The twin is deterministic: randrepeat=0 still uses randseed.
            "randrepeat" => {
                parse_bool(v).map_err(|r| invalid(at, key, r))?;
            }
            "iodepth" | "numjobs" => {
                let n = int()?;
                if n == 0 || n > 65536 {
                    return Err(invalid(at, key, format!("{n} is not between 1 and 65536")));
                }
                if key == "iodepth" {
                    spec.iodepth = n as u32;
                } else {
                    spec.numjobs = n as u32;
                }
            }
            "offset" => spec.offset = size()?,
            "size" | "filesize" => spec.size = Some(size()?),
            "io_size" | "io_limit" => spec.io_size = Some(size()?),
            "runtime" => spec.runtime_ns = Some(parse_time(v, 1_000_000_000).map_err(|r| invalid(at, key, r))?),
            "ramp_time" => spec.ramp_time_ns = parse_time(v, 1_000_000_000).map_err(|r| invalid(at, key, r))?,
            "thinktime" => spec.thinktime_ns = parse_time(v, 1_000).map_err(|r| invalid(at, key, r))?,
            "time_based" => spec.time_based = parse_bool(v).map_err(|r| invalid(at, key, r))?,
            "rwmixread" | "rwmixwrite" => {
                let p = int()?;
                if p > 100 {
                    return Err(invalid(at, key, format!("{p} is not a percentage")));
                }
                spec.rwmixread = if key == "rwmixread" { p as u32 } else { 100 - p as u32 };
            }
            "randseed" => spec.randseed = int()?,
            "percentage_random" => {
                let p = int()?;
                if p > 100 {
                    return Err(invalid(at, key, format!("{p} is not a percentage")));
                }
                spec.percentage_random = p as u32;
            }
            "norandommap" => spec.norandommap = parse_bool(v).map_err(|r| invalid(at, key, r))?,
            "apst" => {
                spec.apst = parse_bool(v).map_err(|r| invalid(at, key, r))?;
                apst_given = true;
            }
            "kb_base" => {}
            "burst_size" => burst_size = Some((size()?, at.clone())),
            "duty_cycle" => {
                let d: f64 = v.parse().map_err(|_| invalid(at, key, format!("`{v}` is not a number")))?;
                if !(d > 0.0 && d <= 1.0) {
                    return Err(invalid(at, key, format!("{d} is not in (0, 1]")));
                }
                duty = Some((d, at.clone()));
            }
            "idle" => idle = Some((parse_time(v, 1_000_000_000).map_err(|r| invalid(at, key, r))?, at.clone())),
            "retention" => {
                let ns = crate::run::lifetime::parse_retention(v, |t| parse_time(t, 1_000_000_000))
                    .map_err(|r| invalid(at, key, r))?;
                retention = Some((ns, at.clone()));
            }
            "age" => age = Some((crate::run::lifetime::parse_days(v).map_err(|r| invalid(at, key, r))?, at.clone())),
            "per_day" => {
                let p = crate::run::lifetime::PerDay::parse(v, |s| parse_size(s, kb_base, capacity))
                    .map_err(|r| invalid(at, key, r))?;
                per_day = Some((p, at.clone()));
            }
            "secure_erase" => {
                if parse_bool(v).map_err(|r| invalid(at, key, r))? {
                    secure_erase = Some(at.clone());
                }
            }
            k if super::fio_jobctl::OPTIONS.contains(&k) => control.apply(entry)?,
            _ => unreachable!("every known option is handled"),
        }
    }
    if let Some(at) = secure_erase {
        if let Some(o) = other_io_option.or(idle.as_ref().map(|_| "idle".to_string())) {
            return Err(invalid(
                &at,
                "secure_erase",
                format!("a secure-erase phase takes no other options (found `{o}`)"),
            ));
        }
        return Ok(Phase::SecureErase { name: spec.name });
    }
    if let Some((duration_ns, at)) = retention {
        if let Some(o) = other_io_option.or(idle.as_ref().map(|_| "idle".to_string())) {
            return Err(invalid(&at, "retention", format!("a retention phase takes no other options (found `{o}`)")));
        }
        return Ok(Phase::Retention { name: spec.name, duration_ns });
    }
    if let Some((duration_ns, at)) = idle {
        if let Some(o) = other_io_option {
            return Err(invalid(&at, "idle", format!("an idle phase takes no I/O options (found `{o}`)")));
        }
        return Ok(Phase::Idle { name: spec.name, duration_ns, apst: apst_given.then_some(spec.apst) });
    }
    let origin = entries.first().map_or("command line", |e| e.2.as_str()).to_string();
    // Block sizes per direction.
    if let Some(mut dirs) = ranges {
        for (i, d) in dirs.iter_mut().enumerate() {
            if d.choices.is_empty() {
                d.choices = vec![(bs_given.and_then(|b| b[i]).unwrap_or(spec.bs), 100)];
            }
        }
        spec.sizes = Some(dirs);
    } else if let Some(b) = bs_given {
        if b.iter().flatten().any(|&x| x != spec.bs) {
            spec.sizes = Some(std::array::from_fn(|i| SizeChoice { choices: vec![(b[i].unwrap_or(4096), 100)] }));
        }
    }
    if bs_unaligned && spec.blockalign.is_none() {
        spec.blockalign = Some(512);
    }
    if rate_given {
        spec.rate = Some(rate);
    }
    control.finish(&mut spec);
    spec.modifier = modifier.filter(|&m| m > 0 || sequencer == Sequencer::Sequential).map(|m| (m, sequencer));
    if let Some((zones, at)) = zoned_abs {
        // zoned_abs: zones in bytes become fractions of the span.
        let span = spec.size.unwrap_or(capacity.saturating_sub(spec.offset)).max(1);
        for (k, z) in zones.into_iter().enumerate() {
            let Some(z) = z else { continue };
            if z.iter().map(|x| x.1).sum::<u64>() > span {
                return Err(invalid(&at, "random_distribution", "the zones are larger than the span"));
            }
            let d = Distribution::Zoned(z.into_iter().map(|(a, b)| (a, b as f64 / span as f64)).collect());
            match &mut spec.distributions {
                Some(dirs) => {
                    if k == 0 {
                        spec.distribution = d.clone();
                    }
                    dirs[k] = d;
                }
                None => spec.distribution = d,
            }
        }
    }
    if !rw_given {
        return Err(invalid(&origin, "rw", format!("phase `{}` needs rw=... (or idle=TIME)", spec.name)));
    }
    match (burst_size, duty) {
        (Some((bytes, at)), d) => {
            if bytes < spec.bs as u64 {
                return Err(invalid(&at, "burst_size", "smaller than one block (bs)"));
            }
            spec.burst = Some(Burst { bytes, duty_cycle: d.map_or(1.0, |x| x.0) });
        }
        (None, Some((_, at))) => return Err(invalid(&at, "duty_cycle", "needs burst_size")),
        (None, None) => {}
    }
    check_fits(&spec, capacity).map_err(|(option, r)| {
        let at = entries.iter().rev().find(|(k, _, _)| k == option).map_or(origin.as_str(), |e| e.2.as_str());
        invalid(at, option, r)
    })?;
    match (age, per_day) {
        (Some((days, at)), Some((per_day, _))) => {
            if matches!(spec.rw, RwPattern::Read | RwPattern::RandRead) {
                return Err(invalid(&at, "age", "the workload writes nothing (rw is a read pattern)"));
            }
            let name = spec.name.clone();
            Ok(Phase::Age(crate::run::lifetime::AgeSpec { name, days, per_day, workload: spec }))
        }
        (Some((_, at)), None) => Err(invalid(&at, "age", "an age phase needs per_day (e.g. 0.1DWPD or 20g)")),
        (None, Some((_, at))) => Err(invalid(&at, "per_day", "per_day belongs to an age phase (age=3y)")),
        (None, None) => Ok(Phase::Io(spec)),
    }
}

/// Check that the span lies inside the drive; an error names the option
/// at fault (`offset`, `size` or `bs`).
fn check_fits(spec: &IoSpec, capacity: u64) -> Result<(), (&'static str, String)> {
    if spec.offset % 512 != 0 {
        return Err(("offset", format!("offset {} is not a multiple of 512", spec.offset)));
    }
    if spec.offset >= capacity {
        return Err(("offset", format!("offset {} is beyond the drive's {} bytes", spec.offset, capacity)));
    }
    let span = spec.size.unwrap_or(capacity - spec.offset);
    if spec.offset + span > capacity {
        let option = if spec.size.is_some() { "size" } else { "offset" };
        return Err((
            option,
            format!("offset {} + size {} is beyond the drive's {} bytes", spec.offset, span, capacity),
        ));
    }
    if span < spec.bs as u64 {
        return Err(("bs", format!("the span ({span} bytes) is smaller than one block ({} bytes)", spec.bs)));
    }
    Ok(())
}

/// `zoned_abs` zones: (percent of accesses, bytes).
type AbsZones = Vec<(f64, u64)>;

/// One direction's `random_distribution`; `zoned_abs` zones are given
/// back in bytes (the span is known only once the job is read).
fn distribution(d: &str, at: &str, kb_base: u64, capacity: u64) -> Result<(Distribution, Option<AbsZones>), JobError> {
    let key = "random_distribution";
    let (name, arg) = d.split_once(':').unwrap_or((d, ""));
    let num = |what: &str| -> Result<f64, JobError> {
        arg.split(':')
            .next()
            .unwrap_or("")
            .parse()
            .map_err(|_| invalid(at, key, format!("`{d}` needs a number ({what})")))
    };
    Ok(match name {
        "random" => (Distribution::Random, None),
        "zipf" => {
            let t = num("theta")?;
            if t <= 0.0 || t.is_nan() || t == 1.0 {
                return Err(invalid(at, key, "zipf theta must be > 0 and not 1"));
            }
            (Distribution::Zipf(t), None)
        }
        "pareto" => {
            let h = num("power")?;
            if !(h > 0.0 && h < 1.0) {
                return Err(invalid(at, key, "pareto power must be between 0 and 1"));
            }
            (Distribution::Pareto(h), None)
        }
        "normal" => {
            let sd = num("standard deviation, %")?;
            if !(sd > 0.0 && sd <= 100.0) {
                return Err(invalid(at, key, "normal standard deviation must be in (0, 100] %"));
            }
            (Distribution::Normal(sd), None)
        }
        "zoned" => {
            let z = zones(arg)
                .map_err(|r| invalid(at, key, r))?
                .into_iter()
                .map(|(a, z)| -> Result<(f64, f64), JobError> {
                    let z: f64 = z
                        .trim_end_matches('%')
                        .parse()
                        .map_err(|_| invalid(at, key, format!("`{z}` is not a percentage of the span")))?;
                    Ok((a, z / 100.0))
                })
                .collect::<Result<_, _>>()?;
            (Distribution::Zoned(z), None)
        }
        "zoned_abs" => {
            let z = zones(arg)
                .map_err(|r| invalid(at, key, r))?
                .into_iter()
                .map(|(a, z)| parse_size(z, kb_base, capacity).map(|b| (a, b)))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|r| invalid(at, key, r))?;
            (Distribution::Random, Some(z))
        }
        _ => {
            return Err(invalid(
                at,
                key,
                format!("`{d}` is not one of random, zipf:θ, pareto:h, normal:σ, zoned:..., zoned_abs:..."),
            ))
        }
    })
}

/// fio's per-direction list `read,write,trim`: one value applies to all,
/// two give reads and writes+trims, an empty item keeps the default.
fn per_direction(v: &str) -> [Option<&str>; 3] {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let get = |i: usize| parts.get(i).copied().filter(|p| !p.is_empty());
    match parts.len() {
        1 => [get(0), get(0), get(0)],
        2 => [get(0), get(1), get(1)],
        _ => [get(0), get(1), get(2)],
    }
}

fn block_size(v: &str, kb_base: u64) -> Result<u32, String> {
    let bs = parse_size(v, kb_base, 0)?;
    if bs == 0 || bs % 512 != 0 || bs > 64 << 20 {
        return Err(format!("{bs} bytes is not a multiple of 512 between 512 B and 64 MiB"));
    }
    Ok(bs as u32)
}

/// fio's `bssplit` for one direction: `4k/10:64k/50:32k/`; sizes without a
/// share split what is left equally.
fn bssplit(v: &str, kb_base: u64) -> Result<Vec<(u32, u32)>, String> {
    let mut out = Vec::new();
    let mut open = 0;
    for item in v.split(':').filter(|i| !i.trim().is_empty()) {
        let (size, pct) = item.split_once('/').unwrap_or((item, ""));
        let size = block_size(size.trim(), kb_base)?;
        let pct = pct.trim();
        let w = if pct.is_empty() {
            open += 1;
            u32::MAX
        } else {
            pct.parse::<u32>().map_err(|_| format!("`{pct}` is not a whole percentage"))?
        };
        out.push((size, w));
    }
    let given: u32 = out.iter().filter(|e| e.1 != u32::MAX).map(|e| e.1).sum();
    if given > 100 {
        return Err(format!("the shares of `{v}` add up to {given}%"));
    }
    let rest = 100 - given;
    for (i, e) in out.iter_mut().filter(|e| e.1 == u32::MAX).enumerate() {
        e.1 = rest / open + u32::from((i as u32) < rest % open);
    }
    if out.is_empty() || out.iter().map(|e| e.1).sum::<u32>() == 0 {
        return Err(format!("`{v}` has no block size with a share"));
    }
    Ok(out)
}

/// `60/10:30/20:10/70` as (access %, zone as written).
fn zones(v: &str) -> Result<Vec<(f64, &str)>, String> {
    let mut out = Vec::new();
    for item in v.split(':').filter(|i| !i.trim().is_empty()) {
        let (a, z) = item.split_once('/').ok_or_else(|| format!("`{item}` is not ACCESS%/ZONE"))?;
        let a: f64 = a.trim().parse().map_err(|_| format!("`{a}` is not a percentage"))?;
        out.push((a, z.trim()));
    }
    let total: f64 = out.iter().map(|z| z.0).sum();
    if out.is_empty() || (total - 100.0).abs() > 1e-6 {
        return Err(format!("the access percentages add up to {total}, not 100"));
    }
    Ok(out)
}

fn parse_bool(v: &str) -> Result<bool, String> {
    match v {
        "" | "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(format!("`{v}` is not 0 or 1")),
    }
}

/// Parse a fio size: `4096`, `4k`, `128KiB`, `1g`, `16GB`, `50%`.
pub fn parse_size(v: &str, kb_base: u64, capacity: u64) -> Result<u64, String> {
    let v = v.trim();
    if let Some(p) = v.strip_suffix('%') {
        let p: f64 = p.trim().parse().map_err(|_| format!("`{v}` is not a percentage"))?;
        if !(0.0..=100.0).contains(&p) {
            return Err(format!("`{v}` is not between 0% and 100%"));
        }
        // Round down to whole 4 KiB pages, as fio aligns to the block size.
        return Ok(((capacity as f64 * p / 100.0) as u64) / 4096 * 4096);
    }
    let digits_end = v.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(v.len());
    let (num, suffix) = v.split_at(digits_end);
    if num.is_empty() {
        return Err(format!("`{v}` is not a size (e.g. 4k, 128KiB, 16g, 50%)"));
    }
    let lower = suffix.trim().to_ascii_lowercase();
    // fio compatibility mode (kb_base=1024): SI-looking prefixes are powers
    // of two; with kb_base=1000, SI prefixes are powers of ten and IEC
    // prefixes (KiB) powers of two.
    let (letter, iec) = match lower.as_str() {
        "" | "b" => ("", false),
        s => {
            let letter = &s[..1];
            let rest = &s[1..];
            match rest {
                "" | "b" => (letter, false),
                "ib" => (letter, true),
                _ => return Err(format!("`{v}` has an unknown unit `{suffix}`")),
            }
        }
    };
    let base = if iec { 1024 } else { kb_base } as f64;
    let mult = match letter {
        "" => 1.0,
        "k" => base,
        "m" => base.powi(2),
        "g" => base.powi(3),
        "t" => base.powi(4),
        "p" => base.powi(5),
        _ => return Err(format!("`{v}` has an unknown unit `{suffix}`")),
    };
    let n: f64 = num.parse().map_err(|_| format!("`{v}` is not a number"))?;
    let bytes = n * mult;
    if bytes.fract() != 0.0 || bytes > u64::MAX as f64 / 2.0 {
        return Err(format!("`{v}` is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// Parse a fio time; a bare number is in `default_unit_ns`.
pub fn parse_time(v: &str, default_unit_ns: u64) -> Result<u64, String> {
    let v = v.trim();
    let digits_end = v.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(v.len());
    let (num, unit) = v.split_at(digits_end);
    let n: f64 = num.parse().map_err(|_| format!("`{v}` is not a time (e.g. 60, 60s, 500ms, 100us)"))?;
    let unit_ns = match unit.trim().to_ascii_lowercase().as_str() {
        "" => default_unit_ns as f64,
        "ns" | "nsec" => 1.0,
        "us" | "usec" => 1e3,
        "ms" | "msec" => 1e6,
        "s" | "sec" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        "d" => 86400e9,
        u => return Err(format!("`{v}` has an unknown time unit `{u}`")),
    };
    Ok((n * unit_ns).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fio() {
        assert_eq!(parse_size("4k", 1024, 0), Ok(4096));
        assert_eq!(parse_size("128KiB", 1024, 0), Ok(131072));
        assert_eq!(parse_size("16g", 1000, 0), Ok(16_000_000_000));
        assert_eq!(parse_size("16GiB", 1000, 0), Ok(16 << 30));
        assert_eq!(parse_size("50%", 1024, 1 << 30), Ok(1 << 29));
        assert!(parse_size("4q", 1024, 0).is_err());
        assert!(parse_size("k", 1024, 0).is_err());
    }

    #[test]
    fn times_follow_fio() {
        assert_eq!(parse_time("60", 1_000_000_000), Ok(60_000_000_000));
        assert_eq!(parse_time("500ms", 1_000_000_000), Ok(500_000_000));
        assert_eq!(parse_time("100", 1_000), Ok(100_000));
        assert!(parse_time("5 fortnights", 1).is_err());
    }

    #[test]
    fn job_file_with_global_sections_and_idle() {
        let text = "[global]\nbs=4k\niodepth=32\n\n[fill]\nrw=write\nbs=128k\nsize=1m\n\n[rest]\nidle=2s\n\n[rand]\nrw=randread\nruntime=1\n";
        let job = parse_job_file(text, "t.fio", 1 << 30, &JobOptions::new()).unwrap().to_job();
        assert_eq!(job.phases.len(), 3);
        match &job.phases[0] {
            Phase::Io(s) => {
                assert_eq!((s.bs, s.iodepth, s.size), (131072, 32, Some(1 << 20)));
            }
            p => panic!("{p:?}"),
        }
        assert_eq!(job.phases[1], Phase::Idle { name: "rest".into(), duration_ns: 2_000_000_000, apst: None });
    }

    #[test]
    fn unknown_option_names_file_line_and_option() {
        let e = parse_job_file("[a]\nrw=read\nfrobnicate=3\n", "j.fio", 1 << 30, &JobOptions::new()).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("j.fio:3") && msg.contains("frobnicate"), "{msg}");
        let e = parse_job_file("[a]\nrw=sideways\n", "j.fio", 1 << 30, &JobOptions::new()).unwrap_err();
        assert!(e.to_string().contains("sideways"));
        let e = parse_job_file("[a]\nrw=read\nsize=2g\n", "j.fio", 1 << 30, &JobOptions::new()).unwrap_err();
        assert!(e.to_string().contains("beyond"), "{e}");
        // Every unknown option is named, each with its line.
        let e =
            parse_job_file("[global]\nio_depth=4\n[a]\nrw=read\nfrobnicate=3\n", "j.fio", 1 << 30, &JobOptions::new())
                .unwrap_err()
                .to_string();
        assert!(e.starts_with("j.fio:2: unknown option `io_depth`, `frobnicate` (j.fio:5)"), "{e}");
        // A span error names the option that put it out of range.
        let e = parse_job_file("[a]\nrw=read\noffset=2g\n", "j.fio", 1 << 30, &JobOptions::new()).unwrap_err();
        assert!(e.to_string().starts_with("j.fio:3: option `offset`"), "{e}");
    }

    #[test]
    fn defaults_apply_before_the_file() {
        let mut defaults = JobOptions::new();
        defaults.push("randseed", "7", "command line (--seed)");
        let job = parse_job_file(
            "[a]\nrw=randread\n[b]\nrw=randread\nrandseed=9\n[c]\nidle=1s\n",
            "j.fio",
            1 << 30,
            &defaults,
        )
        .unwrap()
        .to_job();
        let seeds: Vec<u64> =
            job.phases.iter().filter_map(|p| if let Phase::Io(s) = p { Some(s.randseed) } else { None }).collect();
        assert_eq!(seeds, [7, 9]);
        assert!(matches!(job.phases[2], Phase::Idle { .. }));
        // An idle phase with a seed (as the command line gives one) is fine.
        let mut o = JobOptions::new();
        o.push("idle", "1s", "cli");
        o.push("randseed", "1", "cli");
        assert!(matches!(o.to_phase("job", 1 << 30), Ok(Phase::Idle { .. })));
    }
}
