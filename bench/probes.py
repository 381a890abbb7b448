#!/usr/bin/env python3
"""The reference probes against the tools people compare them with, side by side in one run.

Every figure is a ratio of two things measured alternately in the same run (this machine is shared
and noisy: absolute times mislead). Wall times are whole processes (spawn to exit), medians of
--rounds alternating runs.

1. wordcount on a generated 100 MB text: 1 thread vs `wc -w` on the same file (goal <= 1.2x),
   and 1 vs 2 threads (goal >= 1.8x).
2. readspeed from the page cache (one 1 GB file): 1 thread vs `dd bs=1M` (goal >= 1x throughput),
   2 threads vs dd (goal >= 1.8x).
3. pingpong: messages per second per worker with 1 and 2 workers (goal >= 4 M).

Usage: bench/probes.py [--scalescope target/release/scalescope] [--rounds 7] [--dir DIR]
"""
import argparse, os, statistics, subprocess, tempfile, time


def wall(argv):
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def metric(argv, name):
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith(f"scalescope-metric {name} "):
            return float(line.split()[2])
    raise SystemExit(f"no {name} metric from {argv}")


def paired(rounds, commands):
    """Median wall time of each command, run alternately `rounds` times after one warm-up each."""
    times = {k: [] for k in commands}
    for argv in commands.values():
        wall(argv)
    for _ in range(rounds):
        for k, argv in commands.items():
            times[k].append(wall(argv))
    return {k: statistics.median(v) for k, v in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scalescope", default="target/release/scalescope")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--dir", help="folder for the inputs (default: a temporary folder on disk)")
    a = ap.parse_args()
    exe = os.path.abspath(a.scalescope)
    with tempfile.TemporaryDirectory(dir=a.dir or os.path.join(os.path.dirname(exe), "..")) as tmp:
        text = os.path.join(tmp, "text.txt")
        subprocess.run([exe, "gen", "text", "-o", text, "--size", "100MB"], check=True, stdout=subprocess.DEVNULL)
        data = os.path.join(tmp, "data")
        subprocess.run([exe, "gen", "files", "--dir", data, "--count", "1", "--size", "1GB"], check=True,
                       stdout=subprocess.DEVNULL)
        big = os.path.join(data, "data-000.bin")

        wc = ["wc", "-w", text]
        t = paired(a.rounds, {
            "wc": wc,
            "wc1": [exe, "probe", "wordcount", "-t", "1", "--files", text],
            "wc2": [exe, "probe", "wordcount", "-t", "2", "--files", text],
        })
        print(f"wordcount, 100 MB text: `{' '.join(wc[:2])}` {t['wc']:.3f} s, 1 thread {t['wc1']:.3f} s, "
              f"2 threads {t['wc2']:.3f} s")
        print(f"  1 thread / wc -w = {t['wc1'] / t['wc']:.2f} (goal <= 1.2); "
              f"speed-up at 2 threads = {t['wc1'] / t['wc2']:.2f} (goal >= 1.8)")

        dd = ["dd", f"if={big}", "of=/dev/null", "bs=1M"]
        t = paired(a.rounds, {
            "dd": dd,
            "rs1": [exe, "probe", "readspeed", "-t", "1", "--files", big],
            "rs2": [exe, "probe", "readspeed", "-t", "2", "--files", big],
        })
        gb = os.path.getsize(big) / 1e9
        print(f"readspeed, 1 GB from the page cache: dd bs=1M {gb / t['dd']:.2f} GB/s, 1 thread {gb / t['rs1']:.2f} GB/s, "
              f"2 threads {gb / t['rs2']:.2f} GB/s (whole processes)")
        print(f"  1 thread / dd = {t['dd'] / t['rs1']:.2f} (goal >= 1.0); 2 threads / dd = {t['dd'] / t['rs2']:.2f} (goal >= 1.8)")

        for w in (1, 2):
            rates = [metric([exe, "probe", "pingpong", "-t", str(w), "--messages", "50000"], "per_worker")
                     for _ in range(a.rounds)]
            print(f"pingpong, {w} worker{'s' if w > 1 else ''} x 100 actors: {statistics.median(rates) / 1e6:.1f} M msg/s "
                  f"per worker, median of {a.rounds} (goal >= 4)")


if __name__ == "__main__":
    main()
