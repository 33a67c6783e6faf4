//! Running a suite: for every drive and pass, for every test, prepare the
//! drive, run the steps with their idle, and score the test.
//!
//! Models: before each test the drive is secure-erased and its starting
//! state written by the exact fast path ([`apply_phases_fast`]): test data
//! is written sequentially from LBA 0 with 128 KiB writes at QD32 (as the
//! methodology's "filled" states are), fragmentation is one pass of 4 KiB
//! random writes at QD32 over the test data. A pass with a base state
//! (client-2018's `full`) writes that state instead of the test data. Extra
//! over-provisioning shrinks the usable capacity: states, "whole drive"
//! spans and fills stop there, and the rest stays trimmed. Independent
//! runs (drives × passes) can run on several threads; each simulation is
//! single-threaded and seeded only by the options, so the results do not
//! depend on the thread count.
//!
//! Scaling ([`SuiteOptions::scale`], [`SuiteOptions::time_scale`]) lets a
//! suite run on a small drive (tests, quick looks): every size (spans,
//! offsets, byte limits, bursts, test data) is multiplied by `scale` and
//! rounded down to whole blocks (at least one block); every time
//! (runtimes, idle, score windows) by `time_scale`. At 1.0 sizes are still
//! rounded down to whole blocks, so no step exceeds its byte limit.
//!
//! Trace steps replay their source with its addresses scaled onto the
//! capacity the test may use when they exceed it (`--lba-scale`);
//! [`SuiteOptions::trace_scale`] replays only that fraction of each trace
//! (its first requests: the same mix, shorter in requests and in time).
//! Sizes and `scale` do not apply to them.
//!
//! The host's APST setting is the step's: an idle after a step keeps the
//! step's setting (so a step with `apst = true` followed by idle measures
//! the drive settling into its deepest idle state).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::plan::{IdleRule, Pass, Prep, StepPlan, StepSource, Suite, TestPlan};
use super::score::{compute, ScoreValue};
use super::SuiteError;
use crate::error::Error;
use crate::model::drive::Drive;
use crate::model::snapshot::DriveSnapshot;
use crate::run::sim::{PhaseResult, Simulator};
use crate::run::state::{apply_phases_fast, DriveState};
use crate::run::trace::{OutOfRange, TraceSpec};
use crate::run::workload::{Burst, IoSpec, Phase, RwPattern};
use crate::spec::{DriveModel, DriveSpec};

/// How to run a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteOptions {
    /// Multiplies every size of the suite (1.0: as specified).
    pub scale: f64,
    /// Multiplies every time of the suite (1.0: as specified).
    pub time_scale: f64,
    /// Seed of every random offset and mix.
    pub seed: u64,
    /// Run only these tests (empty: all).
    pub only: Vec<String>,
    /// Start every test from this state instead of the suite's passes.
    pub state: Option<DriveState>,
    /// Runs (drive × pass) simulated at once.
    pub threads: usize,
    /// Fraction of each trace step's requests replayed (1.0: the whole
    /// trace).
    pub trace_scale: f64,
}

impl Default for SuiteOptions {
    fn default() -> Self {
        SuiteOptions {
            scale: 1.0,
            time_scale: 1.0,
            seed: 1,
            only: Vec::new(),
            state: None,
            threads: 1,
            trace_scale: 1.0,
        }
    }
}

/// A drive to run a suite on.
#[derive(Debug, Clone)]
pub struct DriveUnderTest {
    /// Preset name or path, as given.
    pub name: String,
    /// `--set` overrides applied.
    pub overrides: Vec<String>,
    /// The validated model (its `spec` is the resolved drive file).
    pub model: DriveModel,
}

impl DriveUnderTest {
    /// Load a preset or drive file with overrides and validate it.
    pub fn load(name: &str, overrides: &[String]) -> Result<DriveUnderTest, Error> {
        let spec = DriveSpec::load(name, overrides)?;
        let model = spec.build(name)?;
        Ok(DriveUnderTest { name: name.to_string(), overrides: overrides.to_vec(), model })
    }

    /// User capacity, bytes.
    pub fn capacity(&self) -> u64 {
        self.model.user_lpns as u64 * 4096
    }
}

/// What a progress callback is told.
#[derive(Debug, Clone)]
pub struct SuiteProgress {
    /// Index of the run (drive × pass).
    pub run: usize,
    /// Drive name.
    pub drive: String,
    /// Pass name.
    pub pass: String,
    /// Test name.
    pub test: String,
    /// Index of the test in the run, and number of tests.
    pub test_index: (usize, usize),
    /// Step name (`preparing drive state` while preconditioning).
    pub step: String,
    /// Index of the step, and number of steps.
    pub step_index: (usize, usize),
    /// Virtual time since the step began, ns.
    pub step_ns: u64,
    /// Whether the run is finished.
    pub done: bool,
}

/// A progress callback, shared by the threads.
pub type SuiteProgressFn = Arc<dyn Fn(&SuiteProgress) + Send + Sync>;

/// One step's results.
#[derive(Debug, Clone)]
pub struct StepResult {
    /// The I/O phase.
    pub io: PhaseResult,
    /// The idle after it.
    pub idle: Option<PhaseResult>,
}

/// A test, made concrete for one drive and pass.
#[derive(Debug, Clone)]
pub struct TestSetup {
    /// Index of the test in the suite.
    pub test: usize,
    /// Capacity the test may use (user capacity less extra OP), bytes.
    pub capacity: u64,
    /// Preconditioning writes, in order (after a secure erase).
    pub prep: Vec<IoSpec>,
    /// Idle after preconditioning, ns.
    pub prep_idle_ns: u64,
    /// Steps as run: I/O or trace phases.
    pub steps: Vec<Phase>,
}

/// A step's limits as run: (byte limit, time limit in ns); none for a
/// trace step.
pub fn step_limits(step: &Phase) -> (Option<u64>, Option<u64>) {
    match step {
        Phase::Io(io) => (io.io_size, io.runtime_ns),
        _ => (None, None),
    }
}

/// One test's results.
#[derive(Debug, Clone)]
pub struct TestResult {
    /// What was run.
    pub setup: TestSetup,
    /// Idle after preconditioning.
    pub prep_idle: Option<PhaseResult>,
    /// Steps.
    pub steps: Vec<StepResult>,
    /// Scores.
    pub scores: Vec<ScoreValue>,
}

/// One drive × pass.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// Index into [`SuiteResult::drives`].
    pub drive: usize,
    /// Index into [`SuiteResult::passes`].
    pub pass: usize,
    /// Tests in order.
    pub tests: Vec<TestResult>,
}

/// Everything a suite run produced, with what is needed to reproduce it.
#[derive(Debug, Clone)]
pub struct SuiteResult {
    /// The suite.
    pub suite: Suite,
    /// The drives.
    pub drives: Vec<DriveUnderTest>,
    /// The options.
    pub options: SuiteOptions,
    /// The passes run.
    pub passes: Vec<Pass>,
    /// Runs, drive-major.
    pub runs: Vec<RunResult>,
    /// Run once per seed ([`super::repeat::run_repeated`]): every score
    /// over the seeds (the scores above are then their medians).
    pub repeat: Option<crate::study::record::RepeatRecord>,
}

const FILL_BS: u64 = 128 * 1024;

fn scale_bytes(b: u64, scale: f64, unit: u64) -> u64 {
    let scaled = ((b as f64 * scale) / unit as f64).floor() as u64 * unit;
    scaled.max(unit)
}

fn scale_time(ns: u64, scale: f64) -> u64 {
    if ns == 0 {
        0
    } else {
        ((ns as f64 * scale).round() as u64).max(1)
    }
}

fn round_up(b: u64, unit: u64) -> u64 {
    b.div_ceil(unit) * unit
}

fn seed_of(seed: u64, test: usize, item: usize) -> u64 {
    // SplitMix64 of the three, so that every step has its own stream.
    let mut z = seed
        .wrapping_add((test as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add((item as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The passes a run makes: the suite's, or one pass from `--state`.
pub fn passes_for(suite: &Suite, opts: &SuiteOptions) -> Vec<Pass> {
    match opts.state {
        Some(st) => vec![Pass {
            name: st.to_string(),
            description: format!("every test starts from the state `{st}` (--state)"),
            base: Some(st),
            prep_idle_ns: None,
        }],
        None => suite.passes.clone(),
    }
}

/// Indices of the tests to run (`--only`), checked against the suite.
pub fn selected_tests(suite: &Suite, only: &[String]) -> Result<Vec<usize>, SuiteError> {
    for name in only {
        if !suite.tests.iter().any(|t| &t.name == name) {
            return Err(SuiteError::UnknownTest {
                suite: suite.def.name.clone(),
                name: name.clone(),
                known: suite.tests.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "),
            });
        }
    }
    Ok((0..suite.tests.len()).filter(|&i| only.is_empty() || only.contains(&suite.tests[i].name)).collect())
}

/// A trace step as run: its source read to check it, addresses scaled
/// onto the capacity, its requests limited by `trace_scale`.
fn trace_spec(
    t: &TestPlan,
    s: &StepPlan,
    source: &str,
    mode: crate::run::trace::ReplayMode,
    opts: &SuiteOptions,
) -> Result<Phase, String> {
    let mut spec = TraceSpec::new(&format!("{}/{}", t.name, s.name), source);
    spec.mode = Some(mode);
    spec.address.out_of_range = OutOfRange::Scale;
    let bad = |e: crate::error::TraceError| format!("step `{}`: {e}", s.name);
    crate::run::trace::open(&spec).map_err(bad)?;
    if !(opts.trace_scale > 0.0 && opts.trace_scale <= 1.0) {
        return Err(format!("trace scale {} is not in (0, 1]", opts.trace_scale));
    }
    if opts.trace_scale < 1.0 {
        let requests = if crate::run::trace::synth::is_generator(source) {
            crate::run::trace::synth::load(source).map_err(bad)?.requests
        } else {
            crate::run::trace::trace_stats(&spec).map_err(bad)?.1.requests
        };
        spec.max_requests = Some(((requests as f64 * opts.trace_scale).round() as u64).max(1));
    }
    Ok(Phase::Trace(spec))
}

fn step_spec(t: &TestPlan, s: &StepPlan, cap: u64, opts: &SuiteOptions, seed: u64) -> Result<Phase, String> {
    if let StepSource::Trace(tr) = &s.source {
        return trace_spec(t, s, &tr.source, tr.mode, opts);
    }
    let StepSource::Io(step) = &s.source else { unreachable!("a step is fio I/O or a trace") };
    // The step's workload, its sizes and times scaled by the run's options
    // and its span fitted to the capacity the test may use.
    let bs = step.bs as u64;
    let mut io = (**step).clone();
    io.name = format!("{}/{}", t.name, s.name);
    io.offset = if step.offset == 0 { 0 } else { scale_bytes(step.offset, opts.scale, bs) };
    let span = match step.size {
        Some(sp) => scale_bytes(sp, opts.scale, bs),
        None => cap.saturating_sub(io.offset) / bs * bs,
    };
    if span < bs || io.offset + span > cap {
        return Err(format!(
            "step `{}`: span {} + offset {} bytes does not fit the {} bytes the test may use (try --scale)",
            s.name, span, io.offset, cap
        ));
    }
    io.size = Some(span);
    io.io_size = step.io_size.map(|b| scale_bytes(b, opts.scale, bs));
    io.runtime_ns = step.runtime_ns.map(|t| scale_time(t, opts.time_scale));
    io.burst = step.burst.map(|b| Burst { bytes: scale_bytes(b.bytes, opts.scale, bs), duty_cycle: b.duty_cycle });
    io.randseed = seed;
    // A suite's seeds vary its steps' offsets: the twin's own generator,
    // seeded per step, not fio's (whose offsets ignore randseed).
    io.fio = None;
    Ok(Phase::Io(io))
}

/// Make test `ti` concrete for a drive of `capacity` bytes in `pass`.
pub fn setup(
    suite: &Suite,
    ti: usize,
    pass: &Pass,
    drive: &DriveUnderTest,
    opts: &SuiteOptions,
) -> Result<TestSetup, SuiteError> {
    let t = &suite.tests[ti];
    let fail = |reason: String| SuiteError::DoesNotFit {
        suite: suite.def.name.clone(),
        test: t.name.clone(),
        drive: drive.name.clone(),
        reason,
    };
    let full = drive.capacity();
    let cap = if t.extra_op > 0.0 { ((full as f64 * (1.0 - t.extra_op)) as u64 >> 20) << 20 } else { full };
    let steps = t
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| step_spec(t, s, cap, opts, seed_of(opts.seed, ti, i)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(fail)?;
    let largest_span = steps
        .iter()
        .filter_map(|s| match s {
            Phase::Io(io) => Some(io.offset + io.size.unwrap_or(cap)),
            _ => None,
        })
        .max()
        .unwrap_or(cap);
    let data_bytes = |size: Option<u64>| -> Result<u64, SuiteError> {
        let b = size.map_or(largest_span, |b| scale_bytes(b, opts.scale, 4096));
        if b > cap {
            return Err(fail(format!(
                "{b} bytes of test data do not fit the {cap} bytes the test may use (try --scale)"
            )));
        }
        Ok(b)
    };
    let fill = |bytes: u64| {
        let mut s = IoSpec::new("prep-data", RwPattern::Write);
        s.bs = FILL_BS as u32;
        s.iodepth = 32;
        s.size = Some(round_up(bytes, FILL_BS).min(cap / FILL_BS * FILL_BS).max(FILL_BS));
        s
    };
    let fragment = |bytes: u64| {
        let mut s = IoSpec::new("prep-fragment", RwPattern::RandWrite);
        s.iodepth = 32;
        s.size = Some(round_up(bytes, 4096).min(cap / 4096 * 4096));
        s.io_size = s.size;
        s.randseed = seed_of(opts.seed, ti, 10_000);
        s
    };
    let state = |st: DriveState| -> Vec<IoSpec> {
        let mut v = st.phases(cap, seed_of(opts.seed, ti, 10_001));
        for s in &mut v {
            s.size.get_or_insert(cap);
        }
        v
    };
    let mut prep = match (pass.base, t.prep) {
        (Some(b), _) => state(b),
        (None, Prep::Fresh) => vec![],
        (None, Prep::Data(s)) | (None, Prep::Fragmented(s)) => vec![fill(data_bytes(s)?)],
        (None, Prep::State(st)) => state(st),
    };
    if let Prep::Fragmented(s) = t.prep {
        prep.push(fragment(data_bytes(s)?));
    }
    Ok(TestSetup {
        test: ti,
        capacity: cap,
        prep,
        prep_idle_ns: scale_time(pass.prep_idle_ns.unwrap_or(t.prep_idle_ns), opts.time_scale),
        steps,
    })
}

struct Job<'a> {
    drive: usize,
    pass: usize,
    setups: Vec<TestSetup>,
    dut: &'a DriveUnderTest,
}

/// Run `suite` on `drives` (each test of each pass), in parallel over
/// `opts.threads` threads.
pub fn run_suite(
    suite: &Suite,
    drives: &[DriveUnderTest],
    opts: &SuiteOptions,
    progress: Option<SuiteProgressFn>,
) -> Result<SuiteResult, SuiteError> {
    let tests = selected_tests(suite, &opts.only)?;
    let passes = passes_for(suite, opts);
    let mut jobs = Vec::new();
    for (di, dut) in drives.iter().enumerate() {
        for (pi, pass) in passes.iter().enumerate() {
            // `--state` replaces the passes: every test runs in it.
            let in_pass = |ti: &&usize| opts.state.is_some() || suite.tests[**ti].runs_in(&pass.name);
            let setups = tests
                .iter()
                .filter(in_pass)
                .map(|&ti| setup(suite, ti, pass, dut, opts))
                .collect::<Result<Vec<_>, _>>()?;
            jobs.push(Job { drive: di, pass: pi, setups, dut });
        }
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<RunResult, SuiteError>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    let threads = opts.threads.clamp(1, jobs.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(j) else { break };
                let r = run_one(suite, &passes[job.pass], job, j, opts, progress.clone());
                results.lock().expect("no thread panicked")[j] = Some(r);
            });
        }
    });
    let runs = results
        .into_inner()
        .expect("no thread panicked")
        .into_iter()
        .map(|r| r.expect("every run finished"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SuiteResult { suite: suite.clone(), drives: drives.to_vec(), options: opts.clone(), passes, runs, repeat: None })
}

fn run_one(
    suite: &Suite,
    pass: &Pass,
    job: &Job,
    run: usize,
    opts: &SuiteOptions,
    progress: Option<SuiteProgressFn>,
) -> Result<RunResult, SuiteError> {
    let mut drive = Drive::new(job.dut.model.clone());
    let mut prepared: Option<(Vec<crate::run::workload::IoSpec>, DriveSnapshot)> = None;
    let mut tests = Vec::new();
    let n = job.setups.len();
    let report = |test: &str, ti: usize, step: &str, si: (usize, usize), ns: u64, done: bool| {
        if let Some(p) = &progress {
            p(&SuiteProgress {
                run,
                drive: job.dut.name.clone(),
                pass: pass.name.clone(),
                test: test.to_string(),
                test_index: (ti, n),
                step: step.to_string(),
                step_index: si,
                step_ns: ns,
                done,
            });
        }
    };
    for (k, setup) in job.setups.iter().enumerate() {
        let plan = &suite.tests[setup.test];
        report(&plan.name, k, "preparing drive state", (0, setup.steps.len()), 0, false);
        // Tests that start from the same state (every test of the full
        // pass) share one preparation: the prepared drive is kept as a
        // snapshot (its maps packed, not a second drive in memory) and
        // restored into the drive, which gives the same state as preparing
        // it again.
        match &prepared {
            Some((prep, snapshot)) if *prep == setup.prep => snapshot.restore_into(&mut drive),
            _ => {
                prepared = None;
                apply_phases_fast(&mut drive, &setup.prep);
            }
        }
        let shared = job.setups.get(k + 1).is_some_and(|next| next.prep == setup.prep);
        if shared && prepared.is_none() {
            prepared = Some((setup.prep.clone(), DriveSnapshot::take(&mut drive)));
        }
        let mut sim = Simulator::new(drive);
        // Every test starts with the host's power management off (APST,
        // link power management), whatever the previous test's last step
        // left: a test's results do not depend on the tests run before it.
        sim.device().set_apst(false);
        sim.device().set_link_pm(false);
        if let Some(p) = progress.clone() {
            let (drive_name, pass_name, test) = (job.dut.name.clone(), pass.name.clone(), plan.name.clone());
            sim.on_progress(move |pr| {
                p(&SuiteProgress {
                    run,
                    drive: drive_name.clone(),
                    pass: pass_name.clone(),
                    test: test.clone(),
                    test_index: (k, n),
                    step: pr.phase.rsplit('/').next().unwrap_or("").to_string(),
                    step_index: (pr.phase_index, pr.phases),
                    step_ns: pr.phase_ns,
                    done: false,
                })
            });
        }
        let steps_n = setup.steps.len();
        let prep_idle = (setup.prep_idle_ns > 0).then(|| {
            sim.run_phase(
                &Phase::Idle { name: format!("{}/prep-idle", plan.name), duration_ns: setup.prep_idle_ns, apst: None },
                0,
                steps_n,
            )
        });
        let mut steps = Vec::new();
        for (i, io) in setup.steps.iter().enumerate() {
            report(&plan.name, k, &plan.steps[i].name, (i, steps_n), 0, false);
            // Only a trace step can fail (a malformed line further on).
            let r = sim.try_run_phase(io, i, steps_n).map_err(|e| SuiteError::DoesNotFit {
                suite: suite.def.name.clone(),
                test: plan.name.clone(),
                drive: job.dut.name.clone(),
                reason: e.to_string(),
            })?;
            let idle_ns = match plan.idle {
                IdleRule::None => 0,
                IdleRule::Fixed(t) => scale_time(t, opts.time_scale),
                IdleRule::DutyCycle(d) => {
                    let elapsed = r.end_ns - r.start_ns;
                    ((r.busy_ns as f64 / d).round() as u64).saturating_sub(elapsed)
                }
            };
            let idle = (idle_ns > 0).then(|| {
                sim.run_phase(
                    &Phase::Idle { name: format!("{}/idle", io.name()), duration_ns: idle_ns, apst: None },
                    i,
                    steps_n,
                )
            });
            steps.push(StepResult { io: r, idle });
        }
        drive = sim.into_drive();
        let results: Vec<&StepResult> = steps.iter().collect();
        let scores = compute(&plan.score, &plan.steps, &results, opts.time_scale);
        tests.push(TestResult { setup: setup.clone(), prep_idle, steps, scores });
    }
    report("", n, "", (0, 0), 0, true);
    Ok(RunResult { drive: job.drive, pass: job.pass, tests })
}
