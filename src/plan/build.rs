//! Building a [`Plan`] from what the user asked for, as written on the command line: every item
//! is parsed and checked here, once, so that the command line only passes the words along and the
//! runs only read the plan.

use super::axis::{Ask, Axis};
use super::error::{PlanError, invalid};
use super::launcher::{self, Launcher};
use super::{Budget, Hooks, MetricSpec, Order, Param, Plan, Runs, parse_seconds, values};
use std::time::{SystemTime, UNIX_EPOCH};

/// What the user asked for, item by item as written (the input of [`build`]).
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The command template (argv, or one shell text with `shell`).
    pub command: Vec<String>,
    /// Run the command through `sh -c`.
    pub shell: bool,
    /// `NAME=VALUES` items, in command-line order.
    pub params: Vec<String>,
    /// `--runs`: exactly this many measured runs per point.
    pub runs: Option<u32>,
    /// `--min-runs`.
    pub min_runs: Option<u32>,
    /// `--max-runs`.
    pub max_runs: Option<u32>,
    /// `--budget`, as written: `2x`, `90s`, `10m`, or `0` for none.
    pub budget: Option<String>,
    /// Warm-up runs per point.
    pub warmup: u32,
    /// `--order`; by default interleaved when the sweep has more than one point.
    pub order: Option<Order>,
    /// Seed of the random order; by default from the clock.
    pub seed: Option<u64>,
    /// The hooks.
    pub hooks: Hooks,
    /// `NAME=VALUE` items of `--env`.
    pub env: Vec<String>,
    /// `--evict` paths (templates).
    pub evict: Vec<String>,
    /// `NAME=REGEX` items of `--metric`.
    pub metrics: Vec<String>,
    /// `--work`.
    pub work: Option<String>,
    /// `--timeout`, as written.
    pub timeout: Option<String>,
    /// `--ignore-failure`.
    pub ignore_failure: bool,
    /// Sampling rate, or `None` for `--no-sample`.
    pub sample_rate_hz: Option<f64>,
    /// `--no-trace`.
    pub no_trace: bool,
    /// `--trace-every-run`.
    pub trace_every_run: bool,
    /// `--scale`.
    pub scale: Option<String>,
    /// `--workers`.
    pub workers: bool,
    /// `--weak`.
    pub weak: bool,
    /// `--baseline`.
    pub baseline: Option<String>,
    /// `--ceiling` files.
    pub ceiling: Vec<String>,
    /// `--launcher` and `--launcher-args`.
    pub launcher: Launcher,
    /// `--zip`.
    pub zip: bool,
    /// `--copies K`.
    pub copies: Option<u32>,
}

/// Reads `--budget`: a multiple of the first pass's time (`2x`), a duration (`90s`, `10m`), or `0`
/// for no added runs.
fn budget(text: &str) -> Result<Option<Budget>, PlanError> {
    let t = text.trim();
    if t.parse::<f64>().is_ok_and(|v| v == 0.0) {
        return Ok(None);
    }
    if let Some(m) = t.strip_suffix(['x', '×']) {
        return match m.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok((v > 0.0).then_some(Budget::Multiple(v))),
            _ => Err(invalid!(
                "--budget {text}: write a multiple of the first pass's time (2x), a duration (90s, 10m) or 0"
            )),
        };
    }
    parse_seconds(t).map(|s| Some(Budget::Seconds(s))).map_err(|_| {
        invalid!("--budget {text}: write a multiple of the first pass's time (2x), a duration (90s, 10m) or 0")
    })
}

/// The name of the parameter `--zip` adds: the product of the paired counts.
pub const WORKERS: &str = "workers";

/// Builds the plan and checks it, including that its input files can be read.
pub fn build(r: &Request, nproc: usize) -> Result<Plan, PlanError> {
    let mut params = Vec::new();
    for item in &r.params {
        let (name, spec) = item.split_once('=').ok_or_else(|| {
            invalid!("--param {item}: write NAME=VALUES, e.g. --param threads=1,2,4")
        })?;
        values::check_name(name)?;
        let values = values::expand(spec, nproc).map_err(|e| invalid!("--param {name}: {e}"))?;
        // `threads=1-4` is one value of text: as a count of workers it is surely meant as a range.
        if Axis::along(name, &Ask::default()).parallel()
            && let Some((v, a, b)) =
                values.iter().find_map(|v| values::dash_range(v).map(|(a, b)| (v, a, b)))
        {
            return Err(invalid!(
                "--param {name}={spec}: '{v}' would be one value, not the {name} from {a} to {b}: write {a}..{b} for every count between them, or {a}..{b}:x2 to double"
            ));
        }
        params.push(Param { name: name.to_string(), values });
    }
    if let Some(k) = r.copies {
        if k == 0 || params.iter().any(|p| p.name == launcher::COPIES) {
            return Err(invalid!("--copies K needs K ≥ 1 and no parameter named copies"));
        }
        let values =
            if k == 1 { vec!["1".to_string()] } else { vec!["1".to_string(), k.to_string()] };
        params.push(Param { name: launcher::COPIES.into(), values });
    }
    let mut scale = r.scale.clone();
    if r.zip
        && let Some(workers) = workers(&params)
    {
        params.push(workers);
        scale = scale.or(Some(WORKERS.into()));
    }
    let runs = match (r.runs, r.min_runs, r.max_runs) {
        (Some(_), _, _) if r.budget.is_some() => {
            return Err(invalid!(
                "--budget adds runs where the verdict is undecided, --runs fixes their number: give one of them"
            ));
        }
        (Some(n), _, _) => Runs::fixed(n),
        (None, min, max) => {
            let min = min.unwrap_or(Runs::AUTO.min);
            let budget = match &r.budget {
                Some(text) => budget(text)?,
                None => Runs::AUTO.budget,
            };
            Runs { min, max: max.unwrap_or(Runs::AUTO.max.max(min)), budget, ..Runs::AUTO }
        }
    };
    let metrics = pairs(&r.metrics, "--metric", "NAME=REGEX")?
        .into_iter()
        .map(|(name, regex)| MetricSpec { name, regex })
        .collect();
    let mut plan = Plan {
        command: r.command.clone(),
        shell: r.shell,
        params,
        runs,
        warmup: r.warmup,
        order: Order::Sequential,
        seed: r.seed.unwrap_or_else(clock_seed),
        hooks: r.hooks.clone(),
        env: pairs(&r.env, "--env", "NAME=VALUE")?,
        evict: r.evict.clone(),
        metrics,
        work: r.work.clone(),
        timeout_s: r.timeout.as_deref().map(parse_seconds).transpose()?,
        ignore_failure: r.ignore_failure,
        sample_rate_hz: r.sample_rate_hz,
        no_trace: r.no_trace,
        trace_every_run: r.trace_every_run,
        scale,
        workers: r.workers,
        weak: r.weak,
        axis: None,
        baseline: r.baseline.clone(),
        ceiling: r.ceiling.clone(),
        launcher: r.launcher.clone(),
        zip: r.zip,
    };
    plan.check()?;
    plan.decide_axis()?;
    check_baseline(&plan)?;
    plan.order =
        r.order.unwrap_or(if plan.len() > 1 { Order::Interleaved } else { Order::Sequential });
    plan.check_inputs()?;
    Ok(plan)
}

/// A `--baseline` value the counted parameter never takes is refused before anything runs.
fn check_baseline(plan: &Plan) -> Result<(), PlanError> {
    let (Some(text), Some(axis)) = (&plan.baseline, &plan.axis) else { return Ok(()) };
    let Some(param) = plan.params.iter().find(|p| p.name == axis.param) else { return Ok(()) };
    let value = text.split_once('=').map_or(text.as_str(), |(_, v)| v).trim();
    let Ok(v) = value.parse::<f64>() else { return Ok(()) };
    if param.values.iter().any(|x| x.parse::<f64>().ok() == Some(v)) {
        return Ok(());
    }
    Err(invalid!(
        "--baseline {text}: {}={value} would not be measured (values: {})",
        axis.param,
        param.values.join(", ")
    ))
}

/// Under `--zip` with two or more numeric parameters of equal length, `workers` = their product at
/// each position (the count that speed-up refers to), unless a parameter already has that name.
fn workers(params: &[Param]) -> Option<Param> {
    let numeric: Vec<&Param> =
        params.iter().filter(|p| p.values.iter().all(|v| v.parse::<f64>().is_ok())).collect();
    let same_len = params.iter().all(|p| p.values.len() == params[0].values.len());
    if numeric.len() < 2 || !same_len || params.iter().any(|p| p.name == WORKERS) {
        return None;
    }
    let values = (0..numeric[0].values.len())
        .map(|i| {
            numeric
                .iter()
                .map(|p| p.values[i].parse::<f64>().unwrap_or(1.0))
                .product::<f64>()
                .to_string()
        })
        .collect();
    Some(Param { name: WORKERS.into(), values })
}

/// Splits `NAME=VALUE` items; the name may not be empty.
fn pairs(items: &[String], flag: &str, form: &str) -> Result<Vec<(String, String)>, PlanError> {
    items
        .iter()
        .map(|item| match item.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(invalid!("{flag} {item}: write {form}")),
        })
        .collect()
}

fn clock_seed() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// A request for `command` over `params` (`NAME=VALUES`), for tests.
#[cfg(test)]
pub(crate) fn request(params: &[&str], command: &[&str]) -> Request {
    Request {
        params: params.iter().map(|s| s.to_string()).collect(),
        command: command.iter().map(|s| s.to_string()).collect(),
        ..Request::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_points_run_interleaved_unless_asked_otherwise() {
        let plan = build(&request(&["t=1,2"], &["prog", "{t}"]), 4).unwrap();
        assert_eq!(plan.order, Order::Interleaved);
        let plan = build(&request(&["t=1"], &["prog", "{t}"]), 4).unwrap();
        assert_eq!(plan.order, Order::Sequential);
        let mut r = request(&["t=1,2"], &["prog", "{t}"]);
        r.order = Some(Order::Sequential);
        assert_eq!(build(&r, 4).unwrap().order, Order::Sequential);
    }

    #[test]
    fn zip_adds_the_workers_axis_and_copies_add_their_parameter() {
        let mut r = request(&["ranks=1,2,4", "threads=8,4,2"], &["prog", "{ranks}", "{threads}"]);
        r.zip = true;
        let plan = build(&r, 4).unwrap();
        assert_eq!(plan.params[2].values, ["8", "8", "8"]);
        assert_eq!(plan.scale.as_deref(), Some(WORKERS));
        let mut r = request(&[], &["prog"]);
        r.copies = Some(3);
        assert_eq!(build(&r, 4).unwrap().params[0].values, ["1", "3"]);
        r.copies = Some(0);
        assert!(build(&r, 4).is_err());
    }

    #[test]
    fn a_count_written_as_a_dash_range_is_said_not_swept_as_text() {
        let e =
            build(&request(&["threads=1-4"], &["prog", "{threads}"]), 4).unwrap_err().to_string();
        assert!(e.contains("write 1..4") && !e.contains('\n'), "{e}");
        // A CPU list for taskset is text, and meant as such.
        assert!(
            build(&request(&["cpus_list=0-3,0-1"], &["taskset", "-c", "{cpus_list}", "prog"]), 4)
                .is_ok()
        );
    }

    #[test]
    fn malformed_items_are_one_sentence_each() {
        for (params, env, metric) in
            [(&["t"][..], &[][..], &[][..]), (&[], &["=x"], &[]), (&[], &[], &["x"])]
        {
            let mut r = request(params, &["prog"]);
            r.env = env.iter().map(|s: &&str| s.to_string()).collect();
            r.metrics = metric.iter().map(|s: &&str| s.to_string()).collect();
            let e = build(&r, 4).unwrap_err().to_string();
            assert!(e.contains("write ") && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn the_budget_is_a_multiple_a_duration_or_nothing() {
        let runs = |budget: Option<&str>, fixed: Option<u32>| {
            let mut r = request(&["t=1,2"], &["prog", "{t}"]);
            r.budget = budget.map(String::from);
            r.runs = fixed;
            build(&r, 4).map(|p| p.runs)
        };
        assert_eq!(runs(None, None).unwrap().budget, Runs::AUTO.budget);
        assert_eq!(runs(Some("3x"), None).unwrap().budget, Some(Budget::Multiple(3.0)));
        assert_eq!(runs(Some("10m"), None).unwrap().budget, Some(Budget::Seconds(600.0)));
        assert_eq!(runs(Some("0"), None).unwrap().budget, None);
        assert_eq!(runs(None, Some(5)).unwrap(), Runs::fixed(5));
        for bad in ["x", "-1x", "soon"] {
            let e = runs(Some(bad), None).unwrap_err().to_string();
            assert!(e.starts_with("--budget") && e.contains("2x"), "{e}");
        }
        assert!(runs(Some("2x"), Some(5)).unwrap_err().to_string().contains("give one of them"));
    }
}
