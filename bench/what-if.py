#!/usr/bin/env python3
"""Checks the what-if of every cause finding against the real fix.

Each case sweeps a zoo probe over threads=1,2 with its problem, reads the what-if of the finding
that names it (the speed-up predicted without the cause, with its 95% interval), then sweeps the
same probe with the knob that removes the cause and measures the speed-up at the same count.
Prints predicted against measured, the error, and whether the measurement fell inside the
interval. The goal: measured within 10% of the prediction and inside its interval in at least 90%
of the cases; exits 1 below it.

Usage: bench/what-if.py [--scalescope target/release/scalescope] [--runs 5] [--only NAME]
"""
import argparse, json, os, subprocess, sys, tempfile

GOAL_ERROR = 0.10
GOAL_SHARE = 0.90


def cases(exe):
    p = lambda *a: [exe, "probe", *a, "--threads", "{threads}"]
    # (name, kind the what-if is read from, command with the cause, command with the cause removed)
    return [
        ("setup --setup 0.3", "lock-contention", p("setup", "--setup", "0.3"), p("setup", "--setup", "0.3", "--unlocked")),
        ("lock --critical 0.6", "lock-contention", p("lock", "--critical", "0.6"), p("lock", "--critical", "0")),
        ("serial --serial 0.3", "serial-phase", p("serial", "--serial", "0.3"), p("serial", "--serial", "0")),
        ("imbalance", "load-imbalance", p("imbalance"), p("imbalance", "--balanced")),
        ("starved", "wait-for-work", p("starved"), p("starved", "--producers", "2")),
    ]


def sweep(exe, out, cmd, runs):
    subprocess.run([exe, "run", "-r", str(runs), "-w", "0", "-o", out, "--param", "threads=1,2", "--"] + cmd,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f)


def speedup_at(doc, count):
    for s in (doc.get("analysis") or {}).get("series", []):
        for p in s["points"]:
            if p["count"] == count:
                return p["speedup"]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scalescope", default="target/release/scalescope")
    ap.add_argument("--runs", type=int, default=5, help="runs per point")
    ap.add_argument("--only", help="run only the case whose name starts with this")
    a = ap.parse_args()
    exe = os.path.abspath(a.scalescope)
    rows, good = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, kind, cmd, fixed) in enumerate(cases(exe)):
            if a.only and not name.startswith(a.only):
                continue
            doc = sweep(exe, os.path.join(tmp, f"c{i}"), cmd, a.runs)
            finding = next((f for f in doc["findings"] if f["kind"] == kind and f.get("what_if")), None)
            measured = speedup_at(sweep(exe, os.path.join(tmp, f"f{i}"), fixed, a.runs), 2.0)
            if finding is None or measured is None:
                rows.append((name, kind, None, None, None, measured, False))
                continue
            w = finding["what_if"]
            ci = w.get("without_ci95") or [w["without"], w["without"]]
            error = measured / w["without"] - 1.0
            ok = abs(error) <= GOAL_ERROR and ci[0] <= measured <= ci[1]
            good += ok
            rows.append((name, kind, w["speedup"], w["without"], ci, measured, ok, error))
    print(f"{'case':24} {'finding':16} {'measured':>8} {'predicted without':>24} {'measured fixed':>14} {'error':>7}  ok")
    for r in rows:
        name, kind, s, wo, ci, measured = r[:6]
        if wo is None:
            print(f"{name:24} {kind:16} {'':>8} {'no what-if':>24} {measured or float('nan'):14.2f} {'':>7}  no")
            continue
        pred = f"{wo:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"
        print(f"{name:24} {kind:16} {s:8.2f} {pred:>24} {measured:14.2f} {100 * r[7]:+6.1f}%  {'yes' if r[6] else 'no'}")
    share = good / len(rows) if rows else 0.0
    print(f"{good}/{len(rows)} within {100 * GOAL_ERROR:.0f}% and inside the interval (goal: {100 * GOAL_SHARE:.0f}%)")
    return 0 if rows and share >= GOAL_SHARE else 1


if __name__ == "__main__":
    sys.exit(main())
