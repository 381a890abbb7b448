#!/usr/bin/env python3
"""How well `scalescope check` finds regressions in a history, and how rarely it cries wolf.

The noise is real: a few short sweeps of the lock probe (threads=1,2, five runs each) are made
first with the binary under test (or read from --from DIR), and two spreads are taken from their
results.json files: each run's wall time against its point's mean (run-to-run), and each point's
mean against the mean over the sweeps (sweep-to-sweep, beyond what the runs explain).

Then histories of --length sweeps are built as results folders: a copy of a real sweep whose
runs' wall times are the real means times a sweep factor (drawn from the sweep-to-sweep spread)
times a run factor (resampled from the real run-to-run deviations). Half the histories have a
step at a random entry (not among the first 8 nor the last 4): +5% to +10% in wall time at every
count, or the same in the time at the largest count alone (a serial fraction that grew: the
1-thread time stays). The other half have none. Each history is imported into a fresh history
file with `scalescope history import` and judged with `scalescope check --all --json`.

Figures: the share of steps found (a regression reported), the share of those placed at the
entry where the step was injected, the share of step-free histories where any step is reported
(false positives). Goals: >= 90% found, >= 90% placed, <= 5% false positives; exits 1 when a goal
is missed. Beside the placing figure, the bound no detector can pass at the noise measured: the
share a least-squares split, told that there is exactly one step, places right in Gaussian noise
of the sweep-to-sweep sigma (99% at 1%, 91% at 2%, 76% at 2.8%).

Histories have five runs per point by default, as docs/history.md's CI recipe runs (-r 5): with
three, a sweep's medians move by as much as the smallest steps whenever two of its runs at a
count are slow together.

Usage: bench/regressions.py [--scalescope target/release/scalescope] [--histories 100]
       [--length 30] [--runs 5] [--threshold 5%] [--from DIR] [--seed 1] [--json FILE]
"""
import argparse, copy, glob, json, os, random, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOAL_FOUND, GOAL_PLACED, GOAL_FALSE = 90.0, 90.0, 5.0


def real_sweeps(scalescope, into, n=6):
    """Makes n short sweeps of the lock probe; returns their folders."""
    dirs = []
    for i in range(n):
        out = os.path.join(into, f"real{i}")
        argv = [scalescope, "run", "-o", out, "--param", "threads=1,2", "-r", "5", "-w", "1", "--no-sample",
                "--no-history", "--", scalescope, "probe", "lock", "--threads", "{threads}", "--ops", "300000",
                "--critical", "0.1"]
        subprocess.run(argv, check=True, capture_output=True)
        dirs.append(out)
    return dirs


def load(folder):
    with open(os.path.join(folder, "results.json")) as f:
        return json.load(f)


def walls(point):
    return [r["wall_s"] for r in point["runs"] if r.get("exit_code") == 0 and r.get("signal") is None]


def spreads(docs):
    """Run-to-run relative deviations from the point's median (all of them, heavy tail kept) and
    the sweep-to-sweep relative sigma beyond what the runs explain (robust: 1.4826 MAD)."""
    within, between = [], []
    npoints = len(docs[0]["points"])
    for d in docs:
        for p in d["points"]:
            w = walls(p)
            m = statistics.median(w)
            within += [x / m - 1 for x in w]
    runs = statistics.mean(len(walls(p)) for d in docs for p in d["points"])
    mad = lambda v: 1.4826 * statistics.median(abs(x - statistics.median(v)) for x in v)
    for i in range(npoints):
        medians = [statistics.median(walls(d["points"][i])) for d in docs]
        grand = statistics.median(medians)
        between += [m / grand - 1 for m in medians]
    # The median of n runs varies about (pi/2)/n times as much as one run (Gaussian noise).
    excess = max(mad(between) ** 2 - mad(within) ** 2 * 1.571 / runs, 0.0)
    return within, excess ** 0.5


def history(template, means, within, sigma_between, length, runs, rng, step):
    """The results documents of one history; step = (entry, size, kind) or None."""
    docs = []
    for i in range(length):
        d = copy.deepcopy(template)
        d["created"] = f"2026-01-{1 + i // 24:02d}T{i % 24:02d}:00:00Z"
        d["status"] = "complete"
        for key in ("analysis", "findings", "stacks", "sequential"):
            d.pop(key, None)
        sweep = 1 + rng.gauss(0, sigma_between)
        last = len(d["points"]) - 1
        for j, p in enumerate(d["points"]):
            p.pop("stats", None)
            p.pop("warnings", None)
            factor = 1.0
            if step and i >= step[0] and (step[2] == "wall" or j == last):
                factor = 1 + step[1]
            new = []
            for k in range(runs):
                r = copy.deepcopy(p["runs"][k % len(p["runs"])])
                r["index"] = k
                r["wall_s"] = means[j] * sweep * factor * (1 + rng.choice(within))
                r["started_unix_s"] = 1_800_000_000 + i * 3600 + j * 60 + k
                r.pop("threads", None)
                new.append(r)
            p["runs"] = new
            p["target_runs"] = runs
        docs.append(d)
    return docs


def oracle_placed(sigma, length, rng, trials=2000):
    """The share of steps of 5-10% that a least-squares split, told there is exactly one step,
    places at the right entry in Gaussian noise of sigma per sweep: the bound on placing."""
    ok = 0
    for _ in range(trials):
        entry, size = rng.randint(8, length - 4), rng.uniform(0.05, 0.10)
        y = [rng.gauss(0, sigma) + (size if i >= entry else 0) for i in range(length)]
        cost = []
        for k in range(1, length):
            a, b = y[:k], y[k:]
            ma, mb = sum(a) / len(a), sum(b) / len(b)
            cost.append((sum((x - ma) ** 2 for x in a) + sum((x - mb) ** 2 for x in b), k))
        ok += min(cost)[1] == entry
    return 100 * ok / trials


def judge(scalescope, docs, threshold):
    """Imports the documents as a history and returns check --all's steps."""
    with tempfile.TemporaryDirectory() as d:
        for i, doc in enumerate(docs):
            os.makedirs(os.path.join(d, f"s{i:03d}"))
            with open(os.path.join(d, f"s{i:03d}", "results.json"), "w") as f:
                json.dump(doc, f)
        h = os.path.join(d, "h.sqlite")
        subprocess.run([scalescope, "history", "import", "--history", h, d], check=True, capture_output=True)
        out = subprocess.run([scalescope, "check", "--all", "--json", "--history", h, "--threshold", threshold],
                             capture_output=True, text=True)
        if out.returncode not in (0, 1):
            sys.exit(f"check failed: {out.stderr}")
        return json.loads(out.stdout)["steps"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scalescope", default=os.path.join(ROOT, "target/release/scalescope"))
    ap.add_argument("--histories", type=int, default=100, help="histories with a step, and as many without")
    ap.add_argument("--length", type=int, default=30)
    ap.add_argument("--runs", type=int, default=5,
                    help="runs per point in the built histories (5, as docs/history.md's CI recipe runs)")
    ap.add_argument("--threshold", default="5%")
    ap.add_argument("--from", dest="source", help="a folder of real results folders to take the noise from")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write the figures to this file")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        folders = (sorted(os.path.dirname(p) for p in glob.glob(os.path.join(a.source, "**/results.json"), recursive=True))
                   if a.source else real_sweeps(a.scalescope, tmp))
        docs = [load(f) for f in folders]
    docs = [d for d in docs if len(d["points"]) == len(docs[0]["points"])]
    within, sigma_between = spreads(docs)
    means = [statistics.median(statistics.median(walls(d["points"][j])) for d in docs) for j in range(len(docs[0]["points"]))]
    robust = 1.4826 * statistics.median(abs(x) for x in within)
    slow = sum(x > 0.2 for x in within) / len(within)
    print(f"noise from {len(docs)} real sweeps: run-to-run sigma {robust * 100:.1f}% (1.4826 MAD; "
          f"{slow * 100:.0f}% of runs over 20% slow), "
          f"sweep-to-sweep sigma {sigma_between * 100:.1f}% beyond it; means {', '.join(f'{m:.4f} s' for m in means)}")
    found = placed = false = 0
    by_kind = {"wall": [0, 0], "serial": [0, 0]}
    for h in range(a.histories):
        entry = rng.randint(8, a.length - 4)
        size = rng.uniform(0.05, 0.10)
        kind = rng.choice(["wall", "serial"])
        steps = judge(a.scalescope, history(docs[0], means, within, sigma_between, a.length, a.runs, rng,
                                            (entry, size, kind)), a.threshold)
        at = {s["position"] for s in steps if s["step"]["regression"]}
        by_kind[kind][1] += 1
        if at:
            found += 1
            by_kind[kind][0] += 1
            placed += at == {entry}
        steps = judge(a.scalescope, history(docs[0], means, within, sigma_between, a.length, a.runs, rng, None),
                      a.threshold)
        false += bool(steps)
    n = a.histories
    figures = {
        "histories": n, "length": a.length, "runs": a.runs, "threshold": a.threshold,
        "run_to_run_sigma_pct": robust * 100, "runs_over_20pct_slow_pct": slow * 100, "sweep_to_sweep_sigma_pct": sigma_between * 100,
        "found_pct": 100 * found / n, "placed_pct": 100 * placed / max(found, 1), "false_positive_pct": 100 * false / n,
        "found_wall_pct": 100 * by_kind["wall"][0] / max(by_kind["wall"][1], 1),
        "found_serial_pct": 100 * by_kind["serial"][0] / max(by_kind["serial"][1], 1),
    }
    print(f"steps of 5-10% found: {figures['found_pct']:.0f}% (goal >= {GOAL_FOUND:.0f}%): "
          f"in wall time {figures['found_wall_pct']:.0f}%, in the serial fraction {figures['found_serial_pct']:.0f}%")
    bound = oracle_placed(sigma_between, a.length, random.Random(a.seed))
    figures["placed_bound_pct"] = bound
    print(f"placed at the right entry: {figures['placed_pct']:.0f}% of those found (goal >= {GOAL_PLACED:.0f}%; "
          f"at this sweep-to-sweep noise a least-squares split told of the one step places {bound:.0f}%)")
    print(f"step-free histories with a step: {figures['false_positive_pct']:.0f}% (goal <= {GOAL_FALSE:.0f}%)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(figures, f, indent=2)
    ok = (figures["found_pct"] >= GOAL_FOUND and figures["placed_pct"] >= GOAL_PLACED
          and figures["false_positive_pct"] <= GOAL_FALSE)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
