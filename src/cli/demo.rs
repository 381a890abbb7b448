//! `scalescope demo` (and `scalescope` alone): sweeps the `scalable` probe over 1..nproc threads
//! plus one oversubscribed point, writes a results folder and prints the table.

use super::args::{DemoArgs, RunArgs};
use super::{Exit, run};
use crate::error::Error;

/// Thread counts of the demo: every count up to 8 CPUs, doublings beyond, then 2 × nproc.
pub fn thread_values(nproc: usize) -> String {
    let mut v = if nproc <= 8 { format!("1..{nproc}") } else { format!("1..{nproc}:x2,{nproc}") };
    v.push_str(&format!(",{}", 2 * nproc));
    v
}

/// Runs the demo sweep.
pub fn demo(args: &DemoArgs) -> Result<Exit, Error> {
    let nproc = crate::machine::allowed_cpus();
    let exe = std::env::current_exe()?.to_string_lossy().into_owned();
    let out = args.out.clone().unwrap_or_else(|| {
        run::unique(
            std::path::PathBuf::from("scalescope-results")
                .join(format!("{}-demo", crate::results::time::local_stamp())),
        )
    });
    crate::fmt::say!(
        "scalescope demo: the built-in 'scalable' probe (threads burning CPU, sharing nothing) over 1..{nproc} threads, \
         plus {} threads to oversubscribe the {nproc} CPUs. Your own program: scalescope run --param threads=1,2,4 -- PROGRAM -t {{threads}}",
        2 * nproc
    );
    let run_args = RunArgs {
        runs: Some(3),
        warmup: 1,
        sample_rate: 100.0,
        out: Some(out),
        record: args.record.clone(),
        command: vec![
            exe,
            "probe".into(),
            "scalable".into(),
            "--threads".into(),
            "{threads}".into(),
        ],
        ..RunArgs::default()
    };
    run::run(&run_args, &[format!("threads={}", thread_values(nproc))])
}

#[cfg(test)]
mod tests {
    #[test]
    fn demo_grid_covers_the_cpus_and_one_oversubscribed_point() {
        assert_eq!(super::thread_values(2), "1..2,4");
        assert_eq!(super::thread_values(64), "1..64:x2,64,128");
    }
}
