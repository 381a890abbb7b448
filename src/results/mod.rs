//! The results document (results.json): machine, tool version, plan, every run of every point (with
//! the sampler's thread report), per-point statistics, and later the analysis and findings. Its
//! types are the project's vocabulary, and every type the document stores that a sweep produces is
//! here: sample and exec fill them as runs end, and every module after those reads the document
//! through them alone. Documented in docs/results-schema.md; docs/results.schema.json is generated
//! from them.

pub mod analysis;
mod capacity;
pub mod ceiling;
mod class;
pub mod findings;
mod journal;
mod load;
mod phase;
pub mod point_stats;
pub mod provenance;
mod run_memory;
mod run_record;
mod sequential;
mod speedup_stack;
mod stack_profile;
mod store;
mod sync;
mod thread_report;
pub mod time;
mod time_series;
mod tracer_report;
mod trust;

use crate::machine::Machine;
use crate::plan::is_number;
use crate::plan::{Plan, PlanError, Point};
pub use analysis::Analysis;
pub use capacity::{Capacity, IdleKind, IdleShare, Sooner};
pub use ceiling::Ceiling;
pub use class::Class;
pub use findings::Finding;
pub use load::{LoadError, OLDEST_SCHEMA, load};
pub use phase::{Phase, Phases};
pub use point_stats::PointStats;
pub use provenance::Provenance;
pub use run_memory::{RAISED_BYTES, RAISED_SHARE, RunMemory};
pub use run_record::{HELD_MIN_S, HELD_SHARE, OutputFile, RankPart, RunRecord, signal_name};
use schemars::JsonSchema;
pub use sequential::{Added, Sequential};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};
pub use speedup_stack::{SpeedupStack, StackPart};
pub use stack_profile::{OPENMP_RUNTIMES, OffCpuStack, OnCpuStack, StackFrame, StackProfile};
use std::collections::BTreeMap;
pub use store::{Store, StoreError};
pub use thread_report::{
    Around, Feeder, Hot, LEAN_BUSY, LEAN_RATE_HZ, MachineCpu, ThreadReport, ThreadSummary,
    Timeline, Wait, sort_waits,
};
pub use time_series::RunSeries;
pub use tracer_report::{TracedThread, TracerReport};
pub use trust::{Untrusted, check_owned};

/// File name of the document inside a results folder.
pub const FILE_NAME: &str = "results.json";

/// The schema version this build writes. Version 2 stores the plan's axis and a typed analysis
/// (model parameters as fields); version 1 files are read, their analysis and findings recomputed.
pub const SCHEMA_VERSION: u32 = 2;

/// The JSON Schema of results.json, generated from these types (docs/results.schema.json).
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Results);
    serde_json::to_string_pretty(&schema).expect("a schema serialises") + "\n"
}

/// Where a sweep stands.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Runs are being taken (or scalescope was killed without a chance to say otherwise).
    Running,
    /// Every point has its runs.
    Complete,
    /// Stopped by Ctrl-C, SIGTERM or SIGHUP; resumable.
    Interrupted,
    /// Stopped because a run or hook failed; resumable.
    Failed,
}

/// The whole results document.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Results {
    /// Version of this document's layout.
    pub schema_version: u32,
    /// Version of scalescope that wrote it.
    pub scalescope_version: String,
    /// When the sweep started (ISO-8601, UTC).
    pub created: String,
    /// When this file was last written (ISO-8601, UTC).
    pub updated: String,
    /// Where the sweep stands.
    pub status: Status,
    /// The scalescope command line that produced it, argument by argument.
    pub command_line: Vec<String>,
    /// The machine it ran on.
    pub machine: Machine,
    /// The sweep definition.
    pub plan: Plan,
    /// The git commit of the working directory and the user's tags, when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub provenance: Option<Provenance>,
    /// Unit of the throughput figures (`MB/s`, `events/s`…), when there is one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub throughput_unit: Option<String>,
    /// Unit of each metric as printed by the program.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub metric_units: BTreeMap<String, String>,
    /// Every point of the grid, in grid order.
    pub points: Vec<PointResult>,
    /// Runs added until the verdict was clear, when the number of runs was not fixed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sequential: Option<Sequential>,
    /// Scaling analysis (speed-up, efficiency, models), made after the sweep; absent while runs
    /// are being added, and when no parameter is numeric.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub analysis: Option<Analysis>,
    /// Findings of the diagnosis, made with the analysis.
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// Speed-up stacks of the counts above each series' baseline, made with the findings.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub stacks: Vec<SpeedupStack>,
    /// What the input files can deliver (`--ceiling`), measured after the sweep.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ceiling: Option<Ceiling>,
}

/// One point of the grid and everything measured there. Its statistics and warnings are computed
/// from its runs when asked for (and when written to results.json), not kept: memory holds the
/// runs only, however many points the sweep has.
#[derive(Clone, Debug, Deserialize)]
pub struct PointResult {
    /// Parameter values (numbers where they are numeric).
    pub params: Map<String, Value>,
    /// The exact argv that ran.
    pub command: Vec<String>,
    /// Measured runs this point needs; absent while unknown (automatic runs).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub target_runs: Option<u32>,
    /// Measured runs, in the order taken.
    pub runs: Vec<RunRecord>,
}

/// A point as results.json holds it: its fields, then the statistics and warnings computed from
/// its runs as it is written.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "PointResult")]
struct Written<'a> {
    /// Parameter values (numbers where they are numeric).
    params: &'a Map<String, Value>,
    /// The exact argv that ran.
    command: &'a [String],
    /// Measured runs this point needs; absent while unknown (automatic runs).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    target_runs: Option<u32>,
    /// Measured runs, in the order taken.
    runs: &'a [RunRecord],
    /// Statistics over the runs that succeeded (failed runs kept by `--ignore-failure` and runs held
    /// stopped are left out).
    stats: PointStats,
    /// What a careful experimenter would say about these runs.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    warnings: Vec<String>,
}

impl Serialize for PointResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let stats = self.stats();
        let warnings = point_stats::warnings(&self.runs, &stats);
        let written = Written {
            params: &self.params,
            command: &self.command,
            target_runs: self.target_runs,
            runs: &self.runs,
            stats,
            warnings,
        };
        written.serialize(s)
    }
}

impl JsonSchema for PointResult {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        Written::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Written::json_schema(generator)
    }
}

impl PointResult {
    /// A point with no runs yet.
    pub fn new(point: &Point) -> PointResult {
        let params = point.params.iter().map(|(n, v)| (n.clone(), param_value(v))).collect();
        PointResult { params, command: point.argv.clone(), target_runs: None, runs: Vec::new() }
    }

    /// Statistics over the runs that succeeded.
    pub fn stats(&self) -> PointStats {
        point_stats::stats(&self.runs)
    }

    /// What a careful experimenter would say about these runs.
    pub fn warnings(&self) -> Vec<String> {
        point_stats::warnings(&self.runs, &self.stats())
    }

    /// `threads=4 size=big`.
    pub fn label(&self) -> String {
        crate::plan::label(&self.param_strings())
    }

    /// Parameter values as text, in order.
    pub fn param_strings(&self) -> Vec<(String, String)> {
        self.params.iter().map(|(n, v)| (n.clone(), value_text(v))).collect()
    }
}

/// Whether a stored figure is 0, its default: left out of results.json, as results written before
/// the field existed do not hold it.
fn is_zero<T: Default + PartialEq>(x: &T) -> bool {
    *x == T::default()
}

/// A parameter value as JSON: a number when it reads as one, else a string.
pub fn param_value(text: &str) -> Value {
    if !is_number(text) {
        return Value::String(text.to_string());
    }
    match text.parse::<i64>() {
        Ok(i) => Value::from(i),
        Err(_) => text.parse::<f64>().map_or_else(|_| Value::String(text.to_string()), Value::from),
    }
}

/// A parameter value as text, as the user wrote it.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Results {
    /// A new document for a plan about to run, with every point of its grid.
    pub fn new(plan: Plan, command_line: Vec<String>) -> Result<Results, PlanError> {
        let now = time::iso_utc(time::unix_now());
        let points = plan
            .points()
            .map(|p| p.map(|p| PointResult::new(&p)))
            .collect::<Result<Vec<_>, _>>()?;
        let throughput_unit = plan.point(0)?.work.map(|w| throughput_unit(&w.unit));
        Ok(Results {
            schema_version: SCHEMA_VERSION,
            scalescope_version: env!("CARGO_PKG_VERSION").to_string(),
            created: now.clone(),
            updated: now,
            status: Status::Running,
            command_line,
            machine: Machine::current(),
            plan,
            provenance: None,
            throughput_unit,
            metric_units: BTreeMap::new(),
            points,
            sequential: None,
            analysis: None,
            findings: Vec::new(),
            stacks: Vec::new(),
            ceiling: None,
        })
    }

    /// Adds a finished run to a point; the analysis and findings of the earlier runs no longer
    /// hold and are dropped.
    pub fn add_run(&mut self, point: usize, run: RunRecord, units: &[(String, String)]) {
        self.analysis = None;
        self.findings.clear();
        self.stacks.clear();
        for (name, unit) in units {
            self.metric_units.entry(name.clone()).or_insert_with(|| unit.clone());
        }
        if self.throughput_unit.is_none() && run.throughput.is_some() {
            let unit = self.metric_units.get("throughput").cloned().unwrap_or_default();
            self.throughput_unit = Some(if unit.is_empty() { "per s".into() } else { unit });
        }
        let p = &mut self.points[point];
        if p.runs.capacity() == 0 {
            // Room for the runs the point needs, not the four a vector starts with.
            p.runs.reserve_exact(p.target_runs.unwrap_or(1) as usize);
        }
        p.runs.push(run);
    }

    /// All measured runs in the document.
    pub fn run_count(&self) -> usize {
        self.points.iter().map(|p| p.runs.len()).sum()
    }

    /// The round the next interleaved run starts: after every round recorded.
    pub fn next_round(&self) -> u32 {
        self.points.iter().flat_map(|p| &p.runs).filter_map(|r| r.round).max().map_or(0, |r| r + 1)
    }
}

/// Throughput is shown per second in the work's unit; bytes as MB/s (10⁶ bytes).
pub fn throughput_unit(work_unit: &str) -> String {
    if work_unit == "bytes" { "B/s".into() } else { format!("{work_unit}/s") }
}
