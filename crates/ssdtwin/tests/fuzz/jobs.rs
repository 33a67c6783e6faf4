//! fio job files: mutated job files through the job-file parser (sections,
//! `[global]`, every option's value syntax, job control and logs) into
//! phases.

use ssdtwin::run::workload::{parse_job_file, JobOptions};

use super::engine::{fuzz, message};

fn corpus() -> Vec<Vec<u8>> {
    [
        "[global]\nioengine=libaio\ndirect=1\nbs=4k\nsize=1g\nruntime=10s\n\n[randread]\nrw=randread\niodepth=32\n",
        "[global]\nrw=randwrite\nbs=4k\nnumjobs=4\ngroup_reporting\n[a]\nio_size=64m\noffset_increment=1g\n\
         [b]\nstonewall\nrw=read\nbs=128k\niodepth=4\nthinktime=100\nthinktime_blocks=8\n",
        "[mix]\nrw=randrw\nrwmixread=70\nbssplit=4k/50:64k/30:1m/20\nrandom_distribution=zipf:1.2\nsize=16g\n\
         io_size=256m\nrate_iops=1000\nrate_process=poisson\n",
        "[ss]\nrw=randwrite\nbs=4k\nss=iops_slope:0.1%\nss_dur=60\nss_ramp=10\ntime_based\nruntime=600\n\
         [lat]\nwait_for=ss\nrw=randread\nlatency_target=500us\nlatency_window=1s\nlatency_percentile=99.9\n\
         write_bw_log=lat\nwrite_lat_log=lat\nlog_avg_msec=100\nwrite_hist_log=lat\nlog_hist_msec=1000\n",
        "[seq]\nrw=write\nbs=1m\nsize=100%\nloops=2\nramp_time=5s\nstartdelay=1s\nrate_min=1m\nrate_cycle=500\n\
         percentage_random=20\nrandom_generator=lfsr\nrandseed=42\nnorandommap\n",
        "; comment\n# comment\n[global]\nkb_base=1000\n[j]\nrw=trim\nbs=4KiB\noffset=10%\nsize=50%\nzonesize=1m\nzoneskip=4m\n",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}

#[test]
fn job_files() {
    let defaults = JobOptions::new();
    let runs = fuzz("jobs", &corpus(), |input| {
        let text = String::from_utf8_lossy(input);
        match parse_job_file(&text, "fuzz.fio", 512_110_190_592, &defaults) {
            Ok(file) => {
                let _ = file.to_job();
            }
            Err(e) => {
                let m = message(&e);
                assert!(m.contains("fuzz.fio"), "an error names the file: {m}");
            }
        }
    });
    assert!(runs > 100, "{runs}");
}
