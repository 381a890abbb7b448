#!/usr/bin/env python3
"""How often the diagnosis is right on real programs nobody wrote for it.

Sweeps programs from Debian packages (compressors, make -j, xargs -P, GNU parallel, sort,
sysbench, an interpreter, an OpenMP program, image tools, dd, fio) over the parameter that counts
their threads, and compares the first finding with what is known of each program on this kind of
machine: the compressors, make, xargs and the like scale; a pure-Python thread pool waits on the
interpreter's lock; GraphicsMagick decodes a PNG on one thread (libpng) before its OpenMP blur;
a pipe limited to half of what one pigz thread compresses starves its consumer; reads of an evicted file wait for the
disk; a program without threads ignores the parameter.

A case is right when its first finding is the expected one. A false alarm is a finding above
"info" on a sweep whose efficiency at the largest count is 90% or more, or on a case that is
expected to scale. Prints every case (efficiency, first finding, the findings above info), then
the accuracy, the false alarms and, with --repeat, how often each case gave the same answer.
Exits 1 when accuracy is below 90% or any false alarm was raised. Cases whose program is not
installed are skipped, and said so.

Packages: pigz pbzip2 lbzip2 xz-utils make gcc findutils parallel coreutils sysbench python3
  graphicsmagick pv fio

Usage: bench/real-programs.py [--scalescope target/release/scalescope] [--repeat 1] [--only NAME]
"""
import argparse, json, os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from findings_common import efficiency  # noqa: E402

PY_GIL = """import threading, sys
n = int(sys.argv[1])
def work():
    s = 0
    for i in range(6000000 // n): s += i * i
ts = [threading.Thread(target=work) for _ in range(n)]
[t.start() for t in ts]; [t.join() for t in ts]"""


def cases(d, feed_mb_s=20):
    """(name, programs needed, scalescope options, command, expected first finding). `feed_mb_s`
    is the rate at which pv feeds pigz: below what one pigz thread compresses on this machine, so
    that the workers are starved at every count."""
    t40, f32k = f"{d}/t40.txt", f"{d}/small/32k.txt"
    xargs_gzip = f"ls {d}/files/* | xargs -P {{threads}} -n 2 sh -c 'gzip -6 -c \"$@\" > /dev/null' _"
    par_gzip = f"ls {d}/files/* | parallel -j {{threads}} 'gzip -6 -c {{}} > /dev/null'"
    return [
        ("pigz", ["pigz"], [], ["pigz", "-p", "{threads}", "-c", t40], "scales-well"),
        ("xz", ["xz"], [], ["xz", "-T{threads}", "-0", "--block-size=2MiB", "-c", t40], "scales-well"),
        ("pbzip2", ["pbzip2"], [], ["pbzip2", "-p{threads}", "-c", "-k", t40], "scales-well"),
        ("lbzip2", ["lbzip2"], [], ["lbzip2", "-n", "{threads}", "-c", t40], "scales-well"),
        ("make -j", ["make", "gcc"], ["--prepare", f"make -s -C {d}/mk clean"],
         ["make", "-s", "-C", f"{d}/mk", "-j{threads}"], "scales-well"),
        ("xargs -P gzip", ["xargs", "gzip"], ["--shell"], [xargs_gzip], "scales-well"),
        ("parallel gzip", ["parallel", "gzip"], ["--shell"], [par_gzip], "scales-well"),
        ("sysbench cpu", ["sysbench"], [],
         ["sysbench", "cpu", "--threads={threads}", "--events=8000", "--time=0", "run"], "scales-well"),
        ("python threads (GIL)", ["/usr/bin/python3"], [], ["/usr/bin/python3", "-c", PY_GIL, "{threads}"],
         "lock-contention"),
        ("sysbench mutex", ["sysbench"], [],
         ["sysbench", "mutex", "--threads={threads}", "--mutex-num=1", "--mutex-locks=2000000",
          "--mutex-loops=100", "run"], "lock-contention"),
        ("gm convert (OpenMP)", ["gm"], ["--env", "OMP_NUM_THREADS={threads}"],
         ["gm", "convert", f"{d}/big.png", "-blur", "0x4", "-resize", "150%", "null:"], "serial-phase"),
        ("pv | pigz", ["pv", "pigz"], ["--shell"], [f"pv -qL {feed_mb_s}m {t40} | pigz -p {{threads}} > /dev/null"],
         "wait-for-work"),
        ("sha256sum", ["sha256sum"], [], ["sha256sum", t40], "threads-ignored"),
        # Less than one of pigz's 128 KiB blocks: runs of ~2.5 ms, 1.1 ms of them pigz's start-up.
        ("pigz on 32 KB", ["pigz"], ["-r", "5"], ["pigz", "-p", "{threads}", "-c", f32k], "startup-dominated"),
        ("dd, evicted", ["dd"], ["--param", "bs=64K,1M", "--evict", f"{d}/big.bin"],
         ["dd", f"if={d}/big.bin", "of=/dev/null", "bs={bs}"], "io-bound"),
        # Each job reads --io_size: the work grows with the jobs (--weak).
        ("fio randread, evicted", ["fio"], ["--weak", "--evict", f"{d}/big.bin"],
         ["fio", "--name=r", f"--filename={d}/big.bin", "--rw=randread", "--bs=4k", "--size=400M",
          "--io_size=40M", "--numjobs={threads}", "--ioengine=psync", "--group_reporting", "--thread"],
         "io-bound"),
    ]


def have(program):
    return shutil.which(program) is not None or os.access(program, os.X_OK)


def prepare(exe, d):
    """The inputs: 40 MB of text, 40 files of 1 MB, one of 32 KB, a PNG, 16 C files, an evictable 400 MB file."""
    run = lambda *c, **k: subprocess.run(list(c), check=True, stdout=subprocess.DEVNULL, **k)
    if not os.path.exists(f"{d}/t40.txt"):
        run(exe, "gen", "text", "--out", f"{d}/t40.txt", "--size", "40MB")
    os.makedirs(f"{d}/files", exist_ok=True)
    with open(f"{d}/t40.txt", "rb") as f:
        for i in range(1, 41):
            with open(f"{d}/files/f{i}.txt", "wb") as o:
                o.write(f.read(1 << 20))
    os.makedirs(f"{d}/small", exist_ok=True)
    with open(f"{d}/t40.txt", "rb") as f, open(f"{d}/small/32k.txt", "wb") as o:
        o.write(f.read(32 << 10))
    os.makedirs(f"{d}/mk", exist_ok=True)
    with open(f"{d}/mk/Makefile", "w") as m:
        m.write("SRCS := $(wildcard u*.c)\nall: $(SRCS:.c=.o)\n%.o: %.c\n\tgcc -O2 -c $< -o $@\n"
                "clean:\n\trm -f *.o\n")
    for u in range(1, 17):
        with open(f"{d}/mk/u{u}.c", "w") as c:
            c.write("#include <math.h>\n")
            for i in range(60):
                c.write(f"double f{i}(double x) {{ double s = 0; for (int i = 0; i < 100; i++) "
                        f"{{ s += sin(x*i+{i}) * cos(x/(i+1)) + {u}.{i}; }} return s; }}\n")
    # The PNG for the GraphicsMagick case, made by GraphicsMagick itself (a `convert` on PATH may
    # be something other than ImageMagick's).
    if have("gm") and not os.path.exists(f"{d}/big.png"):
        run("gm", "convert", "-size", "2000x2000", "xc:", "+noise", "Random", f"{d}/big.png")
    if not os.path.exists(f"{d}/big.bin"):
        run("dd", "if=/dev/urandom", f"of={d}/big.bin", "bs=1M", "count=400", stderr=subprocess.DEVNULL)


def feed_rate(d):
    """Half of what one pigz thread compresses here, in whole MB/s (20 without pigz)."""
    if not have("pigz"):
        return 20
    t = time.monotonic()
    subprocess.run(["pigz", "-p", "1", "-c", f"{d}/t40.txt"], check=True, stdout=subprocess.DEVNULL)
    return max(1, int(0.5 * 40 / (time.monotonic() - t)))


def sweep(exe, d, i, opts, cmd, runs):
    out = os.path.join(d, f"r{i}")
    shutil.rmtree(out, ignore_errors=True)
    args = [exe, "run", "-o", out, "-w", "1"]
    args += [] if "-r" in opts else ["-r", str(runs)]
    args += [] if "--param" in opts else ["--param", "threads=1,2"]
    p = subprocess.run(args + opts + ["--"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, env=dict(os.environ, NO_COLOR="1"))
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1:] or ["no message"]
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f), None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scalescope", default="target/release/scalescope")
    ap.add_argument("--repeat", type=int, default=1, help="sweeps of each case (stability)")
    ap.add_argument("--runs", type=int, default=3, help="runs per point")
    ap.add_argument("--only", help="cases whose name contains this")
    ap.add_argument("--dir", help="where the inputs are made (kept); a temporary folder by default")
    a = ap.parse_args()
    exe = os.path.abspath(a.scalescope)
    tmp = None
    d = a.dir or (tmp := tempfile.mkdtemp(prefix="scalescope-real-", dir="/var/tmp"))
    os.makedirs(d, exist_ok=True)
    try:
        prepare(exe, d)
        rate = feed_rate(d)
        chosen = [c for c in cases(d, rate) if not a.only or a.only in c[0]]
        right, total, alarms, skipped, answers = 0, 0, [], [], {}
        for rep in range(a.repeat):
            for i, (name, need, opts, cmd, expect) in enumerate(chosen):
                missing = [p for p in need if not have(p)]
                if missing:
                    if rep == 0:
                        skipped.append(f"{name} ({', '.join(missing)} not installed)")
                    continue
                doc, err = sweep(exe, d, i, opts, cmd, a.runs)
                total += 1
                if doc is None:
                    print(f"{name:24} sweep failed: {err[0]}")
                    answers.setdefault(name, []).append("failed")
                    continue
                f = [x for x in doc.get("findings", []) if x["kind"] != "noisy-measurement"]
                first = f[0]["kind"] if f else "none"
                serious = [f"{x['kind']} ({x['severity']})" for x in f if x["severity"] in ("medium", "high")]
                eff = efficiency(doc)
                ok = first == expect
                right += ok
                answers.setdefault(name, []).append(first)
                if serious and (expect == "scales-well" or (eff is not None and eff >= 0.9)):
                    alarms.append(f"{name}: {', '.join(serious)} at efficiency {eff:.0%}" if eff is not None
                                  else f"{name}: {', '.join(serious)}")
                e = f"{eff:5.0%}" if eff is not None else "    —"
                print(f"{'ok ' if ok else 'BAD'} {name:24} eff {e}  first: {first:20} expected: {expect:18}"
                      f" above info: {', '.join(serious) or '—'}", flush=True)
        print()
        for s in skipped:
            print(f"skipped: {s}")
        if a.repeat > 1:
            same = sum(1 for v in answers.values() if len(set(v)) == 1)
            print(f"stable: {same}/{len(answers)} cases gave the same first finding in all {a.repeat} repeats")
            for n, v in answers.items():
                if len(set(v)) > 1:
                    print(f"  {n}: {', '.join(v)}")
        acc = right / total if total else 0.0
        print(f"accuracy: {right}/{total} sweeps ({acc:.0%}) had the expected first finding")
        print(f"false alarms: {len(alarms)}")
        for x in alarms:
            print(f"  {x}")
        sys.exit(0 if total and acc >= 0.9 and not alarms else 1)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
