//! The flags that say which columns of a CSV table hold what, shared by the subcommands that read
//! published tables (`analyze`, `compare`, `history import`).

use clap::Args;

/// Which columns of a CSV table hold what (`analyze --csv`, `compare --csv`).
#[derive(Args, Debug, Default, Clone)]
pub struct TableColumns {
    /// The column with the count (threads, files…).
    #[arg(long, value_name = "COLUMN", requires = "csv")]
    pub count: Option<String>,
    /// The column with wall times in seconds.
    #[arg(long, value_name = "COLUMN", requires = "csv")]
    pub time: Option<String>,
    /// The column with throughputs.
    #[arg(long, value_name = "COLUMN", requires = "csv", conflicts_with = "time")]
    pub throughput: Option<String>,
    /// The column with %CPU.
    #[arg(long, value_name = "COLUMN", requires = "csv")]
    pub cpu: Option<String>,
}
