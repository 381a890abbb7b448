#!/usr/bin/env python3
"""The thread-state sampler's cost, measured side by side in one run.

1. 64 busy threads (`scalescope probe scalable --threads 64`) at the default rate: the sampler's CPU
   time / the workload's CPU time (goal: <= 1%).
2. 1,000 idle threads (tests/workloads/behave.c, built with cc): the sampler's CPU time / wall time,
   in % of one core (goal: <= 2%).
3. Workload throughput with and without sampling, paired runs interleaved (ratio; 1.00 = no effect).

Usage: bench/sampler-overhead.py [--scalescope target/release/scalescope] [--pairs 5] [--seconds 3]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile


def run(exe, args, tmp, name):
    out = os.path.join(tmp, name)
    subprocess.run([exe, "run", "-r", "1", "-w", "0", "-o", out] + args, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.load(open(os.path.join(out, "results.json")))["points"][0]["runs"][0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scalescope", default="target/release/scalescope")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3.0)
    a = ap.parse_args()
    exe = os.path.abspath(a.scalescope)
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        behave = os.path.join(tmp, "behave")
        subprocess.run(["cc", "-O1", "-pthread", "-o", behave,
                        os.path.join(here, "..", "tests", "workloads", "behave.c")], check=True)
        secs = str(a.seconds)
        r = run(exe, ["--", exe, "probe", "scalable", "--threads", "64", "--seconds", secs], tmp, "busy")
        t = r["threads"]
        print(f"64 busy threads, {a.seconds:.0f} s: sampler {t['sampler_cpu_s']:.3f} s CPU at {t['sample_rate_hz']:.0f} Hz "
              f"= {100 * t['sampler_cpu_s'] / (r['user_s'] + r['sys_s']):.3f}% of the workload's CPU")
        r = run(exe, ["--", behave, "idle", "1000", secs], tmp, "idle")
        t = r["threads"]
        print(f"1000 idle threads, {a.seconds:.0f} s: sampler {t['sampler_cpu_s']:.3f} s CPU at {t['sample_rate_hz']:.1f} Hz "
              f"= {100 * t['sampler_cpu_s'] / t['wall_s']:.2f}% of one core")
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


if __name__ == "__main__":
    sys.exit(main())
