//! fio's spelling of option values: sizes with `k`/`m`/`g`/`t` suffixes
//! (powers of two by default; `kb_base=1000` switches to fio's SI mode) or a
//! percentage of the drive (`size=50%`); times with `us`/`ms`/`s`/`m`/`h`
//! suffixes and a default unit per option (seconds for `runtime`,
//! `ramp_time`, `startdelay`; microseconds for `thinktime` and
//! `max_latency`); booleans; fio's per-direction lists (`read,write,trim`);
//! block sizes, `bssplit` and the `random_distribution` values. Only the
//! reading of values: which option takes which is in [`super::phase`].
//! Left out: fio's arithmetic in values (`size=(1g*2)`) and its
//! `bssplit` with more than one list per direction.

use super::options::Entry;
use crate::error::JobError;
use crate::run::workload::Distribution;

/// The job's `kb_base` (1024 unless set to 1000).
pub(crate) fn kb_base_of(entries: &[Entry]) -> Result<u64, JobError> {
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

/// An invalid value of `option` written at `origin`.
pub(super) fn invalid(origin: &str, option: &str, reason: impl Into<String>) -> JobError {
    JobError::Invalid { origin: origin.to_string(), option: option.to_string(), reason: reason.into() }
}

/// `zoned_abs` zones: (percent of accesses, bytes).
pub(super) type AbsZones = Vec<(f64, u64)>;

/// One direction's `random_distribution` and fio's `center` of a skewed
/// one (`zipf:θ[:center]`, `pareto:h[:center]`, `normal:σ[:center]`; a
/// missing number is fio's default: θ 1.1, h 0.2, σ 0); `zoned_abs` zones
/// are given back in bytes (the span is known only once the job is read).
pub(super) fn distribution(
    d: &str,
    at: &str,
    kb_base: u64,
    capacity: u64,
) -> Result<(Distribution, Option<AbsZones>, Option<f64>), JobError> {
    let key = "random_distribution";
    let (name, arg) = d.split_once(':').unwrap_or((d, ""));
    let mut parts = arg.split(':');
    let value = parts.next().filter(|v| !v.trim().is_empty());
    let center = parts.next();
    let num = |what: &str, default: f64| -> Result<f64, JobError> {
        match value {
            None => Ok(default),
            Some(v) => v.trim().parse().map_err(|_| invalid(at, key, format!("`{d}` needs a number ({what})"))),
        }
    };
    let skewed = matches!(name, "zipf" | "pareto" | "normal");
    let center = match center {
        Some(c) if skewed => {
            let c: f64 = c.trim().parse().map_err(|_| invalid(at, key, format!("`{c}` is not a center (0 to 1)")))?;
            if !(0.0..=1.0).contains(&c) {
                return Err(invalid(at, key, "distribution center out of range (0 <= center <= 1.0)"));
            }
            Some(c)
        }
        _ => None,
    };
    Ok(match name {
        "random" => (Distribution::Random, None, None),
        "zipf" => {
            let t = num("theta", 1.1)?;
            if t <= 0.0 || t.is_nan() || t == 1.0 {
                return Err(invalid(at, key, "zipf theta must be > 0 and not 1"));
            }
            (Distribution::Zipf(t), None, center)
        }
        "pareto" => {
            let h = num("power", 0.2)?;
            if !(h > 0.0 && h < 1.0) {
                return Err(invalid(at, key, "pareto power must be between 0 and 1"));
            }
            (Distribution::Pareto(h), None, center)
        }
        "normal" => {
            let sd = num("deviation, %", 0.0)?;
            if !(0.0..100.0).contains(&sd) {
                return Err(invalid(at, key, "normal deviation out of range (0 <= input < 100.0)"));
            }
            (Distribution::Normal(sd), None, center)
        }
        "zoned" => {
            // A zone without a size (`20/`) shares what the others leave
            // equally, in whole percent (fio's zone_split_ddir).
            let mut z = zones(arg)
                .map_err(|r| invalid(at, key, r))?
                .into_iter()
                .map(|(a, z)| -> Result<(f64, Option<f64>), JobError> {
                    if z.is_empty() {
                        return Ok((a, None));
                    }
                    let z: f64 = z
                        .trim_end_matches('%')
                        .parse()
                        .map_err(|_| invalid(at, key, format!("`{z}` is not a percentage of the span")))?;
                    Ok((a, Some(z)))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let given: f64 = z.iter().filter_map(|e| e.1).sum();
            if given > 100.0 {
                return Err(invalid(at, key, "zone_split percentages add to more than 100%"));
            }
            let missing = z.iter().filter(|e| e.1.is_none()).count();
            let rest = if missing > 0 { ((100.0 - given) / missing as f64).floor() } else { 0.0 };
            let z = z.iter_mut().map(|(a, s)| (*a, s.unwrap_or(rest) / 100.0)).collect();
            (Distribution::Zoned(z), None, None)
        }
        // fio's parse_sequence_distribution.
        "sequence" => {
            if arg.trim().is_empty() {
                return Err(invalid(at, key, "fio: missing pattern in sequence distribution"));
            }
            let items: Vec<&str> = arg.split(',').map(str::trim).collect();
            if items.len() > 64 {
                return Err(invalid(
                    at,
                    key,
                    format!("fio: sequence distribution supports up to 64 elements (got {})", items.len()),
                ));
            }
            let blocks = items
                .iter()
                .map(|n| {
                    n.parse::<u32>().ok().filter(|_| n.bytes().all(|b| b.is_ascii_digit())).ok_or_else(|| {
                        invalid(at, key, format!("fio: invalid or negative element <{n}> in random_sequence"))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            (Distribution::Sequence { blocks, stride: false }, None, None)
        }
        "zoned_abs" => {
            let z = zones(arg)
                .map_err(|r| invalid(at, key, r))?
                .into_iter()
                .map(|(a, z)| parse_size(z, kb_base, capacity).map(|b| (a, b)))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|r| invalid(at, key, r))?;
            (Distribution::Random, Some(z), None)
        }
        _ => {
            return Err(invalid(
                at,
                key,
                format!(
                    "`{d}` is not one of random, zipf:θ, pareto:h, normal:σ, zoned:..., zoned_abs:..., sequence:..."
                ),
            ))
        }
    })
}

/// fio's per-direction list `read,write,trim`: one value applies to all,
/// two give reads and writes+trims, an empty item keeps the default.
pub(super) fn per_direction(v: &str) -> [Option<&str>; 3] {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let get = |i: usize| parts.get(i).copied().filter(|p| !p.is_empty());
    match parts.len() {
        1 => [get(0), get(0), get(0)],
        2 => [get(0), get(1), get(1)],
        _ => [get(0), get(1), get(2)],
    }
}

/// One block size: a multiple of 512 between 512 B and 2 GiB (fio takes
/// any size; a command of the twin carries its length in 32 bits).
pub(super) fn block_size(v: &str, kb_base: u64) -> Result<u32, String> {
    let bs = parse_size(v, kb_base, 0)?;
    if bs == 0 || bs % 512 != 0 || bs > 2 << 30 {
        return Err(format!("{bs} bytes is not a multiple of 512 between 512 B and 2 GiB"));
    }
    Ok(bs as u32)
}

/// fio's `bssplit` for one direction: `4k/10:64k/50:32k/`; sizes without a
/// share split what is left equally, in whole percent rounded down, as
/// fio's `bssplit_ddir` does: the shares can add up to less than 100, and
/// the draws past them take fio's fallback size (the generator's).
pub(super) fn bssplit(v: &str, kb_base: u64) -> Result<Vec<(u32, u32)>, String> {
    // (size, share; `None`: an even part of what the others leave).
    let mut items: Vec<(u32, Option<u32>)> = Vec::new();
    for item in v.split(':').filter(|i| !i.trim().is_empty()) {
        let (size, pct) = item.split_once('/').unwrap_or((item, ""));
        let size = block_size(size.trim(), kb_base)?;
        let pct = pct.trim();
        let w = if pct.is_empty() {
            None
        } else {
            Some(pct.parse::<u32>().map_err(|_| format!("`{pct}` is not a whole percentage"))?)
        };
        items.push((size, w));
    }
    let given: u64 = items.iter().filter_map(|e| e.1).map(u64::from).sum();
    if given > 100 {
        return Err(format!("the shares of `{v}` add up to {given}%"));
    }
    let rest = 100 - given as u32;
    let open = items.iter().filter(|e| e.1.is_none()).count() as u32;
    let out: Vec<(u32, u32)> = items.into_iter().map(|(size, w)| (size, w.unwrap_or(rest / open.max(1)))).collect();
    if out.is_empty() || out.iter().map(|e| e.1).sum::<u32>() == 0 {
        return Err(format!("`{v}` has no block size with a share"));
    }
    Ok(out)
}

pub(super) fn zones(v: &str) -> Result<Vec<(f64, &str)>, String> {
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

/// fio's boolean: empty, `1` or `true`; `0` or `false`.
pub(crate) fn parse_bool(v: &str) -> Result<bool, String> {
    match v {
        "" | "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(format!("`{v}` is not 0 or 1")),
    }
}

/// The share `v` gives of a device of `capacity` bytes, when `v` is a
/// percentage (`50%`): fio's `capacity × p / 100` in whole bytes, before
/// any alignment (`None` for an absolute size).
pub(crate) fn percent_of(v: &str, capacity: u64) -> Option<u64> {
    let p = percentage(v.trim())?.ok()?;
    Some(if p.fract() == 0.0 {
        // fio's integer arithmetic (filesetup.c).
        (capacity as u128 * p as u128 / 100) as u64
    } else {
        (capacity as f64 * p / 100.0) as u64
    })
}

/// The percentage `v` gives (`50%`: 50): `None` when `v` is not one, an
/// error when it is not a number from 0 to 100.
fn percentage(v: &str) -> Option<Result<f64, String>> {
    let p = v.strip_suffix('%')?;
    Some(match p.trim().parse::<f64>() {
        Err(_) => Err(format!("`{v}` is not a percentage")),
        Ok(p) if !(0.0..=100.0).contains(&p) => Err(format!("`{v}` is not between 0% and 100%")),
        Ok(p) => Ok(p),
    })
}

/// Parse a fio size: `4096`, `4k`, `128KiB`, `1g`, `16GB`, `50%` (a share
/// of the device rounded down to 4 KiB here; a job's `offset` and `size`
/// are then aligned to its block size as fio aligns them:
/// `super::phase`'s `io_phase`).
pub fn parse_size(v: &str, kb_base: u64, capacity: u64) -> Result<u64, String> {
    let v = v.trim();
    if let Some(p) = percentage(v) {
        let p = p?;
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
            // The first character, whatever its width (`µ` and stray bytes
            // turned into `�` are several bytes).
            let (letter, rest) = s.split_at(s.chars().next().map_or(0, char::len_utf8));
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
        // A unit that starts with a character of several bytes (found by
        // the fuzzer: it used to panic slicing inside it).
        assert!(parse_size("1\u{fffd}e", 1024, 0).is_err());
        assert!(parse_size("1µb", 1024, 0).is_err());
    }

    #[test]
    fn bssplit_shares() {
        assert_eq!(bssplit("4k/50:8k:16k", 1024), Ok(vec![(4096, 50), (8192, 25), (16384, 25)]));
        assert_eq!(bssplit("4k:8k:16k", 1024), Ok(vec![(4096, 33), (8192, 33), (16384, 33)]));
        // Found by the fuzzer: a share of u32::MAX divided by zero, and
        // large shares overflowed their sum.
        assert!(bssplit("4k/4294967295", 1024).unwrap_err().contains("add up to"));
        assert!(bssplit("4k/4294967295:8k/4294967295", 1024).unwrap_err().contains("add up to"));
    }

    #[test]
    fn a_zone_without_a_size_takes_the_rest() {
        let d = |v: &str| distribution(v, "t", 1024, 1 << 30).map(|d| d.0).ok();
        assert_eq!(d("zoned:50/5:30/15:20/"), Some(Distribution::Zoned(vec![(50.0, 0.05), (30.0, 0.15), (20.0, 0.8)])));
        assert_eq!(d("zoned:60/10:20/:20/"), Some(Distribution::Zoned(vec![(60.0, 0.1), (20.0, 0.45), (20.0, 0.45)])));
        assert!(d("zoned:50/60:50/50").is_none());
    }

    #[test]
    fn times_follow_fio() {
        assert_eq!(parse_time("60", 1_000_000_000), Ok(60_000_000_000));
        assert_eq!(parse_time("500ms", 1_000_000_000), Ok(500_000_000));
        assert_eq!(parse_time("100", 1_000), Ok(100_000));
        assert!(parse_time("5 fortnights", 1).is_err());
    }
}
