//! What to run: the command template, the parameter grid, repetitions, hooks, cache policy,
//! metric extractors and work amount. [`build::build`] makes and checks a plan from what the user
//! asked for; it is stored in every results document so a sweep can be resumed and reproduced, and
//! [`Plan::point`] makes any of its concrete [`Point`]s when needed.

mod axis;
mod build;
mod validate;
pub(crate) use validate::last_line;
mod duration;
mod error;
mod grid;
mod launcher;
mod quantity;
mod schedule;
mod template;
mod values;
mod work;

pub use axis::{Ask, Axis, Counts, Scaling};
pub use build::{Request, build};
pub use duration::parse_seconds;
pub use error::PlanError;
pub use launcher::{Launch, Launcher, LauncherKind};
pub use quantity::parse as parse_quantity;
pub use schedule::{PointProgress, Scheduler, Task};
pub use template::{Quote, shell_quote, substitute};
pub use values::{expand as expand_values, is_number};
pub use work::{Work, evaluate as evaluate_work};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One swept parameter and its values, in the order they will run.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Param {
    /// Name used in `{name}` placeholders.
    pub name: String,
    /// Values, already expanded from ranges and `nproc`.
    pub values: Vec<String>,
}

/// How many measured runs each point gets: exactly `min` when `min == max`; otherwise a first pass
/// of at least `min`, more (up to [`Runs::FIRST_PASS_MOST`]) while a point has taken less than
/// `min_time_s` in all, and then, within `budget`, more runs (up to `max`) for the points whose
/// verdict the runs cannot decide yet.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Runs {
    /// Fewest measured runs per point.
    pub min: u32,
    /// Most measured runs per point.
    pub max: u32,
    /// Aim for at least this much measured time per point under automatic runs.
    pub min_time_s: f64,
    /// Time that runs added to decide a verdict may take; none: no runs are added.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub budget: Option<Budget>,
}

impl Runs {
    /// The default: at least 3 runs, more while runs are short (up to 30 or about 3 s per point),
    /// then more where the verdict is undecided, for up to the first pass's time again (a sweep
    /// takes at most twice its first pass).
    pub const AUTO: Runs =
        Runs { min: 3, max: 100, min_time_s: 3.0, budget: Some(Budget::Multiple(1.0)) };

    /// Most runs per point of the first pass, however short its runs.
    pub const FIRST_PASS_MOST: u32 = 30;

    /// Exactly `n` runs per point.
    pub fn fixed(n: u32) -> Runs {
        Runs { min: n, max: n, min_time_s: 0.0, budget: None }
    }

    /// Most runs per point of the first pass.
    pub fn first_pass_most(&self) -> u32 {
        self.max.min(Runs::FIRST_PASS_MOST).max(self.min)
    }
}

/// How long runs added to decide a verdict may take in all (`--budget`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Budget {
    /// This many times the first pass's time (`2x`).
    Multiple(f64),
    /// This many seconds (`90s`, `10m`).
    Seconds(f64),
}

impl Budget {
    /// Seconds allowed, given the first pass's.
    pub fn seconds(&self, first_pass_s: f64) -> f64 {
        match *self {
            Budget::Multiple(m) => m * first_pass_s,
            Budget::Seconds(s) => s,
        }
    }
}

/// The order in which runs of different points are taken.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// All runs of a point, then the next point.
    #[default]
    Sequential,
    /// Run 1 of every point, then run 2 of every point…
    Interleaved,
    /// Interleaved rounds, each in a random order (seeded, recorded).
    Random,
}

/// Shell commands run around the measurements, with hyperfine's meanings.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Hooks {
    /// Before the first run of each point.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub setup: Option<String>,
    /// Before every run, warm-up runs included.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub prepare: Option<String>,
    /// After every run, warm-up runs included.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub conclude: Option<String>,
    /// After the last run of each point.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cleanup: Option<String>,
}

/// A named value read from the program's output with a regular expression (first capture group).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct MetricSpec {
    /// Metric name, as it appears in results and tables.
    pub name: String,
    /// Regular expression; its first capture group holds a number with an optional unit prefix.
    pub regex: String,
}

/// The whole definition of a sweep.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Plan {
    /// The command template: argv, or a single shell text when `shell` is set.
    pub command: Vec<String>,
    /// Run the command through `sh -c` (values are quoted).
    pub shell: bool,
    /// Swept parameters; several form a cartesian grid, the first one outermost.
    pub params: Vec<Param>,
    /// Measured runs per point.
    pub runs: Runs,
    /// Unrecorded warm-up runs before each point's first measured run.
    pub warmup: u32,
    /// Run order.
    pub order: Order,
    /// Seed of the random order.
    pub seed: u64,
    /// Setup, prepare, conclude and cleanup hooks.
    pub hooks: Hooks,
    /// Extra environment variables (`NAME`, template of the value).
    pub env: Vec<(String, String)>,
    /// Files or directories to drop from the page cache before every run (templates).
    pub evict: Vec<String>,
    /// Metric extractors.
    pub metrics: Vec<MetricSpec>,
    /// Work per run (template of a work expression).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub work: Option<String>,
    /// Per-run time limit in seconds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub timeout_s: Option<f64>,
    /// Keep sweeping after a run fails.
    pub ignore_failure: bool,
    /// Thread-state sampling rate in Hz; absent when sampling is off.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sample_rate_hz: Option<f64>,
    /// Sample without the event tracer (`--no-trace`: /proc only).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub no_trace: bool,
    /// Trace every run (`--trace-every-run`), also those of a point whose traced run kept its
    /// CPUs busy, which are otherwise watched lean.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub trace_every_run: bool,
    /// The counted parameter asked for with `--scale`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub scale: Option<String>,
    /// `--workers`: the counted parameter is a number of workers whatever its name.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub workers: bool,
    /// `--weak`: the work grows with the count.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub weak: bool,
    /// The counted parameter, what it counts and how the work scales with it, decided from the
    /// flags above when the plan is built; absent when no parameter is numeric.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub axis: Option<Axis>,
    /// The value of the counted parameter used as the speed-up baseline (default: first).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub baseline: Option<String>,
    /// Input files whose read ceiling `readspeed` measures after the sweep.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub ceiling: Vec<String>,
    /// How runs are started (directly, local copies, srun, mpirun).
    #[serde(skip_serializing_if = "Launcher::is_local", default)]
    pub launcher: Launcher,
    /// Pair the parameters' values position by position instead of the cartesian product.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub zip: bool,
}

/// One point of the grid with everything substituted, ready to execute.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Parameter names and values of this point.
    pub params: Vec<(String, String)>,
    /// The argv to execute (`sh -c TEXT` under `--shell`).
    pub argv: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// Hooks with values quoted for the shell.
    pub hooks: Hooks,
    /// Paths to evict from the page cache before each run.
    pub evict: Vec<PathBuf>,
    /// Work per run, when known.
    pub work: Option<Work>,
    /// How the runs are launched, when not directly (copies, srun, mpirun).
    pub launch: Option<Launch>,
}

impl Point {
    /// `threads=4 size=big`, or `(single point)` without parameters.
    pub fn label(&self) -> String {
        label(&self.params)
    }
}

/// Formats parameter values as `name=value` pairs separated by spaces.
pub fn label(params: &[(String, String)]) -> String {
    if params.is_empty() {
        return "(single point)".into();
    }
    params.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(" ")
}

/// A parameter's values as thread counts, when all are whole numbers from 1.
fn counts(p: &Param) -> Option<Vec<u32>> {
    p.values.iter().map(|v| v.parse::<u32>().ok().filter(|&n| n >= 1)).collect()
}

impl Plan {
    /// Whether `{name}` appears where it can change what runs: the command, the environment, the
    /// hooks, the files evicted or the work per run.
    pub fn mentions(&self, name: &str) -> bool {
        let needle = format!("{{{name}}}");
        let h = &self.hooks;
        let hooks = [&h.setup, &h.prepare, &h.conclude, &h.cleanup].into_iter().flatten();
        self.command
            .iter()
            .chain(self.env.iter().map(|(_, v)| v))
            .chain(&self.evict)
            .chain(hooks)
            .chain(&self.work)
            .any(|s| s.contains(&needle))
    }

    /// The counted parameter's distinct values as thread counts, smallest first; empty when
    /// they are not all whole numbers from 1.
    pub fn thread_counts(&self) -> Vec<u32> {
        let counted =
            self.axis.as_ref().and_then(|a| self.params.iter().find(|p| p.name == a.param));
        let mut v = counted.and_then(counts).unwrap_or_default();
        v.sort_unstable();
        v.dedup();
        v
    }
}
