//! One job's options (after `[global]` inheritance) made into a
//! [`Phase`]: an fio I/O job ([`IoSpec`]) or one of ssdtwin's own sections
//! (idle, secure erase, retention, age), or a trace replay. Checks that
//! need the whole job (the span inside the drive, an idle section with no
//! I/O options, `duty_cycle` without `burst_size`) name the option at
//! fault. Scheduling options (`stonewall`, `numjobs`, ...) are read by
//! [`super::parse_job_file`], not here. The rate options are read in
//! [`super::rates`]; fio's checks that need several options (span,
//! strided zones) are in [`super::checks`].

use super::checks::{check_fits, strided};
use super::options::{is_unusable, unknown_error, Entry};
use super::table::{self, Class, Reader};
use super::values::{
    block_size, bssplit, distribution, invalid, kb_base_of, parse_bool, parse_size, parse_time, per_direction, AbsZones,
};
use crate::error::JobError;
use crate::run::workload::{
    Burst, Distribution, FioRandom, IoLogSpec, IoSpec, Phase, RandomGenerator, RwPattern, Sequencer, SizeChoice,
};

/// Build the phase of one job from its options (later options win). Each
/// option is read under fio's name (`timeout` is `runtime`); an error
/// names it as written (`ss_dur`, not `steadystate_duration`).
pub(super) fn build_phase(
    default_name: &str,
    written: &[(String, String, String)],
    capacity: u64,
) -> Result<Phase, JobError> {
    let entries: Vec<Entry> =
        written.iter().map(|(k, v, at)| (table::canonical(k).to_string(), v.clone(), at.clone())).collect();
    build_canonical(default_name, &entries, capacity).map_err(|e| match e {
        JobError::Invalid { origin, option, reason } => {
            let spelled = written.iter().find(|(k, _, at)| *at == origin && table::canonical(k) == option);
            let option = spelled.map_or(option, |(k, _, _)| k.clone());
            JobError::Invalid { origin, option, reason }
        }
        e => e,
    })
}

fn build_canonical(default_name: &str, entries: &[Entry], capacity: u64) -> Result<Phase, JobError> {
    if entries.iter().any(|(k, _, _)| k == "trace") {
        return crate::run::trace::options::job_phase(default_name, entries);
    }
    // kb_base first: it changes how every size is read.
    let kb_base = kb_base_of(entries)?;
    let unknown: Vec<&Entry> = entries.iter().filter(|e| is_unusable(e)).collect();
    if !unknown.is_empty() {
        return Err(unknown_error(&unknown));
    }
    let mut b = PhaseBuilder::new(default_name, kb_base, capacity);
    for entry in entries {
        b.apply(entry)?;
    }
    if let Some(phase) = b.special_phase()? {
        return Ok(phase);
    }
    b.io_phase(entries)
}

/// A job's options read so far: the I/O spec, and what only the whole
/// job can settle (idle, retention, aging and secure-erase sections, block
/// sizes per direction, rates, bursts, absolute zones).
struct PhaseBuilder {
    kb_base: u64,
    capacity: u64,
    spec: IoSpec,
    rw_given: bool,
    idle: Option<(u64, String)>,
    retention: Option<(u64, String)>,
    aging: crate::run::lifetime::AgeOptions,
    secure_erase: Option<String>,
    apst_given: bool,
    burst_size: Option<(u64, String)>,
    duty: Option<(f64, String)>,
    other_io_option: Option<String>,
    bs_given: Option<[Option<u32>; 3]>,
    ranges: Option<[SizeChoice; 3]>,
    bs_unaligned: bool,
    rates: super::rates::RateOptions,
    modifier: Option<i64>,
    sequencer: Sequencer,
    zoned_abs: Option<(Vec<Option<AbsZones>>, String)>,
    /// `zonemode` (`strided`, `none`; where written), `zonesize`,
    /// `zonerange`, `zoneskip`.
    zonemode: Option<(bool, String)>,
    zone: [Option<(u64, String)>; 3],
    /// `zonemode=zbd` (where written) and its options.
    zbd_at: Option<String>,
    zbd: super::zbd::ZbdOptions,
    placement: super::placement::PlacementOptions,
    syncs: super::sync::SyncOptions,
    verify: super::verify::VerifyOptions,
    prio: super::prio::PrioOptions,
    flow: super::flow::FlowOptions,
    /// `random_sequence_stride`.
    sequence_stride: bool,
    sprandom: super::sprandom::SprandomOptions,
    control: super::jobctl::Control,
    /// fio's generators and seeds (`random_generator`, `randrepeat`,
    /// `randseed`).
    fio: FioRandom,
    /// `write_iolog`'s path.
    iolog: Option<String>,
    /// `offset` and `size` as shares of the device (`P%`): bytes before
    /// fio's alignment to the block size ([`align_shares`]).
    shares: [Option<u64>; 2],
}

/// A whole number, or the error naming the option.
fn int(v: &str, at: &str, key: &str) -> Result<u64, JobError> {
    v.parse::<u64>().map_err(|_| invalid(at, key, format!("`{v}` is not a whole number")))
}

impl PhaseBuilder {
    fn new(default_name: &str, kb_base: u64, capacity: u64) -> PhaseBuilder {
        PhaseBuilder {
            kb_base,
            capacity,
            spec: IoSpec::new(default_name, RwPattern::Read),
            rw_given: false,
            idle: None,
            retention: None,
            aging: crate::run::lifetime::AgeOptions::default(),
            secure_erase: None,
            apst_given: false,
            burst_size: None,
            duty: None,
            other_io_option: None,
            bs_given: None,
            ranges: None,
            bs_unaligned: false,
            rates: Default::default(),
            modifier: None,
            sequencer: Sequencer::Sequential,
            zoned_abs: None,
            zonemode: None,
            zone: Default::default(),
            zbd_at: None,
            zbd: Default::default(),
            placement: Default::default(),
            syncs: Default::default(),
            verify: Default::default(),
            prio: Default::default(),
            flow: Default::default(),
            sequence_stride: false,
            sprandom: Default::default(),
            control: super::jobctl::Control::default(),
            fio: FioRandom {
                generator: RandomGenerator::Tausworthe,
                randrepeat: true,
                randseed: 0x89,
                thread_number: 1,
                switched64: false,
                bsrange: false,
                bs_unaligned: false,
            },
            iolog: None,
            shares: [None; 2],
        }
    }

    /// One option (`entry`: fio's name of the key, value, where it was
    /// written), read by the part of the builder the table names.
    fn apply(&mut self, entry: &Entry) -> Result<(), JobError> {
        let key = entry.0.as_str();
        let Some(def) = table::lookup(key) else { return Err(unknown_error(&[entry])) };
        let reader = match def.class {
            // Host-only, or refused with fio's default value: no effect.
            Class::Host | Class::Refused(_) => return Ok(()),
            Class::Fio(Reader::Schedule) => return Ok(()),
            Class::Fio(reader) | Class::Twin(reader) => reader,
        };
        // Options that do not make a phase an I/O phase: the seed (the
        // command line always gives one) and APST are harmless in an idle
        // or secure-erase phase.
        if !matches!(
            key,
            "name"
                | "idle"
                | "kb_base"
                | "randseed"
                | "randrepeat"
                | "secure_erase"
                | "apst"
                | "retention"
                | "continue_on_error"
                | "ignore_error"
        ) {
            self.other_io_option.get_or_insert_with(|| key.to_string());
        }
        match reader {
            Reader::Pattern => self.pattern_option(entry),
            Reader::Sizes => self.size_option(entry),
            Reader::Rate => self.rates.apply(entry, self.kb_base, self.capacity),
            Reader::Section => self.section_option(entry),
            Reader::Control => self.control.apply(entry),
            Reader::Zoned => self.zbd.apply(entry),
            Reader::Placement => self.placement.apply(entry),
            Reader::Sync => self.syncs.apply(entry),
            Reader::Errors => self.error_option(entry),
            Reader::Verify => self.verify.apply(entry, self.kb_base),
            Reader::Prio => self.prio.apply(entry),
            Reader::Flow => self.flow.apply(entry),
            Reader::Precondition => self.sprandom.apply(entry, self.kb_base),
            Reader::Io => self.io_option(entry),
            Reader::Schedule => Ok(()),
            Reader::Trace => Err(invalid(&entry.2, key, "only a trace section (with trace=FILE) takes it")),
        }
    }

    /// `continue_on_error` and `ignore_error`, in the order written
    /// ([`crate::run::io_errors`]).
    fn error_option(&mut self, (key, v, at): &Entry) -> Result<(), JobError> {
        let e = &mut self.spec.on_error;
        if key == "continue_on_error" {
            e.set_classes(v).ok_or_else(|| {
                invalid(at, key, format!("`{v}` is not one of none, read, write, io, verify, all, 0, 1"))
            })
        } else {
            e.set_ignored(v).map_err(|why| invalid(at, key, why))
        }
    }

    /// The access pattern: `rw` (with its `:N` modifier), `rw_sequencer`,
    /// `random_distribution`.
    fn pattern_option(&mut self, entry: &Entry) -> Result<(), JobError> {
        let (k, v, at) = entry;
        let key = k.as_str();
        let (kb_base, capacity) = (self.kb_base, self.capacity);
        match key {
            "rw" | "readwrite" => {
                let (pattern, m) = match v.split_once(':') {
                    Some((p, m)) => (p, Some(m)),
                    None => (v.as_str(), None),
                };
                self.spec.rw = RwPattern::parse(pattern).ok_or_else(|| {
                    invalid(at, key, format!("`{v}` is not one of read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim, trimwrite, randtrimwrite (with an optional `:N`)"))
                })?;
                self.modifier = match m {
                    None => None,
                    Some(m) if self.spec.rw.is_random() => Some(
                        m.parse::<u32>()
                            .ok()
                            .filter(|&n| n > 0)
                            .ok_or_else(|| invalid(at, key, format!("`{m}` is not a number of I/Os (1 or more)")))?
                            .into(),
                    ),
                    // Sequential: bytes to skip after each I/O, negative to
                    // go backwards (`rw=read:-8k`).
                    Some(m) => {
                        let (sign, digits) = m.strip_prefix('-').map_or((1, m), |d| (-1, d));
                        let n = parse_size(digits, kb_base, capacity).map_err(|r| invalid(at, key, r))?;
                        let n = i64::try_from(n).map_err(|_| invalid(at, key, format!("`{m}` is too large")))?;
                        Some(sign * n)
                    }
                };
                self.rw_given = true;
            }
            "random_sequence_stride" => self.sequence_stride = parse_bool(v).map_err(|r| invalid(at, key, r))?,
            "rw_sequencer" => {
                self.sequencer = match v.as_str() {
                    "sequential" => Sequencer::Sequential,
                    "identical" => Sequencer::Identical,
                    _ => return Err(invalid(at, key, format!("`{v}` is not sequential or identical"))),
                }
            }
            "random_distribution" => {
                // fio's per-direction list: one value for all, or
                // `read,write[,trim]`.
                let mut dirs: [(Distribution, Option<AbsZones>, Option<f64>); 3] = Default::default();
                // fio reads `sequence:` whole (its list is comma-separated).
                let parts = if v.starts_with("sequence") { [Some(v.as_str()); 3] } else { per_direction(v) };
                for (i, part) in parts.into_iter().enumerate() {
                    dirs[i] = distribution(part.unwrap_or("random"), at, kb_base, capacity)?;
                }
                self.zoned_abs = Some((dirs.iter().map(|d| d.1.clone()).collect(), at.clone()));
                // fio keeps one center per job.
                self.spec.random_center = dirs.iter().rev().find_map(|d| d.2);
                let [r, w, t] = dirs.map(|d| d.0);
                if r == w && w == t {
                    self.spec.distribution = r;
                    self.spec.distributions = None;
                } else {
                    self.spec.distribution = r.clone();
                    self.spec.distributions = Some([r, w, t]);
                }
            }
            _ => unreachable!("a pattern option"),
        }
        Ok(())
    }

    /// Block sizes and alignment.
    fn size_option(&mut self, entry: &Entry) -> Result<(), JobError> {
        let (k, v, at) = entry;
        let key = k.as_str();
        let kb_base = self.kb_base;
        match key {
            "bs" | "blocksize" => {
                let mut dirs = [None; 3];
                for (i, part) in per_direction(v).into_iter().enumerate() {
                    if let Some(p) = part {
                        dirs[i] = Some(block_size(p, kb_base).map_err(|r| invalid(at, key, r))?);
                    }
                }
                if let Some(b) = dirs[0].or(dirs[1]).or(dirs[2]) {
                    self.spec.bs = dirs[0].unwrap_or(b);
                }
                self.bs_given = Some(dirs);
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
                self.ranges = Some(dirs);
                self.fio.bsrange = true;
            }
            "bssplit" => {
                let mut dirs: [SizeChoice; 3] = std::array::from_fn(|_| SizeChoice { choices: vec![] });
                for (i, part) in per_direction(v).into_iter().enumerate() {
                    if let Some(p) = part {
                        dirs[i].choices = bssplit(p, kb_base).map_err(|r| invalid(at, key, r))?;
                    }
                }
                self.ranges = Some(dirs);
                self.fio.bsrange = false;
            }
            "blockalign" | "ba" => {
                let parts = per_direction(v);
                let b = parts.iter().flatten().next().copied().unwrap_or("4k");
                self.spec.blockalign = Some(block_size(b, kb_base).map_err(|r| invalid(at, key, r))?);
            }
            "bs_unaligned" => self.bs_unaligned = parse_bool(v).map_err(|r| invalid(at, key, r))?,
            _ => unreachable!("a block-size option"),
        }
        Ok(())
    }

    /// ssdtwin's own sections (idle, retention, age, secure erase), APST
    /// and bursts.
    fn section_option(&mut self, entry: &Entry) -> Result<(), JobError> {
        let (k, v, at) = entry;
        let key = k.as_str();
        let (kb_base, capacity) = (self.kb_base, self.capacity);
        let size = || parse_size(v, kb_base, capacity).map_err(|r| invalid(at, key, r));
        match key {
            "apst" => {
                self.spec.apst = parse_bool(v).map_err(|r| invalid(at, key, r))?;
                self.apst_given = true;
            }
            "link_pm" => self.spec.link_pm = parse_bool(v).map_err(|r| invalid(at, key, r))?,
            "burst_size" => self.burst_size = Some((size()?, at.clone())),
            "duty_cycle" => {
                let d: f64 = v.parse().map_err(|_| invalid(at, key, format!("`{v}` is not a number")))?;
                if !(d > 0.0 && d <= 1.0) {
                    return Err(invalid(at, key, format!("{d} is not in (0, 1]")));
                }
                self.duty = Some((d, at.clone()));
            }
            "idle" => self.idle = Some((parse_time(v, 1_000_000_000).map_err(|r| invalid(at, key, r))?, at.clone())),
            "retention" => {
                let ns = crate::run::lifetime::parse_retention(v, |t| parse_time(t, 1_000_000_000))
                    .map_err(|r| invalid(at, key, r))?;
                self.retention = Some((ns, at.clone()));
            }
            "age" | "per_day" | "age_exact" => {
                self.aging.take(key, v, at, |s| parse_size(s, kb_base, capacity))?;
            }
            "secure_erase" => {
                if parse_bool(v).map_err(|r| invalid(at, key, r))? {
                    self.secure_erase = Some(at.clone());
                }
            }
            _ => unreachable!("a section option"),
        }
        Ok(())
    }

    /// The other I/O options: counts, limits, times, mixes.
    fn io_option(&mut self, entry: &Entry) -> Result<(), JobError> {
        let (k, v, at) = entry;
        let key = k.as_str();
        let (kb_base, capacity) = (self.kb_base, self.capacity);
        let size = || parse_size(v, kb_base, capacity).map_err(|r| invalid(at, key, r));
        let int = || int(v, at, key);
        match key {
            "name" => self.spec.name = v.clone(),
            "thinktime_blocks" => {
                let n = int()?;
                if n == 0 {
                    return Err(invalid(at, key, "must be at least 1"));
                }
                self.spec.thinktime_blocks = n as u32;
            }
            // Spinning or sleeping: the same time passes for the drive.
            "thinktime_spin" => {
                parse_time(v, 1_000).map_err(|r| invalid(at, key, r))?;
            }
            "number_ios" => self.spec.number_ios = Some(int()?).filter(|&n| n > 0),
            "loops" => self.spec.loops = int()?.max(1) as u32,
            "num_range" => {
                let n = int()?;
                if !(1..=256).contains(&n) {
                    return Err(invalid(at, key, format!("{n} is not 1 to 256 (fio's MAX_TRIM_RANGE)")));
                }
                self.spec.num_range = n as u32;
            }
            "max_latency" => {
                self.spec.max_latency_ns =
                    Some(parse_time(v, 1_000).map_err(|r| invalid(at, key, r))?).filter(|&t| t > 0)
            }
            // fio's seeds: randrepeat=0 draws them from randseed (fio from
            // entropy; the twin stays deterministic).
            "randrepeat" => self.fio.randrepeat = parse_bool(v).map_err(|r| invalid(at, key, r))?,
            "random_generator" => {
                self.fio.generator = match v.as_str() {
                    "tausworthe" => RandomGenerator::Tausworthe,
                    "lfsr" => RandomGenerator::Lfsr,
                    "tausworthe64" => RandomGenerator::Tausworthe64,
                    _ => return Err(invalid(at, key, format!("`{v}` is not one of tausworthe, lfsr, tausworthe64"))),
                }
            }
            "write_iolog" => {
                if v.is_empty() {
                    return Err(invalid(at, key, "needs a file name"));
                }
                self.iolog = Some(v.clone());
            }
            "iodepth" | "numjobs" => {
                let n = int()?;
                if n == 0 || n > 65536 {
                    return Err(invalid(at, key, format!("{n} is not between 1 and 65536")));
                }
                if key == "iodepth" {
                    self.spec.iodepth = n as u32;
                } else {
                    self.spec.numjobs = n as u32;
                }
            }
            // fio's sizes in zones (`2z`): resolved on the drive (zbd).
            "offset" | "size" | "filesize" | "io_size" | "io_limit" if super::zbd::zones_of(v).is_some() => {
                let i = match key {
                    "offset" => 0,
                    "size" | "filesize" => 1,
                    _ => 2,
                };
                self.zbd.in_zones(i, super::zbd::zones_of(v).unwrap_or(0), at);
            }
            "offset" => {
                self.spec.offset = size()?;
                self.shares[0] = super::values::percent_of(v, capacity);
            }
            "size" | "filesize" => {
                self.spec.size = Some(size()?);
                self.shares[1] = if key == "size" { super::values::percent_of(v, capacity) } else { None };
            }
            "io_size" | "io_limit" => self.spec.io_size = Some(size()?),
            "runtime" => self.spec.runtime_ns = Some(parse_time(v, 1_000_000_000).map_err(|r| invalid(at, key, r))?),
            "ramp_time" => self.spec.ramp_time_ns = parse_time(v, 1_000_000_000).map_err(|r| invalid(at, key, r))?,
            "thinktime" => self.spec.thinktime_ns = parse_time(v, 1_000).map_err(|r| invalid(at, key, r))?,
            "time_based" => self.spec.time_based = parse_bool(v).map_err(|r| invalid(at, key, r))?,
            "rwmixread" | "rwmixwrite" => {
                let p = int()?;
                if p > 100 {
                    return Err(invalid(at, key, format!("{p} is not a percentage")));
                }
                self.spec.rwmixread = if key == "rwmixread" { p as u32 } else { 100 - p as u32 };
            }
            "randseed" => {
                // fio's value parser takes hex too (`0x89`, its default).
                self.spec.randseed = match v.strip_prefix("0x").or(v.strip_prefix("0X")) {
                    Some(h) => {
                        u64::from_str_radix(h, 16).map_err(|_| invalid(at, key, format!("`{v}` is not a number")))?
                    }
                    None => int()?,
                };
                self.fio.randseed = self.spec.randseed;
            }
            "percentage_random" => {
                let p = int()?;
                if p > 100 {
                    return Err(invalid(at, key, format!("{p} is not a percentage")));
                }
                self.spec.percentage_random = p as u32;
            }
            "norandommap" => self.spec.norandommap = parse_bool(v).map_err(|r| invalid(at, key, r))?,
            "zonemode" => {
                self.zbd_at = None;
                let strided = match v.as_str() {
                    "none" => false,
                    "strided" => true,
                    "zbd" => {
                        // A zoned drive's zones (checked against the
                        // drive when the job starts).
                        self.zbd_at = Some(at.clone());
                        self.zonemode = None;
                        return Ok(());
                    }
                    _ => return Err(invalid(at, key, format!("`{v}` is not one of none, strided, zbd"))),
                };
                self.zonemode = Some((strided, at.clone()));
            }
            "zonesize" | "zonerange" | "zoneskip" => {
                let i = ["zonesize", "zonerange", "zoneskip"].iter().position(|z| *z == key).expect("a zone option");
                self.zone[i] = Some((size()?, at.clone()));
            }
            // fio sets an unset size to "until no space is left" (init.c);
            // on a block device that is its end, which an unset size is
            // in the twin already.
            "fill_device" => {
                parse_bool(v).map_err(|r| invalid(at, key, r))?;
            }
            "kb_base" => {}
            _ => unreachable!("every known option is handled"),
        }
        Ok(())
    }

    /// A secure-erase, retention or idle section (`None`: an I/O job),
    /// which takes no I/O options.
    fn special_phase(&self) -> Result<Option<Phase>, JobError> {
        let name = || self.spec.name.clone();
        if let Some(at) = &self.secure_erase {
            if let Some(o) = self.other_io_option.clone().or(self.idle.as_ref().map(|_| "idle".to_string())) {
                return Err(invalid(
                    at,
                    "secure_erase",
                    format!("a secure-erase phase takes no other options (found `{o}`)"),
                ));
            }
            return Ok(Some(Phase::SecureErase { name: name() }));
        }
        if let Some((duration_ns, at)) = &self.retention {
            if let Some(o) = self.other_io_option.clone().or(self.idle.as_ref().map(|_| "idle".to_string())) {
                return Err(invalid(
                    at,
                    "retention",
                    format!("a retention phase takes no other options (found `{o}`)"),
                ));
            }
            return Ok(Some(Phase::Retention { name: name(), duration_ns: *duration_ns }));
        }
        if let Some((duration_ns, at)) = &self.idle {
            if let Some(o) = &self.other_io_option {
                return Err(invalid(at, "idle", format!("an idle phase takes no I/O options (found `{o}`)")));
            }
            return Ok(Some(Phase::Idle {
                name: name(),
                duration_ns: *duration_ns,
                apst: self.apst_given.then_some(self.spec.apst),
            }));
        }
        Ok(None)
    }

    /// The I/O job: block sizes per direction, rates, the job controllers,
    /// absolute zones, bursts, the span inside the drive, and aging.
    fn io_phase(mut self, entries: &[(String, String, String)]) -> Result<Phase, JobError> {
        let capacity = self.capacity;
        let origin = entries.first().map_or("command line", |e| e.2.as_str()).to_string();
        // Block sizes per direction.
        if let Some(mut dirs) = self.ranges {
            for (i, d) in dirs.iter_mut().enumerate() {
                if d.choices.is_empty() {
                    d.choices = vec![(self.bs_given.and_then(|b| b[i]).unwrap_or(self.spec.bs), 100)];
                }
            }
            self.spec.sizes = Some(dirs);
        } else if let Some(b) = self.bs_given {
            if b.iter().flatten().any(|&x| x != self.spec.bs) {
                self.spec.sizes =
                    Some(std::array::from_fn(|i| SizeChoice { choices: vec![(b[i].unwrap_or(4096), 100)] }));
            }
        }
        if self.bs_unaligned && self.spec.blockalign.is_none() {
            self.spec.blockalign = Some(512);
        } else if self.spec.sizes.is_none() && self.spec.blockalign == Some(self.spec.bs) {
            // fio's default alignment is the block size: no change.
            self.spec.blockalign = None;
        }
        align_shares(&mut self.spec, self.shares, capacity);
        std::mem::take(&mut self.rates).finish(&mut self.spec)?;
        std::mem::take(&mut self.control).finish(&mut self.spec)?;
        // fio switches to the 64-bit Tausworthe when the 32-bit one cannot
        // reach every block, unless random_generator was given
        // (filesetup.c, check_rand_gen_limits; its offsets from the next
        // pass on, see FioRandom::switched64).
        let span = self.spec.size.unwrap_or(capacity.saturating_sub(self.spec.offset)).min(capacity);
        if self.fio.generator == RandomGenerator::Tausworthe
            && self.spec.rw.is_random()
            && span / self.spec.min_bs().max(1) as u64 > u32::MAX as u64
            && !entries.iter().any(|e| e.0 == "random_generator")
        {
            self.fio.generator = RandomGenerator::Tausworthe64;
            self.fio.switched64 = true;
        }
        self.fio.bs_unaligned = self.bs_unaligned;
        self.spec.fio = Some(self.fio);
        self.spec.iolog = self.iolog.take().map(|path| IoLogSpec { path, file_name: String::new() });
        self.spec.modifier =
            self.modifier.filter(|&m| m != 0 || self.sequencer == Sequencer::Sequential).map(|m| (m, self.sequencer));
        if let Some((zones, at)) = self.zoned_abs {
            // zoned_abs: zones in bytes become fractions of the span.
            let span = self.spec.size.unwrap_or(capacity.saturating_sub(self.spec.offset)).max(1);
            for (k, z) in zones.into_iter().enumerate() {
                let Some(z) = z else { continue };
                if z.iter().map(|x| x.1).sum::<u64>() > span {
                    return Err(invalid(&at, "random_distribution", "the zones are larger than the span"));
                }
                let d = Distribution::Zoned(z.into_iter().map(|(a, b)| (a, b as f64 / span as f64)).collect());
                match &mut self.spec.distributions {
                    Some(dirs) => {
                        if k == 0 {
                            self.spec.distribution = d.clone();
                        }
                        dirs[k] = d;
                    }
                    None => self.spec.distribution = d,
                }
            }
        }
        if !self.rw_given {
            return Err(invalid(&origin, "rw", format!("phase `{}` needs rw=... (or idle=TIME)", self.spec.name)));
        }
        super::checks::sequences(&mut self.spec, self.sequence_stride, entries, capacity)?;
        if self.zbd_at.is_some() {
            // zbd.c's zbd_setup_files (fio 3.34 and later): experimental
            // verify replays the writes, which zones cannot take.
            if let Some(e) = entries.iter().rev().find(|e| e.0 == "experimental_verify") {
                if parse_bool(&e.1).unwrap_or(e.1.parse::<i64>().is_ok_and(|n| n != 0)) {
                    return Err(invalid(
                        &e.2,
                        "experimental_verify",
                        "zonemode=zbd does not support experimental verify",
                    ));
                }
            }
            // zonesize names the drive's zone size under zbd (zbd.c).
            let size = self.zone[0].take().map_or(0, |z| z.0);
            let opts = std::mem::take(&mut self.zbd);
            self.spec.zbd = opts.finish(self.zbd_at.take(), size)?;
            if self.spec.zbd.as_ref().is_some_and(|z| z.write_zone_remainder) {
                // init.c: write_zone_remainder needs (and sets) norandommap.
                match entries.iter().rev().find(|e| e.0 == "norandommap") {
                    Some(e) if !self.spec.norandommap => {
                        return Err(invalid(&e.2, "norandommap", "fio: write_zone_remainder=1 requires norandommap=1"));
                    }
                    _ => self.spec.norandommap = true,
                }
            }
        } else {
            self.spec.zbd = std::mem::take(&mut self.zbd).finish(None, 0)?;
        }
        self.spec.placement = std::mem::take(&mut self.placement).finish()?;
        self.spec.syncs = std::mem::take(&mut self.syncs).finish();
        self.spec.flow = std::mem::take(&mut self.flow).finish();
        if self.spec.num_range > 1 && self.spec.rw.is_trimwrite() {
            let at = entries.iter().rev().find(|e| e.0 == "num_range").map_or(origin.as_str(), |e| e.2.as_str());
            return Err(invalid(at, "num_range", "fio: trimwrite cannot be used with multiple ranges."));
        }
        self.spec.prio = std::mem::take(&mut self.prio).finish(self.kb_base, self.spec.rw)?;
        self.spec.verify = std::mem::take(&mut self.verify).finish(&self.spec, capacity)?;
        self.spec.strided = strided(&self.zonemode, &self.zone, self.spec.bs)?;
        match (self.burst_size, self.duty) {
            (Some((bytes, at)), d) => {
                if bytes < self.spec.bs as u64 {
                    return Err(invalid(&at, "burst_size", "smaller than one block (bs)"));
                }
                self.spec.burst = Some(Burst { bytes, duty_cycle: d.map_or(1.0, |x| x.0) });
            }
            (None, Some((_, at))) => return Err(invalid(&at, "duty_cycle", "needs burst_size")),
            (None, None) => {}
        }
        self.spec.sprandom = std::mem::take(&mut self.sprandom).finish(&mut self.spec, entries, capacity)?;
        check_fits(&self.spec, capacity).map_err(|(option, r)| {
            let at = entries.iter().rev().find(|(k, _, _)| k == option).map_or(origin.as_str(), |e| e.2.as_str());
            invalid(at, option, r)
        })?;
        let Some((days, per_day, exact, at)) = self.aging.finish()? else { return Ok(Phase::Io(self.spec)) };
        if matches!(self.spec.rw, RwPattern::Read | RwPattern::RandRead) {
            return Err(invalid(&at, "age", "the workload writes nothing (rw is a read pattern)"));
        }
        let name = self.spec.name.clone();
        let workload = crate::run::lifetime::AgeWorkload::Io(Box::new(self.spec));
        Ok(Phase::Age(crate::run::lifetime::AgeSpec { name, days, per_day, workload, exact }))
    }
}

/// fio's alignment of an `offset` and a `size` given as shares of the
/// device (`shares`: their bytes before alignment), by the job's smallest
/// block size (filesetup.c, fio 3.33): the offset rounded up
/// (`get_start_offset`), the size, at most what lies past the offset,
/// rounded down (`setup_files`). So a 128 KiB fill in parts at `offset=50%`
/// keeps every part on 128 KiB boundaries, as a real drive is written.
fn align_shares(spec: &mut IoSpec, shares: [Option<u64>; 2], capacity: u64) {
    let bs = spec.min_bs().max(1) as u64;
    if let Some(o) = shares[0] {
        spec.offset = o.div_ceil(bs) * bs;
    }
    if let Some(s) = shares[1] {
        spec.size = Some(s.min(capacity.saturating_sub(spec.offset)) / bs * bs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every option the table gives the phase builder reaches its reader
    /// (a value it cannot read is an error, never a panic), by every
    /// spelling.
    #[test]
    fn every_modelled_option_has_a_reader() {
        for d in table::all() {
            if !matches!(d.class, Class::Fio(_) | Class::Twin(_)) {
                continue;
            }
            for key in std::iter::once(&d.name).chain(d.aliases) {
                for value in ["1", "zzz", ""] {
                    let entries = vec![(key.to_string(), value.to_string(), "t:1".to_string())];
                    let run = std::panic::catch_unwind(|| build_phase("job", &entries, 1 << 30));
                    assert!(run.is_ok(), "`{key}={value}` panics");
                }
            }
        }
    }

    #[test]
    fn aliases_read_as_their_option() {
        let phase = |o: &[(&str, &str)]| {
            let e: Vec<Entry> = o.iter().map(|(k, v)| (k.to_string(), v.to_string(), "t:1".to_string())).collect();
            build_phase("job", &e, 1 << 30).unwrap()
        };
        assert_eq!(
            phase(&[("readwrite", "randread"), ("timeout", "3"), ("blocksize", "8k"), ("ratemin", "1k")]),
            phase(&[("rw", "randread"), ("runtime", "3"), ("bs", "8k"), ("rate_min", "1k")])
        );
        // A refused option with fio's default value changes nothing.
        assert_eq!(phase(&[("rw", "read"), ("zonemode", "none"), ("write_barrier", "0")]), phase(&[("rw", "read")]));
        let e = vec![("rw".into(), "write".into(), "t:1".into()), ("write_barrier".into(), "8".into(), "t:2".into())];
        let msg = build_phase("job", &e, 1 << 30).unwrap_err().to_string();
        assert!(msg.starts_with("t:2: option `write_barrier` — fio's option, not modelled: barrier"), "{msg}");
        // fsync=0 is no flush at all; fsync_on_close is end_fsync.
        assert_eq!(phase(&[("rw", "write"), ("fsync", "0")]), phase(&[("rw", "write")]));
        assert_eq!(phase(&[("rw", "write"), ("fsync_on_close", "1")]), phase(&[("rw", "write"), ("end_fsync", "1")]));
        assert_eq!(phase(&[("rw", "write"), ("writefua", "1")]), phase(&[("rw", "write"), ("sync", "dsync")]));
    }
}
