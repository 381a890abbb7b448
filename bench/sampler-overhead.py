#!/usr/bin/env python3
"""What watching costs, measured side by side in one run.

1. 64 busy threads (`scalescope probe scalable --threads 64`) at the default rate: the sampler's CPU
   time / the workload's CPU time (goal: <= 1%), and of it the memory readings' (smaps_rollup,
   statm and io of every process: `threads.memory.cpu_s`), with how many there were.
2. 1,000 idle threads (tests/workloads/behave.c, built with cc): the sampler's CPU time / wall time,
   in % of one core (goal: <= 2%), and of it the memory readings'.
3. Workload throughput with and without sampling, paired runs interleaved (ratio; 1.00 = no effect).
4. With --corpus: every program of bench/real-programs.py at its largest count, a point of
   `--runs` runs (3, a default sweep's first pass) watched (sampler and tracer, the defaults) and
   one with --no-sample, alternated `--pairs` times; the ratio of the medians of the points' total
   wall times, unwatched / watched, with a 95% interval from the per-pair ratios (goal: >= 0.99 on
   every program; the interval says whether a miss is real). Each point has `--warmup` unrecorded
   runs first (1, as a default sweep and bench/real-programs.py have): what watching costs once a
   sweep (reading a program's symbol and unwinding tables) falls in it, as in a sweep; `--warmup 0`
   charges it to the first measured run. `--watch-flags` gives the watched side flags of its own
   (`--no-trace`, `--sample-rate 10`) to tell what costs.

Usage: bench/sampler-overhead.py [--scalescope target/release/scalescope] [--pairs 5] [--seconds 3]
       bench/sampler-overhead.py --corpus [--half tune|eval|all] [--only NAME] [--pairs 7] [--runs 3] [--warmup 1]
                                 [--watch-flags "--no-trace"]
"""
import argparse, importlib.util, json, math, os, shutil, statistics, subprocess, sys, tempfile


def run(exe, args, tmp, name, runs=1, warmup=0):
    """The runs of a one-point sweep of `runs` runs after `warmup` unrecorded ones; the first alone
    when `runs` is 1."""
    out = os.path.join(tmp, name)
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([exe, "run", "-r", str(runs), "-w", str(warmup), "-o", out] + args, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    got = json.load(open(os.path.join(out, "results.json")))["points"][0]["runs"]
    return got[0] if runs == 1 else got


def memory_cost(t, against, what):
    """The memory readings' share of a run: how many, their CPU time, per reading, and in % of `against`."""
    m = t.get("memory")
    if not m or not m.get("readings"):
        return "memory readings: none (smaps_rollup unreadable?)"
    return (f"memory readings (smaps_rollup, statm, io): {m['readings']} taken, {m['cpu_s']:.4f} s CPU, "
            f"{1e3 * m['cpu_s'] / m['readings']:.3f} ms each, = {100 * m['cpu_s'] / against:.4f}% {what}; "
            f"peak PSS {m['peak_pss_bytes'] / 2**20:.1f} MiB")


def probes(exe, a, tmp):
    here = os.path.dirname(os.path.abspath(__file__))
    behave = os.path.join(tmp, "behave")
    subprocess.run(["cc", "-O1", "-pthread", "-o", behave,
                    os.path.join(here, "..", "tests", "workloads", "behave.c")], check=True)
    secs = str(a.seconds)
    r = run(exe, ["--", exe, "probe", "scalable", "--threads", "64", "--seconds", secs], tmp, "busy")
    t = r["threads"]
    print(f"64 busy threads, {a.seconds:.0f} s: sampler {t['sampler_cpu_s']:.3f} s CPU at {t['sample_rate_hz']:.0f} Hz "
          f"= {100 * t['sampler_cpu_s'] / (r['user_s'] + r['sys_s']):.3f}% of the workload's CPU")
    print("  " + memory_cost(t, r["user_s"] + r["sys_s"], "of the workload's CPU"))
    r = run(exe, ["--", behave, "idle", "1000", secs], tmp, "idle")
    t = r["threads"]
    print(f"1000 idle threads, {a.seconds:.0f} s: sampler {t['sampler_cpu_s']:.3f} s CPU at {t['sample_rate_hz']:.1f} Hz "
          f"= {100 * t['sampler_cpu_s'] / t['wall_s']:.2f}% of one core")
    print("  " + memory_cost(t, t["wall_s"], "of one core"))
    cores = os.cpu_count()
    on, off = [], []
    for i in range(a.pairs):
        for sample, acc in ((True, on), (False, off)):
            extra = [] if sample else ["--no-sample"]
            r = run(exe, extra + ["--", exe, "probe", "scalable", "--threads", str(cores), "--seconds", "1"],
                    tmp, f"pair{i}{sample}")
            acc.append(r["metrics"]["throughput"])
    ratio = statistics.median(on) / statistics.median(off)
    print(f"throughput of {cores} busy threads with / without sampling, {a.pairs} interleaved pairs: {ratio:.4f}")


def corpus(exe, a, tmp):
    """Each real program at its largest count, watched and unwatched, alternated."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("real_programs", os.path.join(here, "real-programs.py"))
    rp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rp)
    d = a.dir or os.path.join(tmp, "inputs")
    os.makedirs(d, exist_ok=True)
    rp.prepare(exe, d)
    worst, misses = None, []
    for name, half, need, opts, cmd, _expect in rp.cases(d, rp.feed_rate(d)):
        if (a.only and a.only not in name) or (a.half != "all" and half != a.half):
            continue
        if any(not rp.have(p) for p in need):
            print(f"skipped: {name} ({', '.join(p for p in need if not rp.have(p))} not installed)")
            continue
        opts = list(opts)
        # The largest count of the case's sweep, one point: --param threads=2 unless it sets its own.
        if "--param" in opts:
            i = opts.index("--param")
            pname, values = opts[i + 1].split("=", 1)
            opts[i + 1] = f"{pname}={values.split(',')[-1]}"
        else:
            opts += ["--param", "threads=2"]
        if "-r" in opts:
            del opts[opts.index("-r"):opts.index("-r") + 2]
        ratios, watched, plain = [], [], []
        try:
            for i in range(a.pairs):
                pair = {}
                for watch in ((True, False) if i % 2 == 0 else (False, True)):
                    extra = a.watch_flags.split() if watch else ["--no-sample"]
                    rs = run(exe, extra + opts + ["--"] + cmd, tmp, f"c{watch}", a.runs, a.warmup)
                    rs = rs if isinstance(rs, list) else [rs]
                    if any(r.get("exit_code") != 0 for r in rs):
                        raise RuntimeError(f"exit code {[r.get('exit_code') for r in rs]}")
                    pair[watch] = sum(r["wall_s"] for r in rs)
                watched.append(pair[True])
                plain.append(pair[False])
                ratios.append(pair[False] / pair[True])
        except (subprocess.CalledProcessError, RuntimeError) as e:
            print(f"{name:28} failed: {e}")
            continue
        ratio = statistics.median(plain) / statistics.median(watched)
        logs = [math.log(x) for x in ratios]
        half_width = 2.0 * statistics.stdev(logs) / math.sqrt(len(logs)) if len(logs) > 1 else float("nan")
        lo, hi = math.exp(statistics.mean(logs) - half_width), math.exp(statistics.mean(logs) + half_width)
        flag = "" if ratio >= 0.99 else ("  MISS" if hi < 0.99 else "  below 0.99, within noise")
        print(f"{name:28} [{half}] {statistics.median(watched) / a.runs:7.3f} s a run watched  unwatched/watched {ratio:.4f} "
              f"(per pair {lo:.3f}-{hi:.3f}){flag}", flush=True)
        worst = ratio if worst is None else min(worst, ratio)
        if hi < 0.99:
            misses.append(name)
    print(f"\nworst ratio: {worst:.4f}" if worst is not None else "\nno program ran")
    print("programs whose interval lies below 0.99: " + (", ".join(misses) if misses else "none"))
    return 1 if misses else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scalescope", default="target/release/scalescope")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--runs", type=int, default=3, help="runs a point with --corpus")
    ap.add_argument("--warmup", type=int, default=1,
                    help="unrecorded runs before them with --corpus (1, as in a default sweep)")
    ap.add_argument("--corpus", action="store_true", help="the real programs, watched against unwatched")
    ap.add_argument("--half", default="all", choices=["tune", "eval", "all"])
    ap.add_argument("--only", help="corpus cases whose name contains this")
    ap.add_argument("--dir", help="where the corpus inputs are made (kept)")
    ap.add_argument("--watch-flags", default="", help="flags of the watched side with --corpus (e.g. --no-trace)")
    a = ap.parse_args()
    exe = os.path.abspath(a.scalescope)
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        return corpus(exe, a, tmp) if a.corpus else probes(exe, a, tmp)


if __name__ == "__main__":
    sys.exit(main())
