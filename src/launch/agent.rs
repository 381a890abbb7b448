//! `scalescope agent`: started by the launcher on every rank (or, with `--copies K`, starting K
//! copies of itself), it runs the command, measures and samples it locally, echoes its output, and
//! writes its part into the run's parts folder. It exits as the command did.

use crate::exec::Printed;
use crate::exec::Scanner;
use crate::exec::ranks;
use crate::exec::signals;
use crate::exec::{Executor, Processes, SpawnError, Spec};
use crate::plan::{MetricSpec, last_line};
use crate::results::RankPart;
use std::path::PathBuf;
use std::sync::Arc;

/// What the agent is asked to do.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where to write the part.
    pub parts: PathBuf,
    /// Start this many local copies (each an agent with its own rank); 0 for one rank.
    pub copies: u32,
    /// Sampling rate, or `None` for no sampling.
    pub sample_rate_hz: Option<f64>,
    /// Sample without the event tracer.
    pub no_trace: bool,
    /// Metric extractors.
    pub metrics: Vec<MetricSpec>,
    /// The command.
    pub command: Vec<String>,
}

/// Why the agent could not run its command or record it.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// A `--metric` regular expression does not compile: the regex crate's last line says why.
    #[error("a --metric regex does not compile: {0}")]
    Metric(String),
    /// The command could not be started.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// The part could not be written.
    #[error("cannot write its part into {path}")]
    Part {
        /// The parts folder.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// `--copies`: scalescope could not start or wait for a copy of itself.
    #[error("cannot {0} a copy of itself")]
    Copy(&'static str, #[source] std::io::Error),
}

impl AgentError {
    /// Whether the user can fix it by asking differently (exit code 2).
    pub fn is_user_mistake(&self) -> bool {
        match self {
            AgentError::Metric(_) => true,
            AgentError::Spawn(e) => e.is_user_mistake(),
            AgentError::Part { .. } | AgentError::Copy(..) => false,
        }
    }
}

/// Runs the agent; returns the exit code to leave with.
pub fn run(o: &Options) -> Result<i32, AgentError> {
    signals::install();
    if o.copies > 0 && std::env::var_os("SCALESCOPE_RANK").is_none() {
        return fan_out(o);
    }
    let rank = super::rank_from_env().unwrap_or(0);
    let scanner = Arc::new(
        Scanner::new(&o.metrics).map_err(|e| AgentError::Metric(last_line(&e.to_string())))?,
    );
    let env = vec![("SCALESCOPE_RANK".to_string(), rank.to_string())];
    let spec = Spec {
        argv: &o.command,
        env: &env,
        timeout: None,
        scanner,
        show_output: true,
        sample: o.sample_rate_hz.map(|rate_hz| crate::sample::Config {
            rate_hz,
            trace: !o.no_trace,
            ..Default::default()
        }),
        kill_leftovers: true,
        again: false,
    };
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .ok();
    let out = Processes::new().run(&spec)?;
    let metrics = crate::exec::metrics_map(&out.stdout.found, &out.stderr.found);
    let part = RankPart {
        rank,
        node: super::node_name(),
        wall_s: out.wall_s,
        started_unix_s: started,
        user_s: out.usage.user_s,
        sys_s: out.usage.sys_s,
        max_rss_bytes: out.usage.max_rss_bytes,
        syscall_read_bytes: out.io.map(|(r, _)| r),
        storage_read_bytes: out.usage.in_blocks * 512,
        exit_code: out.exit_code,
        signal: out.signal,
        metrics,
        threads: out.threads,
        printed: match Printed::of(&out.stdout, &out.stderr) {
            Printed::Text { lines, .. } if out.exit_code != Some(0) => Some(lines),
            _ => None,
        },
    };
    ranks::write(&o.parts, &part)
        .map_err(|source| AgentError::Part { path: o.parts.clone(), source })?;
    Ok(part.agent_exit_code())
}

/// Starts `copies` agents at once, each with its rank in SCALESCOPE_RANK, and waits for all;
/// returns the first non-zero exit code.
fn fan_out(o: &Options) -> Result<i32, AgentError> {
    let exe = std::env::current_exe().map_err(|e| AgentError::Copy("find", e))?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let children = (0..o.copies)
        .map(|i| {
            std::process::Command::new(&exe)
                .args(&args)
                .env("SCALESCOPE_RANK", i.to_string())
                .spawn()
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| AgentError::Copy("start", e))?;
    let mut code = 0;
    for mut c in children {
        let status = c.wait().map_err(|e| AgentError::Copy("wait for", e))?;
        let this = status.code().unwrap_or_else(|| {
            128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0)
        });
        if code == 0 {
            code = this;
        }
    }
    Ok(code)
}
