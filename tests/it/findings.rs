//! The diagnosis on the zoo: every probe has one known problem, and a knob that removes it. A
//! sweep over threads=1,2 must raise that finding first, with its evidence; the causes it raises
//! above `info` must be exactly that one (findings about the curve may join it); the fixed variant
//! must raise nothing above `info` but what the test allows; and the shares of the lost capacity
//! at one count never add up past 100%. Serialised: the probes are CPU-bound and timing-sensitive.

use crate::common;
use common::*;
use scalescope::results::findings::{Finding, Kind, Severity};

/// Sweeps a probe (threads=1,2 unless `threads` says otherwise) and returns its findings.
fn findings(threads: &str, probe: &[&str]) -> Vec<Finding> {
    findings_with("-r 3 -w 0", threads, probe)
}

/// The same with other run options.
fn findings_with(options: &str, threads: &str, probe: &[&str]) -> Vec<Finding> {
    let exe = bin().to_string_lossy().into_owned();
    let mut command = vec![exe.as_str(), "probe"];
    command.extend(probe);
    swept(&format!("{options} --param threads={threads}"), &command)
}

/// Sweeps any command with these run options and returns its findings. A sweep during which the
/// hypervisor took a tenth of the CPU time or more (steal, on a shared VM) measured the host's
/// other guests: it is taken again, up to three times, and the least disturbed one is kept.
fn swept(options: &str, command: &[&str]) -> Vec<Finding> {
    let _guard = common::measuring();
    let d = tempfile::tempdir().unwrap();
    let mut kept: Option<(f64, Vec<Finding>)> = None;
    for attempt in 1..=3 {
        let _ = std::fs::remove_dir_all(d.path().join("r"));
        let o = sweep(d.path(), options, command);
        assert!(o.status.success(), "{command:?}: {}", stderr(&o));
        let doc = results(&d.path().join("r"));
        shares_add_up(&doc.findings);
        let stolen = stolen_share(&doc);
        if stolen >= 0.1 {
            assert!(
                doc.findings
                    .iter()
                    .any(|f| f.kind == Kind::NoisyMeasurement && f.summary.contains("steal time")),
                "{:.0}% of the CPU time stolen and not said: {:?}",
                100.0 * stolen,
                kinds(&doc.findings)
            );
            eprintln!(
                "note: the host took {:.0}% of the CPU time in sweep {attempt}: swept again",
                100.0 * stolen
            );
        }
        // A sweep in which the sampler caught none of a point's waits (a quarter of its cores or
        // more left "unsampled") measured a sampler starved by the machine, not the workload: it
        // is taken again like a stolen one, and the less blind sweep kept.
        let unsampled = unsampled_share(&doc);
        if unsampled >= 0.25 {
            eprintln!(
                "note: {:.0}% of a point's lost cores unsampled in sweep {attempt}: swept again",
                100.0 * unsampled
            );
        }
        // Other processes (the suite's other tests) holding a tenth of a point's CPUs measured the
        // machine's load, not the workload alone: taken again too.
        let others = other_load_share(&doc);
        if others >= 0.1 {
            eprintln!(
                "note: other processes held {:.0}% of a point's CPUs in sweep {attempt}: swept again",
                100.0 * others
            );
        }
        let disturbed = stolen.max(unsampled).max(others);
        if kept.as_ref().is_none_or(|k| disturbed < k.0) {
            kept = Some((disturbed, doc.findings));
        }
        if stolen < 0.1 && unsampled < 0.25 && others < 0.1 {
            break;
        }
    }
    // Noise is the machine's; "the runs cannot tell whether it scales" is a verdict, kept.
    let findings = kept.expect("one sweep").1;
    findings
        .into_iter()
        .filter(|f| f.kind != Kind::NoisyMeasurement || f.summary.contains("cannot tell"))
        .collect()
}

/// The largest share of a point's lost cores that its speed-up stack puts down to waits no
/// sample caught.
fn unsampled_share(doc: &scalescope::results::Results) -> f64 {
    doc.stacks
        .iter()
        // A point that lost almost nothing (the baseline) has no share worth reading.
        .filter(|s| s.count - s.speedup >= 0.05)
        .map(|s| {
            let lost = s.count - s.speedup;
            s.parts.iter().filter(|p| p.cause == "unsampled").map(|p| p.cores).sum::<f64>() / lost
        })
        .fold(0.0, f64::max)
}

/// Whether a `noisy-measurement` says the runs cannot tell whether it scales.
fn cannot_tell(f: &[Finding]) -> bool {
    f.iter().any(|x| x.kind == Kind::NoisyMeasurement && x.summary.contains("cannot tell"))
}

/// A fixed variant scales: scales-well leads; or, on a noisy machine, its runs could not tell and
/// say so, with nothing raised above `low`.
fn scales_or_cannot_tell(f: &[Finding]) {
    if f.first().map(|x| x.kind) == Some(Kind::ScalesWell) {
        return;
    }
    let undecided = cannot_tell(f);
    assert!(
        undecided && f.iter().all(|x| x.severity <= Severity::Low),
        "neither scales-well nor undecided: {:?}",
        kinds(f)
    );
    eprintln!(
        "note: the fixed variant's runs could not tell whether it scales on this machine: {:?}",
        kinds(f)
    );
}

/// The shares of the lost capacity that the findings at one count explain add up to 100% at most.
fn shares_add_up(f: &[Finding]) {
    let mut counts: Vec<Option<f64>> = f.iter().map(|x| x.at).collect();
    counts.dedup();
    for at in counts {
        let sum: f64 = f
            .iter()
            .filter(|x| x.at == at && x.kind != Kind::ThreadsIgnored)
            .filter_map(|x| x.cost_pct)
            .sum();
        assert!(sum <= 100.5, "shares at {at:?} add up to {sum:.1}%: {f:?}");
    }
}

/// Each finding's kind, severity, summary and evidence, for failure messages.
fn kinds(f: &[Finding]) -> Vec<(Kind, Severity, String)> {
    f.iter()
        .map(|x| (x.kind, x.severity, format!("{} | {}", x.summary, x.evidence.join(" | "))))
        .collect()
}

fn first(f: &[Finding], kind: Kind) -> &Finding {
    assert_eq!(f.first().map(|x| x.kind), Some(kind), "findings: {:?}", kinds(f));
    &f[0]
}

/// The findings of `sweep`, swept again once when `more` says it raised more than expected. One
/// vCPU of a shared VM sometimes runs a few percent slower for a whole sweep: a real problem shows
/// in both sweeps, such a disturbance seldom twice.
fn swept_again_if(
    sweep: impl Fn() -> Vec<Finding>,
    more: impl Fn(&[Finding]) -> bool,
) -> Vec<Finding> {
    let f = sweep();
    if more(&f) { sweep() } else { f }
}

/// Sweeps the fixed variant of a probe over threads=1,2; swept again once when it raised more than
/// `allowed` above `info`.
fn fixed(probe: &[&str], allowed: &[Kind]) -> Vec<Finding> {
    let serious = |f: &[Finding]| {
        f.iter().any(|x| x.severity >= Severity::Medium && !allowed.contains(&x.kind))
    };
    swept_again_if(|| findings("1,2", probe), serious)
}

/// The causes raised above `info`, findings about the curve left out.
fn serious_causes(f: &[Finding]) -> Vec<Kind> {
    let mut k: Vec<Kind> = f
        .iter()
        .filter(|x| x.severity >= Severity::Medium && !x.kind.describes_curve())
        .map(|x| x.kind)
        .collect();
    k.dedup();
    k
}

/// Only `allowed` kinds may be above `info`.
fn nothing_serious_but(f: &[Finding], allowed: &[Kind]) {
    let bad: Vec<_> =
        f.iter().filter(|x| x.severity >= Severity::Medium && !allowed.contains(&x.kind)).collect();
    assert!(bad.is_empty(), "raised above info for the fixed variant: {:?}", kinds(f));
}

/// `the first 0.14 s of a run` or `the last 12 ms of a run`: the phase's length in seconds.
fn phase_seconds(summary: &str) -> f64 {
    let words: Vec<&str> = summary.split_whitespace().collect();
    let i = words.iter().position(|w| *w == "first" || *w == "last").expect("a phase");
    let v: f64 = words[i + 1].parse().unwrap();
    if words[i + 2] == "ms" { v / 1e3 } else { v }
}

/// The lock is the one serious cause; a tail may join it at medium. Each thread does a fixed
/// share, and a lock handed over unfairly lets one finish first: the other then runs alone for
/// the last 5-10% of the run (measured: 11% of the loss beside the lock's 69-84%), a true static
/// split's tail, not a second problem hidden by the lock.
fn lock_and_its_tail(f: &[Finding]) {
    let causes = serious_causes(f);
    assert_eq!(causes.first(), Some(&Kind::LockContention), "{:?}", kinds(f));
    let tail_ok = |x: &Finding| {
        x.kind == Kind::LoadImbalance && x.severity == Severity::Medium && x.cost_pct < Some(25.0)
    };
    let mut others =
        f.iter().filter(|x| x.severity >= Severity::Medium && !x.kind.describes_curve()).skip(1);
    assert!(others.all(tail_ok), "only the lock, and its tail at medium: {:?}", kinds(f));
}

#[test]
fn scalable_within_the_cores_scales_well_and_nothing_else() {
    let f = findings("1,2", &["scalable", "--threads", "{threads}"]);
    first(&f, Kind::ScalesWell);
    nothing_serious_but(&f, &[]);
}

#[test]
fn a_fixed_time_benchmark_that_scales_does_more_work_not_extra_cpu() {
    // Every thread works 0.3 s and the probe prints its throughput: at 2 threads a run does twice
    // the work for twice the CPU. Taken for the same work, it read "93% more CPU time" [medium].
    let f = findings("1,2", &["scalable", "--threads", "{threads}", "--seconds", "0.3"]);
    scales_or_cannot_tell(&f);
    nothing_serious_but(&f, &[]);
    assert!(!f.iter().any(|x| x.kind == Kind::OnCpuInefficiency), "{:?}", kinds(&f));
    // Its throughput gives the work each run did: the same time at both counts is no puzzle.
    assert!(!f.iter().any(|x| x.kind == Kind::FixedTime), "{:?}", kinds(&f));
}

#[test]
fn a_fixed_time_run_that_gives_no_work_is_said_and_its_curve_is_not() {
    // Each thread of `behave busy N` burns 0.5 s of wall time and prints nothing: 2 threads run as
    // long as 1 for twice the CPU, and no figure tells the work they did. Read as the same work,
    // it was "50% efficiency".
    let exe = behave().to_string_lossy().into_owned();
    let f = swept("-r 3 -w 0 --param threads=1,2", &[&exe, "busy", "{threads}"]);
    let x = first(&f, Kind::FixedTime);
    assert!(x.severity == Severity::High && x.summary.contains("the same time"), "{x:?}");
    assert!(x.evidence.iter().any(|e| e.starts_with("%CPU ")), "{x:?}");
    assert!(x.advice.contains("--metric"), "{x:?}");
    let curve = [Kind::ScalesWell, Kind::SerialFraction, Kind::Retrograde, Kind::ThreadsIgnored];
    assert!(!f.iter().any(|x| curve.contains(&x.kind)), "{:?}", kinds(&f));
    nothing_serious_but(&f, &[Kind::FixedTime]);
}

/// A client that waits on a pipe for a server scalescope does not watch, which does the work in
/// as many threads as asked (a database client and its server's parallel workers): the client's
/// waits are said to be for work done outside the watched processes, with no what-if to sell and
/// nothing raised high. A trial's PostgreSQL client read "[high] wait-for-work … while CPUs are
/// idle … 0.90× → 2.00×" with the server keeping 1.9 of the 2 CPUs busy.
#[test]
fn waits_for_a_server_outside_the_tree_are_not_sold_as_idle_cpus() {
    let d = tempfile::tempdir().unwrap();
    let (input, output) = (d.path().join("in"), d.path().join("out"));
    for f in [&input, &output] {
        let ok = std::process::Command::new("mkfifo").arg(f).status().unwrap().success();
        assert!(ok, "mkfifo");
    }
    let exe = bin().to_string_lossy().into_owned();
    let serve = format!(
        "while read n < {i}; do {exe} probe scalable --threads $n --ops 400000000 >/dev/null; echo done > {o}; done",
        i = input.display(),
        o = output.display()
    );
    let mut server = std::process::Command::new("sh").args(["-c", &serve]).spawn().unwrap();
    // A client that does a little work of its own (an interpreter's start), as a database's does.
    let client = format!(
        "import os; r = os.open('{o}', os.O_RDWR); open('{i}', 'w').write('{{threads}}\\n'); os.read(r, 8)",
        i = input.display(),
        o = output.display()
    );
    let python = if std::path::Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    };
    let f = swept("-r 3 -w 1 --param threads=1,2", &[python, "-c", &client]);
    // A client that does nothing itself (a shell) has no work thread: its idle CPUs are not idle.
    let shell = format!(
        "exec 3<>{o}; echo {{threads}} > {i}; read x <&3",
        i = input.display(),
        o = output.display()
    );
    let quiet = swept("-r 3 -w 1 --param threads=1,2", &["sh", "-c", &shell]);
    let _ = server.kill();
    let _ = server.wait();
    assert!(!quiet.iter().any(|x| x.summary.contains("CPUs sat idle")), "{:?}", kinds(&quiet));
    let x = f.iter().find(|x| x.kind == Kind::WaitForWork).expect("the client's waits are said");
    assert!(
        x.summary.contains("outside the processes scalescope watches")
            && x.evidence.iter().any(|e| e.contains("the CPUs were not idle"))
            && x.advice.contains("attach"),
        "{x:?}"
    );
    assert!(x.what_if.is_none() && x.cost_pct.is_none(), "{x:?}");
    assert!(!f.iter().any(|x| x.severity == Severity::High), "{:?}", kinds(&f));
    let waits = [Kind::LockContention, Kind::IoBound, Kind::KernelContention];
    assert!(!f.iter().any(|x| waits.contains(&x.kind)), "{:?}", kinds(&f));
}

/// Beside a busy program, more threads than CPUs take a larger share of the CPUs from it: 4
/// threads of a CPU probe beside 2 busy threads get about two thirds of 2 CPUs, 2 threads half.
/// That gain is said as the load's, not as threads waiting for something other than CPUs.
#[test]
fn threads_beyond_the_cpus_that_gain_beside_a_busy_program_are_said_to_take_its_share() {
    let cpus = scalescope::machine::allowed_cpus();
    let mut hog = std::process::Command::new(bin())
        .args(["probe", "scalable", "--threads", &cpus.to_string(), "--seconds", "60"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let counts = format!("{},{}", cpus, 2 * cpus);
    let f = findings_with(
        "-r 3 -w 0",
        &counts,
        &["scalable", "--threads", "{threads}", "--ops", "300000000"],
    );
    let _ = hog.kill();
    let _ = hog.wait();
    let x =
        f.iter().find(|x| x.kind == Kind::CpuOversubscription).expect("the counts above the CPUs");
    assert!(
        x.summary.contains("faster than") && x.summary.contains("other processes held"),
        "{x:?}"
    );
}

#[test]
fn a_global_mutex_is_lock_contention_named_by_its_symbol() {
    let f = findings("1,2", &["lock", "--threads", "{threads}", "--critical", "0.6"]);
    let l = first(&f, Kind::LockContention);
    assert!(l.summary.contains("scalescope::probes::zoo::GLOBAL_LOCK+0x0"), "{:?}", kinds(&f));
    assert!(l.cost_pct.unwrap() >= 40.0, "the lock is the main cause: {:?}", kinds(&f));
    lock_and_its_tail(&f);
    let fixed = fixed(&["lock", "--threads", "{threads}", "--critical", "0"], &[]);
    scales_or_cannot_tell(&fixed);
    nothing_serious_but(&fixed, &[]);
}

#[test]
fn one_count_measured_alone_still_names_what_idled_its_cpus() {
    // No baseline and no curve: its own idle capacity still has a cause, and the point is not
    // given an efficiency of 100% against itself.
    let exe = bin().to_string_lossy().into_owned();
    let f = swept(
        "-r 3 -w 0 --param threads=2",
        &[&exe, "probe", "lock", "--threads", "{threads}", "--critical", "0.6"],
    );
    let l = first(&f, Kind::LockContention);
    assert!(l.summary.contains("GLOBAL_LOCK"), "{:?}", kinds(&f));
    assert!(!f.iter().any(|x| x.kind == Kind::ScalesWell), "{:?}", kinds(&f));
    // Swept again once when the fixed variant raised something, as the zoo's fixed variants are:
    // runs of 0.22 s whose threads a busy host let finish 65 ms apart read as a tail.
    let serious = |f: &[Finding]| f.iter().any(|x| x.severity >= Severity::Medium);
    let fixed = swept_again_if(
        || {
            swept(
                "-r 3 -w 0 --param threads=2",
                &[&exe, "probe", "lock", "--threads", "{threads}", "--critical", "0"],
            )
        },
        serious,
    );
    nothing_serious_but(&fixed, &[]);
}

#[test]
fn a_lock_taken_to_set_up_leads_with_the_tail_it_causes_and_says_what_removing_it_buys() {
    // Each thread sets up 30% of its share holding one lock, one after the other, then works
    // alone: the second starts late and finishes late, and that tail is the lock's, not a
    // second cause. Without the lock the two threads would run 2.0× (its fixed variant).
    // Runs of about a second: at 0.2 s, a busy host's sampler (25–50 readings a second within
    // its CPU budget) saw the 45 ms tail in two readings, and left half the loss unexplained.
    let f =
        findings("1,2", &["setup", "--threads", "{threads}", "--setup", "0.3", "--ops", "3000000"]);
    let l = first(&f, Kind::LockContention);
    assert!(l.summary.contains("SETUP_LOCK"), "{:?}", kinds(&f));
    assert!(
        l.evidence.iter().any(|e| e.contains("in the tail left behind")),
        "the tail is carried: {l:?}"
    );
    // Part of the tail can still read as the threads' uneven end (a fresh clone's CI: the lock
    // 73%, the tail 23% at medium, 0.042 of the 0.081 idle core-seconds carried): the lock leads
    // and any tail beside it stays a medium minority, as for the global mutex.
    lock_and_its_tail(&f);
    let w = l.what_if.as_ref().expect("a what-if for the lock");
    assert!(
        w.at == 2.0 && (1.75..=2.15).contains(&w.without) && w.without > w.speedup + 0.2,
        "{w:?}"
    );
    let ci = w.without_ci95.expect("an interval over three runs");
    assert!(ci[0] <= w.without && w.without <= ci[1], "{w:?}");
    let fixed = fixed(
        &["setup", "--threads", "{threads}", "--setup", "0.3", "--ops", "3000000", "--unlocked"],
        &[],
    );
    scales_or_cannot_tell(&fixed);
    nothing_serious_but(&fixed, &[]);
}

#[test]
fn a_single_threaded_phase_is_a_serial_phase_of_the_right_length() {
    let f = findings("1,2", &["serial", "--threads", "{threads}", "--serial", "0.3"]);
    let s = first(&f, Kind::SerialPhase);
    // 30% of the work on one thread before two threads share the rest: about 45% of the run.
    let phase = phase_seconds(&s.summary);
    assert!(phase > 0.05, "{s:?}");
    assert_eq!(serious_causes(&f), [Kind::SerialPhase], "{:?}", kinds(&f));
    let fixed = fixed(&["serial", "--threads", "{threads}", "--serial", "0"], &[]);
    scales_or_cannot_tell(&fixed);
    nothing_serious_but(&fixed, &[]);
}

#[test]
fn a_pools_last_item_is_load_imbalance_that_even_work_would_shorten() {
    // Five items of 0.1 s for two workers: the one that finds the queue empty waits on a condition
    // variable while the other does the last item. Spread evenly, that idle CPU is work: about
    // half the tail off each run, although the waiting worker was never the last to end.
    let behave = common::behave().to_string_lossy().into_owned();
    let f = swept("-r 3 -w 0 --param threads=1,2", &[behave.as_str(), "pool", "{threads}", "5"]);
    let l = first(&f, Kind::LoadImbalance);
    let tail = phase_seconds(&l.summary);
    assert!(tail > 0.05, "{l:?}");
    let w = l.what_if.as_ref().unwrap_or_else(|| panic!("{l:?}"));
    assert!(w.sooner_s >= 0.25 * tail && w.without > w.speedup + 0.15, "{l:?}");
    nothing_serious_but(&f, &[Kind::LoadImbalance]);
    assert!(!f.iter().any(|x| x.kind == Kind::WaitForWork), "no feeder: {:?}", kinds(&f));
}

#[test]
fn one_thread_with_a_bigger_share_is_load_imbalance() {
    let f = findings("1,2", &["imbalance", "--threads", "{threads}"]);
    let l = first(&f, Kind::LoadImbalance);
    assert!(phase_seconds(&l.summary) > 0.05, "{l:?}");
    assert_eq!(serious_causes(&f), [Kind::LoadImbalance], "{:?}", kinds(&f));
    let fixed = fixed(&["imbalance", "--threads", "{threads}", "--balanced"], &[]);
    scales_or_cannot_tell(&fixed);
    nothing_serious_but(&fixed, &[]);
}

#[test]
fn a_serial_step_after_the_parallel_work_is_serial_fraction_not_a_tail() {
    // A script's next program runs alone once the parallel one has ended (as a gzip pass after
    // pigz): nothing was left unevenly spread, so it is serial work, not load-imbalance.
    let exe = bin().to_string_lossy().into_owned();
    let command = format!(
        "{exe} probe scalable --threads {{threads}} --ops 600000000 >/dev/null && {exe} probe scalable --ops 200000000 >/dev/null"
    );
    let f = swept("-r 3 -w 0 --shell --param threads=1,2", &[&command]);
    let s = first(&f, Kind::SerialFraction);
    assert!(s.summary.contains("no work thread that had work"), "{s:?}");
    nothing_serious_but(&f, &[Kind::SerialFraction]);
    assert!(
        !f.iter().any(|x| x.kind == Kind::LoadImbalance && x.severity >= Severity::Low),
        "{:?}",
        kinds(&f)
    );
}

#[test]
fn threads_that_scale_by_overlapping_their_sleeps_are_not_said_to_fill_the_cpus() {
    // Each thread does 1 ms of work, then sleeps 4 ms: two threads overlap their sleeps and
    // halve the time while the job keeps a fifth of its CPUs busy.
    let behave = common::behave().to_string_lossy().into_owned();
    let f = swept("-r 3 -w 0 --param threads=1,2", &[behave.as_str(), "naps", "{threads}", "120"]);
    let s = first(&f, Kind::ScalesWell);
    assert!(s.advice.starts_with("it scales by overlapping its threads' waits (sleep"), "{s:?}");
    assert!(!s.advice.contains("machine with more CPUs"), "{s:?}");
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert!(s.advice.contains(&format!(" of its {cpus} CPU")), "{s:?}");
    nothing_serious_but(&f, &[Kind::ScalesWell]);
}

#[test]
fn threads_spinning_on_a_lock_are_lock_contention_predicted_without_the_contention() {
    // Each item is 0.3 ms of work, then 0.7 ms holding a pthread spin lock: the second thread
    // spins on a CPU in pthread_spin_lock instead of sleeping, and 2 threads reach 1.43× at most.
    let behave = common::behave().to_string_lossy().into_owned();
    let f =
        swept("-r 3 -w 0 --param threads=1,2", &[behave.as_str(), "spinlock", "{threads}", "600"]);
    let l = first(&f, Kind::LockContention);
    assert!(l.summary.contains("spin on a lock") && l.summary.contains("spin_lock"), "{l:?}");
    assert!(l.severity >= Severity::Medium, "{l:?}");
    let w = l.what_if.as_ref().unwrap_or_else(|| panic!("{l:?}"));
    assert!(w.spin && w.speedup < 1.6, "{w:?}");
    let said = l.what_if_text(&|n| format!("{n} threads")).unwrap();
    assert!(said.contains("were the lock uncontended (no spinning on it)"), "{said}");
    nothing_serious_but(&f, &[Kind::LockContention, Kind::SerialFraction]);
    assert!(!f.iter().any(|x| x.kind == Kind::OnCpuInefficiency), "{:?}", kinds(&f));
}

#[test]
fn a_lone_thread_that_sleeps_after_its_work_is_its_sleep_not_a_tail() {
    // One thread works 0.1 s, then sleeps in one nanosleep: no other thread exists for it to
    // coordinate or to have finished before it, so the sleep is what idles the CPU.
    let behave = common::behave().to_string_lossy().into_owned();
    let f = swept("-r 3 -w 0 --param s=0.4,0.8", &[behave.as_str(), "nap", "{s}"]);
    let w = first(&f, Kind::WaitForWork);
    assert!(w.summary.contains("sleep"), "{w:?}");
    nothing_serious_but(&f, &[Kind::WaitForWork]);
    assert!(
        !f.iter().any(|x| matches!(x.kind, Kind::LoadImbalance | Kind::SerialFraction)),
        "{:?}",
        kinds(&f)
    );
}

#[test]
fn one_producer_for_many_consumers_is_wait_for_work_and_the_producer_is_named() {
    let f = findings("1,2", &["starved", "--threads", "{threads}"]);
    let w = first(&f, Kind::WaitForWork);
    assert!(w.summary.contains("'producer-0'"), "the feeder is named: {w:?}");
    assert_eq!(serious_causes(&f), [Kind::WaitForWork], "{:?}", kinds(&f));
    // Two producers feed enough, but with the consumers they are more busy threads than CPUs.
    let fixed = fixed(
        &["starved", "--threads", "{threads}", "--producers", "2"],
        &[Kind::CpuOversubscription, Kind::SerialFraction],
    );
    nothing_serious_but(&fixed, &[Kind::CpuOversubscription, Kind::SerialFraction]);
}

#[test]
fn counters_in_one_cache_line_are_on_cpu_inefficiency() {
    // A third of the default work: two threads on one cache line run four to six times slower.
    let f = findings("1,2", &["false-sharing", "--threads", "{threads}", "--ops", "300000"]);
    first(&f, Kind::OnCpuInefficiency);
    assert_eq!(serious_causes(&f), [Kind::OnCpuInefficiency], "{:?}", kinds(&f));
    // Padded, the same work runs in 40-90 ms, where the threads' start and end skew alone is a
    // tenth of a run: five times the work gives runs of 0.2-0.4 s.
    let fixed =
        fixed(&["false-sharing", "--threads", "{threads}", "--ops", "1500000", "--padded"], &[]);
    scales_or_cannot_tell(&fixed);
    nothing_serious_but(&fixed, &[]);
}

#[test]
fn an_mmap_storm_is_kernel_contention_with_the_syscalls_named() {
    // Five runs a point: a shared VM ran the same 1-thread churn in 0.87-1.20 s, and with three
    // runs the efficiency's interval reached 90% in one sweep of eight ("cannot tell").
    let f = findings_with("-r 5 -w 0", "1,2", &["mmap-churn", "--threads", "{threads}"]);
    let k = first(&f, Kind::KernelContention);
    let text = format!("{} {}", k.summary, k.evidence.join(" "));
    assert!(
        ["mprotect", "mmap", "munmap", "page fault", "kernel"].iter().any(|n| text.contains(n)),
        "{k:?}"
    );
    assert_eq!(serious_causes(&f), [Kind::KernelContention], "{:?}", kinds(&f));
    // A process per worker: the same system calls, each on a memory map of its own.
    let fixed = fixed(&["mmap-churn", "--threads", "{threads}", "--processes"], &[]);
    scales_or_cannot_tell(&fixed);
    nothing_serious_but(&fixed, &[]);
}

#[test]
fn items_handed_over_one_at_a_time_cost_kernel_time_at_every_handover_and_it_is_said() {
    // Two stages of about 6 µs each, handed over through a condition variable item by item: 2
    // threads take longer than 1, with some 20,000 block-and-wake-ups a run where 1 thread had
    // none, and most of the extra CPU in the kernel.
    let exe = handover().to_string_lossy().into_owned();
    let sweep = |batch: &'static str| {
        swept("-r 3 -w 0 --param threads=1,2", &[&exe, "{threads}", "60000", "5000", batch])
    };
    let f = sweep("1");
    // A cause leads. Which one varies from sweep to sweep (the waits on the condition variable
    // as a lock taken in turns, as a stage waiting for the slower one, or as waits for work; the
    // kernel's time as a finding of its own or counted with the waits): not asserted.
    assert!(
        f.first().is_some_and(|x| x.cost_pct.is_some() && x.severity == Severity::High),
        "{:?}",
        kinds(&f)
    );
    // The kernel time the handovers cost is said where it is counted, with the switches that made
    // it and the advice to batch.
    let said = f
        .iter()
        .find(|x| {
            x.evidence.iter().any(|e| e.contains("voluntary context switches per run against"))
        })
        .unwrap_or_else(|| panic!("no finding gives the switches: {:?}", kinds(&f)));
    assert!(said.severity >= Severity::Medium, "{said:?}");
    assert!(said.advice.contains("hand work over in larger batches"), "{said:?}");
    let unrelated = [Kind::IoBound, Kind::CpuOversubscription, Kind::ThreadsIgnored];
    assert!(serious_causes(&f).iter().all(|k| !unrelated.contains(k)), "{:?}", kinds(&f));
    // A thousand items a handover: the stages overlap, and 2 threads take half the time.
    let fixed =
        swept_again_if(|| sweep("1000"), |f| f.iter().any(|x| x.severity >= Severity::Medium));
    scales_or_cannot_tell(&fixed);
    nothing_serious_but(&fixed, &[]);
}

#[test]
fn more_threads_than_cores_is_oversubscription_and_not_an_alarm_when_the_program_scales() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    // Two thirds of the default work: a single thread still runs 0.3 s.
    let f = findings(
        &format!("1,{cpus},{}", 4 * cpus),
        &["scalable", "--threads", "{threads}", "--ops", "200000000"],
    );
    // Flat past the CPUs: said first, and scales-well (when the runs decide it) no longer advises
    // the counts already measured.
    let o = first(&f, Kind::CpuOversubscription);
    assert!(o.advice.contains(&format!("at most {cpus} threads")), "{o:?}");
    assert_eq!(o.at, Some(4.0 * cpus as f64), "{o:?}");
    if let Some(s) = f.iter().find(|x| x.kind == Kind::ScalesWell) {
        assert!(s.advice.contains("a machine with more CPUs"), "{s:?}");
    } else {
        assert!(cannot_tell(&f), "neither scales-well nor undecided at {cpus}: {:?}", kinds(&f));
    }
    nothing_serious_but(&f, &[]);
    let within = findings(
        &format!("1,{cpus}"),
        &["scalable", "--threads", "{threads}", "--ops", "200000000"],
    );
    assert!(!within.iter().any(|x| x.kind == Kind::CpuOversubscription), "{:?}", kinds(&within));
}

#[test]
fn counts_past_the_cpus_that_add_no_working_thread_are_said_flat_not_left_silent() {
    // As Erlang's BEAM at +S 4 on 2 CPUs, whose extra schedulers sleep: no more threads work than
    // there are CPUs, and the count past them gains nothing.
    let cpus = std::thread::available_parallelism().unwrap().get();
    let exe = bin().to_string_lossy().into_owned();
    let command = format!(
        "n={{threads}}; [ $n -gt {cpus} ] && n={cpus}; {exe} probe scalable --threads $n --ops 200000000"
    );
    let f = swept(&format!("-w 0 --shell --param threads=1,{cpus},{}", 2 * cpus), &[&command]);
    let o = first(&f, Kind::CpuOversubscription);
    assert_eq!(o.severity, Severity::Low, "{o:?}");
    assert!(o.summary.contains(&format!("no more than {cpus} work threads ran at once")), "{o:?}");
    assert!(o.advice.contains(&format!("at most {cpus} threads")), "{o:?}");
    nothing_serious_but(&f, &[]);
}

#[test]
fn a_baseline_that_already_fills_the_cpus_is_judged_by_its_cpu_use_not_its_count() {
    // As Java's parallel streams swept over the pool's parallelism: the caller thread works too,
    // so parallelism=1 already keeps 2 threads busy, and 2 CPUs leave nothing more to gain.
    let cpus = std::thread::available_parallelism().unwrap().get();
    let exe = bin().to_string_lossy().into_owned();
    let command =
        format!("{exe} probe scalable --threads $(({{par}} + {})) --ops 1000000000", cpus - 1);
    let f = swept("-r 3 -w 0 --shell --workers --param par=1,2", &[&command]);
    assert!(!f.iter().any(|x| x.kind == Kind::SerialFraction), "{:?}", kinds(&f));
    nothing_serious_but(&f, &[Kind::CpuOversubscription]);
    // Said first, and raised: the count oversubscribes CPUs the baseline already filled, which
    // is the whole of the gap between the counts' 2× and the ~1× measured.
    let o = first(&f, Kind::CpuOversubscription);
    assert!(
        o.evidence
            .iter()
            .any(|e| e.contains("of what the CPUs allowed") || e.contains("already kept")),
        "{o:?}"
    );
    assert!(o.evidence.iter().any(|e| e.contains("the CPUs' limit accounts for")), "{o:?}");
    assert_eq!(o.severity, Severity::Medium, "{o:?}");
    assert!(!f.iter().any(|x| x.kind == Kind::ScalesWell), "{:?}", kinds(&f));
}

#[test]
fn threads_that_yield_holding_a_lock_collapse_beyond_the_cores_and_it_is_said() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    let probe = ["yield", "--threads", "{threads}", "--ops", "400000"];
    let f = findings(&format!("1,{cpus},{}", 2 * cpus), &probe);
    let o = f
        .iter()
        .find(|x| x.kind == Kind::CpuOversubscription && x.severity == Severity::Medium)
        .unwrap_or_else(|| panic!("{:?}", kinds(&f)));
    assert!(
        o.summary.contains("slower than") && o.summary.contains("× the CPU for the same work"),
        "{o:?}"
    );
    assert!(o.evidence[0].starts_with("the same work took"), "{o:?}");
    assert_eq!(o.at, Some(2.0 * cpus as f64), "{o:?}");
    // Within the cores the same threads do not collapse: nothing says they do.
    assert!(
        !f.iter().any(|x| x.kind == Kind::CpuOversubscription && x.at == Some(cpus as f64)),
        "{:?}",
        kinds(&f)
    );
    // Within the cores the mutex's hand-offs cost some CPU (the kernel's futex work): that may be
    // said of the CPUs' count, nothing else.
    let handoffs = [
        Kind::CpuOversubscription,
        Kind::OnCpuInefficiency,
        Kind::LockContention,
        Kind::KernelContention,
    ];
    assert!(serious_causes(&f).iter().all(|k| handoffs.contains(k)), "{:?}", kinds(&f));
}

#[test]
fn a_program_that_ignores_the_parameter_is_threads_ignored() {
    // The parameter reaches the program (an environment variable) but the program ignores it.
    // Half the default work: every run is the same single thread, 0.2 s long. Three runs a point:
    // with two, one slow baseline run under CI's load (± 12%) widened the speed-up's interval
    // (Student's t at 1 degree of freedom is 12.7) past what rules out scaling.
    // Counts beyond the CPUs too: one thread ran at every count, so nothing was oversubscribed,
    // and a count that measured slower is the machine's drift.
    let half = ["scalable", "--threads", "1", "--ops", "150000000"];
    let f = findings_with("-r 3 -w 0 --env IGNORED_COUNT={threads}", "1,2,4", &half);
    let t = first(&f, Kind::ThreadsIgnored);
    assert!(t.summary.contains("does not change the concurrency: 1 work thread at most"), "{t:?}");
    assert_eq!(serious_causes(&f), [Kind::ThreadsIgnored], "{:?}", kinds(&f));
    assert!(f.iter().all(|x| x.kind != Kind::CpuOversubscription), "{:?}", kinds(&f));
    assert!(
        f.iter().all(|x| x.kind != Kind::Retrograde || x.severity <= Severity::Low),
        "{:?}",
        kinds(&f)
    );
    // The parameter appears nowhere: every point ran the same program, whatever the drift says.
    let f = findings("1,2", &half);
    let t = first(&f, Kind::ThreadsIgnored);
    assert!(t.summary.contains("'threads' appears nowhere in the command"), "{t:?}");
    assert_eq!(f.len(), 1, "nothing else is said of the same program run twice: {:?}", kinds(&f));
}

#[test]
fn a_flat_curve_while_other_processes_held_the_cpus_is_not_blamed_on_the_program() {
    // Real sweeps taken while other builds held the CPUs: the load explains most of the loss, so
    // the slowdown is said at low severity with why, and the flat speed-up is not threads-ignored.
    for (case, claim) in [("pbzip2", "[high] retrograde"), ("xargs", "threads-ignored")] {
        let o = in_fixtures(&["show", &format!("loaded/{case}"), "--color", "never"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = stdout(&o);
        assert!(!out.contains(claim), "{case}: {out}");
        assert!(out.contains("other processes held the CPUs"), "{case}: {out}");
        assert!(!out.contains("[high]"), "{case}: {out}");
    }
    let out = stdout(&in_fixtures(&["show", "loaded/pbzip2", "--color", "never"]));
    assert!(out.contains("[low] retrograde"), "{out}");
    assert!(out.contains("the machine's load may make it slower"), "{out}");
    // "Run at 1 thread" is no advice when the load may have made 2 threads slow.
    assert!(
        out.contains("sweep again on a quiet machine before choosing the count: under this load 1 thread ran fastest"),
        "{out}"
    );
}

#[test]
fn idle_gc_workers_are_said_to_wait_while_the_application_threads_run() {
    // A real sweep over a JVM's GC threads: they wait for work on the gang's semaphore while the
    // two application threads take turns running, none of them long enough to be a feeder.
    let o = in_fixtures(&["show", "jvm/gc-threads", "--color", "never"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let line = out.lines().find(|l| l.contains("wait-for-work:")).unwrap_or_default();
    assert!(line.contains("GangWorker::loop"), "{out}");
    assert!(
        line.contains("other threads of the job run on average ('pool-1-thread-")
            && !line.contains("no thread of the job runs"),
        "{line}"
    );
    assert!(out.contains("that the count does not parallelise"), "{out}");
}

#[test]
fn runs_of_a_few_milliseconds_are_startup_dominated() {
    // Beyond the CPUs too: a count slower by a fraction of a millisecond is not retrograde scaling.
    let f = findings("1,2,4", &["scalable", "--threads", "{threads}", "--ops", "10000"]);
    assert!(f.iter().any(|x| x.kind == Kind::StartupDominated), "{:?}", kinds(&f));
    assert!(
        f.iter().all(|x| x.kind != Kind::Retrograde || x.severity <= Severity::Low),
        "{:?}",
        kinds(&f)
    );
}

#[test]
fn cold_random_reads_are_io_bound_with_the_syscall_named() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("in");
    // Written while no other sweep runs: writing 128 MB would slow it.
    let guard = common::measuring();
    let o = scalescope(
        d.path(),
        &["gen", "files", "--dir", dir.to_str().unwrap(), "--count", "2", "--size", "64MB"],
    );
    drop(guard);
    assert!(o.status.success(), "{}", stderr(&o));
    let files = dir.to_str().unwrap();
    let f =
        findings("1,2", &["io", "--threads", "{threads}", "--files", files, "--reads", "10000"]);
    // A device that serves two reads at once lets two readers scale: then scales-well leads (it
    // needs an efficiency of 90% or more) and the I/O is still named, as information.
    // "The runs cannot tell" (low) may stand before an info io-bound: judged without it.
    let f: Vec<Finding> = f.into_iter().filter(|x| x.kind != Kind::NoisyMeasurement).collect();
    let io = if f.first().map(|x| x.kind) == Some(Kind::ScalesWell) {
        f.iter()
            .find(|x| x.kind == Kind::IoBound)
            .unwrap_or_else(|| panic!("io not named: {:?}", kinds(&f)))
    } else {
        first(&f, Kind::IoBound)
    };
    assert!(io.summary.contains("pread64"), "{io:?}");
    let serious = serious_causes(&f);
    assert!(serious.is_empty() || serious == [Kind::IoBound], "{:?}", kinds(&f));
    let warm = findings_with(
        "-r 2 -w 1",
        "1,2",
        &["io", "--threads", "{threads}", "--files", files, "--warm", "--reads", "20000"],
    );
    // Warm runs last a few milliseconds: only that may be said of them.
    nothing_serious_but(&warm, &[Kind::StartupDominated]);
}

#[test]
fn wildly_varying_runs_are_noisy_measurement() {
    let _guard = common::measuring();
    let d = tempfile::tempdir().unwrap();
    let o = scalescope(
        d.path(),
        &[
            "run",
            "-r",
            "4",
            "-w",
            "0",
            "-o",
            "r",
            "--param",
            "n=1,2",
            "--shell",
            "--",
            "sleep 0.0$(( $$ % 9 + 1 ))",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    assert!(doc.findings.iter().any(|x| x.kind == Kind::NoisyMeasurement), "{:?}", doc.findings);
}

#[test]
fn runs_too_varied_to_tell_say_so_and_blame_only_what_each_run_shows() {
    // A scalable program after a sleep of 0.05 to 0.65 s (by process id), throughput by wall time:
    // three runs a point cannot tell how fast it scales (speed-ups near 1 once gave
    // threads-ignored [high] with an interval reaching 3.2×). What every run does show is the
    // serial sleep, half or more of each run with the CPUs idle and no thread to run: that may be
    // raised, nothing else.
    let _guard = common::measuring();
    let d = tempfile::tempdir().unwrap();
    let exe = bin().to_string_lossy().into_owned();
    let cmd = format!(
        "sleep 0.$(( $$ % 7 ))5; {exe} probe scalable --threads {{threads}} --ops 40000000"
    );
    let o = scalescope(
        d.path(),
        &[
            "run",
            "-r",
            "3",
            "-w",
            "0",
            "-o",
            "r",
            "--param",
            "threads=1,2",
            "--work",
            "40000000",
            "--shell",
            "--",
            &cmd,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    let k = kinds(&doc.findings);
    let [lo, hi] = doc.analysis.as_ref().unwrap().series[0].points[1]
        .speedup_ci95
        .expect("runs give an interval");
    assert!(lo / 2.0 < 0.75, "the sleeps made the efficiency uncertain: [{lo}, {hi}]");
    // Noise findings are the machine's (a busy host's steal time may be medium).
    let raised: Vec<&Finding> = doc
        .findings
        .iter()
        .filter(|x| x.severity > Severity::Low && x.kind != Kind::NoisyMeasurement)
        .collect();
    // The sleeps are drawn by process id: now and then every 2-thread run drew longer ones and
    // the interval stays below 90% (the serial sleep is then measured, and raised).
    if raised.is_empty() {
        assert!(
            hi / 2.0 >= 0.9,
            "an efficiency below 90% at 95% confidence, and nothing raised: {k:?}"
        );
        // The measured efficiency fell at 90% or above by chance: the interval says it all.
        let u = doc
            .findings
            .iter()
            .find(|x| x.summary.contains("cannot tell"))
            .unwrap_or_else(|| panic!("{k:?}"));
        assert_eq!((u.kind, u.severity, u.at), (Kind::NoisyMeasurement, Severity::Low, Some(2.0)));
    } else {
        // The sleep itself, named by its wait: where the suite's load kept the probe's threads
        // from ever filling both CPUs, no start-up phase ends before it, and it reads as a
        // command that sleeps (a fresh clone's CI).
        for f in raised {
            let the_sleep = f.kind == Kind::WaitForWork
                && f.summary.contains("threads of 'sleep' sleep (nanosleep");
            assert!(
                matches!(f.kind, Kind::SerialFraction | Kind::SerialPhase) || the_sleep,
                "only the serial part each run measured may be raised: {k:?}"
            );
        }
    }
    assert!(
        doc.findings.iter().all(|x| !matches!(x.kind, Kind::ScalesWell | Kind::ThreadsIgnored)),
        "{k:?}"
    );
}

/// Sweeps tests/workloads/critical.c (`critical` or `reduction`) over OMP_NUM_THREADS=1,2.
fn openmp(variant: &str) -> Vec<Finding> {
    openmp_with(variant, "")
}

/// [`openmp`] with more options for `scalescope run`.
fn openmp_with(variant: &str, options: &str) -> Vec<Finding> {
    let exe = critical().to_string_lossy().into_owned();
    let iterations = match variant {
        "critical" => "4000000",
        "static" | "dynamic" => "20000000",
        _ => "40000000",
    };
    swept(
        &format!("-r 3 -w 0 --param threads=1,2 --env OMP_NUM_THREADS={{threads}} {options}"),
        &[&exe, variant, iterations],
    )
}

#[test]
#[ignore = "needs perf_event_open (kernel.perf_event_paranoid at most 2) to see lock code on the CPUs; .ci/run runs it"]
fn an_openmp_critical_section_spun_on_is_lock_contention_with_the_lock_code_named() {
    // libgomp spins before it sleeps: the threads wait on the CPU, in the critical section's code.
    let f = openmp("critical");
    let lock = first(&f, Kind::LockContention);
    assert!(lock.severity >= Severity::Medium, "{lock:?}");
    let text = format!("{} {}", lock.summary, lock.evidence.join(" "));
    assert!(
        ["GOMP_critical", "gomp_mutex", "libgomp"].iter().any(|n| text.contains(n)),
        "the lock is libgomp's: {lock:?}"
    );
    lock_and_its_tail(&f);
    // The same loop with a reduction: nothing to fix. Swept again once when it raised something,
    // as the zoo's fixed variants are: the VM ran its runs at 1.0-1.5 s of CPU by turns.
    let serious = |f: &[Finding]| f.iter().any(|x| x.severity >= Severity::Medium);
    let fixed = swept_again_if(|| openmp("reduction"), serious);
    nothing_serious_but(&fixed, &[]);
}

#[test]
fn an_openmp_loop_with_uneven_iterations_on_a_static_schedule_is_load_imbalance() {
    // The thread with the cheap half waits at the loop's end while the other runs: no feeder.
    // A vCPU slowed for the whole sweep reads as extra CPU: swept again once then.
    let more = |f: &[Finding]| serious_causes(f).iter().any(|k| *k != Kind::LoadImbalance);
    let f = swept_again_if(|| openmp("static"), more);
    // Runs too varied to tell (a busy machine) leave the cause at info, after "cannot tell".
    let undecided = cannot_tell(&f);
    let causes: Vec<Finding> =
        f.iter().filter(|x| x.kind != Kind::NoisyMeasurement).cloned().collect();
    let imbalance = first(&causes, Kind::LoadImbalance);
    assert!(undecided || imbalance.severity >= Severity::Medium, "{imbalance:?}");
    assert!(imbalance.summary.contains("the last"), "{imbalance:?}");
    assert!(serious_causes(&f).iter().all(|k| *k == Kind::LoadImbalance), "{:?}", kinds(&f));
    assert!(!f.iter().any(|x| x.kind == Kind::WaitForWork), "no feeder: {:?}", kinds(&f));
    // Handed out dynamically, the same iterations keep both CPUs busy to the end.
    let serious = |f: &[Finding]| f.iter().any(|x| x.severity >= Severity::Medium);
    let fixed = swept_again_if(|| openmp("dynamic"), serious);
    nothing_serious_but(&fixed, &[]);
}

#[test]
#[ignore = "needs perf_event_open (kernel.perf_event_paranoid at most 2) to see the runtime's code on the CPUs; .ci/run runs it"]
fn threads_spinning_in_the_openmp_runtime_are_said_to_hide_their_wait_not_taken_for_false_sharing()
{
    // OMP_WAIT_POLICY=active: the thread done with its share spins at the barrier instead of sleeping.
    let f = openmp_with("static", "--env OMP_WAIT_POLICY=active");
    let spin = f
        .iter()
        .find(|x| x.summary.contains("spin in the parallel runtime"))
        .unwrap_or_else(|| panic!("{f:?}"));
    assert!(cannot_tell(&f) || spin.severity >= Severity::Medium, "{spin:?}");
    assert!(
        spin.summary.contains("libgomp") && spin.advice.contains("OMP_WAIT_POLICY=passive"),
        "{spin:?}"
    );
    assert!(!f.iter().any(|x| x.advice.contains("false sharing")), "{:?}", kinds(&f));
    assert!(!f.iter().any(|x| x.kind == Kind::WaitForWork), "no feeder: {:?}", kinds(&f));
    // Spinning a while before sleeping (as on CPUs with a slow pause instruction): the spin is the
    // tail's cost, not a second cause.
    // (Extra CPU within the runs' noise may still be described at info.) Swept again once when
    // another cause was raised: under the suite's load the thread that started the region, 98%
    // busy beside a waiter spinning half its samples away, once read as its feeder.
    let more = |f: &[Finding]| serious_causes(f).iter().any(|k| *k != Kind::LoadImbalance);
    let f = swept_again_if(|| openmp_with("static", "--env GOMP_SPINCOUNT=3000000"), more);
    assert!(serious_causes(&f).iter().all(|k| *k == Kind::LoadImbalance), "{:?}", kinds(&f));
    let raised = |x: &&Finding| x.severity > Severity::Info;
    assert!(
        !f.iter().filter(raised).any(|x| x.advice.contains("false sharing")),
        "{:?}",
        kinds(&f)
    );
}

#[test]
fn a_machine_busy_with_other_work_is_said_and_not_blamed_on_the_program() {
    let _guard = common::measuring();
    let cpus = std::thread::available_parallelism().unwrap().get();
    // Other work: one busy process per CPU for the whole sweep.
    let mut others: Vec<std::process::Child> = (0..cpus)
        .map(|_| {
            std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap()
        })
        .collect();
    let d = tempfile::tempdir().unwrap();
    let exe = bin().to_string_lossy().into_owned();
    let o = sweep(
        d.path(),
        "-r 3 -w 0 --param threads=1,2",
        &[&exe, "probe", "scalable", "--threads", "{threads}"],
    );
    for c in &mut others {
        let _ = c.kill();
        let _ = c.wait();
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let f = results(&d.path().join("r")).findings;
    let serious: Vec<_> =
        f.iter().filter(|x| x.severity >= Severity::Medium).map(|x| x.kind).collect();
    assert!(
        serious.iter().all(|k| *k == Kind::NoisyMeasurement),
        "only the machine's load may be blamed: {:?}",
        kinds(&f)
    );
    assert!(
        !f.iter().any(|x| x.kind == Kind::SerialFraction && x.severity > Severity::Info),
        "{:?}",
        kinds(&f)
    );
    if let Some(load) =
        f.iter().find(|x| x.kind == Kind::NoisyMeasurement && x.severity == Severity::Medium)
    {
        assert!(load.summary.contains("the gap is mostly the machine's load"), "{load:?}");
    }
}

#[test]
fn processes_taking_turns_on_one_semaphore_are_lock_contention_not_a_serial_part() {
    // The first process takes the lock again as it lets go until its share is done, then the
    // other does its share alone: its one long wait is a wait for its turn, not a coordinator's.
    // An interpreter itself, not a launcher script (pyenv's shims are bash) whose own waits
    // would join the job's: CI's venv, else Debian's.
    let python = std::env::var("SCALESCOPE_PYTHON").unwrap_or_else(|_| {
        let debian = "/usr/bin/python3";
        if std::path::Path::new(debian).exists() { debian } else { "python3" }.to_string()
    });
    let workload = format!("{}/tests/workloads/mp_lock.py", env!("CARGO_MANIFEST_DIR"));
    let sweep = |lock: &str| {
        swept("-r 3 -w 0 --param threads=1,2", &[python.as_str(), &workload, "{threads}", lock])
    };
    // The semaphore is not fair: in some sweeps one process keeps it and its partner's whole share
    // falls in a tail (read as load-imbalance, locally 1 sweep in 5), or starting the processes
    // idles a tenth of the capacity (read as a medium serial-fraction in one CI run). Swept again
    // once then: the lock shows in both sweeps, such a sweep seldom twice.
    // Starting the processes is a serial phase of its own (28% of the loss in a CI sweep, where
    // the lock took 48%): said, below the lock.
    let allowed = [Kind::LockContention, Kind::Retrograde, Kind::SerialFraction];
    // A start-up slowed by the suite's load can reach the lock's severity (41% of the loss beside
    // the lock's 51% in a CI sweep): swept again then too.
    let astray = |f: &[Finding]| {
        let lock = f.first().filter(|x| x.kind == Kind::LockContention);
        lock.is_none_or(|l| {
            f.iter().any(|x| x.kind == Kind::SerialFraction && x.severity >= l.severity)
        }) || f.iter().any(|x| x.severity >= Severity::Medium && !allowed.contains(&x.kind))
    };
    let f = swept_again_if(|| sweep("lock"), astray);
    let l = first(&f, Kind::LockContention);
    assert!(l.summary.contains("sem_wait"), "{:?}", kinds(&f));
    assert!(l.evidence.iter().any(|e| e.contains("take turns")), "{l:?}");
    nothing_serious_but(&f, &allowed);
    assert!(
        f.iter().all(|x| x.kind != Kind::SerialFraction || x.severity < l.severity),
        "the start-up is said below the lock: {:?}",
        kinds(&f)
    );
    let fixed = sweep("none");
    scales_or_cannot_tell(&fixed);
    nothing_serious_but(&fixed, &[]);
}
