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
4. The I/O ceiling (`run --ceiling`) against dd, cat and fio on the same files: few large (2 x
   512 MB) and many small (40 x 3 MB), cold (evicted before every read) and warm, at 1 and 2
   readers (2: `xargs -P 2` for dd and cat, two fio jobs on halves of the files). Each tool's
   best of --rounds against the best ceiling of as many `run --ceiling` measurements, taken in
   turn; dd and fio count their own reported rates (start-up left out, as the ceiling does), cat
   its process. Goal: ceiling >= 1.0x the best tool in every case.

Usage: bench/probes.py [--scalescope target/release/scalescope] [--rounds 7] [--dir DIR] [--only ceiling]
"""
import argparse, json, os, re, shutil, statistics, subprocess, tempfile, time


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


def evict(files):
    """Drops the files from the page cache, as scalescope --evict does (posix_fadvise DONTNEED)."""
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)


def warm(files):
    for f in files:
        with open(f, "rb") as h:
            while h.read(1 << 20):
                pass


def halves(files):
    return [files[0::2], files[1::2]]


def dd_rate(files, readers):
    """dd's own reported rate: bytes over the seconds it reports, summed over its processes."""
    cmd = ["xargs", "-P", str(readers), "-n", "1", "sh", "-c", 'dd if="$0" of=/dev/null bs=1M 2>&1 | tail -1']
    start = time.perf_counter()
    out = subprocess.run(cmd, input="\n".join(files), capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - start
    parts = [re.match(r"(\d+) bytes.*copied, ([0-9.]+) s", line) for line in out.splitlines()]
    parts = [m for m in parts if m]
    seconds = sum(float(m[2]) for m in parts) / readers  # readers run at once
    return sum(int(m[1]) for m in parts) / min(seconds, wall)


def cat_rate(files, readers):
    per = max(1, (len(files) + readers - 1) // readers)
    start = time.perf_counter()
    subprocess.run(["xargs", "-P", str(readers), "-n", str(per), "cat"], input="\n".join(files),
                   stdout=subprocess.DEVNULL, check=True, text=True)
    return sum(os.path.getsize(f) for f in files) / (time.perf_counter() - start)


def fio_rate(files, readers, cold, engine):
    """fio's own aggregate bandwidth, one job per reader on its share of the files."""
    if not shutil.which("fio"):
        return None
    cmd = ["fio", "--rw=read", "--bs=1M", "--group_reporting", "--output-format=json",
           "--file_service_type=sequential", f"--invalidate={int(cold)}"] + engine
    for i, part in enumerate(halves(files) if readers == 2 else [files]):
        cmd += [f"--name=r{i}", "--filename=" + ":".join(p.replace(":", "\\:") for p in part)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return json.loads(out.stdout)["jobs"][0]["read"]["bw_bytes"]


def ceiling(exe, folder, cold, tmp):
    out = os.path.join(tmp, "ceiling")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [exe, "run", "-r", "1", "-w", "0", "--no-sample", "--param", "threads=1,2", "-o", out,
           "--ceiling", folder] + (["--evict", folder] if cold else []) + ["--", "true"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    points = json.load(open(os.path.join(out, "results.json")))["ceiling"]["points"]
    return {p["threads"]: (p["bytes_per_s"], p["how"]) for p in points}


def ceilings(exe, tmp, rounds):
    """Part 4: the ceiling against dd, cat and fio."""
    sets = {"large": (2, "512MB"), "small": (40, "3MB")}
    worst = float("inf")
    print(f"I/O ceiling vs the best of dd, cat and fio (best of {rounds} rounds each, MB/s):")
    for name, (count, size) in sets.items():
        folder = os.path.join(tmp, name)
        subprocess.run([exe, "gen", "files", "--dir", folder, "--count", str(count), "--size", size], check=True,
                       stdout=subprocess.DEVNULL)
        files = sorted(os.path.join(folder, f) for f in os.listdir(folder))
        for cold in (True, False):
            best = {1: {}, 2: {}}
            ceil = {1: (0.0, ""), 2: (0.0, "")}
            for _ in range(rounds):
                for readers in (1, 2):
                    tools = {"dd": lambda: dd_rate(files, readers), "cat": lambda: cat_rate(files, readers),
                             "fio psync": lambda: fio_rate(files, readers, cold, ["--ioengine=psync"])}
                    if cold:
                        tools["fio io_uring direct"] = lambda: fio_rate(
                            files, readers, cold, ["--ioengine=io_uring", "--direct=1", "--iodepth=32"])
                    for tool, measure in tools.items():
                        evict(files) if cold else warm(files)
                        rate = measure()
                        if rate:
                            best[readers][tool] = max(best[readers].get(tool, 0.0), rate)
                for readers, (rate, how) in ceiling(exe, folder, cold, tmp).items():
                    if rate > ceil[readers][0]:
                        ceil[readers] = (rate, how)
            for readers in (1, 2):
                tool, top = max(best[readers].items(), key=lambda kv: kv[1])
                ratio = ceil[readers][0] / top
                worst = min(worst, ratio)
                others = ", ".join(f"{t} {r / 1e6:.0f}" for t, r in best[readers].items())
                print(f"  {name:5} {'cold' if cold else 'warm'} x{readers}: ceiling {ceil[readers][0] / 1e6:7.0f} "
                      f"({ceil[readers][1]}) vs {tool} {top / 1e6:.0f} = {ratio:.2f}x   [{others}]")
    print(f"  lowest ratio {worst:.2f} (goal >= 1.0)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scalescope", default="target/release/scalescope")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--dir", help="folder for the inputs (default: a temporary folder on disk)")
    ap.add_argument("--only", choices=["ceiling"], help="run one part only")
    a = ap.parse_args()
    exe = os.path.abspath(a.scalescope)
    with tempfile.TemporaryDirectory(dir=a.dir or os.path.join(os.path.dirname(exe), "..")) as tmp:
        if a.only == "ceiling":
            ceilings(exe, tmp, min(a.rounds, 3))
            return
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
        ceilings(exe, tmp, min(a.rounds, 3))


if __name__ == "__main__":
    main()
