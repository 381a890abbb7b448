//! `scalescope probe NAME`: runs a built-in workload.

use super::args::{ProbeArgs, ProbeCommand, ReadModeArg, Switch, ZooArgs};
use super::{Exit, Usage};
use crate::error::Error;
use crate::plan::parse_seconds;
use crate::probes::{overlap, pingpong, print_result, readspeed, scalable, wordcount, zoo};

/// Runs the chosen probe and prints its result lines.
pub fn probe(args: &ProbeArgs) -> Result<Exit, Error> {
    match &args.probe {
        ProbeCommand::Scalable { threads, seconds, ops } => {
            if *threads == 0 {
                return Err(Usage("--threads must be at least 1".into()).into());
            }
            let amount = match seconds {
                Some(s) => scalable::Amount::Seconds(parse_seconds(s)?),
                None if *ops == 0 => return Err(Usage("--ops must be at least 1".into()).into()),
                None => scalable::Amount::Ops(*ops),
            };
            let o = scalable::run(*threads, amount);
            print_result("scalable", *threads, o.seconds, o.ops as f64, "ops")?;
        }
        ProbeCommand::Lock { common, critical } => {
            let c = check(common, Some(*critical))?;
            report("lock", c, zoo::lock(c.threads, c.ops, *critical))?;
        }
        ProbeCommand::Setup { common, setup, unlocked } => {
            let c = check(common, Some(*setup))?;
            report("setup", c, zoo::setup(c.threads, c.ops, *setup, !*unlocked))?;
        }
        ProbeCommand::Yield { common } => {
            let c = check(common, None)?;
            report("yield", c, zoo::yield_inside(c.threads, c.ops))?;
        }
        ProbeCommand::Serial { common, serial } => {
            let c = check(common, Some(*serial))?;
            report("serial", c, zoo::serial(c.threads, c.ops, *serial))?;
        }
        ProbeCommand::Imbalance { common, balanced } => {
            let c = check(common, None)?;
            report("imbalance", c, zoo::imbalance(c.threads, c.ops, *balanced))?;
        }
        ProbeCommand::Starved { common, producers } => {
            let c = check(common, None)?;
            if *producers == 0 {
                return Err(Usage("--producers must be at least 1".into()).into());
            }
            report("starved", c, zoo::starved(c.threads, c.ops, *producers))?;
        }
        ProbeCommand::FalseSharing { common, padded } => {
            let c = check(common, None)?;
            report("false-sharing", c, zoo::false_sharing(c.threads, c.ops, *padded))?;
        }
        ProbeCommand::MmapChurn { common, processes } => {
            let c = check(common, None)?;
            let done = if *processes {
                zoo::mmap_churn_processes(c.threads, c.ops)
                    .map_err(|e| Usage(format!("probe mmap-churn: {e}")))?
            } else {
                zoo::mmap_churn(c.threads, c.ops)
            };
            report("mmap-churn", c, done)?;
        }
        ProbeCommand::Io { threads, files, reads, warm } => {
            check_threads(*threads)?;
            if *reads == 0 {
                return Err(Usage("--reads must be at least 1".into()).into());
            }
            let (bytes, seconds) = zoo::io(*threads, files, *reads, *warm)
                .map_err(|e| Usage(format!("probe io: {e}")))?;
            print_result("io", *threads, seconds, bytes as f64, "B")?;
        }
        ProbeCommand::Readspeed {
            threads,
            files,
            mode,
            block,
            chunk,
            compute,
            checksum,
            evict,
        } => {
            check_threads(*threads)?;
            let files = input_files(files)?;
            if *evict {
                crate::pagecache::evict(&files).map_err(|e| Usage(format!("--evict: {e}")))?;
            }
            let o = readspeed::Options {
                threads: *threads,
                mode: match mode {
                    ReadModeArg::Pread => readspeed::Mode::Pread,
                    ReadModeArg::Mmap => readspeed::Mode::Mmap,
                    ReadModeArg::Direct => readspeed::Mode::Direct,
                },
                block: size_arg("--block", block)? as usize,
                chunk: size_arg("--chunk", chunk)?,
                compute_ns_per_kib: non_negative("--compute", *compute)?,
                checksum: *checksum,
            };
            let out = readspeed::run(&files, &o)?;
            readspeed::print(&o, &out)?;
        }
        ProbeCommand::Wordcount { threads, files, chunk, top } => {
            check_threads(*threads)?;
            let files = input_files(files)?;
            let o = wordcount::Options {
                threads: *threads,
                chunk: size_arg("--chunk", chunk)? as usize,
                top: *top,
            };
            let out =
                wordcount::run(&files, &o).map_err(|e| Usage(format!("probe wordcount: {e}")))?;
            wordcount::print(&o, &out)?;
        }
        ProbeCommand::Pingpong { threads, actors, messages } => {
            check_threads(*threads)?;
            if *actors == 0 || threads * actors >= 1 << 31 {
                return Err(Usage(
                    "--actors must be at least 1 (and workers × actors below 2^31)".into(),
                )
                .into());
            }
            let o = pingpong::Options { workers: *threads, actors: *actors, messages: *messages };
            pingpong::print(&o, &pingpong::run(&o))?;
        }
        ProbeCommand::Overlap { threads, files, overlap, chunk, cost } => {
            check_threads(*threads)?;
            let files = input_files(files)?;
            let o = overlap::Options {
                threads: *threads,
                chunk: size_arg("--chunk", chunk)? as usize,
                cost_ns: non_negative("--cost", *cost)?,
                overlap: *overlap == Switch::On,
            };
            let out = overlap::run(&files, &o)?;
            overlap::print(&o, &out)?;
        }
        ProbeCommand::Membw { threads, mib, passes } => {
            check_threads(*threads)?;
            if *mib == 0 || *passes == 0 {
                return Err(Usage("--mib and --passes must be at least 1".into()).into());
            }
            let (bytes, seconds) = zoo::membw(*threads, mib << 20, *passes);
            print_result("membw", *threads, seconds, bytes as f64, "B")?;
        }
    }
    Ok(Exit::Done)
}

/// `scalescope gen`: writes probe inputs.
pub fn gen_data(args: &super::args::GenArgs) -> Result<Exit, Error> {
    match &args.what {
        super::args::GenCommand::Text { out, size, seed } => {
            let bytes = size_arg("--size", size)?;
            let file = std::fs::File::create(out)
                .map_err(|e| Usage(format!("cannot write {}: {e}", out.display())))?;
            let written =
                crate::probes::textgen::write(&mut std::io::BufWriter::new(file), bytes, *seed)
                    .map_err(|e| Usage(format!("cannot write {}: {e}", out.display())))?;
            println!("wrote {written} bytes of text into {}", out.display());
        }
        super::args::GenCommand::Files { dir, count, size, seed } => {
            let bytes = size_arg("--size", size)?;
            if *count == 0 {
                return Err(Usage("--count must be at least 1".into()).into());
            }
            let paths = crate::probes::inputs::files(dir, *count, bytes, *seed)
                .map_err(|e| Usage(format!("cannot write files into {}: {e}", dir.display())))?;
            println!("wrote {} files of {bytes} bytes into {}", paths.len(), dir.display());
        }
    }
    Ok(Exit::Done)
}

/// Reads a size flag such as `256KiB` or `100MB` into bytes.
fn size_arg(flag: &str, text: &str) -> Result<u64, Error> {
    crate::plan::parse_quantity(text)
        .filter(|(v, unit)| *v >= 1.0 && *v < 1e18 && (unit.is_empty() || *unit == "B"))
        .map(|(v, _)| v as u64)
        .ok_or_else(|| {
            Usage(format!("{flag} {text}: give a size like 256KiB, 64MB or 1GiB")).into()
        })
}

/// Checks that a cost flag is a finite number of at least zero.
fn non_negative(flag: &str, v: f64) -> Result<f64, Error> {
    if v.is_finite() && v >= 0.0 {
        return Ok(v);
    }
    Err(Usage(format!("{flag} {v}: give a number of nanoseconds, 0 or more")).into())
}

/// Expands input paths (folders recursively) into files; none is an error.
fn input_files(paths: &[std::path::PathBuf]) -> Result<Vec<std::path::PathBuf>, Error> {
    let mut files = Vec::new();
    for p in paths {
        let found = crate::pagecache::files_under(std::slice::from_ref(p));
        files.extend(found.map_err(|e| Usage(format!("--files {}: {e}", p.display())))?);
    }
    if files.is_empty() {
        return Err(Usage(
            "--files: no files there (make some with `scalescope gen files` or `gen text`)".into(),
        )
        .into());
    }
    Ok(files)
}

/// Checks a thread count.
fn check_threads(threads: usize) -> Result<(), Error> {
    if threads == 0 || threads > 100_000 {
        return Err(Usage("--threads must be between 1 and 100000".into()).into());
    }
    Ok(())
}

/// Checks the common options and a fraction knob.
fn check(c: &ZooArgs, fraction: Option<f64>) -> Result<ZooArgs, Error> {
    check_threads(c.threads)?;
    if c.ops == 0 {
        return Err(Usage("--ops must be at least 1".into()).into());
    }
    if let Some(f) = fraction
        && !(0.0..=1.0).contains(&f)
    {
        return Err(Usage(format!("{f} is not a fraction: give a value from 0 to 1")).into());
    }
    Ok(*c)
}

fn report(name: &str, c: ZooArgs, (ops, seconds): (u64, f64)) -> Result<(), Error> {
    print_result(name, c.threads, seconds, ops as f64, "ops")?;
    Ok(())
}
