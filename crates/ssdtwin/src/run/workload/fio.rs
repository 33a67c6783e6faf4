//! fio options and job files (the subset that describes a workload).
//!
//! Job files use fio's INI syntax: `[global]` sets defaults for the
//! sections after it, every other section is a phase, and phases run one
//! after another. Values follow fio: sizes take `k`/`m`/`g`/`t` suffixes
//! (powers of two by default; `kb_base=1000` switches to fio's SI mode) or
//! a percentage of the drive (`size=50%`); times take `us`/`ms`/`s`/`m`/`h`
//! suffixes, with fio's default units (seconds for `runtime` and
//! `ramp_time`, microseconds for `thinktime`). Options that only describe
//! the host side of a real fio run (`ioengine`, `direct`, `filename`, ...)
//! are accepted and have no effect; any other unknown option is an error.

use super::{Burst, IoSpec, Job, Phase, RwPattern};
use crate::error::JobError;

/// Options that change the simulated workload.
pub const KNOWN: &[&str] = &[
    "name",
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "iodepth",
    "numjobs",
    "offset",
    "size",
    "io_size",
    "io_limit",
    "runtime",
    "time_based",
    "rwmixread",
    "rwmixwrite",
    "thinktime",
    "ramp_time",
    "randseed",
    "norandommap",
    "percentage_random",
    "kb_base",
    "burst_size",
    "duty_cycle",
    "idle",
    "apst",
    "secure_erase",
    "trace",
];

/// fio options accepted for compatibility that do not change a simulation.
pub const HOST_ONLY: &[&str] = &[
    "ioengine",
    "direct",
    "filename",
    "group_reporting",
    "thread",
    "stonewall",
    "wait_for_previous",
    "randrepeat",
    "description",
    "buffered",
    "invalidate",
    "refill_buffers",
    "percentile_list",
];

/// One option: (key, value, where it was written).
type Entry = (String, String, String);

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

/// Parse a job file into a job. `origin` is its path (for messages);
/// `defaults` apply before the file's own options (the command line's
/// `--seed` as `randseed`, say), so `[global]` and the sections override them.
pub fn parse_job_file(text: &str, origin: &str, capacity: u64, defaults: &JobOptions) -> Result<Job, JobError> {
    let mut global: Vec<Entry> = defaults.entries.clone();
    let mut sections: Vec<(String, Vec<Entry>)> = Vec::new();
    let mut in_global = false;
    for (i, raw) in text.lines().enumerate() {
        let at = format!("{origin}:{}", i + 1);
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
                sections.push((name.to_string(), Vec::new()));
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
            global.push(entry);
        } else if let Some((_, opts)) = sections.last_mut() {
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
    let mut phases = Vec::new();
    for (name, opts) in sections {
        // [global] I/O options do not apply to idle sections.
        let all: Vec<_> = if opts.iter().any(|(k, _, _)| k == "idle" || k == "secure_erase") {
            opts
        } else {
            global.iter().cloned().chain(opts).collect()
        };
        phases.push(build_phase(&name, &all, capacity)?);
    }
    Ok(Job { phases })
}

fn invalid(origin: &str, option: &str, reason: impl Into<String>) -> JobError {
    JobError::Invalid { origin: origin.to_string(), option: option.to_string(), reason: reason.into() }
}

fn build_phase(default_name: &str, entries: &[(String, String, String)], capacity: u64) -> Result<Phase, JobError> {
    if entries.iter().any(|(k, _, _)| k == "trace") {
        return crate::run::trace::options::job_phase(default_name, entries);
    }
    // kb_base first: it changes how every size is read.
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
    let mut spec = IoSpec::new(default_name, RwPattern::Read);
    let mut rw_given = false;
    let mut idle: Option<(u64, String)> = None;
    let mut secure_erase: Option<String> = None;
    let mut apst_given = false;
    let mut burst_size: Option<(u64, String)> = None;
    let mut duty: Option<(f64, String)> = None;
    let mut other_io_option: Option<String> = None;
    let unknown: Vec<&Entry> =
        entries.iter().filter(|(k, _, _)| !HOST_ONLY.contains(&k.as_str()) && !KNOWN.contains(&k.as_str())).collect();
    if let Some((_, _, first_at)) = unknown.first() {
        let option = unknown
            .iter()
            .enumerate()
            .map(|(i, (k, _, at))| if i == 0 { format!("`{k}`") } else { format!("`{k}` ({at})") })
            .collect::<Vec<_>>()
            .join(", ");
        return Err(JobError::UnknownOption { origin: first_at.clone(), option, known: KNOWN.join(", ") });
    }
    for (k, v, at) in entries {
        let key = k.as_str();
        if HOST_ONLY.contains(&key) {
            continue;
        }
        let size = || parse_size(v, kb_base, capacity).map_err(|r| invalid(at, key, r));
        let int = || v.parse::<u64>().map_err(|_| invalid(at, key, format!("`{v}` is not a whole number")));
        // Options that do not make a phase an I/O phase: the seed (the
        // command line always gives one) and APST are harmless in an idle
        // or secure-erase phase.
        if !matches!(key, "name" | "idle" | "kb_base" | "randseed" | "secure_erase" | "apst") {
            other_io_option.get_or_insert_with(|| key.to_string());
        }
        match key {
            "name" => spec.name = v.clone(),
            "rw" | "readwrite" => {
                spec.rw = RwPattern::parse(v).ok_or_else(|| {
                    invalid(at, key, format!("`{v}` is not one of read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim"))
                })?;
                rw_given = true;
            }
            "bs" | "blocksize" => {
                let bs = size()?;
                if bs == 0 || bs % 512 != 0 || bs > 64 << 20 {
                    return Err(invalid(
                        at,
                        key,
                        format!("{bs} bytes is not a multiple of 512 between 512 B and 64 MiB"),
                    ));
                }
                spec.bs = bs as u32;
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
            "size" => spec.size = Some(size()?),
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
            "secure_erase" => {
                if parse_bool(v).map_err(|r| invalid(at, key, r))? {
                    secure_erase = Some(at.clone());
                }
            }
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
    if let Some((duration_ns, at)) = idle {
        if let Some(o) = other_io_option {
            return Err(invalid(&at, "idle", format!("an idle phase takes no I/O options (found `{o}`)")));
        }
        return Ok(Phase::Idle { name: spec.name, duration_ns, apst: apst_given.then_some(spec.apst) });
    }
    let origin = entries.first().map_or("command line", |e| e.2.as_str()).to_string();
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
    Ok(Phase::Io(spec))
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
        let job = parse_job_file(text, "t.fio", 1 << 30, &JobOptions::new()).unwrap();
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
        .unwrap();
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
