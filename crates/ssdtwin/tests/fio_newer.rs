//! fio features newer than the fio 3.33 the other tests run issue fio's
//! own commands: `sprandom` preconditioning (fio 3.41) and
//! `random_distribution=sequence` with `random_sequence_stride` (fio
//! 3.41). The twin's `write_iolog` of each job equals what fio 3.42
//! (commit f5344384, built from source) wrote for it with
//! `--ioengine=null --write_iolog=`, kept in tests/data/fio-3.42/ (JOB.fio,
//! and JOB.iolog: direction, offset and length in 4 KiB blocks, one
//! command a line, each job's file in turn). When the installed fio knows
//! `sprandom`, the test also runs it and compares.

use std::path::{Path, PathBuf};
use std::process::Command;

use ssdtwin::run::device::Device;
use ssdtwin::run::jobs::run_jobs;
use ssdtwin::run::workload::{parse_job_file, JobOptions};

use crate::common::{scratch_dir, small_drive};

const MIB: u64 = 256;
const JOBS: [&str; 7] = ["default", "cache", "randrw", "clones", "oneregion", "sequence", "sequence-stride"];

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fio-3.42").join(name)
}

/// An iolog's commands as `d offset len` in 4 KiB blocks, each file's in
/// turn (the data files' form).
fn commands(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines: Vec<(String, String)> = text
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let d = match f.get(2) {
                Some(&"read") => "r",
                Some(&"write") => "w",
                _ => return None,
            };
            let blocks = |s: &str| s.parse::<u64>().expect("a number") / 4096;
            Some((f[1].to_string(), format!("{d} {} {}", blocks(f[3]), blocks(f[4]))))
        })
        .collect();
    lines.sort_by(|a, b| a.0.cmp(&b.0));
    lines.into_iter().map(|l| l.1).collect()
}

fn twin(job: &str, dir: &Path) -> Vec<String> {
    let log = dir.join("twin.log");
    let text = format!("[global]\nsize=4m\nwrite_iolog={}\n{job}", log.display());
    let file = parse_job_file(&text, "job.fio", MIB << 20, &JobOptions::new()).unwrap();
    let mut dev = Device::new(small_drive(MIB, &[]));
    run_jobs(&mut dev, &file);
    commands(&log)
}

/// fio's iolog of `job`, if the installed fio knows `sprandom`.
fn live_fio(job: &str, dir: &Path) -> Option<Vec<String>> {
    // fio 3.33 answers an unknown --cmdhelp with nothing (and status 0).
    let knows = Command::new("fio")
        .arg("--cmdhelp=sprandom")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("sprandom:"));
    if !knows {
        return None;
    }
    let log = dir.join("fio.log");
    let path = dir.join("job.fio");
    std::fs::write(&path, format!("[global]\nioengine=null\nsize=4m\nwrite_iolog={}\n{job}", log.display())).unwrap();
    let out = Command::new("fio").arg("--output-format=terse").arg(&path).output().unwrap();
    assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
    Some(commands(&log))
}

fn first_difference(a: &[String], b: &[String]) -> Option<usize> {
    (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i))
}

#[test]
fn newer_features_issue_fios_commands() {
    for name in JOBS {
        let job = std::fs::read_to_string(data(&format!("{name}.fio"))).unwrap();
        let want: Vec<String> =
            std::fs::read_to_string(data(&format!("{name}.iolog"))).unwrap().lines().map(String::from).collect();
        let dir = scratch_dir("newer");
        let got = twin(&job, dir.path());
        if let Some(i) = first_difference(&want, &got) {
            panic!(
                "{name}: first difference at command {i} of {} (fio 3.42) / {} (twin): {:?} against {:?}",
                want.len(),
                got.len(),
                want.get(i),
                got.get(i)
            );
        }
        if let Some(live) = live_fio(&job, dir.path()) {
            assert!(first_difference(&live, &got).is_none(), "{name}: the installed fio differs");
        }
    }
}

/// fio's sizes, by hand: a 4 MiB span at 15% over-provisioning is
/// 4,194,304 + ⌈629,145.6⌉ = 4,823,450 bytes, 4,820,992 aligned to 4 KiB:
/// the job's `io_size`. With one region nothing is invalid: every block is
/// written once, in the LFSR's order.
#[test]
fn sprandom_sizes_are_fios() {
    let file = parse_job_file(
        "[a]
rw=randwrite
size=4m
sprandom=1
",
        "j.fio",
        1 << 30,
        &JobOptions::new(),
    )
    .unwrap();
    let ssdtwin::run::workload::Phase::Io(spec) = &file.jobs[0].phase else { panic!("an I/O job") };
    assert_eq!(spec.io_size, Some(4_820_992));
    assert!(spec.norandommap);
    assert_eq!(spec.fio.map(|f| f.generator), Some(ssdtwin::run::workload::RandomGenerator::Lfsr));
    let dir = scratch_dir("sprandom");
    let got = twin("[a]\nrw=randwrite\nbs=4k\nsprandom=1\nspr_num_regions=1\n", dir.path());
    let mut seen = vec![0u32; 1024];
    for c in &got {
        seen[c.split(' ').nth(1).unwrap().parse::<usize>().unwrap()] += 1;
    }
    assert!(seen.iter().all(|&n| n == 1), "not every block once");
}

#[test]
fn sprandom_errors_are_fios() {
    let err = |job: &str| {
        parse_job_file(&format!("[a]\n{job}"), "j.fio", 1 << 30, &JobOptions::new()).unwrap_err().to_string()
    };
    assert!(err("rw=write\nsprandom=1").contains("sprandom requires random write"));
    assert!(err("rw=randwrite\nrandom_generator=tausworthe\nsprandom=1").contains("j.fio:3: option `random_generator`"));
    assert!(err("rw=randwrite\nnorandommap=0\nsprandom=1").contains("sprandom requires norandommap=1"));
    assert!(err("rw=randwrite\nsprandom=1\nspr_num_regions=0").contains("at least one region"));
    assert!(err("rw=randwrite\nsprandom=1\nspr_op=2").contains("below 5/3"));
    assert!(err("rw=randwrite\nsize=1m\nsprandom=1\nspr_cs=1m").contains("must be smaller than region_sz"));
    assert!(err("rw=randwrite\nbsrange=4k-16k\nsprandom=1").contains("variable block sizes"));
}

/// fio's `${VAR}` in a job file is the environment variable's value; one
/// that is not set is an error naming file, line, option and variable
/// (fio would put nothing there).
#[test]
fn job_files_expand_environment_variables() {
    std::env::set_var("SSDTWIN_TEST_ENV_BS", "16k");
    let text = "[a]\nrw=randwrite\nbs=${SSDTWIN_TEST_ENV_BS}\nsize=1m\n";
    let file = parse_job_file(text, "e.fio", 1 << 30, &JobOptions::new()).unwrap();
    let ssdtwin::run::workload::Phase::Io(spec) = &file.jobs[0].phase else { panic!("an I/O job") };
    assert_eq!(spec.bs, 16384);
    let text = "[a]\nrw=randwrite\n\nbs=${SSDTWIN_TEST_ENV_UNSET}k ; a comment\n";
    let e = parse_job_file(text, "e.fio", 1 << 30, &JobOptions::new()).unwrap_err().to_string();
    assert!(e.starts_with("e.fio:4: option `bs`") && e.contains("`SSDTWIN_TEST_ENV_UNSET` is not set"), "{e}");
    // In a host option it is nothing, as in fio.
    let text = "[a]\nrw=read\nfilename=${SSDTWIN_TEST_ENV_UNSET}\nsize=1m\n";
    assert!(parse_job_file(text, "e.fio", 1 << 30, &JobOptions::new()).is_ok());
}
