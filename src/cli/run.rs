//! `scalescope run`: passes the flags to the plan (or reloads it with `--resume`), runs the sweep
//! into a results folder, then prints and exports the table.

use super::args::{LauncherArg, OrderArg, RunArgs};
use super::progress::Session;
use super::{Exit, Usage, more_runs, view};
use crate::error::Error;
use crate::exec::ceiling;
use crate::exec::sweep::{self, Stop};
use crate::exec::{Processes, signals};
use crate::machine;
use crate::plan::PointProgress;
use crate::plan::{self, Budget, Hooks, Launcher, LauncherKind, Order, Plan, Request};
use crate::report::Sections;
use crate::report::command_line as template_line;
use crate::results::{Ceiling, Results, Status, Store, check_owned, time};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Runs `scalescope run`; `params` are the `--param`/`-L` items in command-line order.
pub fn run(args: &RunArgs, params: &[String]) -> Result<Exit, Error> {
    let mut store = match &args.resume {
        Some(dir) => resume(args, params, dir)?,
        None => match start(args, params)? {
            Some(store) => store,
            None => return Ok(Exit::Done),
        },
    };
    let ignore = store.doc.plan.ignore_failure;
    let progress: Vec<PointProgress> = store
        .doc
        .points
        .iter()
        .map(|p| {
            PointProgress::resumed(
                p.runs.iter().filter(|r| r.counted() || (ignore && !r.held())).count() as u32,
                p.target_runs,
            )
        })
        .collect();
    let plan = store.doc.plan.clone();
    let first_round = store.doc.next_round();
    let walls_before: f64 = store.doc.points.iter().flat_map(|p| &p.runs).map(|r| r.wall_s).sum();
    let started = Instant::now();
    let mut session = Session::new(&mut store, args.show_output, None);
    let outcome = sweep::run(
        &plan,
        (progress, first_round),
        &mut session,
        &mut Processes::new(),
        args.show_output,
    );
    session.finish();
    let clock = session.clock();
    // The first pass's time: this call's, and that of the runs a resumed sweep took before.
    let first_pass_s = started.elapsed().as_secs_f64() + walls_before;
    let outcome = match outcome {
        Ok(Stop::Complete) if every_run_failed(&store.doc).is_none() => {
            more_runs::settle(&mut store, &args.view, (first_pass_s, clock), args.show_output)?
        }
        other => other,
    };
    let (status, exit, message) = match outcome {
        Ok(Stop::Complete) => match every_run_failed(&store.doc) {
            Some(outcome) => (
                Status::Complete,
                Exit::Failed,
                Some(format!(
                    "every run failed (the first: {outcome}): nothing was measured; each run's status is kept in the results"
                )),
            ),
            None => match metrics_never_read(&store.doc) {
                Some(names) => (
                    Status::Complete,
                    Exit::Mistake,
                    Some(format!(
                        "no run printed a value for --metric {names}: its regex matched nothing, or captured no number scalescope reads (a decimal comma such as 12,5, or a word); the runs are kept, with their output's last lines in the results"
                    )),
                ),
                None => (Status::Complete, Exit::Done, None),
            },
        },
        Ok(Stop::MetricsNotFound) => (
            Status::Failed,
            Exit::Mistake,
            Some(format!(
                "no run printed a value for --metric {}: its regex matched nothing, or captured no number scalescope reads (a decimal comma such as 12,5, or a word); stopped after every point's first run rather than measure on without it; the runs are kept, with their output's last lines in the results",
                metrics_never_read(&store.doc).unwrap_or_default()
            )),
        ),
        Ok(Stop::Interrupted) => {
            let sig = signals::interrupt_signal().unwrap_or(libc::SIGINT);
            let n = store.doc.run_count();
            let msg = format!(
                "interrupted: {n} finished run{} saved in {}; continue with: scalescope run --resume {}",
                if n == 1 { " is" } else { "s are" },
                store.file().display(),
                store.dir().display()
            );
            (Status::Interrupted, Exit::Signal(sig), Some(msg))
        }
        Ok(Stop::Failed { point, outcome, printed, saved }) => {
            let which = if store.doc.points.len() == 1 {
                "a run".to_string()
            } else {
                format!("a run of {}", store.doc.points[point].label())
            };
            let mut msg = format!(
                "{which} failed ({outcome}); stopping (use --ignore-failure to keep going)"
            );
            if let Some(path) = saved {
                msg.push_str(&format!("\nits output is in {}", store.dir().join(path).display()));
            }
            if printed.stream().is_some() {
                msg.push_str(&format!("\n{printed}"));
            }
            (Status::Failed, Exit::Failed, Some(msg))
        }
        Err(e) => {
            store.finish(Status::Failed)?;
            // A command that cannot start (a typo) measured nothing: a folder that holds only
            // the plan would refuse the next try. A hook that ran and failed is kept, as said.
            if args.resume.is_none() && matches!(e, crate::exec::ExecError::Spawn(_)) {
                store.discard();
            }
            return Err(e.into());
        }
    };
    if status == Status::Complete && !plan.ceiling.is_empty() && store.doc.ceiling.is_none() {
        store.doc.ceiling = Some(measure_ceiling(&plan)?);
        store.save()?;
    }
    view::analyse(&mut store.doc, &args.view)?;
    store.finish(status)?;
    // Stopped before any run succeeded: a table of dashes would say nothing the message does not.
    let measured = store.doc.points.iter().flat_map(|p| &p.runs).any(|r| r.succeeded());
    if status != Status::Failed || measured {
        let sections = Sections::of(&store.doc);
        view::print_and_export(&store.doc, &sections, Some(store.dir()), &args.view)?;
    }
    if store.recreated.get() {
        crate::fmt::say!(
            "scalescope: warning: the results folder {} was deleted during the sweep; it was made again with every run",
            store.dir().display()
        );
    }
    if let Some(m) = message {
        crate::fmt::say!("scalescope: {m}");
    }
    if status == Status::Complete && measured {
        super::history::record(&store.doc, store.dir(), &args.record);
    }
    Ok(exit)
}

/// The `--metric` names no successful run of the sweep printed, quoted and joined (`'rate'`),
/// when there are any.
fn metrics_never_read(doc: &crate::results::Results) -> Option<String> {
    let runs: Vec<_> = doc.points.iter().flat_map(|p| &p.runs).filter(|r| r.succeeded()).collect();
    let never: Vec<String> = doc
        .plan
        .metrics
        .iter()
        .map(|m| m.name.as_str())
        .filter(|name| {
            !runs.is_empty() && runs.iter().all(|r| r.missing_metrics.iter().any(|m| m == name))
        })
        .map(|name| format!("'{name}'"))
        .collect();
    (!never.is_empty()).then(|| never.join(", "))
}

/// How the first run ended, when no run of the sweep succeeded (possible with --ignore-failure).
fn every_run_failed(doc: &Results) -> Option<String> {
    let mut runs = doc.points.iter().flat_map(|p| &p.runs);
    let first = runs.clone().next()?;
    (!runs.any(|r| r.succeeded())).then(|| first.outcome())
}

/// Measures the read ceiling of the plan's `--ceiling` files at its thread counts.
fn measure_ceiling(plan: &Plan) -> Result<Ceiling, Error> {
    let mut counts = plan.thread_counts();
    if counts.is_empty() {
        counts.push(machine::allowed_cpus() as u32);
    }
    let files: Vec<PathBuf> = plan.ceiling.iter().map(PathBuf::from).collect();
    let cold = !plan.evict.is_empty();
    crate::fmt::say!(
        "scalescope: measuring the read ceiling of {} ({}) with readspeed at {} thread counts",
        plan.ceiling.join(" "),
        if cold { "cold" } else { "as cached" },
        counts.len()
    );
    Ok(ceiling::measure(&files, &counts, cold, |p| {
        let s = if p.threads == 1 { "" } else { "s" };
        crate::fmt::say!("  {} thread{s}: {:.1} MB/s ({})", p.threads, p.bytes_per_s / 1e6, p.how);
    })?)
}

/// The plan from the flags, checked; with `--dry-run` it is only described (returns `None`).
fn start(args: &RunArgs, params: &[String]) -> Result<Option<Store>, Error> {
    let plan = plan::build(&request(args, params), machine::allowed_cpus())?;
    for name in plan.unused_params() {
        crate::fmt::say!(
            "scalescope: warning: the parameter '{name}' appears nowhere (not in the command, --env, the hooks, --work or --evict): its points all run the same thing"
        );
    }
    for (name, odd) in plan.uncounted_params() {
        crate::fmt::say!(
            "scalescope: warning: '{name}' reads as a count of workers, but {}: nothing is counted along it, so no speed-up is computed (counts are written 1,2,4 or 1..8)",
            if odd.len() == 1 {
                format!("'{}' is not a number", odd[0])
            } else {
                format!("'{}' are not numbers", odd.join("', '"))
            }
        );
    }
    if args.no_sample && args.view.memory_limit.is_some() {
        crate::fmt::say!(
            "scalescope: warning: --memory-limit judges the tree's PSS, which --no-sample does not read: nothing will be judged against it (max RSS, from wait4, is the largest process's alone)"
        );
    }
    if args.dry_run {
        view::print(&describe(&plan)?)?;
        return Ok(None);
    }
    let provenance = super::history::provenance(&args.record)?;
    let dir = args.out.clone().unwrap_or_else(|| default_folder(&plan.command, plan.shell));
    let mut doc = Results::new(plan, std::env::args().collect())?;
    doc.provenance = Some(provenance);
    let store = Store::create(&dir, doc).map_err(Error::Out)?;
    Ok(Some(store))
}

/// What `--dry-run` prints: the grid, the order and the command lines of its first and last points.
fn describe(plan: &Plan) -> Result<String, Error> {
    let n = plan.len();
    let mut out = format!("{n} point{}", if n == 1 { "" } else { "s" });
    for p in &plan.params {
        let shown = match p.values.len() {
            0..=8 => p.values.join(", "),
            k => format!("{}, {}, … {} ({k} values)", p.values[0], p.values[1], p.values[k - 1]),
        };
        out.push_str(&format!("\n  {}: {shown}", p.name));
    }
    let runs = if plan.runs.min == plan.runs.max {
        format!(
            "{} measured run{} per point",
            plan.runs.min,
            if plan.runs.min == 1 { "" } else { "s" }
        )
    } else {
        let more = match plan.runs.budget {
            Some(Budget::Multiple(1.0)) => {
                ", then more where the verdict is undecided, for up to the first pass's time again"
                    .to_string()
            }
            Some(Budget::Multiple(m)) => {
                format!(
                    ", then more where the verdict is undecided, for up to {m}× the first pass's time"
                )
            }
            Some(Budget::Seconds(s)) => {
                format!(", then more where the verdict is undecided, for up to {s} s")
            }
            None => String::new(),
        };
        format!(
            "{} to {} measured runs per point (more while runs are short{more})",
            plan.runs.min, plan.runs.max
        )
    };
    let order = match plan.order {
        Order::Sequential => "sequential: every run of a point, then the next point".to_string(),
        Order::Interleaved => {
            "interleaved: run 1 of every point, then run 2 of every point…".to_string()
        }
        Order::Random => format!("random: interleaved rounds, each shuffled (seed {})", plan.seed),
    };
    out.push_str(&format!(
        "\n{runs}, {} warm-up run{} each\norder: {order}",
        plan.warmup,
        if plan.warmup == 1 { "" } else { "s" }
    ));
    let first = plan.point(0)?;
    // The grid's ends: in random order they are not the first and last runs.
    out.push_str(&format!("\nfirst point: {}  [{}]", command_line(&first.argv), first.label()));
    if n > 1 {
        let last = plan.point(n - 1)?;
        out.push_str(&format!("\nlast point:  {}  [{}]", command_line(&last.argv), last.label()));
    }
    out.push_str(&hook_lines(&first.hooks));
    out.push_str("\nnothing was run (--dry-run)\n");
    Ok(out)
}

/// `argv` as one line a shell would read back.
fn command_line(argv: &[String]) -> String {
    argv.iter().map(|a| plan::shell_quote(a)).collect::<Vec<_>>().join(" ")
}

fn hook_lines(h: &Hooks) -> String {
    [
        ("setup", &h.setup),
        ("prepare", &h.prepare),
        ("conclude", &h.conclude),
        ("cleanup", &h.cleanup),
    ]
    .into_iter()
    .filter_map(|(name, text)| Some(format!("\n{name}: {}", text.as_ref()?)))
    .collect()
}

/// The run's flags as the plan takes them.
fn request(args: &RunArgs, params: &[String]) -> Request {
    Request {
        command: args.command.clone(),
        shell: args.shell,
        params: params.to_vec(),
        runs: args.runs,
        min_runs: args.min_runs,
        max_runs: args.max_runs,
        budget: args.budget.clone(),
        warmup: args.warmup,
        order: args.order.map(|o| match o {
            OrderArg::Sequential => Order::Sequential,
            OrderArg::Interleaved => Order::Interleaved,
            OrderArg::Random => Order::Random,
        }),
        seed: args.seed,
        hooks: Hooks {
            setup: args.setup.clone(),
            prepare: args.prepare.clone(),
            conclude: args.conclude.clone(),
            cleanup: args.cleanup.clone(),
        },
        env: args.env.clone(),
        evict: args.evict.clone(),
        metrics: args.metric.clone(),
        work: args.work.clone(),
        timeout: args.timeout.clone(),
        ignore_failure: args.ignore_failure,
        sample_rate_hz: (!args.no_sample).then_some(args.sample_rate),
        no_trace: args.no_trace,
        trace_every_run: args.trace_every_run,
        scale: args.view.scale.clone(),
        workers: args.view.workers,
        weak: args.view.weak,
        baseline: args.view.baseline.clone(),
        ceiling: args.ceiling.iter().map(|p| p.display().to_string()).collect(),
        launcher: Launcher {
            kind: match args.launcher {
                LauncherArg::Local => LauncherKind::Local,
                LauncherArg::Srun => LauncherKind::Srun,
                LauncherArg::Mpirun => LauncherKind::Mpirun,
            },
            args: args
                .launcher_args
                .as_deref()
                .unwrap_or("")
                .split_whitespace()
                .map(String::from)
                .collect(),
        },
        zip: args.zip,
        copies: args.copies,
    }
}

/// Reopens DIR's sweep: only a folder that is the user's own (or `--trust`), whose plan still
/// makes the points it recorded. Prints the command and hooks about to run.
fn resume(args: &RunArgs, params: &[String], dir: &Path) -> Result<Store, Error> {
    if !args.command.is_empty() || !params.is_empty() {
        return Err(Usage(format!(
            "--resume continues the sweep recorded in {}: give no command or parameters",
            dir.display()
        ))
        .into());
    }
    if !args.trust {
        check_owned(dir)?;
    }
    let mut store = Store::open(dir)?;
    if store.doc.status == Status::Complete {
        return Err(
            Usage(format!("{} is already complete: nothing to resume", dir.display())).into()
        );
    }
    let plan = &store.doc.plan;
    plan.check()?;
    let same = plan.len() == store.doc.points.len()
        && store
            .doc
            .points
            .iter()
            .enumerate()
            .all(|(i, p)| plan.point(i).is_ok_and(|pt| pt.argv == p.command));
    if !same {
        return Err(Usage(format!(
            "the plan in {} no longer matches its points; start a new sweep",
            dir.display()
        ))
        .into());
    }
    crate::fmt::say!(
        "scalescope: resuming {} with the command it recorded: {}{}",
        dir.display(),
        // The template as the user typed it: placeholders unquoted.
        if plan.shell { plan.command.join(" ") } else { template_line(&plan.command) },
        hook_lines(&plan.hooks).replace('\n', "\n  ")
    );
    // Tags given now join those the sweep started with.
    let tags = crate::results::provenance::parse_tags(&args.record.tag).map_err(Usage)?;
    store.doc.provenance.get_or_insert_default().tags.extend(tags);
    Ok(store)
}

/// `scalescope-results/<date>-<time>-<program>`, made unique with a suffix when needed.
pub fn default_folder(command: &[String], shell: bool) -> PathBuf {
    let program = if shell {
        command.first().and_then(|c| c.split_whitespace().next()).unwrap_or("sh").to_string()
    } else {
        command.first().cloned().unwrap_or_default()
    };
    let name: String = Path::new(&program)
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
    (2..)
        .map(|i| PathBuf::from(format!("{}-{i}", base.display())))
        .find(|p| !p.exists())
        .expect("a free name")
}
