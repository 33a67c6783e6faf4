//! Replays handed to an executor outside the fit: by default every
//! candidate is replayed on this machine's cores ([`replay::run_all`]);
//! with [`super::FitOptions::executor`] each replay becomes a
//! [`ReplayTask`] — plain data, JSON — that the executor runs wherever it
//! likes with [`run_task_json`] and answers, in order. The Python
//! package's `ssdtwin.fit(..., backend="ray")` is such an executor: one
//! Ray task per replay, as its sweeps run one Ray task per point.
//!
//! A task carries everything a worker needs: the candidate as a drive
//! file (TOML, which round-trips every field exactly, so a replay on a
//! worker gives the same numbers, bit for bit, as one here), the replay's
//! job file (its logs under a placeholder directory the worker replaces
//! with a scratch directory of its own), the state it starts from, the
//! jobs that only prepare the drive and the seed. The answer is the
//! replay's numbers or the error that made the candidate invalid.
//!
//! An executor that fails (its transport, not a replay) aborts the fit:
//! every later replay is answered with the same error without being
//! dispatched, and the fit returns it ([`Dispatch::failure`]).

use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::battery::Unit;
use super::replay::{self, Observation, Plan};
use super::FitError;
use crate::spec::DriveSpec;

/// Runs replay tasks elsewhere: given each task's JSON ([`ReplayTask`]),
/// the answers of [`run_task_json`] in the same order, or why the
/// executor itself failed.
pub type Executor = Box<dyn Fn(Vec<String>) -> Result<Vec<String>, String> + Send + Sync>;

/// Stands for the replay's log directory in a task's job file.
pub const LOG_DIR: &str = "@SSDTWIN_REPLAY_LOG_DIR@";

/// One replay as plain data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayTask {
    /// The candidate drive file.
    pub drive: String,
    /// The battery unit replayed ([`Unit::Given`]: jobs outside it).
    pub unit: Unit,
    /// The state the replay starts from (`ssdtwin run --state`'s syntax).
    pub state: String,
    /// The replay's job file, logs under [`LOG_DIR`].
    pub job_file: String,
    /// Jobs that only prepare the drive (not reported).
    pub prepare: Vec<String>,
    /// Seed of the starting state.
    pub seed: u64,
}

/// The task of replaying `plan` on `spec`.
pub fn task(spec: &DriveSpec, plan: &Plan, seed: u64) -> ReplayTask {
    ReplayTask {
        drive: spec.to_toml(),
        unit: plan.unit,
        state: plan.state.to_string(),
        job_file: replay::job_text(plan, std::path::Path::new(LOG_DIR)),
        prepare: plan.prepare.iter().map(|j| j.name.clone()).collect(),
        seed,
    }
}

/// Run one task; its numbers or the candidate's error.
pub fn run_task(t: &ReplayTask) -> Result<Vec<Observation>, FitError> {
    let spec = DriveSpec::from_toml(&t.drive, "replay task's drive").map_err(|e| FitError::Replay(e.to_string()))?;
    let state = t.state.parse().map_err(|e: String| FitError::Replay(format!("replay task's state: {e}")))?;
    let text = |dir: &std::path::Path| t.job_file.replace(LOG_DIR, &dir.display().to_string());
    replay::run_text(&spec, t.unit, state, text, &t.prepare, t.seed)
}

/// [`run_task`] from and to JSON: `{"observations": [...]}`, or
/// `{"candidate": why}` (the candidate is not a valid drive) or
/// `{"replay": why}` (the task could not be run).
pub fn run_task_json(task: &str) -> String {
    let answer = serde_json::from_str::<ReplayTask>(task)
        .map_err(|e| FitError::Replay(format!("replay task: {e}")))
        .and_then(|t| run_task(&t));
    match answer {
        Ok(obs) => json!({ "observations": obs }),
        Err(FitError::Candidate(why)) => json!({ "candidate": why }),
        Err(e) => json!({ "replay": e.to_string() }),
    }
    .to_string()
}

/// An answer of [`run_task_json`] back to a result; `Err` when it is not
/// such an answer (the executor's fault, not the candidate's).
fn decode(answer: &str) -> Result<Result<Vec<Observation>, FitError>, String> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Answer {
        observations: Option<Vec<Observation>>,
        candidate: Option<String>,
        replay: Option<String>,
    }
    let a: Answer = serde_json::from_str(answer).map_err(|e| format!("an executor's answer: {e}"))?;
    match (a.observations, a.candidate, a.replay) {
        (Some(o), None, None) => Ok(Ok(o)),
        (None, Some(c), None) => Ok(Err(FitError::Candidate(c))),
        (None, None, Some(r)) => Ok(Err(FitError::Replay(r))),
        _ => Err("an executor's answer has none or several of its fields".into()),
    }
}

/// Where a fit's replays run, and the executor's failure once it failed.
pub struct Dispatch<'a> {
    /// The executor (`None`: this machine's cores).
    pub executor: Option<&'a Executor>,
    /// Seed of the replays' starting states.
    pub seed: u64,
    failed: Mutex<Option<String>>,
}

impl<'a> Dispatch<'a> {
    /// Replays on `executor`, or here.
    pub fn new(executor: Option<&'a Executor>, seed: u64) -> Dispatch<'a> {
        Dispatch { executor, seed, failed: Mutex::new(None) }
    }

    /// Replay every (drive, plan) pair; each pair's numbers.
    pub fn run(&self, tasks: &[(DriveSpec, Plan)]) -> Vec<Result<Vec<Observation>, FitError>> {
        let Some(exec) = self.executor else { return replay::run_all(tasks, self.seed) };
        let failed = |why: &str| tasks.iter().map(|_| Err(FitError::Replay(why.to_string()))).collect();
        if let Some(why) = self.failed.lock().expect("not poisoned").clone() {
            return failed(&why);
        }
        let texts: Vec<String> = tasks
            .iter()
            .map(|(s, p)| serde_json::to_string(&task(s, p, self.seed)).expect("a task serialises"))
            .collect();
        let answers = exec(texts).map_err(|why| format!("the executor failed: {why}")).and_then(|answers| {
            if answers.len() != tasks.len() {
                return Err(format!("the executor answered {} of {} replays", answers.len(), tasks.len()));
            }
            answers.iter().map(|a| decode(a)).collect::<Result<Vec<_>, String>>()
        });
        match answers {
            Ok(results) => results,
            Err(why) => {
                *self.failed.lock().expect("not poisoned") = Some(why.clone());
                failed(&why)
            }
        }
    }

    /// Why the executor failed, if it did (the fit is then void).
    pub fn failure(&self) -> Option<FitError> {
        self.failed.lock().expect("not poisoned").clone().map(FitError::Replay)
    }
}
