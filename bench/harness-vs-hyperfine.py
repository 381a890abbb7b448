#!/usr/bin/env python3
"""Times the same commands with scalescope and with hyperfine, side by side in one run.

For each command both tools run it N times (no shell: hyperfine -N), alternating A B A B… so
machine drift hits both alike. Reported, as ratios:
  - mean wall reading: scalescope / hyperfine (goal: at most 1.05; scalescope's clock starts just
    before the exec, hyperfine's before its spawn, so scalescope may read less);
  - harness overhead per run: (tool's elapsed time - sum of its run readings) / runs, for each tool
    (goal: scalescope adds at most 0.5 ms per run, sampling on).
Exits 1 when a goal is missed.

Usage: bench/harness-vs-hyperfine.py [--runs 100] [--rounds 3] [--scalescope target/release/scalescope]
Needs hyperfine (Debian: apt-get install hyperfine).
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

COMMANDS = [["true"], ["sleep", "0.05"]]


def timed(argv):
    t = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t


def hyperfine(cmd, runs, tmp):
    out = os.path.join(tmp, "h.json")
    elapsed = timed(["hyperfine", "-N", "--runs", str(runs), "--warmup", "3", "--style", "none",
                     "--export-json", out, " ".join(cmd)])
    times = json.load(open(out))["results"][0]["times"]
    return statistics.mean(times), elapsed, sum(times)


def scalescope(exe, cmd, runs, tmp, i):
    out = os.path.join(tmp, f"s{i}")
    elapsed = timed([exe, "run", "--runs", str(runs), "--warmup", "3", "-o", out, "--"] + cmd)
    doc = json.load(open(os.path.join(out, "results.json")))
    walls = [r["wall_s"] for r in doc["points"][0]["runs"]]
    return statistics.mean(walls), elapsed, sum(walls)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scalescope", default="target/release/scalescope")
    a = ap.parse_args()
    if not shutil.which("hyperfine"):
        sys.exit("hyperfine is not installed (Debian: apt-get install hyperfine)")
    exe = os.path.abspath(a.scalescope)
    warm = 3
    print(f"{a.rounds} rounds of {a.runs} runs (+{warm} warm-up) per tool and command, alternating tools")
    print(f"{'command':<12} {'hyperfine mean':>15} {'scalescope mean':>16} {'ratio':>7} "
          f"{'overhead/run hf':>16} {'overhead/run ss':>16}")
    missed = []
    with tempfile.TemporaryDirectory() as tmp:
        for cmd in COMMANDS:
            h, s = [], []
            for r in range(a.rounds):
                h.append(hyperfine(cmd, a.runs, tmp))
                s.append(scalescope(exe, cmd, a.runs, tmp, f"{cmd[0]}{r}"))
            hm = statistics.median(x[0] for x in h)
            sm = statistics.median(x[0] for x in s)
            total = a.runs + warm
            # Elapsed time not spent inside measured runs, per run (warm-up runs counted at the mean).
            ho = statistics.median((x[1] - x[2] - warm * x[0]) / total for x in h)
            so = statistics.median((x[1] - x[2] - warm * x[0]) / total for x in s)
            print(f"{' '.join(cmd):<12} {hm * 1e3:>12.3f} ms {sm * 1e3:>13.3f} ms {sm / hm:>7.3f} "
                  f"{ho * 1e3:>13.3f} ms {so * 1e3:>13.3f} ms")
            if sm / hm > 1.05 or so > 0.5e-3:
                missed.append(" ".join(cmd))
    if missed:
        print("goal missed (ratio <= 1.05, overhead <= 0.5 ms per run): " + ", ".join(missed))
        sys.exit(1)


if __name__ == "__main__":
    main()
