//! The characterization battery: one fio job file whose jobs run in order
//! (`stonewall`) on a real drive (`filename=${DEV}`, fio's environment
//! syntax) and on the twin (`ssdtwin run --job-file`; the host-only
//! options are ignored there), and what each job is replayed on when a
//! candidate twin is judged ([`Unit`]).
//!
//! The battery follows the identification recipe of a drive model: QD1
//! random reads give tR plus the controller's and the transfer's
//! overheads; their growth with queue depth gives the dies that work in
//! parallel and the command overhead that caps them; sequential reads the
//! channel rate; QD1 random writes into the write buffer the command
//! overhead alone (a buffered write costs the overhead and its transfer,
//! no flash time, where a read's latency is mostly tR); a sequential fill with a bandwidth log the SLC cache's
//! size (where the rate drops) and the post-cache program rate; a pause
//! half-way through the fill, then a write, the room idle folding makes
//! in a cache larger than that room (`slc_cache.idle_fold_room_bytes`);
//! two idle pauses on the full drive, each followed by a write, the cache
//! that idle folding wins back there;
//! random writes long enough for garbage collection to start the spare
//! area (over-provisioning); a mix before them checks reads and writes
//! together.
//!
//! Left out: power (fio measures none), thermal behaviour (the runs are
//! too short to heat a drive), wear and retention (hours to months), the
//! transfer-size curve (the 4 KiB, 16 KiB and 128 KiB points only).

/// The part of the battery a job belongs to: which state a candidate
/// twin starts the job's replay from, and with which other jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum Unit {
    /// Secure-erased drive: the fill (it starts from the trim).
    Fill,
    /// Half-filled drive: the write after the pause half-way through the
    /// fill, replayed after the fill's first half from secure-erased.
    FillIdle,
    /// Full drive (sequentially written): the writes after idle pauses.
    Idle,
    /// Full drive: the reads of the first half (low queue depths), then
    /// the QD1 writes into the write buffer (after the pause the first
    /// read waits, in which the drive folds its cache empty).
    ReadLow,
    /// Full drive: the reads of the second half (high queue depths).
    ReadHigh,
    /// Full drive: the mix (in the cache), then random writes towards
    /// steady state.
    RandomWrite,
    /// Jobs outside the battery, replayed from the state they were
    /// measured in (`ssdtwin fit --state`; see [`super::refine`]).
    Given,
}

impl Unit {
    /// Every unit, in the order of the battery.
    pub const ALL: [Unit; 6] =
        [Unit::Fill, Unit::FillIdle, Unit::Idle, Unit::ReadLow, Unit::ReadHigh, Unit::RandomWrite];

    /// The state a battery unit's replay starts from: secure-erased for
    /// the fill, full for the others (the given jobs' state is the
    /// user's: [`super::replay::Plan::state`]).
    pub fn state(self) -> crate::run::state::DriveState {
        use crate::run::state::DriveState;
        if matches!(self, Unit::Fill | Unit::FillIdle) {
            DriveState::Fresh
        } else {
            DriveState::Filled(100.0)
        }
    }

    /// Whether the jobs' own `runtime` is kept when replayed (their
    /// numbers depend on how long they ran), else it may be shortened
    /// (their rate is stationary).
    pub fn keeps_runtime(self) -> bool {
        matches!(self, Unit::Fill | Unit::FillIdle | Unit::Idle | Unit::RandomWrite)
    }
}

/// One job of the battery.
#[derive(Debug, Clone, Copy)]
pub struct BatteryJob {
    /// Section name (fio's `jobname` in the JSON).
    pub name: &'static str,
    /// What it measures, for the comment above it.
    pub measures: &'static str,
    /// How long it takes on a 1 TB drive (the Intel 660p 1 TB preset,
    /// run on the twin), for the comment.
    pub takes: &'static str,
    /// The replay unit it belongs to (`None`: not replayed; it only
    /// prepares the drive).
    pub unit: Option<Unit>,
    /// The block size the battery asks for, bytes.
    pub bs: u32,
    /// The options, in order; times are written as `{T:n}` (n seconds)
    /// and log windows as `{M:n}` (n ms), multiplied by the time scale
    /// when the file is written ([`resolve`]).
    pub options: &'static [&'static str],
}

/// The battery, in the order it runs.
pub const JOBS: &[BatteryJob] = &[
    BatteryJob {
        name: "trim",
        measures: "nothing: deallocates the whole drive so that it starts empty, as after a \
                   secure erase (psync: fio trims through the synchronous engines)",
        takes: "seconds",
        unit: None,
        bs: 64 << 20,
        options: &["ioengine=psync", "rw=trim", "bs=64m"],
    },
    BatteryJob {
        name: "fill",
        measures: "sequential write of the first half of the drive from empty with a 1 s bandwidth \
                   log (the fill's first part: fill-rest writes the rest): the rate into the SLC \
                   cache, the cache's size (bytes written before the rate drops; every cache the \
                   presets know is at its largest below half full), the post-cache rate, and with \
                   the other parts the capacity (bytes written)",
        takes: "about half of the one sequential fill (3.7 h in all on the 660p 1 TB twin: 140 GB into \
                the cache at 1.8 GB/s, then ≈ 80 MB/s; 15–25 min in all on a TLC drive that writes \
                ≈ 1 GB/s after its cache)",
        unit: Some(Unit::Fill),
        bs: 128 << 10,
        options: &[
            "startdelay={T:30}",
            "rw=write",
            "bs=128k",
            "iodepth=32",
            "size=50%",
            "write_bw_log=fill",
            "log_avg_msec={M:1000}",
        ],
    },
    BatteryJob {
        name: "idle-fill-write",
        measures: "half-way through the fill, where the cache is full and still at its largest, a \
                   pause, then the fill goes on (4% of the drive) with a bandwidth log: what it writes \
                   before the rate drops is the room idle folding made in the pause — all of the \
                   cache a long enough pause can fold, or less where the drive stops folding once \
                   the cache has a set room (slc_cache.idle_fold_room_bytes: the 660p's static part); \
                   on a full drive (the idle writes below) that room and the static pool look alike",
        takes: "180 s idle, then 4% of the fill (40 GB of a 1 TB drive: the room at the cache's rate, \
                the rest at the rate after it)",
        unit: Some(Unit::FillIdle),
        bs: 128 << 10,
        options: &[
            "startdelay={T:180}",
            "rw=write",
            "bs=128k",
            "iodepth=32",
            "offset=50%",
            "size=4%",
            "write_bw_log=idle-fill",
            "log_avg_msec={M:1000}",
        ],
    },
    BatteryJob {
        name: "fill-rest",
        measures: "the rest of the sequential fill (the last 46% of the drive), so that the jobs \
                   below find it full; its bytes count towards the capacity",
        takes: "the rest of the one sequential fill",
        unit: None,
        bs: 128 << 10,
        options: &["rw=write", "bs=128k", "iodepth=32", "offset=54%", "size=46%"],
    },
    BatteryJob {
        name: "idle-short-write",
        measures: "after a short idle pause, a sequential write of 3% of the drive with a bandwidth \
                   log: how much of the SLC cache idle folding won back in that pause",
        takes: "30 s idle + 5 min (the 660p 1 TB twin: 31 GB at 102 MB/s)",
        unit: Some(Unit::Idle),
        bs: 128 << 10,
        options: &[
            "startdelay={T:30}",
            "rw=write",
            "bs=128k",
            "iodepth=32",
            "size=3%",
            "write_bw_log=idle-short",
            "log_avg_msec={M:1000}",
        ],
    },
    BatteryJob {
        name: "idle-long-write",
        measures: "the same after a six times longer pause: the cache a full drive keeps (its \
                   static part) once folding has finished, and with the short pause the rate \
                   of folding at idle",
        takes: "180 s idle + 3.5 min (the 660p 1 TB twin: 146 MB/s)",
        unit: Some(Unit::Idle),
        bs: 128 << 10,
        options: &[
            "startdelay={T:180}",
            "rw=write",
            "bs=128k",
            "iodepth=32",
            "size=3%",
            "write_bw_log=idle-long",
            "log_avg_msec={M:1000}",
        ],
    },
    BatteryJob {
        name: "randread-qd1",
        measures: "after a pause in which the drive finishes folding and collecting what the writes \
                   left, 4 KiB random reads at QD1 over the whole (full) drive: the latency of one \
                   read, tR (mean over page types) plus command overhead, ECC, transfers and map misses",
        takes: "180 s pause + 20 s",
        unit: Some(Unit::ReadLow),
        bs: 4096,
        options: &["startdelay={T:180}", "rw=randread", "bs=4k", "iodepth=1", "runtime={T:20}"],
    },
    BatteryJob {
        name: "randread-span-qd1",
        measures: "the same over the first 1% of the drive: against randread-qd1, what map misses \
                   add on a drive whose DRAM holds only part of the map",
        takes: "10 s",
        unit: Some(Unit::ReadLow),
        bs: 4096,
        options: &["rw=randread", "bs=4k", "iodepth=1", "size=1%", "runtime={T:10}"],
    },
    BatteryJob {
        name: "randread-16k-qd1",
        measures: "16 KiB random reads (one page of the drives the presets know) at QD1 over the \
                   whole drive: against randread-qd1's 4 KiB, the same tR, overhead and map misses \
                   with four times the transfer, so their difference is the time to move 12 KiB \
                   over a channel — the channel rate apart from tR, which the 4 KiB reads' \
                   latency and the queue-depth scaling cannot tell apart on a drive whose dies are \
                   held through the transfer",
        takes: "10 s",
        unit: Some(Unit::ReadLow),
        bs: 16 << 10,
        options: &["rw=randread", "bs=16k", "iodepth=1", "runtime={T:10}"],
    },
    BatteryJob {
        name: "randread-qd4",
        measures: "4 KiB random reads at QD4: the start of the queue-depth scaling (dies in parallel)",
        takes: "10 s",
        unit: Some(Unit::ReadLow),
        bs: 4096,
        options: &["rw=randread", "bs=4k", "iodepth=4", "runtime={T:10}"],
    },
    BatteryJob {
        name: "seqread-qd1",
        measures: "128 KiB sequential reads at QD1: one command's pipeline (tR and the channel \
                   transfers of 8 pages)",
        takes: "10 s",
        unit: Some(Unit::ReadLow),
        bs: 128 << 10,
        options: &["rw=read", "bs=128k", "iodepth=1", "runtime={T:10}"],
    },
    BatteryJob {
        name: "randwrite-qd1",
        measures: "20,000 4 KiB random writes at QD1 over the last 1% of the drive (80 MB, within \
                   any SLC cache's reach; the last 1%, away from the reads of the first 1% and the \
                   sequential reads from the start), each issued 100 µs after the one before \
                   completed (fio's thinktime): a write the controller's buffer takes costs the \
                   command's overhead and its transfer, no flash time, so its latency gives the \
                   command overhead, which the reads' latency (mostly tR) cannot tell from tR. The \
                   pause keeps the writes (at most 41 MB/s) below the rate at which any drive's \
                   flash drains its buffer: unpaced, a drive whose controller takes writes faster \
                   than its flash programs them fills its buffer, and the writes' mean latency is \
                   then the flash's, not the overhead (the RC100-like twin of the fit's prediction \
                   check: 15.0 µs unpaced at any overhead up to 9 µs, overhead + 2.5 µs paced)",
        takes: "2.2 s (20,000 × the 100 µs pause and the 660p 1 TB twin's 10.2 µs per write)",
        unit: Some(Unit::ReadLow),
        bs: 4096,
        options: &["rw=randwrite", "bs=4k", "iodepth=1", "offset=99%", "size=1%", "number_ios=20000", "thinktime=100"],
    },
    BatteryJob {
        name: "randread-qd16",
        measures: "4 KiB random reads at QD16: queue-depth scaling (collisions on dies)",
        takes: "10 s",
        unit: Some(Unit::ReadHigh),
        bs: 4096,
        options: &["rw=randread", "bs=4k", "iodepth=16", "runtime={T:10}"],
    },
    BatteryJob {
        name: "randread-qd64",
        measures: "4 KiB random reads at QD64: near saturation, the number of dies × planes that \
                   read in parallel",
        takes: "10 s",
        unit: Some(Unit::ReadHigh),
        bs: 4096,
        options: &["rw=randread", "bs=4k", "iodepth=64", "runtime={T:10}"],
    },
    BatteryJob {
        name: "randread-qd256",
        measures: "4 KiB random reads, 4 jobs × QD64: saturation, the lower of the dies' rate and \
                   the controller's command rate (cores / command overhead)",
        takes: "10 s",
        unit: Some(Unit::ReadHigh),
        bs: 4096,
        options: &["rw=randread", "bs=4k", "iodepth=64", "numjobs=4", "group_reporting=1", "runtime={T:10}"],
    },
    BatteryJob {
        name: "seqread-qd32",
        measures: "128 KiB sequential reads at QD32: the channels' (or the link's) rate",
        takes: "10 s",
        unit: Some(Unit::ReadHigh),
        bs: 128 << 10,
        options: &["rw=read", "bs=128k", "iodepth=32", "runtime={T:10}"],
    },
    BatteryJob {
        name: "mixed",
        measures: "4 KiB random 70% reads / 30% writes at QD16 over the first 10% of the full \
                   drive, before the random writes: reads behind writes into the SLC cache (a check: \
                   no parameter of its own). After the random writes (the battery before \
                   2026-11-28) it ran wherever in GC's cycle of floor and bursts they had left the \
                   drive, where a change of 1.5% in one parameter moved it by 25% to 100%",
        takes: "30 s",
        unit: Some(Unit::RandomWrite),
        bs: 4096,
        options: &["rw=randrw", "rwmixread=70", "bs=4k", "iodepth=16", "size=10%", "runtime={T:30}"],
    },
    BatteryJob {
        name: "randwrite",
        measures: "4 KiB random writes at QD32 over the whole full drive (as SNIA's steady-state \
                   tests write), for the whole runtime (time_based), with a bandwidth log: the rate \
                   falls when the free blocks are used up and garbage collection starts; how much \
                   was written before, and the rate at the end (write amplification), give the spare \
                   area (over-provisioning). Over the whole drive GC finds few invalid pages in its \
                   victims, so its cost shows in the rate even where the spare is large; over 10% \
                   of the drive (the battery before), a drive with a large spare collected a tenth \
                   of the drive without slowing, and a small twin wrote those 10% once and stopped \
                   (fio ends a job that is not time_based after size bytes), before GC started",
        takes: "9 min",
        unit: Some(Unit::RandomWrite),
        bs: 4096,
        options: &[
            "rw=randwrite",
            "bs=4k",
            "iodepth=32",
            "time_based=1",
            "runtime={T:540}",
            "write_bw_log=randwrite",
            "log_avg_msec={M:1000}",
        ],
    },
];

/// The names of `unit`'s battery jobs that only read (the read stage
/// replays these; the QD1 writes at the end of [`Unit::ReadLow`] are the
/// command-overhead stage's).
pub fn read_jobs(unit: Unit) -> Vec<&'static str> {
    JOBS.iter()
        .filter(|j| j.unit == Some(unit) && j.options.iter().any(|o| o.starts_with("rw=") && o.contains("read")))
        .map(|j| j.name)
        .collect()
}

/// The battery jobs replayed before `unit`'s own, in battery order,
/// because they changed the state its numbers depend on: for the write
/// after the pause in the fill, the fill's first half; for the random
/// writes (whose rate depends on how many pages GC finds invalid), every
/// earlier job after the fill that writes or pauses (`startdelay`: the
/// drive folds and collects meanwhile) — the writes after the idle
/// pauses, the first read's pause, the QD1 writes. Left out, the random
/// writes ran on a drive without the QD1 writes' scattered invalid pages:
/// drive 0 of the prediction check (QLC) wrote 476 IOPS over the last
/// quarter from the fast-path full drive, 2,469 after those jobs, and
/// 2,704 in the battery itself. The other units' numbers do not depend on
/// the earlier writes (a replay from the full drive stands for them).
pub fn prepared_by(unit: Unit) -> Vec<&'static str> {
    if unit == Unit::FillIdle {
        // The fill's first half: the cache full, the drive half full.
        return vec!["fill"];
    }
    if unit != Unit::RandomWrite {
        return Vec::new();
    }
    JOBS.iter()
        .take_while(|j| j.unit != Some(unit))
        .filter(|j| j.unit.is_some_and(|u| !matches!(u, Unit::Fill | Unit::FillIdle)))
        .filter(|j| {
            j.options.iter().any(|o| o.starts_with("startdelay") || (o.starts_with("rw=") && o.contains("write")))
        })
        .map(|j| j.name)
        .collect()
}

/// The battery jobs replayed before `first` (a job of `unit`) when the
/// replay leaves out `unit`'s jobs before it: [`prepared_by`], then those
/// of them that write (the spare stage replays the random writes alone,
/// after the mix, whose writes into the cache and over the first 10% of
/// the drive the random writes find).
pub fn prepared_before(unit: Unit, first: &str) -> Vec<&'static str> {
    let mut names = prepared_by(unit);
    names.extend(
        JOBS.iter().take_while(|j| j.name != first).filter(|j| j.unit == Some(unit) && writes(j)).map(|j| j.name),
    );
    names
}

/// Whether the job writes (`rw=` a write, or a read/write mix).
fn writes(job: &BatteryJob) -> bool {
    job.options.iter().any(|o| o.strip_prefix("rw=").is_some_and(|rw| rw.contains("write") || rw.ends_with("rw")))
}

/// The battery job of this name.
pub fn job(name: &str) -> Option<&'static BatteryJob> {
    JOBS.iter().find(|j| j.name == name)
}

/// File name of the battery in the directory `ssdtwin fit --jobs` writes.
pub const FILE_NAME: &str = "battery.fio";

/// The option with its `{T:n}` time written out (n × `time_scale`
/// seconds, in whole milliseconds, at least 1 ms) and its `{M:n}` written
/// as n × `time_scale` milliseconds (a log's window, at least 1).
pub fn resolve(option: &str, time_scale: f64) -> String {
    let Some(at) = option.find("{T:").or_else(|| option.find("{M:")) else { return option.to_string() };
    let end = option[at..].find('}').map_or(option.len(), |e| at + e);
    let n: f64 = option[at + 3..end].parse().unwrap_or(0.0);
    let value = if &option[at..at + 3] == "{T:" {
        let ms = ((n * time_scale * 1000.0).round() as u64).max(1);
        if ms % 1000 == 0 {
            format!("{}s", ms / 1000)
        } else {
            format!("{ms}ms")
        }
    } else {
        ((n * time_scale).round() as u64).max(1).to_string()
    };
    format!("{}{}{}", &option[..at], value, &option[(end + 1).min(option.len())..])
}

/// The battery as one fio job file; times multiplied by `time_scale`
/// (1 for a real drive; less to try it quickly on a small twin).
pub fn text(time_scale: f64) -> String {
    let mut out = String::new();
    out.push_str(
        "; ssdtwin characterization battery (ssdtwin fit --jobs). It ERASES the drive.\n\
         ;\n\
         ; Real drive:  DEV=/dev/nvme0n1 fio --output-format=json+ --output=battery.json battery.fio\n\
         ; The twin:    ssdtwin run --drive D --job-file battery.fio --output-format=json --output battery.json\n\
         ; Then:        ssdtwin fit --base PRESET battery.json --out my-drive.toml\n\
         ; Keep the bandwidth logs (fill_bw.*.log, idle-short_bw.*.log, idle-long_bw.*.log,\n\
         ; randwrite_bw.*.log) beside the JSON: the fit reads them.\n\
         ;\n\
         ; The jobs run one after another (stonewall): each leaves the drive in the state the next\n\
         ; one expects (empty, then full). Sizes are shares of the device, so the file suits any\n\
         ; capacity; the times below are for a 1 TB drive. Without the fill, about 29 minutes.\n",
    );
    if time_scale != 1.0 {
        out.push_str(&format!(
            "; Times are scaled by {time_scale} (ssdtwin fit --jobs --time-scale): for trying the battery on a\n\
             ; small twin, not for a real drive.\n"
        ));
    }
    out.push_str("\n[global]\nfilename=${DEV}\nioengine=libaio\ndirect=1\nrandseed=1\nstonewall\n");
    for j in JOBS {
        out.push('\n');
        for line in wrap(&format!("{} Takes {}.", j.measures, j.takes), 92) {
            out.push_str(&format!("; {line}\n"));
        }
        out.push_str(&format!("[{}]\n", j.name));
        for o in j.options {
            out.push_str(&resolve(o, time_scale));
            out.push('\n');
        }
    }
    out
}

/// Words of `s` in lines of at most `width` characters.
fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for w in s.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + w.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}
