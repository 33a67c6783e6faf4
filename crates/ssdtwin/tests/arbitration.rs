//! NVMe submission-queue arbitration and fio's I/O priorities: weighted
//! round robin's service shares computed by hand, a priority job's
//! latency next to a saturating one, and fio's `cmdprio_percentage`
//! split (exactly fio 3.33's draws, and within binomial tolerance).

use ssdtwin::model::arbitration::{ioprio, QueueClass};
use ssdtwin::model::drive::Command;
use ssdtwin::run::device::{Device, Event};
use ssdtwin::run::jobs::{run_jobs, JobResult};
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::IoKind;

use crate::common::small_drive;

const CAP: u64 = 256 << 20;

const WRR: &[&str] = &["host.arbitration.mechanism=weighted-round-robin", "host.arbitration.weights=[4, 2, 1]"];

fn read(i: u64) -> Command {
    Command { kind: IoKind::Read, offset: (i % 4096) * 4096, len: 4096 }
}

/// The ioprio value that waits in `class` (the twin's mapping).
fn prio_of(class: QueueClass) -> u16 {
    match class {
        QueueClass::Urgent => ioprio::value(ioprio::CLASS_RT, 0, 0),
        QueueClass::High => ioprio::value(ioprio::CLASS_RT, 4, 0),
        QueueClass::Medium => ioprio::value(ioprio::CLASS_BE, 4, 0),
        QueueClass::Low => ioprio::value(ioprio::CLASS_IDLE, 0, 0),
    }
}

/// A drive taking one command at a time, 300 commands of each weighted
/// class waiting from time 0 and 10 urgent ones arriving later: the
/// drive serves them in rounds of 4 high, 2 medium, 1 low (weights
/// 4:2:1, burst unlimited) until a class runs dry, and each urgent
/// command next. Under round robin (the default) the same commands are
/// served in arrival order.
#[test]
fn weighted_round_robin_serves_saturated_queues_in_the_weights_ratio() {
    for wrr in [true, false] {
        let mut set = vec!["host.max_queue_depth=1"];
        if wrr {
            set.extend_from_slice(WRR);
        }
        let mut dev = Device::new(small_drive(256, &set));
        let classes = [QueueClass::High, QueueClass::Medium, QueueClass::Low];
        for i in 0..900u64 {
            let c = classes[(i % 3) as usize];
            dev.submit_prio(read(i), c as u32, prio_of(c));
        }
        let mut order = Vec::new();
        let mut urgent_sent = 0;
        while let Some(Event::Completion(c)) = dev.next_event() {
            order.push(c.tag);
            // After the 100th completion, an urgent command every 20.
            if order.len() >= 100 && order.len() % 20 == 0 && urgent_sent < 10 {
                dev.submit_prio(read(urgent_sent), QueueClass::Urgent as u32, prio_of(QueueClass::Urgent));
                urgent_sent += 1;
            }
        }
        assert_eq!(order.len(), 910);
        let count = |s: &[u32], c: QueueClass| s.iter().filter(|&&t| t == c as u32).count();
        // The first command entered before any waited; then 70 rounds
        // before the urgent ones begin (the first 99 after it).
        let window = &order[1..1 + 7 * 14];
        if wrr {
            assert_eq!(
                [count(window, QueueClass::High), count(window, QueueClass::Medium), count(window, QueueClass::Low)],
                [56, 28, 14],
                "4:2:1"
            );
            // Each urgent command is the next served after its arrival.
            for (i, &t) in order.iter().enumerate() {
                if t == QueueClass::Urgent as u32 {
                    assert!(i % 20 == 0, "an urgent command served at completion {i}, not next");
                }
            }
        } else {
            assert_eq!(
                [count(window, QueueClass::High), count(window, QueueClass::Medium), count(window, QueueClass::Low)],
                [32, 33, 33],
                "arrival order"
            );
        }
    }
}

/// A write with Force Unit Access waits in its class's queue as any
/// command of its class (fio's FUA writes carry the job's priority): a
/// drive taking one command at a time, 20 high-class reads waiting, then
/// a low-class FUA write; weights 4:2:1 serve it after the first round's
/// four high ones, not at the next free slot. Its completion is a FUA
/// write's: after its data is on the flash.
#[test]
fn a_fua_write_waits_in_its_class_queue() {
    let mut set = vec!["host.max_queue_depth=1"];
    set.extend_from_slice(WRR);
    let mut dev = Device::new(small_drive(256, &set));
    for i in 0..20u64 {
        dev.submit_prio(read(i), QueueClass::High as u32, prio_of(QueueClass::High));
    }
    let write = Command { kind: IoKind::Write, offset: 1 << 20, len: 4096 };
    assert_eq!(dev.submit_prio_fua(write, QueueClass::Low as u32, prio_of(QueueClass::Low)), None, "it waits");
    let mut order = Vec::new();
    let mut fua_latency = 0;
    while let Some(Event::Completion(c)) = dev.next_event() {
        if c.tag == QueueClass::Low as u32 {
            fua_latency = c.latency_ns();
        }
        order.push(c.tag);
    }
    // The first read entered at once; then four high, then the low write.
    assert_eq!(order.iter().position(|&t| t == QueueClass::Low as u32), Some(5), "{order:?}");
    // A buffered write would complete in microseconds; a FUA write waits
    // for its program (hundreds of microseconds on TLC).
    let mut plain = Device::new(small_drive(256, &set));
    plain.submit_prio(write, 0, prio_of(QueueClass::Low));
    let Some(Event::Completion(b)) = plain.next_event() else { panic!("a completion") };
    assert!(fua_latency > b.latency_ns() + 100_000, "FUA {fua_latency} ns, buffered {} ns", b.latency_ns());
}

/// A FLUSH is an I/O command of the queue it was submitted to (NVMe's
/// Flush): under weighted round robin it waits in its class's queue as
/// the FUA write above does, and its completion comes as the timer it was
/// given, after the first round's four high-class reads. Under round
/// robin it enters at once.
#[test]
fn a_flush_waits_in_its_class_queue() {
    let mut set = vec!["host.max_queue_depth=1"];
    set.extend_from_slice(WRR);
    let mut dev = Device::new(small_drive(256, &set));
    for i in 0..20u64 {
        dev.submit_prio(read(i), QueueClass::High as u32, prio_of(QueueClass::High));
    }
    const TOKEN: u32 = 77;
    assert_eq!(dev.flush_prio(prio_of(QueueClass::Low), TOKEN), None, "it waits");
    let mut order = Vec::new();
    while let Some(e) = dev.next_event() {
        match e {
            Event::Completion(c) => order.push(c.tag),
            Event::Timer(t) => order.push(t),
        }
    }
    assert_eq!(order.iter().position(|&t| t == TOKEN), Some(5), "{order:?}");
    let mut rr = Device::new(small_drive(256, &["host.max_queue_depth=1"]));
    for i in 0..20u64 {
        rr.submit_prio(read(i), QueueClass::High as u32, prio_of(QueueClass::High));
    }
    assert!(rr.flush_prio(prio_of(QueueClass::Low), TOKEN).is_some(), "round robin holds nothing");
}

/// Under weighted round robin a job that sets no priority waits in the
/// medium class like any other command (before, it went straight to the
/// drive's queue, ahead of every class): beside a saturating urgent job,
/// which is served strictly first, it completes almost nothing; under
/// round robin it takes its turn in arrival order.
#[test]
fn a_job_without_priority_waits_in_the_medium_class() {
    let jobs = "[global]\nrw=randread\nbs=4k\nruntime=100ms\ntime_based=1\nsize=64m\n\
                [urgent]\niodepth=40\nprioclass=1\nprio=0\n\
                [plain]\niodepth=1\n";
    let fill = "[fill]\nrw=write\nbs=128k\nsize=64m\niodepth=8\nstonewall\n";
    let mut set = vec!["host.max_queue_depth=32"];
    let rr = run(&format!("{fill}{jobs}"), &set);
    set.extend_from_slice(WRR);
    let wrr = run(&format!("{fill}{jobs}"), &set);
    let reads = |r: &[JobResult]| r[2].stats.as_ref().unwrap().dirs[IoKind::Read as usize].ios;
    let (rr_n, wrr_n) = (reads(&rr), reads(&wrr));
    eprintln!("plain job's reads: rr {rr_n}, wrr {wrr_n}");
    assert!(rr_n > 50, "round robin serves the plain job: {rr_n} reads");
    assert!(wrr_n * 20 < rr_n, "weighted round robin starves it behind urgent: rr {rr_n}, wrr {wrr_n}");
}

fn run(text: &str, set: &[&str]) -> Vec<JobResult> {
    let file = parse_job_file(text, "t.fio", CAP, &JobOptions::new()).unwrap();
    let mut dev = Device::new(small_drive(256, set));
    run_jobs(&mut dev, &file)
}

fn mean_read_lat_us(r: &JobResult) -> f64 {
    let d = &r.stats.as_ref().unwrap().dirs[IoKind::Read as usize];
    d.lat_sum_ns as f64 / d.ios as f64 / 1000.0
}

/// A QD1 real-time job beside a saturating idle-class job (more
/// commands than the drive's 32 queue slots): under round robin its
/// reads wait behind the backlog; under weighted round robin they enter
/// at the next free slot, so their latency is several times lower (here
/// 1,936 → 175 µs), and the two jobs together complete about as many
/// reads.
#[test]
fn a_priority_job_waits_less_under_weighted_round_robin() {
    let jobs = "[global]\nrw=randread\nbs=4k\nruntime=200ms\ntime_based=1\nsize=64m\n\
                [bulk]\niodepth=256\nprioclass=3\n\
                [urgent]\niodepth=1\nprioclass=1\nprio=2\n";
    // Fill the span first so reads go to flash.
    let fill = "[fill]\nrw=write\nbs=128k\nsize=64m\niodepth=8\nstonewall\n";
    let rr = run(&format!("{fill}{jobs}"), &["host.max_queue_depth=32"]);
    let mut set = vec!["host.max_queue_depth=32"];
    set.extend_from_slice(WRR);
    let wrr = run(&format!("{fill}{jobs}"), &set);
    let (rr_hi, wrr_hi) = (mean_read_lat_us(&rr[2]), mean_read_lat_us(&wrr[2]));
    let (rr_bulk, wrr_bulk) = (mean_read_lat_us(&rr[1]), mean_read_lat_us(&wrr[1]));
    eprintln!("high: rr {rr_hi:.1} us, wrr {wrr_hi:.1} us; bulk: rr {rr_bulk:.1} us, wrr {wrr_bulk:.1} us");
    assert!(wrr_hi * 4.0 < rr_hi, "high-priority latency: rr {rr_hi:.1} us, wrr {wrr_hi:.1} us");
    // The drive is saturated either way: the two jobs together complete
    // about as many reads (here 27,499 and 26,159: the priority job's
    // extra reads are the bulk's loss).
    let ios = |r: &[JobResult]| -> u64 { r[1..].iter().map(|j| j.stats.as_ref().unwrap().dirs[0].ios).sum() };
    let (rr_ios, wrr_ios) = (ios(&rr), ios(&wrr));
    assert!(rr_ios.abs_diff(wrr_ios) * 10 < rr_ios, "reads: rr {rr_ios}, wrr {wrr_ios}");
    // Holding commands in the host's queues and handing them to the
    // drive as slots free costs nothing by itself: with both jobs in one
    // class, weighted round robin gives round robin's run exactly.
    let one_class = format!("{fill}{}", jobs.replace("prioclass=3\n", "").replace("prioclass=1\nprio=2\n", ""));
    let (a, b) = (run(&one_class, &set), run(&one_class, &["host.max_queue_depth=32"]));
    assert_eq!((ios(&a), mean_read_lat_us(&a[2])), (ios(&b), mean_read_lat_us(&b[2])));
}

/// `cmdprio_percentage=30` over 1024 reads of job 1 with fio's default
/// seed: fio 3.33 gave exactly 300 commands its `cmdprio_class=1`,
/// `cmdprio=2` (`fio --name=j --filename=F --size=4m --ioengine=libaio
/// --rw=randread --bs=4k --iodepth=4 --cmdprio_percentage=30
/// --cmdprio_class=1 --cmdprio=2`: "clat prio 1/2 (29.30% of IOs)");
/// the twin draws the same numbers. Over 20,000 commands of other jobs
/// the share is within four binomial standard deviations of 30%.
#[test]
fn cmdprio_percentage_splits_as_fio() {
    let count = |text: &str, job: usize| {
        let file = parse_job_file(text, "t.fio", CAP, &JobOptions::new()).unwrap();
        let mut dev = Device::new(small_drive(256, &[]));
        dev.log_commands(true);
        let r = run_jobs(&mut dev, &file);
        let log = dev.take_log();
        let high = ioprio::value(ioprio::CLASS_RT, 2, 0);
        let n = log.iter().filter(|c| c.tag as usize == job && c.cmd.kind == IoKind::Read).count();
        let k = log.iter().filter(|c| c.ioprio == high && c.cmd.kind == IoKind::Read).count();
        drop(r);
        (k, n)
    };
    let one = "[j]\nrw=randread\nbs=4k\nsize=4m\niodepth=4\ncmdprio_percentage=30\ncmdprio_class=1\ncmdprio=2\n";
    let (k, n) = count(one, 0);
    assert_eq!((k, n), (300, 1024));
    // fio's latency log with log_prio=1 carries each command's ioprio
    // (fio 3.33 wrote `0, 191986, 0, 4096, 0x2002` for such a command).
    let dir = crate::common::scratch_dir("log_prio");
    let lat = dir.path().join("lg");
    let text = format!("{one}write_lat_log={}\nlog_prio=1\n", lat.display());
    let file = parse_job_file(&text, "t.fio", CAP, &JobOptions::new()).unwrap();
    run_jobs(&mut Device::new(small_drive(256, &[])), &file);
    let log = std::fs::read_to_string(dir.path().join("lg_clat.1.log")).unwrap();
    let tagged = log.lines().filter(|l| l.ends_with(", 0x2002")).count();
    let plain = log.lines().filter(|l| l.ends_with(", 0x0000")).count();
    assert_eq!((tagged, plain), (300, 724), "{}", &log[..200]);
    // Without `randrepeat` each loop draws afresh: binomial over all.
    let many = "[j]\nrw=randread\nbs=4k\nsize=4m\nloops=20\ncmdprio_percentage=30\ncmdprio_class=1\ncmdprio=2\n\
                randseed=7\nrandrepeat=0\n";
    let (k, n) = count(many, 0);
    let sd = (n as f64 * 0.3 * 0.7).sqrt();
    assert!(((k as f64) - 0.3 * n as f64).abs() < 4.0 * sd, "{k} of {n}");
}

/// Each command's priority as fio 3.33 gives it, command for command
/// (tests/data/fio-cmdprio-logs.txt, recorded with libaio at QD1 on a loop
/// device): every pass after the first, and the verify phase, re-seed the
/// draws (fio's `clear_io_state` with `randrepeat`), so a loop's
/// priorities repeat the first's; a verify read draws only in a job that
/// reads, and otherwise keeps the priority of the io_u it reuses (the last
/// write's at QD1); a direction the job does not do gets no `cmdprio`.
#[test]
fn each_commands_priority_is_fios() {
    let data = include_str!("data/fio-cmdprio-logs.txt");
    let mut jobs = 0;
    for line in data.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (opts, runs) = line.split_once('|').expect("options|runs");
        let opts = opts.replace("\\n", "\n");
        let text = format!("[j]\nbs=4k\nsize=256k\niodepth=1\nlog_prio=1\n{opts}\n");
        let file = parse_job_file(&text, "t.fio", CAP, &JobOptions::new()).unwrap();
        let mut dev = Device::new(small_drive(256, &[]));
        dev.log_commands(true);
        run_jobs(&mut dev, &file);
        let mut got: Vec<(char, u16)> = Vec::new();
        for c in dev.take_log() {
            got.push((if c.cmd.kind == IoKind::Read { 'r' } else { 'w' }, c.ioprio));
        }
        let mut want: Vec<(char, u16)> = Vec::new();
        for run in runs.split_whitespace() {
            let (key, n) = run.split_once('*').unwrap();
            let (d, prio) = key.split_once(':').unwrap();
            let prio = u16::from_str_radix(prio.trim_start_matches("0x"), 16).unwrap();
            let n: usize = n.parse().unwrap();
            want.extend(std::iter::repeat_n((d.chars().next().unwrap(), prio), n));
        }
        let first = got.iter().zip(&want).position(|(a, b)| a != b);
        assert!(got == want, "{opts}: {} commands, fio {}; first difference at {first:?}", got.len(), want.len());
        jobs += 1;
    }
    assert_eq!(jobs, 9);
}

/// fio's JSON of a `cmdprio_percentage` job: the read section's `prios`,
/// one entry per priority with samples, the job's own first (fio 3.33 on
/// the same job: `{"prioclass": 0, "prio": 0, "clat_ns": {"N": 724, ...}}`
/// then `{"prioclass": 1, "prio": 2, "clat_ns": {"N": 300, ...}}`); a
/// job without `cmdprio*` has none.
#[test]
fn the_json_reports_latency_per_priority_as_fio() {
    let json = |text: &str| {
        let file = parse_job_file(text, "t.fio", CAP, &JobOptions::new()).unwrap();
        let mut dev = Device::new(small_drive(256, &[]));
        let r = run_jobs(&mut dev, &file);
        crate::common::with_fio_report(&dev, &file, &r, |rep| rep.to_json(false))
    };
    let one = "[j]\nrw=randread\nbs=4k\nsize=4m\niodepth=4\ncmdprio_percentage=30\ncmdprio_class=1\ncmdprio=2\n";
    let v = json(one);
    let prios = v["jobs"][0]["read"]["prios"].as_array().expect("prios").clone();
    let got: Vec<(u64, u64, u64)> = prios
        .iter()
        .map(|p| (p["prioclass"].as_u64().unwrap(), p["prio"].as_u64().unwrap(), p["clat_ns"]["N"].as_u64().unwrap()))
        .collect();
    assert_eq!(got, [(0, 0, 724), (1, 2, 300)]);
    assert!(prios[1]["clat_ns"]["percentile"]["50.000000"].as_u64().unwrap() > 0);
    let plain = json("[j]\nrw=randread\nbs=4k\nsize=4m\niodepth=4\nprioclass=1\n");
    assert!(plain["jobs"][0]["read"].get("prios").is_none());
}

/// The normal output of the same job: fio 3.33's `clat prio C/L` line
/// (min, max, avg, stdev) for each priority with samples after the `clat`
/// and `lat` lines, and a percentile table for each, titled with its
/// share of the commands (stat.c `show_ddir_status`: `clat prio 1/2
/// (29.30% of IOs) percentiles`); none without two priorities.
#[test]
fn the_normal_output_has_fios_clat_prio_lines() {
    let normal = |text: &str| {
        let file = parse_job_file(text, "t.fio", CAP, &JobOptions::new()).unwrap();
        let mut dev = Device::new(small_drive(256, &[]));
        let r = run_jobs(&mut dev, &file);
        crate::common::with_fio_report(&dev, &file, &r, |rep| rep.normal())
    };
    let out =
        normal("[j]\nrw=randread\nbs=4k\nsize=4m\niodepth=4\ncmdprio_percentage=30\ncmdprio_class=1\ncmdprio=2\n");
    let lines: Vec<&str> = out.lines().map(str::trim_start).collect();
    let at = |p: &str| lines.iter().position(|l| l.starts_with(p)).unwrap_or_else(|| panic!("no `{p}` in\n{out}"));
    assert!(at("clat (") < at("lat (") && at("lat (") < at("clat prio 0/0 ("));
    assert!(at("clat prio 0/0 (") < at("clat prio 1/2 (") && at("clat prio 1/2 (") < at("clat percentiles"));
    assert!(at("clat percentiles") < at("clat prio 0/0 (70.70% of IOs) percentiles"));
    assert!(at("clat prio 0/0 (70.70% of IOs) percentiles") < at("clat prio 1/2 (29.30% of IOs) percentiles"));
    let plain = normal("[j]\nrw=randread\nbs=4k\nsize=4m\niodepth=4\nprioclass=1\n");
    assert!(!plain.contains("prio"), "{plain}");
}
