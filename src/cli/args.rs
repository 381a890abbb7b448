//! Flags and subcommands. Names follow hyperfine where they mean the same thing.

use super::table_columns::TableColumns;
use clap::{ArgMatches, Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// How does my program scale, and why does it stop?
#[derive(Parser, Debug)]
#[command(name = "scalescope", version, about, long_about = None, after_help = "Without a subcommand, scalescope runs its demo sweep (see `scalescope demo --help`).")]
pub struct Cli {
    /// When to colour the output: auto (on a terminal, unless NO_COLOR is set), always or never.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        default_value_t,
        hide_possible_values = true,
        display_order = 900
    )]
    pub color: ColorArg,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The `--color` choices.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorArg {
    /// Colour when the output is a terminal and NO_COLOR is unset.
    #[default]
    Auto,
    /// Colour, even into a pipe or a file.
    Always,
    /// Never colour.
    Never,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Sweep a command over parameters and measure every run.
    Run(Box<RunArgs>),
    /// Print the table of a results folder or file again.
    Show(ShowArgs),
    /// Fit scaling models to a results folder, or to a published table with --csv.
    Analyze(AnalyzeArgs),
    /// Write the report of a results folder: self-contained HTML, Markdown or SVG charts.
    Report(ReportArgs),
    /// Compare result sets point by point: what changed, whether it is real, and why.
    Compare(CompareArgs),
    /// Sweep the built-in `scalable` probe over 1..nproc threads plus an oversubscribed point.
    Demo(DemoArgs),
    /// List the sweeps the history remembers; import results folders; follow a figure over time.
    History(super::history_args::HistoryArgs),
    /// Judge the newest sweep against the comparable ones before it: exit 1 on a regression.
    Check(super::history_args::CheckArgs),
    /// Run a built-in workload.
    Probe(ProbeArgs),
    /// Sample where the threads of a running process spend their time.
    Attach(AttachArgs),
    /// Make input data for the probes.
    Gen(GenArgs),
    /// Write a SLURM batch script that runs a whole sweep inside one allocation.
    Sbatch(SbatchArgs),
    /// Print the completion script for a shell.
    Completions(CompletionsArgs),
    /// Print the man page (roff), every subcommand included.
    #[command(after_help = "Example:\n  scalescope man > scalescope.1 && man ./scalescope.1")]
    Man,
    /// Run by `run --launcher`/`--copies` on every rank: runs, measures and samples the command
    /// and writes its part for the coordinator.
    Agent(AgentArgs),
}

/// `scalescope sbatch`.
#[derive(Args, Debug)]
#[command(
    after_help = "Example:\n  scalescope sbatch --nodes 4 --ntasks 32 --time 02:00:00 -o sweep.sh -- --launcher srun --param ntasks=4,8,16,32 -- ./analysis input/\n  sbatch sweep.sh"
)]
pub struct SbatchArgs {
    /// Nodes to allocate (`#SBATCH --nodes`).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub nodes: Option<u32>,
    /// Tasks to allocate (`#SBATCH --ntasks`).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub ntasks: Option<u32>,
    /// CPUs per task (`#SBATCH --cpus-per-task`).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub cpus_per_task: Option<u32>,
    /// Time limit (`#SBATCH --time`), e.g. 02:00:00.
    #[arg(long, value_name = "TIME")]
    pub time: Option<String>,
    /// Partition (`#SBATCH --partition`).
    #[arg(long, value_name = "NAME")]
    pub partition: Option<String>,
    /// Any other `#SBATCH` options, e.g. `--account=phys --exclusive`.
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub sbatch_args: Option<String>,
    /// Where to write the script [default: stdout].
    #[arg(short = 'o', long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The `scalescope run` arguments: options, then `--` and the command.
    #[arg(last = true, required = true, value_name = "RUN ARGS")]
    pub run: Vec<String>,
}

/// `scalescope completions`.
#[derive(Args, Debug)]
#[command(after_help = "Install (then open a new shell):
  bash:        scalescope completions bash > ~/.local/share/bash-completion/completions/scalescope
  zsh:         scalescope completions zsh > ~/.zfunc/_scalescope   (with fpath+=~/.zfunc before compinit in ~/.zshrc)
  fish:        scalescope completions fish > ~/.config/fish/completions/scalescope.fish
  elvish:      scalescope completions elvish >> ~/.config/elvish/rc.elv
  powershell:  scalescope completions powershell >> $PROFILE")]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `scalescope agent`.
#[derive(Args, Debug)]
pub struct AgentArgs {
    /// Folder to write this rank's part into.
    #[arg(long, value_name = "DIR", required = true)]
    pub parts: PathBuf,
    /// Start K copies of the command at once, each an agent with its own rank.
    #[arg(long, value_name = "K", default_value_t = 0, allow_negative_numbers = true)]
    pub copies: u32,
    /// Samples per second of the thread-state sampler.
    #[arg(long, value_name = "HZ", default_value_t = 100.0, allow_negative_numbers = true)]
    pub sample_rate: f64,
    /// Do not sample thread states.
    #[arg(long)]
    pub no_sample: bool,
    /// Sample without the event tracer (/proc only).
    #[arg(long)]
    pub no_trace: bool,
    /// A metric extractor, as for `run`.
    #[arg(long, value_name = "NAME=REGEX")]
    pub metric: Vec<String>,
    /// The command.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Formats of `scalescope report`.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReportFormat {
    /// One self-contained HTML file (inline SVG charts, no network; a small inline script adds zoom and search to the flame graphs).
    #[default]
    Html,
    /// GitHub-flavoured Markdown, ready to paste into an issue or a forum post.
    Md,
    /// One SVG file per chart, for papers and slides.
    Svg,
}

/// `scalescope report`.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  scalescope report scalescope-results/20261130-101500-xz\n  scalescope report results/ --format md > post.md\n  scalescope report results/ --format svg -o charts/"
)]
pub struct ReportArgs {
    /// A results folder or results.json.
    #[arg(value_name = "RESULTS")]
    pub results: PathBuf,
    /// What to write.
    #[arg(long, value_enum, default_value_t)]
    pub format: ReportFormat,
    /// Where: a file for html [default: report.html in the results folder] and md [default:
    /// stdout], a folder for svg [default: charts/ in the results folder].
    #[arg(short = 'o', long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// The run whose thread states the timeline shows: a point's label and a run number, e.g.
    /// `threads=8:2` [default: the first sampled run of the last point].
    #[arg(long, value_name = "POINT:RUN")]
    pub timeline: Option<String>,
    /// Also write the stored call stacks in the folded format (`frame;frame;frame count`, counts
    /// in microseconds of thread time) that inferno, speedscope and flamegraph.pl read.
    #[arg(long, value_name = "FILE")]
    pub export_folded: Option<PathBuf>,
    #[command(flatten)]
    pub view: ViewArgs,
}

/// `scalescope compare`.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  scalescope compare before/ after/\n  scalescope compare k6.1/ k6.6/ k6.12/ --label 6.1 --label 6.6 --label 6.12 --noise 3%\n  scalescope compare --csv before.csv after.csv --count threads --throughput throughput_mb_s"
)]
pub struct CompareArgs {
    /// Results folders or files (with --csv: CSV tables); the first is the reference unless
    /// --reference says otherwise. With --history, one results folder.
    #[arg(value_name = "RESULTS", num_args = 1.., required = true)]
    pub results: Vec<PathBuf>,
    /// Compare the one sweep given with the last comparable sweeps in the history (the same
    /// command, parameters and kind of machine); `--history=PATH` names the history file.
    #[arg(long, value_name = "PATH", num_args = 0..=1, require_equals = true, default_missing_value = "", conflicts_with = "csv")]
    pub history: Option<String>,
    /// With --history: how many of the last comparable sweeps.
    #[arg(long, value_name = "N", default_value_t = 3, requires = "history")]
    pub last: usize,
    /// The sets are CSV tables with a header row and a row per point or per run (published,
    /// hand-made).
    #[arg(long)]
    pub csv: bool,
    #[command(flatten)]
    pub columns: TableColumns,
    /// A name for each result set, in order [default: the folder names].
    #[arg(long = "label", value_name = "NAME")]
    pub labels: Vec<String>,
    /// Changes below this are "no change", e.g. `2%` or `0.02`.
    #[arg(long, value_name = "FRACTION", default_value = "2%", allow_negative_numbers = true)]
    pub noise: String,
    /// The set the others are compared with: its label or its position (1 = first).
    #[arg(long, value_name = "SET")]
    pub reference: Option<String>,
    /// Write the comparison as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Write the comparison as GitHub-flavoured Markdown to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Write the comparison as one self-contained HTML file with the charts overlaid.
    #[arg(long, value_name = "FILE")]
    pub export_html: Option<PathBuf>,
}

/// Options that choose how the table is computed and exported (run and show).
#[derive(Args, Debug, Default, Clone)]
pub struct ViewArgs {
    /// Baseline point for speed-up: a value of the counted parameter, e.g. `16` or `threads=16`
    /// [default: the smallest count].
    #[arg(long, value_name = "VALUE")]
    pub baseline: Option<String>,
    /// The counted parameter that speed-up and efficiency refer to [default: the first numeric one].
    #[arg(long, value_name = "NAME")]
    pub scale: Option<String>,
    /// Counts at which to predict throughput with each fitted model, e.g. `128,256`.
    #[arg(long, value_name = "COUNTS", value_delimiter = ',', allow_negative_numbers = true, value_parser = count_to_predict)]
    pub predict: Vec<f64>,
    /// The CPUs of the machine the predictions are for (the production node's): a count above N
    /// shares them, so it is predicted no faster than N; for a table, also the CPUs it was
    /// measured on, so its counts above N are left out of the fits [default: no limit].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub cpus: Option<u32>,
    /// The memory the job may use, e.g. `64GB` or `2GiB`, to judge the tree's PSS against (say
    /// the production node's when predicting for it) [default: the job's cgroup limit, else the
    /// memory available as the sweep started].
    #[arg(long, value_name = "SIZE", value_parser = memory_size, allow_hyphen_values = true)]
    pub memory_limit: Option<u64>,
    /// The work grows with the count (weak scaling): Gustafson instead of Amdahl and USL
    /// [default: when --work uses the counted parameter].
    #[arg(long)]
    pub weak: bool,
    /// Treat the counted parameter as a number of parallel workers whatever its name.
    #[arg(long)]
    pub workers: bool,
    /// Write the whole results document as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Write one CSV row per point to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Print every row of a long table (by default the terminal shows its first and last rows).
    #[arg(long)]
    pub all: bool,
    /// Write the table as GitHub-flavoured Markdown to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
}

/// The `--launcher` choices.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LauncherArg {
    /// scalescope starts the command itself.
    #[default]
    Local,
    /// SLURM's srun.
    Srun,
    /// MPI's mpirun.
    Mpirun,
}

/// The order of runs across points.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum OrderArg {
    /// All runs of a point, then the next point (hyperfine's order).
    Sequential,
    /// Run 1 of every point, then run 2 of every point… (drift hits all points alike).
    Interleaved,
    /// Interleaved rounds, each in a random order.
    Random,
}

/// `scalescope run`.
#[derive(Args, Debug, Default)]
#[command(
    after_help = "Examples:\n  scalescope run --param threads=1..nproc:x2 -- xz -T{threads} -k -c -6 data.tar\n  scalescope run -L threads 1,2,4,8 --work 1.7GB --evict data/ -- ./reader --threads {threads} data/\n  scalescope run --resume scalescope-results/20261130-101500-xz"
)]
pub struct RunArgs {
    /// A parameter and its values: `threads=1,2,4`, `threads=1..8`, `threads=1..64:x2`, `threads=nproc`.
    /// Repeat for a grid (first given = outermost).
    #[arg(long = "param", value_name = "NAME=VALUES")]
    pub params: Vec<String>,
    /// hyperfine's form of --param: a name and a comma-separated list.
    #[arg(short = 'L', long = "parameter-list", num_args = 2, value_names = ["NAME", "VALUES"])]
    pub lists: Vec<String>,
    /// Exactly N measured runs per point [default: at least 3, more while runs are short, then
    /// more where the verdict is undecided, within --budget].
    #[arg(short = 'r', long, value_name = "N", allow_negative_numbers = true)]
    pub runs: Option<u32>,
    /// Fewest measured runs per point under automatic runs.
    #[arg(short = 'm', long, value_name = "N", allow_negative_numbers = true)]
    pub min_runs: Option<u32>,
    /// Most measured runs per point under automatic runs [default: 100].
    #[arg(short = 'M', long, value_name = "N", allow_negative_numbers = true)]
    pub max_runs: Option<u32>,
    /// Time that runs added to decide an undecided verdict may take: a multiple of the first
    /// pass's (1x, 3x), a duration (90s, 10m), or 0 for none [default: 1x].
    #[arg(long, value_name = "TIME")]
    pub budget: Option<String>,
    /// Unrecorded warm-up runs before each point's first measured run.
    #[arg(short = 'w', long, value_name = "N", default_value_t = 1, allow_negative_numbers = true)]
    pub warmup: u32,
    /// Order of runs across points [default: interleaved when there are several points].
    #[arg(long, value_enum)]
    pub order: Option<OrderArg>,
    /// Seed of `--order random` [default: from the clock, recorded in results.json].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// Shell command run before the first run of each point (e.g. to build with `{threads}`).
    #[arg(short = 's', long, value_name = "CMD")]
    pub setup: Option<String>,
    /// Shell command run before every run.
    #[arg(short = 'p', long, value_name = "CMD")]
    pub prepare: Option<String>,
    /// Shell command run after every run.
    #[arg(short = 'C', long, value_name = "CMD")]
    pub conclude: Option<String>,
    /// Shell command run after the last run of each point.
    #[arg(short = 'c', long, value_name = "CMD")]
    pub cleanup: Option<String>,
    /// Drop these files (directories: recursively) from the page cache before every run, and
    /// record how much stayed cached.
    #[arg(long, value_name = "PATH", num_args = 1.., action = clap::ArgAction::Append)]
    pub evict: Vec<String>,
    /// How runs are started: directly, or on every rank through SLURM's srun or mpirun
    /// (parameters nodes, ntasks or ranks, and cpus map to the launcher's flags).
    #[arg(long, value_enum, default_value_t)]
    pub launcher: LauncherArg,
    /// Extra arguments for the launcher, e.g. `--partition=debug --cpu-bind=cores`.
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub launcher_args: Option<String>,
    /// Pair the parameters' values position by position instead of every combination, e.g.
    /// `--param ranks=1,2,4 --param threads=8,4,2 --zip`; adds `workers` = their product.
    #[arg(long)]
    pub zip: bool,
    /// Also run K identical copies at once (adds the parameter copies=1,K): do copies slow each
    /// other down?
    #[arg(long, value_name = "K", allow_negative_numbers = true)]
    pub copies: Option<u32>,
    /// After the sweep, measure what these input files can deliver: scalescope's `readspeed`
    /// probe reads them at the sweep's thread counts (cold with --evict), and the report judges
    /// the job's read rate against it.
    #[arg(long, value_name = "PATH", num_args = 1.., action = clap::ArgAction::Append)]
    pub ceiling: Vec<PathBuf>,
    /// Set an environment variable for the command, e.g. `OMP_NUM_THREADS={threads}`.
    #[arg(long, value_name = "NAME=VALUE")]
    pub env: Vec<String>,
    /// Read a figure from the output: the first capture group of REGEX, e.g.
    /// `tp=Throughput: ([0-9.]+)`. A metric named `throughput` fills the throughput column.
    #[arg(long, value_name = "NAME=REGEX")]
    pub metric: Vec<String>,
    /// Work per run, for throughput = work / wall time: `1.7GB*{files}`, `events=10000403`; with
    /// `--copies`, the work of one copy (unless it uses `{copies}`).
    #[arg(long, value_name = "AMOUNT")]
    pub work: Option<String>,
    /// Stop a run after this long (`30s`, `5m`): SIGTERM to its process group, SIGKILL 2 s later.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Keep sweeping when a run fails (failed runs are kept and left out of the statistics).
    #[arg(short = 'i', long)]
    pub ignore_failure: bool,
    /// Thread-state samples per second (lowered automatically when there are many threads).
    #[arg(long, value_name = "HZ", default_value_t = 100.0, allow_negative_numbers = true)]
    pub sample_rate: f64,
    /// Do not sample where thread time goes, nor the tree's memory (PSS, the time series, prmon
    /// export): only what `wait4` gives (times, max RSS of the largest process) is kept.
    #[arg(long)]
    pub no_sample: bool,
    /// No event tracer (exact switch intervals, call stacks of waits and of on-CPU code): /proc
    /// sampling only, which costs the job less.
    #[arg(long)]
    pub no_trace: bool,
    /// Trace every run. By default a point whose traced run kept its CPUs 95% busy has its later
    /// runs watched lean (no tracer, /proc at 20 Hz): nothing is left to explain there, and
    /// watching busy CPUs takes the job's time.
    #[arg(long, conflicts_with = "no_trace")]
    pub trace_every_run: bool,
    /// Run the command through `sh -c` (parameter values are quoted).
    #[arg(long)]
    pub shell: bool,
    /// Pass the command's output through (it is captured into the results folder either way).
    #[arg(long)]
    pub show_output: bool,
    /// Results folder [default: scalescope-results/<date>-<time>-<command>].
    #[arg(short = 'o', long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Continue the interrupted or failed sweep in DIR without repeating finished runs.
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    pub resume: Option<PathBuf>,
    /// With --resume: run the command and hooks stored in a folder that another user owns or
    /// others may write to.
    #[arg(long, requires = "resume")]
    pub trust: bool,
    /// Print the grid, the run order and the first and last command lines; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub view: ViewArgs,
    #[command(flatten)]
    pub record: super::history_args::RecordArgs,
    /// The command to measure, after `--`, with `{NAME}` placeholders.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `scalescope show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// A results folder or a results.json file.
    #[arg(value_name = "RESULTS")]
    pub results: PathBuf,
    #[command(flatten)]
    pub view: ViewArgs,
    /// Write each run's time series into DIR as prmon writes them: a tab-separated table
    /// (`POINT-runN.txt`) and a JSON summary (`POINT-runN.json`).
    #[arg(long, value_name = "DIR")]
    pub export_prmon: Option<PathBuf>,
}

/// `scalescope analyze`.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  scalescope analyze scalescope-results/20261130-101500-xz --predict 128\n  scalescope analyze --csv table.csv --count threads --throughput throughput_mb_s --cpu cpu_pct"
)]
pub struct AnalyzeArgs {
    /// A results folder or results.json (not with --csv).
    #[arg(value_name = "RESULTS", required_unless_present = "csv", conflicts_with = "csv")]
    pub results: Option<PathBuf>,
    /// A CSV table with a header row and a row per point or per run (rows of one count are
    /// runs of that point).
    #[arg(long, value_name = "TABLE")]
    pub csv: Option<PathBuf>,
    #[command(flatten)]
    pub columns: TableColumns,
    #[command(flatten)]
    pub view: ViewArgs,
}

/// `scalescope gen`.
#[derive(Args, Debug)]
pub struct GenArgs {
    #[command(subcommand)]
    pub what: GenCommand,
}

/// What `gen` makes.
#[derive(Subcommand, Debug)]
pub enum GenCommand {
    /// Text with a Zipf-like word distribution (about 50,000 distinct words), for `probe wordcount`.
    Text {
        /// File to write.
        #[arg(short = 'o', long, value_name = "FILE")]
        out: PathBuf,
        /// Size, e.g. 100MB.
        #[arg(long, default_value = "100MB")]
        size: String,
        /// Seed of the text.
        #[arg(long, default_value_t = 42)]
        seed: u64,
    },
    /// Event files (1 MiB blocks of events with pseudo-random payloads), deterministic for a seed.
    Files {
        /// Folder to write them into.
        #[arg(long, value_name = "DIR")]
        dir: PathBuf,
        /// How many files.
        #[arg(long, default_value_t = 4)]
        count: usize,
        /// Size of each, e.g. 64MB, 1GiB.
        #[arg(long, default_value = "64MB")]
        size: String,
        /// Seed of the bytes.
        #[arg(long, default_value_t = 42)]
        seed: u64,
    },
}

/// `scalescope attach`.
#[derive(Args, Debug)]
#[command(
    after_help = "Example:\n  scalescope attach $(pgrep -n myanalysis) --duration 30s --export-json threads.json"
)]
pub struct AttachArgs {
    /// The process to watch (its threads and child processes).
    #[arg(value_name = "PID")]
    pub pid: i32,
    /// How long to sample (`10s`, `2m`); stops early when the process exits.
    #[arg(short = 'd', long, value_name = "DURATION", default_value = "10s")]
    pub duration: String,
    /// Samples per second (lowered automatically when there are many threads).
    #[arg(long, value_name = "HZ", default_value_t = 100.0, allow_negative_numbers = true)]
    pub sample_rate: f64,
    /// Write the sampler's report as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// No event tracer (exact switch intervals, on-CPU stacks): /proc sampling only.
    #[arg(long)]
    pub no_trace: bool,
}

/// `scalescope demo`.
#[derive(Args, Debug, Default)]
pub struct DemoArgs {
    /// Results folder [default: scalescope-results/<date>-<time>-demo].
    #[arg(short = 'o', long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub record: super::history_args::RecordArgs,
}

/// `scalescope probe`.
#[derive(Args, Debug)]
pub struct ProbeArgs {
    #[command(subcommand)]
    pub probe: ProbeCommand,
}

/// The built-in workloads.
#[derive(Subcommand, Debug)]
pub enum ProbeCommand {
    /// Threads burning CPU on private data: scales with the cores.
    Scalable {
        /// Worker threads.
        #[arg(short = 't', long, default_value_t = 1)]
        threads: usize,
        /// Work for this long (every thread) instead of a fixed amount of work.
        #[arg(long, value_name = "DURATION")]
        seconds: Option<String>,
        /// Total operations, split evenly over the threads.
        #[arg(long, value_name = "N", default_value_t = crate::probes::scalable::DEFAULT_OPS, allow_negative_numbers = true)]
        ops: u64,
    },
    /// Threads that spend a share of every operation inside one global mutex.
    Lock {
        #[command(flatten)]
        common: ZooArgs,
        /// Share of each operation done holding the lock (0 removes the problem).
        #[arg(long, value_name = "FRACTION", default_value_t = 0.3, allow_negative_numbers = true)]
        critical: f64,
    },
    /// Threads that each set up holding one global mutex, one after the other, then split the work
    /// evenly: the late starters finish late.
    Setup {
        #[command(flatten)]
        common: ZooArgs,
        /// Share of each thread's work done once, at its start, holding the lock.
        #[arg(long, value_name = "FRACTION", default_value_t = 0.2, allow_negative_numbers = true)]
        setup: f64,
        /// Set up without the lock (removes the problem).
        #[arg(long)]
        unlocked: bool,
    },
    /// Threads that yield the CPU while holding one of a few mutexes (the pattern of sysbench's
    /// `threads` test): fine on spare CPUs, a collapse when there are more threads than CPUs.
    Yield {
        #[command(flatten)]
        common: ZooArgs,
    },
    /// A single-threaded phase, then parallel work.
    Serial {
        #[command(flatten)]
        common: ZooArgs,
        /// Share of the work done by one thread first (0 removes the problem).
        #[arg(long, value_name = "FRACTION", default_value_t = 0.2, allow_negative_numbers = true)]
        serial: f64,
    },
    /// One thread gets three times the share of the others.
    Imbalance {
        #[command(flatten)]
        common: ZooArgs,
        /// Hand out work in small chunks instead (removes the problem).
        #[arg(long)]
        balanced: bool,
    },
    /// Producers feed consumers (the threads) through a queue; one producer starves them.
    Starved {
        #[command(flatten)]
        common: ZooArgs,
        /// Producer threads (as many as consumers removes the problem).
        #[arg(long, value_name = "N", default_value_t = 1, allow_negative_numbers = true)]
        producers: usize,
    },
    /// Per-thread counters in one cache line.
    FalseSharing {
        #[command(flatten)]
        common: ZooArgs,
        /// Give each counter its own cache line (removes the problem).
        #[arg(long)]
        padded: bool,
    },
    /// Threads mapping, protecting and unmapping memory: the mmap lock storm.
    MmapChurn {
        #[command(flatten)]
        common: ZooArgs,
        /// Each worker a process of its own, with its own memory map and its lock (removes the
        /// problem: the same system calls, no shared lock).
        #[arg(long)]
        processes: bool,
    },
    /// Threads reading random 4 KiB blocks of files dropped from the page cache first.
    Io {
        /// Worker threads.
        #[arg(short = 't', long, default_value_t = 1)]
        threads: usize,
        /// Input files or folders (make them with `scalescope gen files`).
        #[arg(long, value_name = "PATH", num_args = 1.., required = true)]
        files: Vec<PathBuf>,
        /// Block reads in all.
        #[arg(long, value_name = "N", default_value_t = 40_000, allow_negative_numbers = true)]
        reads: u64,
        /// Leave the files in the page cache (removes the problem).
        #[arg(long)]
        warm: bool,
    },
    /// Threads reading files as fast as the I/O layer allows: the ceiling for an I/O-bound job.
    #[command(
        after_help = "Example:\n  scalescope gen files --dir data --count 8 --size 256MB\n  scalescope run --param threads=1..nproc -- scalescope probe readspeed --threads {threads} --files data"
    )]
    Readspeed {
        /// Reader threads.
        #[arg(short = 't', long, default_value_t = 1)]
        threads: usize,
        /// Input files or folders.
        #[arg(long, value_name = "PATH", num_args = 1.., required = true)]
        files: Vec<PathBuf>,
        /// How to read.
        #[arg(long, value_enum, default_value_t)]
        mode: ReadModeArg,
        /// Bytes per read call (a multiple of 4 KiB).
        #[arg(long, value_name = "SIZE", default_value = "1MiB")]
        block: String,
        /// Bytes handed to a thread at a time (a multiple of the block).
        #[arg(long, value_name = "SIZE", default_value = "8MiB")]
        chunk: String,
        /// CPU work per KiB read, in nanoseconds (turns the probe into an event loop).
        #[arg(long, value_name = "NS", default_value_t = 0.0)]
        compute: f64,
        /// Checksum every byte read (and print the checksum).
        #[arg(long)]
        checksum: bool,
        /// Drop the files from the page cache first (a cold read).
        #[arg(long)]
        evict: bool,
    },
    /// Map-reduce word count (words = runs of ASCII letters, case-folded).
    #[command(
        after_help = "Example:\n  scalescope gen text -o text.txt --size 100MB\n  scalescope run --param threads=1..nproc -- scalescope probe wordcount --threads {threads} --files text.txt"
    )]
    Wordcount {
        /// Worker threads.
        #[arg(short = 't', long, default_value_t = 1)]
        threads: usize,
        /// Input text files or folders.
        #[arg(long, value_name = "PATH", num_args = 1.., required = true)]
        files: Vec<PathBuf>,
        /// Bytes handed to a thread at a time.
        #[arg(long, value_name = "SIZE", default_value = "1MiB")]
        chunk: String,
        /// How many of the most frequent words to print.
        #[arg(long, value_name = "K", default_value_t = 10, allow_negative_numbers = true)]
        top: usize,
    },
    /// Actors on worker threads exchanging messages one at a time: message-passing latency.
    Pingpong {
        /// Worker threads.
        #[arg(short = 't', long, default_value_t = 1)]
        threads: usize,
        /// Actors per worker.
        #[arg(long, value_name = "N", default_value_t = 100, allow_negative_numbers = true)]
        actors: usize,
        /// Messages each actor sends (each waits for its reply).
        #[arg(long, value_name = "N", default_value_t = 20_000, allow_negative_numbers = true)]
        messages: u64,
    },
    /// Reading event files and building events, with or without overlapping the two.
    #[command(
        after_help = "Example:\n  scalescope gen files --dir events --count 4 --size 256MB\n  scalescope run --param threads=1,2 -L overlap on,off --evict events -- scalescope probe overlap --threads {threads} --overlap {overlap} --files events"
    )]
    Overlap {
        /// Builder threads (with --overlap on, each has a reader thread too).
        #[arg(short = 't', long, default_value_t = 1)]
        threads: usize,
        /// Event files or folders (make them with `scalescope gen files`).
        #[arg(long, value_name = "PATH", num_args = 1.., required = true)]
        files: Vec<PathBuf>,
        /// Read the next chunk while building the current one.
        #[arg(long, value_enum, default_value_t)]
        overlap: Switch,
        /// Bytes per chunk (a multiple of the 1 MiB event block).
        #[arg(long, value_name = "SIZE", default_value = "4MiB")]
        chunk: String,
        /// CPU cost of building one event, in nanoseconds.
        #[arg(long, value_name = "NS", default_value_t = 2000.0)]
        cost: f64,
    },
    /// Threads streaming over arrays much larger than the caches.
    Membw {
        /// Worker threads.
        #[arg(short = 't', long, default_value_t = 1)]
        threads: usize,
        /// Array size per thread, in MiB.
        #[arg(long, value_name = "MIB", default_value_t = 256)]
        mib: usize,
        /// Passes over each array.
        #[arg(long, value_name = "N", default_value_t = 16, allow_negative_numbers = true)]
        passes: u32,
    },
}

/// How `probe readspeed` reads.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadModeArg {
    /// `pread` into a buffer, through the page cache.
    #[default]
    Pread,
    /// Map the files; touch every page (every byte with --checksum).
    Mmap,
    /// `pread` with O_DIRECT, bypassing the page cache.
    Direct,
}

/// On or off.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Switch {
    /// Enabled.
    #[default]
    On,
    /// Disabled.
    Off,
}

/// Options every zoo probe takes.
#[derive(Args, Debug, Clone, Copy)]
pub struct ZooArgs {
    /// Worker threads.
    #[arg(short = 't', long, default_value_t = 1)]
    pub threads: usize,
    /// Total operations, split over the threads.
    #[arg(long, value_name = "N", default_value_t = 1_000_000, allow_negative_numbers = true)]
    pub ops: u64,
}

/// A count `--predict` can predict at: a finite number above 0.
fn count_to_predict(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(n) if n.is_finite() && n > 0.0 => Ok(n),
        _ => Err("a count to predict at is a number above 0, such as 64 or 128".into()),
    }
}

/// A size of memory: a number of bytes with a decimal or binary prefix (`64GB`, `512MiB`).
fn memory_size(text: &str) -> Result<u64, String> {
    match crate::plan::parse_quantity(text) {
        Some((v, "B")) if (1.0..1e20).contains(&v) => Ok(v as u64),
        // A bare number is surely not meant as bytes: 300 would fit no worker.
        Some((_, "")) => {
            Err(format!("a memory size needs its unit: {text}MB, {text}GB or {text}GiB?"))
        }
        _ => match cased(text) {
            Some(fixed) => {
                Err(format!("write the unit as in {fixed} (MB, GB, MiB, GiB: m is milli)"))
            }
            None => {
                Err("a memory size is a number of bytes above 0, such as 64GB or 512MiB".into())
            }
        },
    }
}

/// `100mb` as `100MB`, `2gib` as `2GiB`, when that reads as a size.
fn cased(text: &str) -> Option<String> {
    let t = text.trim();
    let unit_at = t.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = t.split_at(unit_at);
    let fixed = match unit.to_ascii_lowercase().as_str() {
        u @ ("kb" | "mb" | "gb" | "tb") => u.to_ascii_uppercase().replace("KB", "kB"),
        u @ ("kib" | "mib" | "gib" | "tib") => format!("{}iB", u[..1].to_ascii_uppercase()),
        _ => return None,
    };
    let fixed = format!("{number}{fixed}");
    (fixed != t && memory_size(&fixed).is_ok()).then_some(fixed)
}

/// The `--param` and `-L` arguments of `run`, merged in the order they were given on the command line.
pub fn param_order(m: &ArgMatches) -> Vec<String> {
    let mut items: Vec<(usize, String)> = Vec::new();
    if let (Some(idx), Some(vals)) = (m.indices_of("params"), m.get_many::<String>("params")) {
        items.extend(idx.zip(vals.cloned()));
    }
    if let (Some(idx), Some(vals)) = (m.indices_of("lists"), m.get_many::<String>("lists")) {
        let pairs: Vec<(usize, String)> = idx.zip(vals.cloned()).collect();
        for pair in pairs.chunks(2) {
            if let [(i, name), (_, values)] = pair {
                items.push((*i, format!("{name}={values}")));
            }
        }
    }
    items.sort_by_key(|(i, _)| *i);
    items.into_iter().map(|(_, s)| s).collect()
}
