//! Concurrent fio jobs on one device, with fio's ordering rules.
//!
//! Every I/O job of a job file is a workload source of the closed-loop
//! driver ([`crate::run::driver`]); all of them interleave their commands
//! on one [`Device`], so the drive sees the merged stream and each job's
//! latency includes the wait behind the others'. Jobs start together
//! unless the file orders them, as fio does:
//!
//! - `stonewall` (or `wait_for_previous`): the job, and the jobs after it
//!   up to the next stonewall, wait until every job before it has
//!   finished; it also starts a new reporting group;
//! - `wait_for=NAME`: the job waits for the job(s) of that name;
//! - `startdelay=T`: the job starts T after it could have started;
//! - ssdtwin's `idle`, `secure_erase`, `retention` and `age` sections run
//!   alone, with every job before them finished and every job after them
//!   waiting (the parser makes them stonewalls, and the job after them
//!   one too).
//!
//! `new_group` starts a new reporting group without ordering anything.
//! `exitall` / `exitall_on_error` end, when a job finishes (with an error),
//! the jobs its `exit_what` names (fio's `fio_terminate_threads`).
//! Trace sections are not run here: a job file with one runs its sections
//! one after another, as phases of [`crate::run::sim`].
//!
//! Each job keeps its own statistics (latency per direction, bandwidth and
//! IOPS samples every 500 ms as fio's `bwavgtime`, the queue depths it
//! submitted at, a per-second series); the drive's counters and energy are
//! reported over each job's lifetime, so jobs that overlap share them.
//!
//! Jobs with `latency_target`, `ss` or a minimum rate (`rate_min`,
//! `rate_iops_min` over `rate_cycle`) steer or end themselves
//! ([`crate::run::control`]); jobs with log options write fio's log files
//! ([`crate::run::logs`]), installed under their names once every job has
//! finished.
//!
//! Left out: per-job CPU figures (there is no host CPU).

use crate::error::JobError;
use crate::model::drive::IoKind;
use crate::run::control::{LatencyTarget, SsTracker};
use crate::run::device::{Device, Window};
use crate::run::driver::{drive_sources, Action, Hooked};
use crate::run::iolog::IoLog;
use crate::run::logs::{install, FinishedLog, JobLogs};
use crate::run::placement_stats::PlacementSnapshot;
use crate::run::sim::{run_quiet, PhaseResult};
use crate::run::source::{FlowGroup, FlowState, JobStats, Source};
use crate::run::stats::Counters;
use crate::run::workload::fio::{ExitWhat, JobFile};
use crate::run::workload::Phase;

/// One job's outcome.
#[derive(Debug, Clone)]
pub struct JobResult {
    /// Job name (the section's).
    pub name: String,
    /// Reporting group (fio's `groupid`).
    pub groupid: u32,
    /// The job's results in the same form as a phase run on its own
    /// (`dirs` and `series` are the job's own; counters and energy are the
    /// drive's over the job's lifetime, shared with the jobs that overlap
    /// it).
    pub result: PhaseResult,
    /// The job's own statistics (I/O jobs).
    pub stats: Option<JobStats>,
    /// fio's error number (0: none; 110: `max_latency` exceeded or the
    /// latency target missed at depth 1; 5: below `rate_min` or
    /// `rate_iops_min`).
    pub error: i32,
    /// fio's message for the error, naming the job (`None` without one).
    pub error_reason: Option<String>,
    /// The errors the job went on after, with `continue_on_error` (fio's
    /// `total_err` and `first_error`; `None` without the option).
    pub errors: Option<crate::run::source::ErrorCount>,
    /// The section's options as written.
    pub options: Vec<(String, String)>,
    /// Whether the job asked for `group_reporting`.
    pub group_reporting: bool,
    /// The queue depth the job ended at (fio's `latency_depth`: the depth
    /// the latency search reached, else `iodepth`).
    pub latency_depth: u32,
    /// The latency target, if the job had one.
    pub latency_target: Option<LatencyTarget>,
    /// Steady-state detection, if the job had it: the window and verdict.
    pub steadystate: Option<SsTracker>,
}

/// Run every job of `file` on `dev`, in fio's order; results in file order.
///
/// # Panics
/// If a log file cannot be written; [`try_run_jobs`] returns the error.
pub fn run_jobs(dev: &mut Device, file: &JobFile) -> Vec<JobResult> {
    try_run_jobs(dev, file).unwrap_or_else(|e| panic!("{e}"))
}

/// Run every job of `file` on `dev`, in fio's order; results in file
/// order, or the first log file that could not be written.
pub fn try_run_jobs(dev: &mut Device, file: &JobFile) -> Result<Vec<JobResult>, crate::Error> {
    let n = file.jobs.len();
    let groups = report_groups(file);
    let (src_of, mut sources) = job_sources(file, &groups, dev.drive().user_bytes())?;
    let deps = dependencies(file);
    let mut sched = Scheduler {
        file,
        deps: &deps,
        job_of: (0..n).filter(|&i| src_of[i] != usize::MAX).collect(),
        src_of: &src_of,
        state: vec![St::Waiting; n],
        before: vec![None; n],
        results: vec![None; n],
        groups: &groups,
        exitall: file.jobs.iter().any(|j| j.exitall),
        terminated: vec![false; n],
        finished_logs: Vec::new(),
        log_error: None,
        quiet_error: None,
    };
    drive_sources(dev, &mut sources, None, &mut |dev: &mut Device, sources: &mut [Source], h: Hooked| {
        sched.on(dev, sources, h)
    });
    let Scheduler { mut results, mut finished_logs, log_error, quiet_error, .. } = sched;
    if let Some(e) = quiet_error.or(log_error).or_else(|| held_forever(&sources)) {
        for (_, l) in &finished_logs {
            crate::fsio::remove_temp(&l.tmp);
        }
        return Err(e);
    }
    // Shared files (`per_job_logs=0`) join their parts in job order.
    finished_logs.sort_by_key(|(i, _)| *i);
    install(finished_logs.into_iter().map(|(_, l)| l).collect())?;

    Ok(file
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let result = results[i].take().unwrap_or_else(|| panic!("job {} never ran", j.phase.name()));
            let (stats, error, error_reason, latency_depth, steadystate, errors) = match src_of[i] {
                usize::MAX => (None, 0, None, 1, None, None),
                s => {
                    let src = &mut sources[s];
                    let depth = src.lat.as_ref().map_or(src.spec.outstanding(), |l| l.depth());
                    let errors = src.spec.on_error.any().then_some(src.errors);
                    (src.stats.take().map(|b| *b), src.error, src.error_reason.take(), depth, src.ss.take(), errors)
                }
            };
            let latency_target = match &j.phase {
                Phase::Io(spec) => spec.latency_target,
                _ => None,
            };
            JobResult {
                name: j.phase.name().to_string(),
                groupid: groups[i],
                result,
                stats,
                error,
                error_reason,
                errors,
                options: j.options.clone(),
                group_reporting: j.group_reporting,
                latency_depth,
                latency_target,
                steadystate,
            }
        })
        .collect())
}

/// The error for a job its flow holds forever (fio would spin on it and
/// never finish): the jobs whose weights it waits for cannot start before
/// it ends.
fn held_forever(sources: &[Source]) -> Option<crate::Error> {
    let (src, id) = sources.iter().find_map(|s| s.flow_stuck().map(|id| (s, id)))?;
    let reason = format!(
        "job `{}` is held by flow control forever: flow_id {id} counts the weights of jobs that cannot start until it \
         ends (a stonewall or wait_for between them), so fio would never finish; give them different flow_ids or a \
         runtime",
        src.spec.name
    );
    Some(JobError::Invalid { origin: format!("job `{}`", src.spec.name), option: "flow".into(), reason }.into())
}

/// Each job's reporting group: a new one at each `new_group` (implied by
/// `stonewall` and by ssdtwin's barrier sections).
fn report_groups(file: &JobFile) -> Vec<u32> {
    let mut groupid = 0u32;
    file.jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            if i > 0 && j.new_group {
                groupid += 1;
            }
            groupid
        })
        .collect()
}

/// Whether group `g` is reported as one: a job reported with others of its
/// group sums their bandwidth samples interval by interval, so it keeps
/// each interval; the others keep running statistics only.
fn merged(file: &JobFile, groups: &[u32], g: u32) -> bool {
    let members = file.jobs.iter().zip(groups).filter(|(_, &h)| h == g);
    members.clone().count() > 1 && members.clone().any(|(j, _)| j.group_reporting)
}

/// Sources for the I/O jobs, with their log files open; `sources[src_of[i]]`
/// is job i's (`usize::MAX` for a section that runs alone).
fn job_sources(file: &JobFile, groups: &[u32], capacity: u64) -> Result<(Vec<usize>, Vec<Source>), crate::Error> {
    let n = file.jobs.len();
    let mut src_of = vec![usize::MAX; n];
    let mut sources = Vec::new();
    for (i, j) in file.jobs.iter().enumerate() {
        if let Phase::Io(spec) = &j.phase {
            src_of[i] = sources.len();
            let mut src = Source::new(spec.clone(), capacity, 0, Some(merged(file, groups, groups[i])));
            if let Some(logs) = &spec.logs {
                let fixed: [u64; 3] = std::array::from_fn(|k| match &spec.sizes {
                    None => spec.bs as u64,
                    Some(s) if s[k].choices.len() == 1 => s[k].choices[0].0 as u64,
                    Some(_) => 0,
                });
                let mut l = JobLogs::open(logs, i + 1, &spec.name, fixed)?;
                l.set_log_prio(spec.prio.as_ref().is_some_and(|p| p.log_prio));
                src.logs = Some(l);
            }
            if let Some(log) = &spec.iolog {
                src.iolog = Some(Box::new(IoLog::open(log, i + 1)?));
            }
            sources.push(src);
        }
    }
    // fio's flows: every job with a weight joins its flow_id's when the
    // file is read (init.c `add_job`), started or not.
    let mut flows: Vec<std::sync::Arc<FlowGroup>> = Vec::new();
    for src in &mut sources {
        if let Some(f) = src.spec.flow {
            let group = match flows.iter().find(|g| g.id == f.id) {
                Some(g) => g.clone(),
                None => {
                    flows.push(std::sync::Arc::new(FlowGroup::new(f.id)));
                    flows[flows.len() - 1].clone()
                }
            };
            src.flow = Some(Box::new(FlowState::join(f, group)));
        }
    }
    // Steady state of a group reported as one is judged on the group's
    // summed rate, by its last job's tracker (fio's steadystate_setup).
    for g in 0..=groups.last().copied().unwrap_or(0) {
        let members: Vec<usize> = (0..n)
            .filter(|&i| groups[i] == g && src_of[i] != usize::MAX)
            .map(|i| src_of[i])
            .filter(|&s| sources[s].spec.steadystate.is_some())
            .collect();
        if let (true, Some(&holder)) = (merged(file, groups, g), members.last()) {
            sources[holder].ss_holder = true;
            for &s in &members[..members.len() - 1] {
                sources[s].ss_forward = Some(holder);
            }
        }
    }
    Ok((src_of, sources))
}

/// The jobs each job waits for: a stonewall waits for every job before
/// it, and so do the jobs after it up to the next stonewall; `wait_for`
/// adds the job it names.
fn dependencies(file: &JobFile) -> Vec<Vec<usize>> {
    let mut wall = 0;
    file.jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            if j.stonewall {
                wall = i;
            }
            let mut d: Vec<usize> = (0..wall).collect();
            if let Some(w) = &j.wait_for {
                d.extend(file.jobs.iter().enumerate().filter(|(_, o)| o.phase.name() == w).map(|(k, _)| k));
            }
            d.retain(|&k| k != i);
            d
        })
        .collect()
}

/// Where a job is in its life.
#[derive(Clone, Copy, PartialEq)]
enum St {
    Waiting,
    Delayed,
    Running,
    Done,
}

/// What the drive had counted when a job started: its counters, the
/// energy drawn (with a power model) and its zones' and placement
/// handles' counters (zoned and FDP drives).
type Before = (Counters, Option<f64>, Option<PlacementSnapshot>);

/// The driver's hook for a job file: starts jobs when their turn comes
/// (after their dependencies and `startdelay`), runs the sections that
/// run alone, and collects each I/O job's result when it finishes.
struct Scheduler<'a> {
    file: &'a JobFile,
    deps: &'a [Vec<usize>],
    src_of: &'a [usize],
    /// The job of each source.
    job_of: Vec<usize>,
    state: Vec<St>,
    /// The drive's counters and energy when each job started.
    before: Vec<Option<Before>>,
    results: Vec<Option<PhaseResult>>,
    /// Each job's reporting group.
    groups: &'a [u32],
    /// Some job has fio's `exitall` (which fio makes global).
    exitall: bool,
    /// Jobs ended by another's `exitall` before they started: they start
    /// and end at once, with no I/O.
    terminated: Vec<bool>,
    finished_logs: Vec<(usize, FinishedLog)>,
    log_error: Option<crate::Error>,
    /// An aging phase whose trace fails to read.
    quiet_error: Option<crate::Error>,
}

impl Scheduler<'_> {
    fn on(&mut self, dev: &mut Device, sources: &mut [Source], h: Hooked) -> Action {
        let mut action = Action::default();
        let mut start_now: Vec<usize> = Vec::new();
        match h {
            Hooked::Begin => {}
            // (A job ended by `exitall` while delayed has started already.)
            Hooked::Timer(i) if self.state[i as usize] == St::Delayed => start_now.push(i as usize),
            Hooked::Timer(_) => {}
            Hooked::Finished(s) => {
                let i = self.job_of[s];
                self.finished(dev, &mut sources[s], i);
                if self.exitall || (self.file.jobs[i].exitall_on_error && sources[s].error != 0) {
                    self.terminate(sources, i);
                }
            }
        }
        loop {
            // Jobs whose turn has come.
            let n = self.file.jobs.len();
            for i in 0..n {
                if self.state[i] == St::Waiting && self.deps[i].iter().all(|&d| self.state[d] == St::Done) {
                    if self.file.jobs[i].startdelay_ns > 0 && !self.terminated[i] {
                        self.state[i] = St::Delayed;
                        action.timers.push((dev.now() + self.file.jobs[i].startdelay_ns, i as u32));
                    } else {
                        start_now.push(i);
                    }
                }
            }
            if start_now.is_empty() {
                break;
            }
            let mut quiet_ran = false;
            for i in start_now.drain(..) {
                match &self.file.jobs[i].phase {
                    Phase::Io(spec) => {
                        self.state[i] = St::Running;
                        dev.set_apst(spec.apst);
                        dev.set_link_pm(spec.link_pm);
                        let d = dev.drive();
                        self.before[i] = Some((Counters::of(d), d.energy_j(dev.now()), PlacementSnapshot::of(d)));
                        sources[self.src_of[i]].stop |= self.terminated[i];
                        action.start.push(self.src_of[i]);
                    }
                    quiet => {
                        // Runs alone: every job before it is done and
                        // every job after it waits for it.
                        match run_quiet(dev, quiet) {
                            Ok(r) => self.results[i] = Some(r),
                            Err(e) => {
                                self.quiet_error.get_or_insert(e);
                            }
                        }
                        self.state[i] = St::Done;
                        quiet_ran = true;
                    }
                }
            }
            if !quiet_ran {
                break;
            }
        }
        action
    }

    /// Job `i` ended under `exitall` (or `exitall_on_error`): end the jobs
    /// its `exit_what` names (fio's `fio_terminate_threads`). A running job
    /// issues no more commands and ends when its last one completes; a job
    /// still to start ends as soon as it starts. ssdtwin's sections that
    /// run alone are not fio's jobs and are left alone.
    fn terminate(&mut self, sources: &mut [Source], i: usize) {
        let what = self.file.jobs[i].exit_what;
        for j in 0..self.file.jobs.len() {
            let named = match what {
                ExitWhat::Group => self.groups[j] == self.groups[i],
                ExitWhat::Stonewall => self.state[j] == St::Running,
                ExitWhat::All => true,
            };
            if !named || self.src_of[j] == usize::MAX {
                continue;
            }
            match self.state[j] {
                St::Running => sources[self.src_of[j]].stop = true,
                // As fio, without its start delay: it starts (and ends)
                // when its dependencies allow.
                St::Waiting | St::Delayed => {
                    self.terminated[j] = true;
                    self.state[j] = St::Waiting;
                }
                St::Done => {}
            }
        }
    }

    /// I/O job `i` (source `src`) finished: its result and log files.
    fn finished(&mut self, dev: &mut Device, src: &mut Source, i: usize) {
        let st = src.stats.as_mut().expect("job statistics");
        let end = src.end_ns.max(src.start);
        st.series.finish(dev.drive(), end);
        let (c0, e0, p0) = self.before[i].take().expect("started");
        let e1 = dev.drive().energy_j(end);
        if let Some(log) = src.iolog.take() {
            match log.finish(end.saturating_sub(src.start)) {
                Ok(done) => self.finished_logs.push((i, done)),
                Err(e) => {
                    self.log_error.get_or_insert(e);
                }
            }
        }
        if let Some(logs) = src.logs.take() {
            match logs.finish(end.saturating_sub(src.ramp_end)) {
                Ok(done) => self.finished_logs.extend(done.into_iter().map(|l| (i, l))),
                Err(e) => {
                    self.log_error.get_or_insert(e);
                }
            }
        }
        // The job's own statistics are its window; the drive's counters
        // and energy are over the job's lifetime. Jobs overlap on one
        // drive: its temperature is in the per-second series, not per job.
        let window = Window {
            start_ns: src.start,
            end_ns: end,
            record_from_ns: src.ramp_end,
            dirs: st.dirs.clone(),
            series: st.series.clone(),
            counters: Counters::of(dev.drive()).since(&c0),
            busy_ns: st.busy_ns,
            stalls: st.stalls.clone(),
            energy_j: e0.zip(e1).map(|(a, b)| b - a),
            thermal: None,
            placement: p0.map(|s| s.window(dev.drive())),
        };
        let mut r = PhaseResult::from_window(Phase::Io(src.spec.clone()), window);
        r.bursts = src.bursts;
        self.results[i] = Some(r);
        self.state[i] = St::Done;
    }
}

impl JobResult {
    /// fio's `error` of the job: its own, or with `continue_on_error`
    /// the first error it went on after (stat.c `sum_thread_stats`).
    pub fn fio_error(&self) -> i32 {
        match self.errors {
            Some(c) if self.error == 0 => c.first,
            _ => self.error,
        }
    }

    /// IOPS of one direction over the job's measured time.
    pub fn iops(&self, kind: IoKind) -> f64 {
        self.result.iops(kind)
    }
}
