#!/usr/bin/env python3
"""Checks the what-if of every cause finding against the real fix.

Each case sweeps a zoo probe, or a real program, over threads=1,2 with its problem, reads the
what-if of the finding that names it (the speed-up predicted without the cause, with its 95%
interval), then sweeps the same work with the setting that removes the cause and measures the
speed-up at the same count. The zoo probes' knobs: no critical section, no set-up lock, no serial
phase, even shares, enough producers, padded counters, a process (and a memory map) per worker.
The real programs: CPU-bound pure Python, Ruby and Perl, whose threads take turns on the
interpreter's lock (or a lock around their work), against the same work in processes (or without
the lock); and gzip run by `xargs -P` over three equal files, where the third runs alone at 2
workers, against the same text split in four.
Prints predicted against measured, the error, and whether the measurement fell inside the
interval. The goal: measured within 10% of the prediction and inside its interval in at least 90%
of the cases; exits 1 below it.

Usage: bench/what-if.py [--scalescope target/release/scalescope] [--runs 5] [--only NAME]
"""
import argparse, json, os, random, shutil, subprocess, sys, tempfile

GOAL_ERROR = 0.10
GOAL_SHARE = 0.90


# The same pure-Python work in n threads (the GIL lets one run at a time) or n processes.
PY = """import sys, threading, multiprocessing as mp
n = int(sys.argv[1])
def work():
    s = 0
    for i in range(8000000 // n): s += i * i
Worker = mp.Process if sys.argv[2] == "processes" else threading.Thread
ws = [Worker(target=work) for _ in range(n)]
[w.start() for w in ws]; [w.join() for w in ws]
"""

# Pure-Ruby work in n threads (MRI's GVL) or n forked processes.
RUBY = """n = ARGV[0].to_i
work = -> { s = 0; (40_000_000 / n).times { |i| s += i * i % 7 }; s }
if ARGV[1] == "processes"
  (1..n).map { fork { work.call } }.each { |pid| Process.wait(pid) }
else
  (1..n).map { Thread.new { work.call } }.each(&:join)
end
"""

# Perl threads doing their work holding one shared lock, or without it.
PERL = """use strict; use threads; use threads::shared;
my ($n, $how) = @ARGV; my $total = 1_200_000; my $c :shared = 0;
sub piece { my ($i) = @_; my $s = 0; $s += $_ * $i % 7 for 1 .. 20; $s }
sub work {
    my $mine = 0;
    for my $i (1 .. $total / $n) { if ($how eq "locked") { lock($c); $c += piece($i) } else { $mine += piece($i) } }
    lock($c); $c += $mine;
}
$_->join for map { threads->create(\\&work) } 1 .. $n;
"""


def write_text(path, size, rng, words):
    """Compressible text of `size` bytes: lines of words drawn from a fixed vocabulary."""
    lines, n = [], 0
    while n < size:
        line = " ".join(rng.choice(words) for _ in range(12)) + "\n"
        lines.append(line)
        n += len(line)
    with open(path, "w") as f:
        f.write("".join(lines))


def pieces(tmp):
    """The same amount of text in three files and in four, for gzip under `xargs -P`."""
    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(5000)]
    dirs = []
    for n in (3, 4):
        d = os.path.join(tmp, f"in{n}")
        os.makedirs(d, exist_ok=True)
        for i in range(n):
            write_text(os.path.join(d, f"part{i}"), 36_000_000 // n, rng, words)
        dirs.append(d)
    return dirs


def have(program):
    return shutil.which(program) is not None


def cases(exe, tmp):
    p = lambda *a: [exe, "probe", *a, "--threads", "{threads}"]
    scripts = {"work.py": PY, "work.rb": RUBY, "work.pl": PERL}
    for name, text in scripts.items():
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    py, rb, pl = (os.path.join(tmp, n) for n in ("work.py", "work.rb", "work.pl"))
    # The interpreter itself, not a wrapper script in front of it (pyenv's shim is a shell script).
    python = sys.executable
    three, four = pieces(tmp)
    gzip = lambda d: ["sh", "-c", f"printf '%s\\n' {d}/* | xargs -P {{threads}} -n 1 gzip -6 -c > /dev/null"]
    # (name, kind the what-if is read from, command with the cause, command with the cause removed,
    #  the program it needs)
    return [
        ("setup --setup 0.3", "lock-contention", p("setup", "--setup", "0.3"), p("setup", "--setup", "0.3", "--unlocked"), None),
        ("lock --critical 0.6", "lock-contention", p("lock", "--critical", "0.6"), p("lock", "--critical", "0"), None),
        ("serial --serial 0.3", "serial-phase", p("serial", "--serial", "0.3"), p("serial", "--serial", "0"), None),
        ("imbalance", "load-imbalance", p("imbalance"), p("imbalance", "--balanced"), None),
        ("starved", "wait-for-work", p("starved"), p("starved", "--producers", "2"), None),
        ("false-sharing", "on-cpu-inefficiency", p("false-sharing"),
         p("false-sharing", "--padded"), None),
        ("mmap-churn", "kernel-contention", p("mmap-churn"), p("mmap-churn", "--processes"), None),
        ("python threads (GIL)", "lock-contention", [python, py, "{threads}", "threads"],
         [python, py, "{threads}", "processes"], None),
        ("ruby threads (GVL)", "lock-contention", ["ruby", rb, "{threads}", "threads"],
         ["ruby", rb, "{threads}", "processes"], "ruby"),
        ("perl threads, one lock", "lock-contention", ["perl", pl, "{threads}", "locked"],
         ["perl", pl, "{threads}", "free"], "perl"),
        # Too few pieces: at 2 workers the third file runs alone, idle capacity with no work.
        ("xargs gzip, 3 pieces", ("serial-fraction", "load-imbalance"), gzip(three), gzip(four), "gzip"),
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
        for i, (name, kind, cmd, fixed, needs) in enumerate(cases(exe, tmp)):
            if a.only and not name.startswith(a.only):
                continue
            if needs and not have(needs):
                print(f"skipped: {name} ({needs} not installed)")
                continue
            doc = sweep(exe, os.path.join(tmp, f"c{i}"), cmd, a.runs)
            kinds = kind if isinstance(kind, tuple) else (kind,)
            kind = " or ".join(kinds) if len(kinds) > 1 else kinds[0]
            finding = next((f for f in doc["findings"] if f["kind"] in kinds and f.get("what_if")), None)
            measured = speedup_at(sweep(exe, os.path.join(tmp, f"f{i}"), fixed, a.runs), 2.0)
            if finding is None or measured is None:
                rows.append((name, kind, None, None, None, measured, False))
                continue
            kind = finding["kind"]
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
