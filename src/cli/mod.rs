//! The command line: argument parsing, the subcommands, and turning every error into one sentence
//! and an exit code (2 for a user mistake, 1 for a failed workload or I/O, 128+N for signal N).

mod analyze;
mod args;
mod attach;
mod check;
mod compare;
mod completions;
mod demo;
mod fraction;
mod history;
mod history_args;
mod man;
mod more_runs;
mod probe;
mod progress;
mod report;
mod run;
mod sbatch;
mod show;
mod table_columns;
mod view;

pub use crate::error::{Error, Usage};
use clap::{CommandFactory, FromArgMatches};
use std::io::Write;

/// How a successful command ended, when not plainly.
#[derive(Debug, PartialEq, Eq)]
pub enum Exit {
    /// Everything asked was done.
    Done,
    /// A run or hook failed and the sweep stopped.
    Failed,
    /// Done, but what the user asked for could not be measured as asked (a `--metric` that no
    /// run printed): the user's mistake, exit code 2.
    Mistake,
    /// Stopped by this signal.
    Signal(i32),
}

/// Runs scalescope with the process arguments and returns the exit code.
pub fn main() -> i32 {
    if let Some(code) = crate::exec::serve_if_spawner() {
        return code;
    }
    let matches = match args::Cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => return clap_error(&e),
    };
    let cli = match args::Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return 2;
        }
    };
    match cli.color {
        args::ColorArg::Auto => {}
        args::ColorArg::Always => anstream::ColorChoice::Always.write_global(),
        args::ColorArg::Never => anstream::ColorChoice::Never.write_global(),
    }
    let result = match cli.command {
        None => demo::demo(&args::DemoArgs::default()),
        Some(args::Command::Demo(a)) => demo::demo(&a),
        Some(args::Command::Run(a)) => {
            let sub = matches.subcommand_matches("run").expect("run matches");
            run::run(a.as_ref(), &args::param_order(sub))
        }
        Some(args::Command::Show(a)) => show::show(&a),
        Some(args::Command::Analyze(a)) => analyze::analyze(&a),
        Some(args::Command::Attach(a)) => attach::attach(&a),
        Some(args::Command::Gen(a)) => probe::gen_data(&a),
        Some(args::Command::Probe(a)) => probe::probe(&a),
        Some(args::Command::Compare(a)) => compare::compare(&a),
        Some(args::Command::History(a)) => history::history(&a),
        Some(args::Command::Check(a)) => check::check(&a),
        Some(args::Command::Report(a)) => report::report(&a),
        Some(args::Command::Agent(a)) => agent(&a),
        Some(args::Command::Sbatch(a)) => sbatch::sbatch(&a),
        Some(args::Command::Completions(a)) => completions::completions(a.shell),
        Some(args::Command::Man) => man::man(),
    };
    match result {
        Ok(Exit::Done) => 0,
        Ok(Exit::Failed) => 1,
        Ok(Exit::Mistake) => 2,
        Ok(Exit::Signal(sig)) => 128 + sig,
        Err(e) => report_error(&e),
    }
}

/// Prints the error as one sentence (none for a closed pipe) and returns its exit code.
fn report_error(e: &Error) -> i32 {
    let code = e.exit_code();
    if code != 0 {
        let _ = writeln!(std::io::stderr().lock(), "scalescope: {}", e.sentence());
    }
    code
}

/// Prints clap's error; a stray word after `run`'s options most likely means a forgotten `--`.
fn clap_error(e: &clap::Error) -> i32 {
    use clap::error::{ContextKind, ErrorKind};
    let in_run = std::env::args().nth(1).as_deref() == Some("run");
    if in_run
        && e.kind() == ErrorKind::UnknownArgument
        && let Some(arg) = e.get(ContextKind::InvalidArg)
        && !arg.to_string().starts_with('-')
    {
        // `--param threads 1,2`: the values were taken for the command.
        let args: Vec<String> = std::env::args().collect();
        let stray = arg.to_string();
        if let Some(i) = args.iter().position(|a| *a == stray)
            && i >= 2
            && args[i - 2] == "--param"
            && !args[i - 1].contains('=')
        {
            crate::fmt::say!(
                "scalescope: --param {name} {stray}: write a parameter and its values as one word, --param {name}={stray}",
                name = args[i - 1]
            );
            return 2;
        }
        crate::fmt::say!(
            "scalescope: unexpected argument '{arg}': put the command to measure after `--`, e.g. scalescope run --param threads=1,2 -- xz -T{{threads}} -k -c FILE"
        );
        return 2;
    }
    if in_run
        && e.kind() == ErrorKind::UnknownArgument
        && let Some(arg) = e.get(ContextKind::InvalidArg)
    {
        // `--thread 1,2` (a trial's first try): an option of the program, or a parameter.
        let flag = arg.to_string();
        let flag = flag.split(['=', ' ']).next().unwrap_or_default();
        // `--threds 1,2`: clap's nearest option (`--trust`) is no help for a count to sweep.
        let name = flag.trim_start_matches('-').to_ascii_lowercase();
        let count = name.starts_with("thr")
            || name.contains("worker")
            || ["j", "jobs", "np", "procs", "cores", "ranks"].contains(&name.as_str());
        let hint = match e.get(ContextKind::SuggestedArg) {
            _ if count => "to sweep a count, write --param threads=1,2 and {threads} in the command after `--`".to_string(),
            Some(s) => format!("did you mean {s}?"),
            None => "to sweep a value, write --param NAME=1,2 and {NAME} in the command after `--`"
                .to_string(),
        };
        crate::fmt::say!(
            "scalescope: run has no option {flag}: {hint} (scalescope run --help lists the options)"
        );
        return 2;
    }
    if matches!(e.kind(), ErrorKind::InvalidValue | ErrorKind::ValueValidation) {
        // `--runs=two`: one sentence, as every other mistake is said.
        let text = e.render().to_string();
        let said: Vec<&str> = text
            .lines()
            .map(str::trim)
            .take_while(|l| !l.starts_with("For more information"))
            .filter(|l| !l.is_empty())
            .collect();
        let sub = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
        crate::fmt::say!(
            "scalescope: {} (scalescope {}--help lists the options)",
            said.join(" ").trim_start_matches("error: "),
            sub.map(|s| format!("{s} ")).unwrap_or_default()
        );
        return 2;
    }
    let _ = e.print();
    if e.use_stderr() { 2 } else { 0 }
}

/// `scalescope agent`: runs on a rank and exits as its command did.
fn agent(a: &args::AgentArgs) -> Result<Exit, Error> {
    let metrics = a
        .metric
        .iter()
        .map(|m| match m.split_once('=') {
            Some((name, regex)) => {
                Ok(crate::plan::MetricSpec { name: name.into(), regex: regex.into() })
            }
            None => Err(Usage(format!("--metric {m}: write NAME=REGEX"))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let o = crate::launch::agent::Options {
        parts: a.parts.clone(),
        copies: a.copies,
        sample_rate_hz: (!a.no_sample).then_some(a.sample_rate),
        no_trace: a.no_trace,
        metrics,
        command: a.command.clone(),
    };
    match crate::launch::agent::run(&o) {
        Ok(0) => Ok(Exit::Done),
        Ok(code) => {
            use std::io::Write;
            let _ = std::io::stdout().flush();
            std::process::exit(code)
        }
        Err(e) => Err(Error::Agent(e)),
    }
}
