//! `scalescope run`: builds the plan from the flags (or reloads it with `--resume`), runs the
//! sweep into a results folder, then prints and exports the table.

use super::args::{LauncherArg, OrderArg, RunArgs};
use super::{Exit, Usage, progress::Session, view};
use crate::exec::sweep::{self, Stop};
use crate::exec::{ExecError, signals};
use crate::pagecache;
use crate::plan::schedule::PointProgress;
use crate::plan::{
    Hooks, Launcher, LauncherKind, MetricSpec, Order, Param, Plan, Runs, launcher, parse_seconds, values,
};
use crate::report::sections::Sections;
use crate::results::{Results, Status, Store, time};
use std::path::PathBuf;

/// Runs `scalescope run`; `params` are the `--param`/`-L` items in command-line order.
pub fn run(args: &RunArgs, params: &[String]) -> anyhow::Result<Exit> {
    let (mut store, points) = match &args.resume {
        Some(dir) => resume(args, params, dir)?,
        None => start(args, params)?,
    };
    let progress: Vec<PointProgress> = store
        .doc
        .points
        .iter()
        .map(|p| {
            let ignore = store.doc.plan.ignore_failure;
            let done = p.runs.iter().filter(|r| ignore || r.succeeded()).count() as u32;
            PointProgress::resumed(done, p.target_runs)
        })
        .collect();
    let plan = store.doc.plan.clone();
    let mut session = Session::new(&mut store, args.show_output);
    let outcome = sweep::run(&plan, &points, progress, &mut session, args.show_output);
    session.finish();
    let (status, exit, message) = match outcome {
        Ok(Stop::Complete) => (Status::Complete, Exit::Done, None),
        Ok(Stop::Interrupted) => {
            let sig = signals::interrupt_signal().unwrap_or(libc::SIGINT);
            let msg = format!(
                "interrupted: {} finished runs are saved in {}; continue with: scalescope run --resume {}",
                store.doc.run_count(),
                store.file().display(),
                store.dir().display()
            );
            (Status::Interrupted, Exit::Signal(sig), Some(msg))
        }
        Ok(Stop::Failed { point, outcome, last_output, saved }) => {
            let label = store.doc.points[point].label();
            let mut msg = format!("a run of {label} failed ({outcome}); stopping (use --ignore-failure to keep going)");
            if let Some(path) = saved {
                msg.push_str(&format!("\nits output is in {}", store.dir().join(path).display()));
            }
            if !last_output.trim().is_empty() {
                msg.push_str(&format!("\nit printed, at the end:\n{last_output}"));
            }
            (Status::Failed, Exit::Failed, Some(msg))
        }
        Err(e) => {
            store.finish(Status::Failed)?;
            return Err(match e {
                ExecError::Usage(m) => Usage(m).into(),
                other => anyhow::anyhow!(other),
            });
        }
    };
    if status == Status::Complete && !plan.ceiling.is_empty() && store.doc.ceiling.is_none() {
        store.doc.ceiling = Some(ceiling(&plan)?);
        store.save()?;
    }
    view::analyse(&mut store.doc, &args.view)?;
    store.finish(status)?;
    let sections = Sections::of(&store.doc);
    view::print_and_export(&store.doc, &sections, Some(store.dir()), &args.view)?;
    if store.recreated.get() {
        eprintln!(
            "scalescope: warning: the results folder {} was deleted during the sweep; it was made again with every run",
            store.dir().display()
        );
    }
    if let Some(m) = message {
        eprintln!("scalescope: {m}");
    }
    Ok(exit)
}

/// Measures the read ceiling of the plan's `--ceiling` files at its thread counts.
fn ceiling(plan: &Plan) -> anyhow::Result<crate::exec::ceiling::Ceiling> {
    let mut counts = plan.thread_counts();
    if counts.is_empty() {
        counts.push(crate::machine::allowed_cpus() as u32);
    }
    let files: Vec<PathBuf> = plan.ceiling.iter().map(PathBuf::from).collect();
    let cold = !plan.evict.is_empty();
    eprintln!(
        "scalescope: measuring the read ceiling of {} ({}) with readspeed at {} thread counts",
        plan.ceiling.join(" "),
        if cold { "cold" } else { "as cached" },
        counts.len()
    );
    let c = crate::exec::ceiling::measure(&files, &counts, cold, |p| {
        let s = if p.threads == 1 { "" } else { "s" };
        eprintln!("  {} thread{s}: {:.1} MB/s", p.threads, p.mean_bytes_per_s / 1e6);
    })
    .map_err(|e| Usage(e.to_string()))?;
    Ok(c)
}

fn start(args: &RunArgs, params: &[String]) -> anyhow::Result<(Store, Vec<crate::plan::Point>)> {
    let plan = plan_from(args, params)?;
    let points = plan.resolve()?;
    if plan.hooks.setup.is_none() && plan.hooks.prepare.is_none() {
        for p in &points {
            pagecache::check(&p.evict).map_err(Usage)?;
        }
    }
    for f in &plan.ceiling {
        std::fs::metadata(f).map_err(|e| Usage(format!("--ceiling {f}: {e}")))?;
    }
    let dir = args.out.clone().unwrap_or_else(|| default_folder(&plan.command, plan.shell));
    let doc = Results::new(plan, &points, std::env::args().collect());
    let store = Store::create(&dir, doc).map_err(|e| Usage(format!("{e:#}")))?;
    Ok((store, points))
}

fn resume(
    args: &RunArgs,
    params: &[String],
    dir: &std::path::Path,
) -> anyhow::Result<(Store, Vec<crate::plan::Point>)> {
    if !args.command.is_empty() || !params.is_empty() {
        return Err(Usage(format!(
            "--resume continues the sweep recorded in {}: give no command or parameters",
            dir.display()
        ))
        .into());
    }
    let store = Store::open(dir)?;
    if store.doc.status == Status::Complete {
        return Err(Usage(format!("{} is already complete: nothing to resume", dir.display())).into());
    }
    let points = store.doc.plan.resolve()?;
    let same = points.len() == store.doc.points.len()
        && points.iter().zip(&store.doc.points).all(|(a, b)| a.argv == b.command);
    if !same {
        return Err(
            Usage(format!("the plan in {} no longer matches its points; start a new sweep", dir.display())).into()
        );
    }
    Ok((store, points))
}

/// Builds the plan from the flags, checking each as it goes.
pub fn plan_from(args: &RunArgs, params: &[String]) -> anyhow::Result<Plan> {
    let nproc = crate::machine::allowed_cpus();
    let mut plan_params = Vec::new();
    for item in params {
        let (name, spec) = item
            .split_once('=')
            .ok_or_else(|| Usage(format!("--param {item}: write NAME=VALUES, e.g. --param threads=1,2,4")))?;
        values::check_name(name)?;
        let values = values::expand(spec, nproc).map_err(|e| Usage(format!("--param {name}: {e}")))?;
        plan_params.push(Param { name: name.to_string(), values });
    }
    if let Some(k) = args.copies {
        if k == 0 || plan_params.iter().any(|p: &Param| p.name == launcher::COPIES) {
            return Err(Usage("--copies K needs K ≥ 1 and no parameter named copies".into()).into());
        }
        let values = if k == 1 { vec!["1".to_string()] } else { vec!["1".to_string(), k.to_string()] };
        plan_params.push(Param { name: launcher::COPIES.into(), values });
    }
    let mut scale = args.view.scale.clone();
    if args.zip {
        let numeric: Vec<&Param> =
            plan_params.iter().filter(|p| p.values.iter().all(|v| v.parse::<f64>().is_ok())).collect();
        let same_len = plan_params.iter().all(|p| p.values.len() == plan_params[0].values.len());
        if numeric.len() >= 2 && same_len && !plan_params.iter().any(|p| p.name == "workers") {
            let values = (0..numeric[0].values.len())
                .map(|i| numeric.iter().map(|p| p.values[i].parse::<f64>().unwrap_or(1.0)).product::<f64>().to_string())
                .collect();
            plan_params.push(Param { name: "workers".into(), values });
            scale = scale.or(Some("workers".into()));
        }
    }
    let runs = match (args.runs, args.min_runs, args.max_runs) {
        (Some(n), _, _) => Runs::fixed(n),
        (None, min, max) => {
            let min = min.unwrap_or(Runs::AUTO.min);
            Runs { min, max: max.unwrap_or(Runs::AUTO.max.max(min)), ..Runs::AUTO }
        }
    };
    let env = pairs(&args.env, "--env", "NAME=VALUE")?;
    let metrics = pairs(&args.metric, "--metric", "NAME=REGEX")?
        .into_iter()
        .map(|(name, regex)| MetricSpec { name, regex })
        .collect();
    let timeout_s = args.timeout.as_deref().map(parse_seconds).transpose()?;
    let order = match args.order {
        OrderArg::Sequential => Order::Sequential,
        OrderArg::Interleaved => Order::Interleaved,
        OrderArg::Random => Order::Random,
    };
    let mut plan = Plan {
        command: args.command.clone(),
        shell: args.shell,
        params: plan_params,
        runs,
        warmup: args.warmup,
        order,
        seed: args.seed.unwrap_or_else(|| (time::unix_now() * 1e6) as u64),
        hooks: Hooks {
            setup: args.setup.clone(),
            prepare: args.prepare.clone(),
            conclude: args.conclude.clone(),
            cleanup: args.cleanup.clone(),
        },
        env,
        evict: args.evict.clone(),
        metrics,
        work: args.work.clone(),
        timeout_s,
        ignore_failure: args.ignore_failure,
        sample_rate_hz: (!args.no_sample).then_some(args.sample_rate),
        scale,
        workers: args.view.workers,
        weak: args.view.weak,
        axis: None,
        baseline: args.view.baseline.clone(),
        ceiling: args.ceiling.iter().map(|p| p.display().to_string()).collect(),
        launcher: Launcher {
            kind: match args.launcher {
                LauncherArg::Local => LauncherKind::Local,
                LauncherArg::Srun => LauncherKind::Srun,
                LauncherArg::Mpirun => LauncherKind::Mpirun,
            },
            args: args.launcher_args.as_deref().unwrap_or("").split_whitespace().map(String::from).collect(),
        },
        zip: args.zip,
    };
    plan.decide_axis()?;
    Ok(plan)
}

fn pairs(items: &[String], flag: &str, form: &str) -> Result<Vec<(String, String)>, Usage> {
    items
        .iter()
        .map(|item| match item.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(Usage(format!("{flag} {item}: write {form}"))),
        })
        .collect()
}

/// `scalescope-results/<date>-<time>-<program>`, made unique with a suffix when needed.
pub fn default_folder(command: &[String], shell: bool) -> PathBuf {
    let program = if shell {
        command.first().and_then(|c| c.split_whitespace().next()).unwrap_or("sh").to_string()
    } else {
        command.first().cloned().unwrap_or_default()
    };
    let name: String = std::path::Path::new(&program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' })
        .take(40)
        .collect();
    unique(PathBuf::from("scalescope-results").join(format!("{}-{name}", time::local_stamp())))
}

/// The path itself if free, else with `-2`, `-3`… appended.
pub fn unique(base: PathBuf) -> PathBuf {
    if !base.exists() {
        return base;
    }
    (2..).map(|i| PathBuf::from(format!("{}-{i}", base.display()))).find(|p| !p.exists()).expect("a free name")
}
