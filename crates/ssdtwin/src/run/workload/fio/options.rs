//! Which fio options ssdtwin knows: those that change the simulated
//! workload ([`KNOWN`]), those that decide when a job runs or how it is
//! reported, those that only describe the host and are accepted without
//! effect ([`HOST_ONLY`]), and fio options that change the workload but are
//! not modelled (an error naming them). What each option means is in
//! [`super::phase`] and [`super::jobctl`]; this module holds only the
//! tables and the error for unknown options.

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
    "retention",
    "age",
    "age_exact",
    "per_day",
];

/// Options that decide when a job runs or how it is reported, handled by
/// [`super::parse_job_file`] rather than by the phase.
pub const SCHEDULE: &[&str] =
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

/// Whether ssdtwin reads `key`: a workload option ([`KNOWN`]) or one of
/// the job-control options (latency target, steady state, logs:
/// [`super::jobctl::OPTIONS`]).
pub fn is_known(key: &str) -> bool {
    KNOWN.contains(&key) || super::jobctl::OPTIONS.contains(&key)
}

/// Whether `key` only describes the host.
pub fn is_host_only(key: &str) -> bool {
    HOST_ONLY.contains(&key) || key.starts_with("verify")
}

/// One option: (key, value, where it was written).
pub type Entry = (String, String, String);

/// The error naming every unknown option of a file, each with its line.
pub(super) fn unknown_error(unknown: &[&Entry]) -> JobError {
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
    JobError::UnknownOption {
        origin: first_at,
        option,
        known: KNOWN.iter().chain(super::jobctl::OPTIONS).copied().collect::<Vec<_>>().join(", "),
    }
}
