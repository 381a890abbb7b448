#!/usr/bin/env python3
"""How far scalescope's predictions can be trusted, on published scaling tables.

Each table (tests/fixtures/tables/*.csv, and the readspeed tables of tests/fixtures) is cut at a
quarter of its largest count: the counts up to it are given to
`scalescope analyze --csv … --predict …` (the real command line, its --export-json read back),
which predicts every larger count of the table; the prediction is compared with what the table
measured there, in the figure the table gives (time or throughput).

Per table: the error at its largest count, (predicted - measured) / measured, and the share of its
larger counts whose measured value lies inside the printed 90% interval. Over the tables, each
weighing alike: the median of the absolute errors at the largest count, and the mean share
inside. Goals: median error <= 10%, share inside >= 90%; it exits 1 below either.

The procedure was adjusted while looking at the tuning tables only (the readspeed tables, SPEC
SDM91 and the ray tracer); the figures of the held-out tables are reported apart. One exception:
the interval's two bounds past the largest measured count (no gain past it at the slow end,
perfect scaling at the fast end) were added after seeing that every miss, in both groups, was on
the slow side. Another: the rule that no term of a model is negative (every term a cost) was made
after reading the formula chosen for a held-out table (CP2K NREP=1: two terms of opposite signs),
so the held-out figures since then are no longer blind to it. The twelve tables added after that
(archerbench_*, libfork_*, vlasiator_*) were collected by rules fixed beforehand and predicted as
they came: no change has been made with their results in view.

Usage: bench/predictions.py [--scalescope target/debug/scalescope] [--extra DIR] [--json FILE]
  --extra DIR: more tables (first column the count, second time_s or a throughput), reported
               apart from the corpus and outside the goals.
"""
import argparse, csv, glob, json, os, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUNING = {"readspeed-90x", "readspeed-original-before-patches", "readspeed-original-after-patches",
          "usl_specsdm91_sparccenter2000", "usl_raytracer_origin2000"}
GOAL_ERROR, GOAL_INSIDE = 10.0, 90.0
# The CPUs of the machine a table was measured on, where its counts are threads that can pass them
# (tests/fixtures/README.md): given as --cpus, so a larger count is predicted as that many.
CPUS = {"rayon_tree_sum_1000_gcp_c4std16": 16, "rayon_tree_sum_100M_gcp_c4std16": 16,
        "spice_tree_sum_1000_gcp_c4std16": 16, "spice_tree_sum_100M_gcp_c4std16": 16}


def tables(extra):
    found = [(p, "corpus") for p in sorted(glob.glob(os.path.join(ROOT, "tests/fixtures/tables/*.csv")))]
    found += [(os.path.join(ROOT, f"tests/fixtures/{n}.csv"), "corpus") for n in sorted(TUNING) if n.startswith("readspeed")]
    if extra:
        found += [(p, "extra") for p in sorted(glob.glob(os.path.join(extra, "*.csv")))]
    return found


def predict(scalescope, path):
    """The table's larger counts: measured, predicted, 90% interval (None when not given)."""
    with open(path) as f:
        rows = list(csv.reader(f))
    head, body = rows[0], [r for r in rows[1:] if r]
    count, value = head[0], head[1]
    points = sorted((float(r[0]), float(r[1])) for r in body)
    largest = points[-1][0]
    train = [p for p in points if p[0] <= largest / 4]
    truths = [p for p in points if p[0] > largest / 4]
    kind = "--time" if value.startswith("time") else "--throughput"
    out = []
    with tempfile.TemporaryDirectory() as d:
        table, export = os.path.join(d, "train.csv"), os.path.join(d, "analysis.json")
        with open(table, "w") as f:
            f.write(f"{count},{value}\n" + "".join(f"{c:g},{v!r}\n" for c, v in train))
        argv = [scalescope, "analyze", "--csv", table, "--count", count, kind, value, "--workers",
                "--predict", ",".join(f"{c:g}" for c, _ in truths), "--export-json", export]
        name = os.path.splitext(os.path.basename(path))[0]
        if name in CPUS:
            argv += ["--cpus", str(CPUS[name])]
        run = subprocess.run(argv, capture_output=True, text=True)
        forecasts = {}
        if run.returncode == 0:
            with open(export) as f:
                series = json.load(f)["series"]
            for p in series[0].get("predictions", []) if series else []:
                forecasts[p["count"]] = p.get("forecast")
        for c, truth in truths:
            f = forecasts.get(c)
            if not f:
                out.append((c, truth, None, None))
                continue
            rate, ci = f["rate"], f.get("interval90")
            if kind == "--time":
                out.append((c, truth, 1 / rate, ci and [1 / ci[1], 1 / ci[0]]))
            else:
                out.append((c, truth, rate, ci))
    return len(train), out, (run.stderr.strip() if run.returncode else "")


def summary(name, rows):
    errors = [abs(r["error"]) if r["error"] is not None else float("inf") for r in rows]
    inside = [r["inside"] for r in rows]
    med = statistics.median(errors) if errors else float("nan")
    share = statistics.mean(inside) if inside else float("nan")
    print(f"{name:<34} {len(rows):>3} tables  median error {med:6.1f}%  inside the 90% intervals {share:5.1f}%")
    return med, share


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scalescope", default=os.path.join(ROOT, "target/debug/scalescope"))
    ap.add_argument("--extra")
    ap.add_argument("--json")
    args = ap.parse_args()
    results = []
    print(f"{'table':<40} {'fit on':>6}  {'largest':>8}  {'error':>8}  {'inside':>7}  interval at the largest")
    for path, group in tables(args.extra):
        name = os.path.splitext(os.path.basename(path))[0]
        n, preds, err = predict(args.scalescope, path)
        c, truth, pred, ci = preds[-1]
        error = None if pred is None else 100 * (pred - truth) / truth
        hits = [ci is not None and ci[0] <= t <= ci[1] for _, t, _, ci in preds]
        share = 100 * sum(hits) / len(hits)
        row = {"table": name, "group": group, "tuning": name in TUNING, "fitted_counts": n, "largest": c,
               "measured": truth, "predicted": pred, "interval90": ci, "error": error, "inside": share,
               "counts": [{"count": c, "measured": t, "predicted": p, "interval90": i} for c, t, p, i in preds]}
        results.append(row)
        shown = "—" if error is None else f"{error:+.1f}%"
        interval = "none" if ci is None else f"{ci[0]:.4g}–{ci[1]:.4g} (measured {truth:.4g})"
        note = f"  [{err}]" if err else ""
        print(f"{name:<40} {n:>6}  {c:>8g}  {shown:>8}  {share:>6.0f}%  {interval}{note}")
    corpus = [r for r in results if r["group"] == "corpus"]
    print()
    med, share = summary("all published tables", corpus)
    summary("  tuning tables", [r for r in corpus if r["tuning"]])
    summary("  held-out tables", [r for r in corpus if not r["tuning"]])
    extra = [r for r in results if r["group"] == "extra"]
    if extra:
        summary("extra tables (outside the goals)", extra)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    ok = med <= GOAL_ERROR and share >= GOAL_INSIDE and len(corpus) >= 10
    print(f"goals: median error <= {GOAL_ERROR:g}%, >= {GOAL_INSIDE:g}% inside, >= 10 tables: {'met' if ok else 'NOT met'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
