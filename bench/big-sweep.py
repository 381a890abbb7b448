#!/usr/bin/env python3
"""Sweeps of any size: how fast a huge plan starts and how much memory scalescope holds per point.

1. `run --param n=1..POINTS --dry-run`: its wall time (goal: within 2 s for 100,000 points).
2. `run --param n=1..POINTS -r 1 -w 0 --no-sample -- true`, stderr a pipe (so progress comes as
   lines): the time from start to the first run in results.journal (goal: within 1 s), then
   scalescope's resident memory (VmRSS, VmHWM of its own process, the spawn helper not included)
   sampled for --seconds, the runs done by then, and the growth in bytes per run done. Goal: under
   100 MiB for the whole sweep. The sweep is stopped with SIGINT at the end (it saves and exits).

Usage: bench/big-sweep.py [--scalescope target/release/scalescope] [--points 100000] [--seconds 60]
"""
import argparse, os, re, signal, subprocess, tempfile, time


def status(pid):
    """VmRSS and VmHWM of a process in bytes."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) * 1024
    return out


def runs_done(journal, log):
    """Runs finished: the last progress line's count, or the journal's lines before the first line
    (the journal is emptied whenever results.json is rewritten)."""
    log.seek(0)
    counts = re.findall(r"points, (\d+) runs", log.read())
    if counts:
        return int(counts[-1])
    try:
        with open(journal, "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scalescope", default="target/release/scalescope")
    ap.add_argument("--points", type=int, default=100_000)
    ap.add_argument("--seconds", type=float, default=60.0)
    a = ap.parse_args()
    exe = os.path.abspath(a.scalescope)
    grid = f"n=1..{a.points}"

    start = time.perf_counter()
    subprocess.run([exe, "run", "--param", grid, "--dry-run", "--", "true"], check=True, capture_output=True)
    print(f"--dry-run of {a.points} points: {time.perf_counter() - start:.3f} s (goal <= 2)")

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r")
        log = open(os.path.join(tmp, "stderr"), "w+")
        start = time.perf_counter()
        p = subprocess.Popen([exe, "run", "--param", grid, "-r", "1", "-w", "0", "--no-sample", "-o", out,
                              "--", "true"], stdout=subprocess.DEVNULL, stderr=log)
        journal = os.path.join(out, "results.journal")
        first = None
        peak = {"VmRSS": 0, "VmHWM": 0}
        early = None
        while time.perf_counter() - start < a.seconds and p.poll() is None:
            done = runs_done(journal, log)
            if first is None and done > 0:
                first = time.perf_counter() - start
            if done > 0:
                s = status(p.pid)
                peak = {k: max(peak[k], s[k]) for k in peak}
                if early is None:
                    early = (done, s["VmRSS"])
            time.sleep(0.01 if first is None else 0.5)
        done = runs_done(journal, log)
        last = status(p.pid) if p.poll() is None else None
        p.send_signal(signal.SIGINT)
        p.wait()
        log.seek(0)
        lines = [l for l in log.read().splitlines() if "points" in l]
    print(f"sweep of {a.points} points of `true`: first run after {first if first is None else round(first, 3)} s "
          f"(goal <= 1)")
    print(f"  after {a.seconds:.0f} s: {done} runs, peak RSS {peak['VmHWM'] / 2**20:.1f} MiB (goal < 100)")
    if early and last and done > early[0]:
        per_run = (last["VmRSS"] - early[1]) / (done - early[0])
        print(f"  resident growth {per_run:.0f} bytes per run done ({early[1] / 2**20:.1f} MiB after the first run, "
              f"{last['VmRSS'] / 2**20:.1f} MiB after {done})")
    print(f"  progress lines without a terminal: {len(lines)}" + (f", last: {lines[-1]}" if lines else ""))


if __name__ == "__main__":
    main()
