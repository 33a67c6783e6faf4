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
//! This module reads the file's sections and what each job inherits from
//! `[global]`, and turns `numjobs` into clones. The rest, by concept:
//! - [`table`]: fio's whole option table, each option once (name,
//!   aliases, kind, default, help, and whether the twin models it, ignores
//!   it as describing the host, or refuses it with a reason);
//! - [`options`]: the parser's questions to the table and the error for
//!   unknown and refused options;
//! - [`values`]: fio's spelling of values (sizes, times, per-direction
//!   lists, `bssplit`, `random_distribution`);
//! - [`phase`]: one job's options made into a [`Phase`];
//! - [`checks`]: fio's checks that need several options of a job;
//! - [`jobctl`]: the latency target, steady-state and log options.
//!
//! Options that only describe the host side of a real fio run
//! (`ioengine`, `direct`, `filename`, `verify_pattern`, ...) are accepted, have no
//! effect, and are listed in [`JobFile::ignored`]; an unknown option, or a
//! refused one (`write_barrier`, `thinkcycles`, ... unless given fio's
//! default), is an error naming file, line and option.

pub mod checks;
pub mod flow;
pub mod jobctl;
pub mod options;
pub mod phase;
pub mod placement;
pub mod prio;
pub mod rates;
pub mod sprandom;
pub mod sync;
pub mod table;
pub mod values;
pub mod verify;
pub mod zbd;

pub use options::{is_host_only, is_known, is_schedule, HOST_ONLY};
pub(crate) use values::parse_bool;
pub use values::{parse_size, parse_time};

use checks::check_fits;
use options::{is_unusable, unknown_error, Entry};
use phase::build_phase;
use values::invalid;
pub(crate) use values::kb_base_of;

use super::{Job, Phase};
use crate::error::JobError;

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
    /// fio's `exitall`: when any job finishes, the jobs [`Self::exit_what`]
    /// names end too (fio makes it global: one job's `exitall` is all's).
    pub exitall: bool,
    /// fio's `exitall_on_error`: when this job ends with an error, the
    /// jobs [`Self::exit_what`] names end too.
    pub exitall_on_error: bool,
    /// Which jobs end with this one (`exit_what`).
    pub exit_what: ExitWhat,
}

/// fio's `exit_what`: which jobs end when one ends under `exitall`
/// (libfio.c, `fio_terminate_threads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExitWhat {
    /// The jobs of its reporting group, running or still to start.
    #[default]
    Group,
    /// The jobs running now, in any group; the next stonewalled jobs run.
    Stonewall,
    /// Every job, running or still to start.
    All,
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
    /// A job file of one section running `phase`, with no ordering,
    /// reporting or global options (as `ssdtwin run --trace FILE` runs
    /// the trace).
    pub fn of_phase(phase: Phase) -> JobFile {
        let entry = JobEntry {
            phase,
            options: Vec::new(),
            stonewall: false,
            new_group: false,
            wait_for: None,
            startdelay_ns: 0,
            group_reporting: false,
            clone: 0,
            exitall: false,
            exitall_on_error: false,
            exit_what: ExitWhat::Group,
        };
        JobFile { jobs: vec![entry], global: Vec::new(), ignored: Vec::new() }
    }

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

/// Most jobs one job file (or command line) may make, counting
/// `numjobs` clones: fio's limit (`REAL_MAX_JOBS`).
pub const MAX_JOBS: usize = 4096;

/// Parse a job file (fio's INI: comments start with `;` or `#`, also after
/// a value; `${VAR}` is the environment variable's value, an error when it
/// is not set). `origin` is its path (for messages); `defaults` apply
/// before the file's own options (the command line's `--seed` as
/// `randseed`, say), so `[global]` and the sections override them.
pub fn parse_job_file(text: &str, origin: &str, capacity: u64, defaults: &JobOptions) -> Result<JobFile, JobError> {
    // As fio (parse.c, strip_blank_end), a line ends at its first `;` or
    // `#`: a comment may follow a value (`numjobs=4 ; four clones`).
    let mut lines = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.split([';', '#']).next().unwrap_or("");
        lines.push(expand_env(l).map_err(|(var, key)| {
            let reason = format!(
                "environment variable `{var}` is not set (the file writes `${{{var}}}`; fio would put nothing there)"
            );
            invalid(&format!("{origin}:{}", i + 1), key.trim(), reason)
        })?);
    }
    parse_lines(&lines.join("\n"), &|i| format!("{origin}:{}", i + 1), origin, capacity, defaults)
}

/// fio's `${VAR}` in a job file's line (options.c, `fio_option_dup_subs`):
/// the environment variable's value. A variable that is not set is
/// nothing, as in fio, in a host option (`filename=${DEV}`: it changes
/// nothing in the twin); anywhere else it is an error: `Err((variable,
/// the line's option))`.
fn expand_env(line: &str) -> Result<String, (String, &str)> {
    let key = line.split('=').next().unwrap_or(line);
    let host = table::lookup(key.trim()).is_some_and(|d| d.class == table::Class::Host);
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        match after.find('}').filter(|&end| end > 0) {
            Some(end) => {
                let var = &after[..end];
                match std::env::var(var) {
                    Ok(value) => out.push_str(&value),
                    Err(_) if host => {}
                    Err(_) => return Err((var.to_string(), key)),
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push_str("${");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// fio's check (steadystate.c, `td_steadystate_init`): the I/O jobs of a
/// reporting group share one steady-state setting (`ss`, `ss_dur`,
/// `ss_ramp`; none at all counts as a setting), so that a group reported
/// as one can be judged as one. `ss_at[i]` is where job `i`'s options
/// were written.
fn check_steadystate_groups(jobs: &[JobEntry], ss_at: &[String]) -> Result<(), JobError> {
    let mut first: Option<(&str, Option<crate::run::control::SteadyState>)> = None;
    for (i, j) in jobs.iter().enumerate() {
        if i > 0 && j.new_group {
            first = None;
        }
        let Phase::Io(spec) = &j.phase else { continue };
        match &first {
            None => first = Some((&spec.name, spec.steadystate)),
            Some((name, ss)) if *ss != spec.steadystate => {
                let why = format!(
                    "job rejected: steadystate options must be consistent within reporting groups \
                     (`{}` differs from `{name}`; give both the same ss, ss_dur and ss_ramp, or start a \
                     new group with stonewall or new_group)",
                    spec.name
                );
                return Err(invalid(&ss_at[i], "ss", why));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// A section of a job file: its name, `[global]` as it stood at the
/// section, and the section's own options.
type Section = (String, Vec<Entry>, Vec<Entry>);

/// Options as written in `[global]`: (name, value).
type Written = Vec<(String, String)>;

fn parse_lines(
    text: &str,
    at_line: &dyn Fn(usize) -> String,
    origin: &str,
    capacity: u64,
    defaults: &JobOptions,
) -> Result<JobFile, JobError> {
    let (global_written, sections) = read_sections(text, at_line, origin, defaults)?;
    let ignored = check_options(&sections)?;
    let mut jobs = Vec::new();
    let mut ss_at: Vec<String> = Vec::new();
    let mut barrier_before = false;
    let mut threads = 0u64;
    for (name, global_here, opts) in sections {
        // [global] I/O options do not apply to idle, secure-erase and
        // retention sections; an age section's workload takes them. All
        // four run alone.
        let quiet = opts.iter().any(|(k, _, _)| matches!(k.as_str(), "idle" | "secure_erase" | "retention"));
        let barrier = quiet || opts.iter().any(|(k, _, _)| k == "age");
        let entries: Vec<Entry> =
            if quiet { opts.clone() } else { global_here.into_iter().chain(opts.clone()).collect() };
        let Schedule {
            stonewall,
            new_group,
            wait_for,
            startdelay_ns,
            group_reporting,
            offset_increment,
            numjobs,
            exitall,
            exitall_on_error,
            exit_what,
        } = schedule_options(&entries, barrier || barrier_before, capacity)?;
        barrier_before = barrier;
        let phase = build_phase(&name, &entries, capacity).map_err(|e| match e {
            // A section with no option at all: name the file and section.
            JobError::Invalid { origin: _, option, reason } if entries.is_empty() => {
                JobError::Invalid { origin: format!("{origin}: [{name}]"), option, reason }
            }
            e => e,
        })?;
        let options: Vec<(String, String)> = opts.iter().map(|(k, v, _)| (k.clone(), v.clone())).collect();
        let clones = if let Phase::Io(_) = phase { numjobs.max(1) } else { 1 };
        if jobs.len() + clones as usize > MAX_JOBS {
            // Each job keeps its own statistics (about 4 MB of latency
            // histograms): bound them as fio bounds its jobs.
            let at = entries.iter().rev().find(|e| e.0 == "numjobs").or(entries.first());
            return Err(invalid(
                at.map_or(origin, |e| e.2.as_str()),
                "numjobs",
                format!("the file makes {} jobs or more; at most {MAX_JOBS}, as in fio", jobs.len() + clones as usize),
            ));
        }
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
                // fio's thread number seeds its generators; its file
                // name (`filename`, or JOB.CLONE.0) heads the iolog's lines.
                threads += 1;
                if let Some(f) = &mut spec.fio {
                    f.thread_number = threads;
                }
                if let Some(log) = &mut spec.iolog {
                    let named = entries.iter().rev().find(|e| e.0 == "filename").map(|e| e.1.as_str());
                    log.file_name = match named.and_then(|n| n.split(':').next()).filter(|n| !n.is_empty()) {
                        Some(n) => n.to_string(),
                        None => format!("{}.{clone}.0", spec.name),
                    };
                }
            }
            // Where the job's steady-state options were written (for
            // fio's consistency check within a reporting group).
            let ss_option = ["ss", "steadystate", "ss_dur", "steadystate_duration", "ss_ramp", "steadystate_ramp_time"];
            let at = entries.iter().rev().find(|e| ss_option.contains(&e.0.as_str())).or(entries.first());
            ss_at.push(at.map_or(origin.to_string(), |e| e.2.clone()));
            jobs.push(JobEntry {
                phase,
                options: options.clone(),
                stonewall: stonewall && clone == 0,
                new_group: (new_group || stonewall) && clone == 0,
                wait_for: wait_for.clone(),
                startdelay_ns,
                group_reporting,
                clone,
                exitall,
                exitall_on_error,
                exit_what,
            });
        }
    }
    check_steadystate_groups(&jobs, &ss_at)?;
    for j in &jobs {
        if let Some(w) = &j.wait_for {
            if !jobs.iter().any(|o| o.phase.name() == w) {
                return Err(invalid(origin, "wait_for", format!("no job named `{w}`")));
            }
        }
    }
    Ok(JobFile { jobs, global: global_written, ignored })
}

/// The file's sections, and the `[global]` options as written.
fn read_sections(
    text: &str,
    at_line: &dyn Fn(usize) -> String,
    origin: &str,
    defaults: &JobOptions,
) -> Result<(Written, Vec<Section>), JobError> {
    let mut global: Vec<Entry> = defaults.entries.clone();
    let mut global_written: Written = Vec::new();
    let mut sections: Vec<Section> = Vec::new();
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
    Ok((global_written, sections))
}

/// Every unknown option in the file at once (an error), else the
/// host-only options the twin ignores.
fn check_options(sections: &[Section]) -> Result<Vec<String>, JobError> {
    // Every unknown option in the file at once.
    let all: Vec<&Entry> = sections.iter().flat_map(|(_, g, o)| g.iter().chain(o)).collect();
    let mut seen = std::collections::BTreeSet::new();
    // A section that replays a trace (`trace=FILE`) also takes the
    // replay's options; no other section does.
    let unknown: Vec<&Entry> = sections
        .iter()
        .flat_map(|(_, g, o)| {
            let replays = g.iter().chain(o).any(|(k, _, _)| k == "trace");
            g.iter().chain(o).filter(move |e| is_unusable(e) || (!replays && is_trace_option(&e.0)))
        })
        .filter(|(k, _, at)| seen.insert((k.clone(), at.clone())))
        .collect();
    if !unknown.is_empty() {
        return Err(unknown_error(&unknown));
    }
    if let Some(e) = all.iter().find_map(|e| options::host_value_error(e)) {
        return Err(e);
    }
    let mut ignored: Vec<String> = Vec::new();
    for (k, _, _) in &all {
        if is_host_only(k) && !ignored.contains(k) {
            ignored.push(k.clone());
        }
    }
    Ok(ignored)
}

/// Whether `key` is a trace replay's own option (not `trace` itself).
fn is_trace_option(key: &str) -> bool {
    key != "trace" && table::lookup(key).is_some_and(|d| d.class == table::Class::Twin(table::Reader::Trace))
}

/// A section's scheduling options (fio's `stonewall`, `wait_for`,
/// `numjobs`, ...).
struct Schedule {
    stonewall: bool,
    new_group: bool,
    wait_for: Option<String>,
    startdelay_ns: u64,
    group_reporting: bool,
    offset_increment: u64,
    numjobs: u32,
    exitall: bool,
    exitall_on_error: bool,
    exit_what: ExitWhat,
}

/// The scheduling options of a section's `entries`; `stonewall` is set
/// already when the section must run alone.
fn schedule_options(entries: &[Entry], stonewall: bool, capacity: u64) -> Result<Schedule, JobError> {
    let mut stonewall = stonewall;
    let mut new_group = false;
    let mut wait_for = None;
    let mut startdelay_ns = 0;
    let mut group_reporting = false;
    let mut offset_increment = 0u64;
    let mut numjobs = 1u32;
    let (mut exitall, mut exitall_on_error, mut exit_what) = (false, false, ExitWhat::Group);
    let kb_base = kb_base_of(entries)?;
    for (k, v, at) in entries {
        let flag = || parse_bool(v).map_err(|r| invalid(at, k, r));
        match table::canonical(k) {
            "stonewall" => stonewall |= flag()?,
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
            "exitall" => exitall = flag()?,
            "exitall_on_error" => exitall_on_error = flag()?,
            "exit_what" => {
                exit_what = match v.as_str() {
                    "group" => ExitWhat::Group,
                    "stonewall" => ExitWhat::Stonewall,
                    "all" => ExitWhat::All,
                    _ => return Err(invalid(at, k, format!("`{v}` is not one of group, stonewall, all"))),
                }
            }
            _ => {}
        }
    }
    Ok(Schedule {
        stonewall,
        new_group,
        wait_for,
        startdelay_ns,
        group_reporting,
        offset_increment,
        numjobs,
        exitall,
        exitall_on_error,
        exit_what,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // A host-only option with a value fio cannot parse stops the file
        // as fio stops; a good one is listed as ignored.
        let e = parse_job_file("[a]\nrw=read\ndirect=yes\n", "j.fio", 1 << 30, &JobOptions::new()).unwrap_err();
        assert!(e.to_string().starts_with("j.fio:3: option `direct`: fio fails parsing `direct=yes`"), "{e}");
        let e = parse_job_file("[a]\nrw=read\niodepth_batch=many\n", "j.fio", 1 << 30, &JobOptions::new());
        assert!(e.unwrap_err().to_string().contains("whole number"));
        let f = parse_job_file(
            "[a]\nrw=read\ndirect=1\niodepth_batch=4k\nuserspace_reap\n",
            "j.fio",
            1 << 30,
            &JobOptions::new(),
        );
        assert_eq!(f.unwrap().ignored, ["direct", "iodepth_batch", "userspace_reap"]);
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
