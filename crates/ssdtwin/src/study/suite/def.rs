//! The suite file format, read exactly as the user wrote it (first stage
//! of two; [`super::plan`] validates and expands it).
//!
//! Models: a TOML document with `name`, `title`, optional `[[pass]]`
//! tables (client-2018's standard and full passes), a `[defaults]` table,
//! and `[[test]]` tables each with `[[test.step]]` step templates and a
//! `[test.score]` rule. Every table denies unknown fields, so a misspelt
//! field is an error that names it (with line and column), never a silent
//! default — except a step, whose keys are fio's options, checked by the
//! fio parser when [`super::plan`] builds the step. Sizes and times stay
//! strings here (`"16GB"`, `"60s"`); they are parsed, with the field named
//! in any error, by [`super::plan`].
//!
//! Leaves out: includes or inheritance between suite files.

use std::collections::BTreeMap;

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One value, or a list of values to sweep (`iodepth = [1, 2, 4]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep<T>(pub Vec<T>);

impl<'de, T: DeserializeOwned> Deserialize<'de> for Sweep<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items = match toml::Value::deserialize(d)? {
            toml::Value::Array(a) => a,
            one => vec![one],
        };
        if items.is_empty() {
            return Err(D::Error::custom("an empty list sweeps nothing"));
        }
        items.into_iter().map(|x| T::deserialize(x).map_err(D::Error::custom)).collect::<Result<Vec<_>, _>>().map(Sweep)
    }
}

impl<T: Serialize> Serialize for Sweep<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => one.serialize(s),
            many => many.serialize(s),
        }
    }
}

/// A whole suite file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteFile {
    /// Short identifier, e.g. `client-2018`.
    pub name: String,
    /// One line saying what the suite is.
    pub title: String,
    /// Where the procedure comes from (review, guide).
    #[serde(default)]
    pub source: String,
    /// Passes: every test runs once per pass (default: one pass,
    /// `standard`, in which each test prepares its own state).
    #[serde(default, rename = "pass", skip_serializing_if = "Vec::is_empty")]
    pub passes: Vec<PassDef>,
    /// Defaults for every test and step.
    #[serde(default)]
    pub defaults: DefaultsDef,
    /// The tests, run in this order.
    #[serde(rename = "test")]
    pub tests: Vec<TestDef>,
}

/// A pass over all tests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassDef {
    /// Pass name, e.g. `standard` or `full`.
    pub name: String,
    /// What the pass means.
    #[serde(default)]
    pub description: String,
    /// Drive state that replaces each test's own test data (`full`,
    /// `filled:N`, `steady`, `fresh`); a test's fragmentation is still
    /// applied on top. Absent: each test's `state` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Idle after preconditioning, replacing the tests' `prep_idle`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prep_idle: Option<String>,
}

/// Defaults for tests and steps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefaultsDef {
    /// Default drive state before a test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Default idle between preconditioning and the first step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prep_idle: Option<String>,
    /// Default idle after each step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<String>,
    /// Default idle after each step as a duty cycle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_duty_cycle: Option<f64>,
    /// Step fields every step inherits unless it sets them.
    #[serde(default)]
    pub step: StepDef,
}

/// One test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestDef {
    /// Identifier (for `--only`), e.g. `sustained-random-read`.
    pub name: String,
    /// Title as the review prints it.
    pub title: String,
    /// Drive state before the test: `fresh`, `data[:SIZE]` (the test data
    /// written sequentially), `fragmented[:SIZE]` (test data, then one pass
    /// of 4 KiB random writes over it), `full`, `filled:N`, `steady`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Fraction of the user capacity left unused (extra over-provisioning):
    /// the test sees only the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_op: Option<f64>,
    /// Idle between preconditioning and the first step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prep_idle: Option<String>,
    /// Idle after each step (a time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<String>,
    /// Idle after each step so that busy / (busy + idle) is this value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_duty_cycle: Option<f64>,
    /// Step templates; each expands into one step per combination of its
    /// swept values.
    #[serde(rename = "step")]
    pub steps: Vec<StepDef>,
    /// How the test is scored.
    pub score: ScoreDef,
    /// Run the test only in these passes (default: every pass), e.g.
    /// `["standard"]` for a test the review runs once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passes: Option<Vec<String>>,
}

/// A step template: a fio job in fio's option names, plus the suite's own
/// `name`. Every other key is a fio option (`rw`, `bs`, `iodepth`,
/// `size`, `io_size`, `runtime`, `time_based`, `kb_base`, ssdtwin's
/// `burst_size`, `duty_cycle`, `apst`, ... or `trace` and `replay` for a
/// trace step), parsed by the fio parser with fio's units and checks; a
/// list sweeps the option. Values may be TOML strings, integers, floats
/// or booleans (written to the parser as fio would read them: `true` is
/// `1`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepDef {
    /// Name prefix of the expanded steps.
    pub name: Option<String>,
    /// fio options in key order, each one value or a list to sweep.
    pub options: BTreeMap<String, Sweep<OptionValue>>,
}

impl StepDef {
    /// The option's values as fio strings, if it is given.
    pub fn option(&self, key: &str) -> Option<Vec<String>> {
        self.options.get(key).map(|v| v.0.iter().map(OptionValue::to_fio).collect())
    }
}

/// One fio option value as written in TOML.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OptionValue {
    /// `"4KiB"`, `"randread"`.
    Text(String),
    /// `32`.
    Int(i64),
    /// `0.2`.
    Float(f64),
    /// `true` (fio's `1`).
    Bool(bool),
}

impl OptionValue {
    /// The value as fio reads it on its command line.
    pub fn to_fio(&self) -> String {
        match self {
            OptionValue::Text(s) => s.clone(),
            OptionValue::Int(i) => i.to_string(),
            OptionValue::Float(f) => f.to_string(),
            OptionValue::Bool(b) => if *b { "1" } else { "0" }.to_string(),
        }
    }
}

impl<'de> Deserialize<'de> for StepDef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut table = BTreeMap::<String, toml::Value>::deserialize(d)?;
        let name = match table.remove("name") {
            None => None,
            Some(toml::Value::String(n)) => Some(n),
            Some(other) => return Err(D::Error::custom(format!("`name` must be a string, not {other}"))),
        };
        let mut options = BTreeMap::new();
        for (key, value) in table {
            let v = Sweep::<OptionValue>::deserialize(value).map_err(|e| D::Error::custom(format!("`{key}`: {e}")))?;
            options.insert(key, v);
        }
        Ok(StepDef { name, options })
    }
}

impl Serialize for StepDef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.options.len() + usize::from(self.name.is_some())))?;
        if let Some(n) = &self.name {
            m.serialize_entry("name", n)?;
        }
        for (k, v) in &self.options {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// How a test is scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoreDef {
    /// `mean` (mean of the metric over the selected steps),
    /// `steady-state` (last-window mean IOPS and mean / stddev of the
    /// per-second IOPS of the single step), `each` (the metric of every
    /// step), `pick` (named metrics of named steps) or `fill` (a
    /// whole-drive fill's average rate, cache size and post-cache rate).
    pub kind: String,
    /// A metric of the shared vocabulary ([`crate::study::metric`]):
    /// `iops`, `mbps` (MB/s, 10^6 bytes), `lat` (mean), `p99_lat`,
    /// `max_lat` (µs), each over both directions or with `read_`/`write_`
    /// before it; `power` (W over the step), `energy` (J over the step),
    /// `efficiency` (MB/s per W) or `idle_power` (mW over the last second
    /// of the idle after the step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// `mean`: only steps whose swept fields take these values, e.g.
    /// `{ iodepth = [1, 2, 4] }`.
    #[serde(default, rename = "where", skip_serializing_if = "BTreeMap::is_empty")]
    pub filter: BTreeMap<String, toml::Value>,
    /// `steady-state`: the window at the end of the step, e.g. `"400s"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    /// `each` and `mean`: further metrics to report the same way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    /// `pick`: the values to report, each a step's metric.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pick: Vec<PickDef>,
    /// Label of the score in tables, e.g. `"QD1–4"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// `pcmark8`, `pcmark-vantage`, `pcmark10`: the traces, in the order
    /// reported; `pcmark-vantage` names its steps, `pcmark8` and
    /// `pcmark10` the part of its step names after the round or pass
    /// (`r1-word`, `p1-cps1`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traces: Vec<String>,
    /// `pcmark8`, `pcmark10`: the scored rounds (passes), the prefixes of
    /// the steps' names (steps of other rounds, such as a warm-up, are not
    /// scored).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<String>,
    /// `pcmark8`: the published result the score is scaled by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<ReferenceDef>,
    /// `pcmark-vantage`: the factor of the geometric mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
}

/// A published result of a trace benchmark: its overall score and each
/// trace's result (PCMark 8: service time in seconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceDef {
    /// The drive (or system) it was published for.
    #[serde(default)]
    pub drive: String,
    /// Its overall score.
    pub score: f64,
    /// Each trace's result, by trace.
    pub results: BTreeMap<String, f64>,
}

/// One value of a `pick` score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PickDef {
    /// The step (its expanded name).
    pub step: String,
    /// The metric.
    pub metric: String,
    /// Label in tables.
    pub label: String,
}
