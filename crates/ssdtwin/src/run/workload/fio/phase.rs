//! One job's options (after `[global]` inheritance) made into a
//! [`Phase`]: an fio I/O job ([`IoSpec`]) or one of ssdtwin's own sections
//! (idle, secure erase, retention, age), or a trace replay. Checks that
//! need the whole job (the span inside the drive, an idle section with no
//! I/O options, `duty_cycle` without `burst_size`) name the option at
//! fault. Scheduling options (`stonewall`, `numjobs`, ...) are read by
//! [`super::parse_job_file`], not here. `rate_min`, `rate_iops_min` and
//! `rate_cycle` are checks of the achieved rate, not limits; fio's
//! consistency checks of the rate options are made here too.

use super::options::is_host_only;
use super::options::{is_known, unknown_error, Entry, SCHEDULE};
use super::values::{
    block_size, bssplit, distribution, invalid, kb_base_of, parse_bool, parse_size, parse_time, per_direction, AbsZones,
};
use crate::error::JobError;
use crate::run::workload::{Burst, Distribution, IoSpec, MinRate, Phase, Rate, RwPattern, Sequencer, SizeChoice};

/// Build the phase of one job from its options (later options win).
pub(super) fn build_phase(
    default_name: &str,
    entries: &[(String, String, String)],
    capacity: u64,
) -> Result<Phase, JobError> {
    if entries.iter().any(|(k, _, _)| k == "trace") {
        return crate::run::trace::options::job_phase(default_name, entries);
    }
    // kb_base first: it changes how every size is read.
    let kb_base = kb_base_of(entries)?;
    let mut spec = IoSpec::new(default_name, RwPattern::Read);
    let mut rw_given = false;
    let mut idle: Option<(u64, String)> = None;
    let mut retention: Option<(u64, String)> = None;
    let mut aging = crate::run::lifetime::AgeOptions::default();
    let mut secure_erase: Option<String> = None;
    let mut apst_given = false;
    let mut burst_size: Option<(u64, String)> = None;
    let mut duty: Option<(f64, String)> = None;
    let mut other_io_option: Option<String> = None;
    let unknown: Vec<&Entry> = entries.iter().filter(|(k, _, _)| !is_host_only(k) && !is_known(k)).collect();
    if !unknown.is_empty() {
        return Err(unknown_error(&unknown));
    }
    let mut bs_given: Option<[Option<u32>; 3]> = None;
    let mut ranges: Option<[SizeChoice; 3]> = None;
    let mut bs_unaligned = false;
    let mut rate = Rate { bytes_per_s: [0; 3], iops: [0; 3], poisson: false };
    let mut rate_given = false;
    // Where `rate`, `rate_iops`, `rate_min` and `rate_iops_min` were last
    // written (fio makes each pair exclusive).
    let mut rate_at: [Option<String>; 4] = Default::default();
    let mut min_rate = MinRate { bytes_per_s: [0; 3], iops: [0; 3], cycle_ms: 1000 };
    let mut min_rate_given = false;
    let mut modifier: Option<u64> = None;
    let mut sequencer = Sequencer::Sequential;
    let mut zoned_abs: Option<(Vec<Option<AbsZones>>, String)> = None;
    let mut control = super::jobctl::Control::default();
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
                let mut dirs: [(Distribution, Option<AbsZones>, Option<f64>); 3] = Default::default();
                for (i, part) in per_direction(v).into_iter().enumerate() {
                    dirs[i] = distribution(part.unwrap_or("random"), at, kb_base, capacity)?;
                }
                zoned_abs = Some((dirs.iter().map(|d| d.1.clone()).collect(), at.clone()));
                // fio keeps one center per job.
                spec.random_center = dirs.iter().rev().find_map(|d| d.2);
                let [r, w, t] = dirs.map(|d| d.0);
                if r == w && w == t {
                    spec.distribution = r;
                    spec.distributions = None;
                } else {
                    spec.distribution = r.clone();
                    spec.distributions = Some([r, w, t]);
                }
            }
            "rate" | "rate_iops" | "rate_min" | "rate_iops_min" => {
                let (bytes, iops) = if key.ends_with("_min") {
                    min_rate_given = true;
                    (&mut min_rate.bytes_per_s, &mut min_rate.iops)
                } else {
                    rate_given = true;
                    (&mut rate.bytes_per_s, &mut rate.iops)
                };
                for (i, part) in per_direction(v).into_iter().enumerate() {
                    let Some(p) = part else { continue };
                    if key.starts_with("rate_iops") {
                        iops[i] = p.parse().map_err(|_| invalid(at, key, format!("`{p}` is not a whole number")))?;
                    } else {
                        bytes[i] = parse_size(p, kb_base, capacity).map_err(|r| invalid(at, key, r))?;
                    }
                }
                let slot = ["rate", "rate_iops", "rate_min", "rate_iops_min"].iter().position(|o| *o == key);
                rate_at[slot.expect("one of the four")] = Some(at.clone());
            }
            "rate_cycle" => {
                let ms = int()?;
                if ms == 0 {
                    return Err(invalid(at, key, "must be at least 1 (ms)"));
                }
                min_rate.cycle_ms = ms;
            }
            "rate_process" => {
                rate.poisson = match v.as_str() {
                    "linear" => false,
                    "poisson" => true,
                    _ => return Err(invalid(at, key, format!("`{v}` is not linear or poisson"))),
                }
            }
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
            "age" | "per_day" | "age_exact" => {
                aging.take(key, v, at, |s| parse_size(s, kb_base, capacity))?;
            }
            "secure_erase" => {
                if parse_bool(v).map_err(|r| invalid(at, key, r))? {
                    secure_erase = Some(at.clone());
                }
            }
            k if super::jobctl::OPTIONS.contains(&k) => control.apply(entry)?,
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
    check_rates(&rate, &min_rate, &rate_at)?;
    if rate_given {
        spec.rate = Some(rate);
    }
    if min_rate_given && (min_rate.bytes_per_s.iter().any(|&b| b > 0) || min_rate.iops.iter().any(|&n| n > 0)) {
        spec.rate_min = Some(min_rate);
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
    let Some((days, per_day, exact, at)) = aging.finish()? else { return Ok(Phase::Io(spec)) };
    if matches!(spec.rw, RwPattern::Read | RwPattern::RandRead) {
        return Err(invalid(&at, "age", "the workload writes nothing (rw is a read pattern)"));
    }
    let name = spec.name.clone();
    let workload = crate::run::lifetime::AgeWorkload::Io(Box::new(spec));
    Ok(Phase::Age(crate::run::lifetime::AgeSpec { name, days, per_day, workload, exact }))
}

/// fio's checks of the rate options (init.c): a byte rate and an IOPS
/// rate exclude each other, as do the two minimums, and a minimum above
/// the direction's limit is an error. `at` holds where `rate`,
/// `rate_iops`, `rate_min` and `rate_iops_min` were written.
fn check_rates(rate: &Rate, min: &MinRate, at: &[Option<String>; 4]) -> Result<(), JobError> {
    let any = |x: &[u64; 3]| x.iter().any(|&v| v > 0);
    let here = |i: usize| at[i].as_deref().unwrap_or("command line");
    if any(&rate.bytes_per_s) && any(&rate.iops) {
        return Err(invalid(here(1), "rate_iops", "rate and rate_iops are mutually exclusive (as in fio)"));
    }
    if any(&min.bytes_per_s) && any(&min.iops) {
        return Err(invalid(here(3), "rate_iops_min", "rate_min and rate_iops_min are mutually exclusive (as in fio)"));
    }
    for d in 0..3 {
        if rate.bytes_per_s[d] > 0 && rate.bytes_per_s[d] < min.bytes_per_s[d] {
            let why = format!("the minimum {} B/s exceeds the rate {} B/s", min.bytes_per_s[d], rate.bytes_per_s[d]);
            return Err(invalid(here(2), "rate_min", why));
        }
        if rate.iops[d] > 0 && rate.iops[d] < min.iops[d] {
            let why = format!("the minimum {} IOPS exceeds the rate {} IOPS", min.iops[d], rate.iops[d]);
            return Err(invalid(here(3), "rate_iops_min", why));
        }
    }
    Ok(())
}

/// Check that the span lies inside the drive; an error names the option
/// at fault (`offset`, `size` or `bs`).
pub(super) fn check_fits(spec: &IoSpec, capacity: u64) -> Result<(), (&'static str, String)> {
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
