//! Flags of the history: recording a sweep (`run`, `demo`), `history` and its subcommands, and
//! `check`.

use clap::{Args, Subcommand};
use std::path::PathBuf;

/// How a finished sweep is recorded in the history (`run`, `demo`).
#[derive(Args, Debug, Default, Clone)]
pub struct RecordArgs {
    /// Record the sweep in this history file [default: $SCALESCOPE_HISTORY, else
    /// $XDG_DATA_HOME/scalescope/history.sqlite, i.e. ~/.local/share/scalescope/history.sqlite].
    #[arg(long, value_name = "PATH", conflicts_with = "no_history")]
    pub history: Option<PathBuf>,
    /// Do not record the sweep in the history.
    #[arg(long)]
    pub no_history: bool,
    /// Label the sweep in the history, e.g. `--tag kernel=6.6 --tag branch=main` (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub tag: Vec<String>,
}

/// Which history file to read.
#[derive(Args, Debug, Default, Clone)]
pub struct HistoryFile {
    /// The history file [default: $SCALESCOPE_HISTORY, else ~/.local/share/scalescope/history.sqlite].
    #[arg(long, value_name = "PATH")]
    pub history: Option<PathBuf>,
}

/// Which sweeps to read.
#[derive(Args, Debug, Default, Clone)]
pub struct FilterArgs {
    /// Only sweeps whose command contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub command: Option<String>,
    /// Only sweeps with this tag (repeatable: all must match).
    #[arg(long, value_name = "KEY=VALUE")]
    pub tag: Vec<String>,
    /// Only sweeps whose host name, CPU model or kernel contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub machine: Option<String>,
    /// Only sweeps started on or after this date (UTC), e.g. 2026-11-30.
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only the newest N sweeps.
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
}

/// `scalescope history`.
#[derive(Args, Debug)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  scalescope history\n  scalescope history --command xz --tag kernel=6.6 --since 2026-11-01\n  scalescope history trend efficiency --html trend.html\n  scalescope history import scalescope-results/"
)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub command: Option<HistoryCommand>,
    #[command(flatten)]
    pub file: HistoryFile,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Print the sweeps as JSON lines.
    #[arg(long)]
    pub json: bool,
}

/// The history's subcommands.
#[derive(Subcommand, Debug)]
pub enum HistoryCommand {
    /// Record results folders (or a folder of them) in the history, or a published table with
    /// --csv; importing one again replaces its entry.
    Import(ImportArgs),
    /// One figure over the history of each series of comparable sweeps, with its steps.
    Trend(TrendArgs),
}

/// `scalescope history import`.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  scalescope history import scalescope-results/\n  scalescope history import --tag kernel=6.6 runs/k6.6/\n  scalescope history import --csv kernels.csv --label kernel --count threads --time time_s"
)]
pub struct ImportArgs {
    #[command(flatten)]
    pub file: HistoryFile,
    /// Results folders or results.json files; a folder without results.json is searched for
    /// results folders (with --csv: CSV tables).
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Add this tag to every sweep imported (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub tag: Vec<String>,
    /// The paths are CSV tables: one sweep per value of the --label column.
    #[arg(long)]
    pub csv: bool,
    /// With --csv: the column that tells the sweeps apart (a commit, a kernel, a version).
    #[arg(long, value_name = "COLUMN", requires = "csv")]
    pub label: Option<String>,
    #[command(flatten)]
    pub columns: super::table_columns::TableColumns,
    /// With --csv: the count is a number of workers whatever its name.
    #[arg(long, requires = "csv")]
    pub workers: bool,
}

/// `scalescope history trend`.
#[derive(Args, Debug)]
#[command(
    after_help = "Figures: time (at --at COUNT, default the largest), efficiency (at the largest count), serial-fraction, sigma, kappa, best, finding.\n\nExamples:\n  scalescope history trend\n  scalescope history trend time --at 8 --command xz\n  scalescope history trend serial-fraction --html trend.html"
)]
pub struct TrendArgs {
    #[command(flatten)]
    pub file: HistoryFile,
    /// The figure to follow.
    #[arg(value_name = "FIGURE", default_value = "efficiency")]
    pub figure: String,
    /// With `time`: the count whose time to follow [default: the largest].
    #[arg(long, value_name = "COUNT")]
    pub at: Option<f64>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Also write the charts and tables as one self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Steps smaller than this are not marked, e.g. 5% or 0.05.
    #[arg(long, value_name = "FRACTION", default_value = "5%")]
    pub threshold: String,
}

/// `scalescope check`.
#[derive(Args, Debug)]
#[command(
    after_help = "Exit status: 0 when the newest sweep is in line with the comparable sweeps before it (or has none to compare with), 1 when one of its figures stepped beyond --threshold and the runs say it is no chance, 2 on a mistake (no history, a bad flag).\n\nExamples:\n  scalescope check\n  scalescope check --command ./analysis --threshold 3%\n  scalescope check --all"
)]
pub struct CheckArgs {
    #[command(flatten)]
    pub file: HistoryFile,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Smallest change that counts, e.g. 5% or 0.05 (for the serial fraction: its cost in time at
    /// the largest count).
    #[arg(long, value_name = "FRACTION", default_value = "5%")]
    pub threshold: String,
    /// Judge this sweep (`#12` or `12`) as if it were the newest.
    #[arg(long, value_name = "ID", conflicts_with = "all")]
    pub sweep: Option<String>,
    /// Every step in the history of every series that at least two sweeps confirm (the newest
    /// sweep alone is judged without --all); exits 1 when one of them is a regression.
    #[arg(long)]
    pub all: bool,
    /// Print the verdict as JSON.
    #[arg(long)]
    pub json: bool,
}
