#!/usr/bin/env python3
"""Does `scalescope attach` say of a window of a running probe what a sweep says of the probe?

Each zoo probe with a known problem is started at the count its sweep judges (2 threads, or 4x
the CPUs for oversubscription) with enough work for several seconds; after a second, scalescope
attaches to it for `--seconds` and its first finding (noise left out) is compared with the one a
sweep of that probe raises first (bench/diagnosis-accuracy.py). A window has no baseline and no
start-up or tail of its own, so three kinds of verdict are out of its reach: extra CPU for the
same work (false sharing, memory bandwidth: only a sweep compares with one thread), a start-up or
a tail (a window cut from the middle of a run sees one thread working: serial work, not a
phase), and verdicts on the parameter (threads ignored, runs too short). For those the window
must raise no alarm: its first finding may be `scales-well` (the CPUs were busy) or a cause at
`info`. Prints each case, `N/M agree` for the cases within reach and the alarms, and exits 1 when
a case within reach disagrees or an alarm is raised.

Usage: bench/attach-agreement.py [--scalescope target/release/scalescope] [--seconds 3]
"""
import argparse, os, subprocess, sys, tempfile, time


def cases(files, cpus):
    # (name, probe arguments, expected first finding or None when out of a window's reach)
    return [
        ("scalable", ["scalable", "--threads", "2", "--seconds", "8"], "scales-well"),
        ("lock --critical 0.6", ["lock", "--threads", "2", "--critical", "0.6", "--ops", "30000000"], "lock-contention"),
        ("starved", ["starved", "--threads", "2", "--ops", "30000000"], "wait-for-work"),
        ("mmap-churn", ["mmap-churn", "--threads", "2", "--ops", "20000000"], "kernel-contention"),
        ("io", ["io", "--threads", "2", "--files", files, "--reads", "4000000"], "io-bound"),
        ("scalable oversubscribed", ["scalable", "--threads", str(4 * cpus), "--seconds", "8"], "cpu-oversubscription"),
        ("yield oversubscribed", ["yield", "--threads", str(2 * cpus), "--ops", "20000000"], "cpu-oversubscription"),
        ("serial --serial 0.3 (a phase)", ["serial", "--threads", "2", "--serial", "0.3", "--ops", "50000000"], None),
        ("imbalance (a tail)", ["imbalance", "--threads", "2", "--ops", "50000000"], None),
        ("false-sharing (extra CPU)", ["false-sharing", "--threads", "2", "--ops", "30000000"], None),
        ("membw (extra CPU)", ["membw", "--threads", "2", "--passes", "400"], None),
    ]


def first(text):
    """The first finding's kind and severity in attach's output, noise left out."""
    found = []
    for line in text.splitlines()[next((i for i, l in enumerate(text.splitlines()) if l.startswith("findings")), 0):]:
        line = line.strip()
        if line.startswith("- [") and "] " in line:
            sev, rest = line[3:].split("] ", 1)
            kind = rest.split(":", 1)[0]
            if kind != "noisy-measurement":
                found.append((kind, sev))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scalescope", default="target/release/scalescope")
    ap.add_argument("--seconds", type=float, default=3.0)
    a = ap.parse_args()
    exe = os.path.abspath(a.scalescope)
    cpus = os.cpu_count()
    agree, within, alarms = 0, 0, []
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        files = os.path.join(tmp, "files")
        subprocess.run([exe, "gen", "files", "--dir", files, "--count", "2", "--size", "256MB"], check=True,
                       stdout=subprocess.DEVNULL)
        for name, args, expect in cases(files, cpus):
            if args[0] == "io":
                subprocess.run([exe, "probe", "io", "--files", files, "--reads", "1", "--threads", "1"],
                               stdout=subprocess.DEVNULL)
                for f in os.listdir(files):
                    with open(os.path.join(files, f), "rb") as fh:
                        os.posix_fadvise(fh.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
            probe = subprocess.Popen([exe, "probe", *args], stdout=subprocess.DEVNULL)
            time.sleep(1.0)
            o = subprocess.run([exe, "attach", str(probe.pid), "--duration", f"{a.seconds}s"], capture_output=True,
                               text=True, env=dict(os.environ, NO_COLOR="1"))
            ran_out = probe.poll() is not None
            probe.kill()
            probe.wait()
            found = first(o.stdout)
            shown = ", ".join(f"{k}[{s[0]}]" for k, s in found) or "(none)"
            if expect:
                within += 1
                ok = bool(found) and found[0][0] == expect
                agree += ok
            else:
                ok = not any(s in ("medium", "high") for _, s in found)
                if not ok:
                    alarms.append(f"{name}: {shown}")
            note = " (the probe ended inside the window: give it more work)" if ran_out else ""
            print(f"{'ok ' if ok else 'BAD'} {name:<32} expect {expect or 'no alarm':<22} attach: {shown}{note}",
                  flush=True)
    print(f"\n{agree}/{within} agree with a sweep's first finding")
    print("alarms where a window cannot judge: " + ("none" if not alarms else "; ".join(alarms)))
    return 0 if agree == within and not alarms else 1


if __name__ == "__main__":
    sys.exit(main())
