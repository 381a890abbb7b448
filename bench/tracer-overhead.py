#!/usr/bin/env python3
"""The event tracer's cost and accuracy, measured side by side in one run.

`scalescope attach` drives the tracer (it runs the /proc sampler in both arms; `--no-trace` turns
the tracer off), so each pair differs by the tracer alone. Pairs are interleaved.

1. 64 busy threads (`scalescope probe scalable --threads 64`): the workload's throughput with /
   without the tracer (goal: >= 0.97), and the tracer's CPU time.
2. About 10,000 context switches a second (a token passed around two rings of two threads, each
   hop a calibrated amount of work; built here with cc): hops per second with / without the
   tracer (goal: >= 0.97), and the switch rate measured.
   For both, the work done per CPU second of the workload (its rusage) is given too: the cost the
   tracer adds to the workload's own threads (switching its events in and out, writing records),
   which other load on a shared machine does not blur as it blurs throughput.
3. Per thread of case 2, against schedstat: on-CPU time, and off-CPU time (the tracer's time off a
   CPU less schedstat's run-queue time, against wall - on-CPU - run queue; goal: within 2%). The
   tracer's "waiting" intervals include the wake-up latency, which only scheduler tracepoints
   (privileged) could split off, hence the run-queue time from schedstat.

Usage: bench/tracer-overhead.py [--scalescope target/release/scalescope] [--pairs 5] [--seconds 3]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

RINGS = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static long work; static double secs; static volatile unsigned long sink;
static int fds[4][2]; static unsigned long hops[4];
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void *hop(void *a){long i=(long)a;int in=fds[i][0],out=fds[i^1][1];char c;double end=now()+secs;
 while(read(in,&c,1)==1){if(now()>end){close(out);break;}for(long k=0;k<work;k++)sink++;hops[i]++;if(write(out,&c,1)!=1)break;}return 0;}
int main(int argc,char**argv){work=atol(argv[1]);secs=atof(argv[2]);pthread_t t[4];
 for(int i=0;i<4;i++)if(pipe(fds[i]))return 1;
 for(long i=0;i<4;i++)pthread_create(&t[i],0,hop,(void*)i);
 double t0=now();write(fds[0][1],"x",1);write(fds[2][1],"x",1);
 for(int i=0;i<4;i++)pthread_join(t[i],0);
 printf("%.1f\n",(hops[0]+hops[1]+hops[2]+hops[3])/(now()-t0));return 0;}
"""


def attach(exe, pid, seconds, trace, out):
    cmd = [exe, "attach", str(pid), "--duration", f"{seconds}s", "--export-json", out]
    if not trace:
        cmd.append("--no-trace")
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def traced_run(exe, workload, seconds, trace, out):
    """Starts the workload, attaches at once; returns its throughput, its work per CPU second and
    the attach report."""
    t0 = time.monotonic()
    w = subprocess.Popen(workload, stdout=subprocess.PIPE, text=True)
    a = attach(exe, w.pid, seconds + 5, trace, out)
    text = w.stdout.read()
    _, _, ru = os.wait4(w.pid, 0)
    w.returncode = 0
    a.wait()
    rate = throughput(text)
    busy_s = time.monotonic() - t0 - 0.3
    return rate, rate * busy_s / (ru.ru_utime + ru.ru_stime), json.load(open(out))


def throughput(text):
    """The workload's figure: the rings print hops/s; the probe prints `… X ops/s …`."""
    words = text.replace(",", " ").split()
    if "ops/s" in words:
        return float(words[words.index("ops/s") - 1])
    return float(words[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scalescope", default="target/release/scalescope")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3.0)
    a = ap.parse_args()
    exe = os.path.abspath(a.scalescope)
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        src, rings = os.path.join(tmp, "rings.c"), os.path.join(tmp, "rings")
        open(src, "w").write(RINGS)
        subprocess.run(["cc", "-O1", "-pthread", "-o", rings, src], check=True)
        # Calibrate the work per hop to about 10,000 hops (context switches) a second.
        work = 20000
        for _ in range(3):
            rate = float(subprocess.run([rings, str(work), "1"], capture_output=True, text=True).stdout)
            work = max(1, int(work * rate / 10000))
        # As in `scalescope run`, the tracer starts before the workload creates its threads: a
        # shell waits for the attach, then executes the workload (events survive an exec).
        def late(argv):
            return ["sh", "-c", 'sleep 0.3; exec "$@"', "sh"] + argv
        busy = late([exe, "probe", "scalable", "--threads", "64", "--seconds", str(a.seconds)])
        switchy = late([rings, str(work), str(a.seconds)])
        results = {"busy": ([], [], [], [], []), "switchy": ([], [], [], [], [])}
        reports = []
        for i in range(a.pairs):
            for name, workload in (("busy", busy), ("switchy", switchy)):
                for trace in (True, False):
                    out = os.path.join(tmp, f"{name}{i}{trace}.json")
                    figure, per_cpu, report = traced_run(exe, workload, a.seconds, trace, out)
                    results[name][0 if trace else 1].append(figure)
                    results[name][3 if trace else 4].append(per_cpu)
                    if trace:
                        results[name][2].append(report.get("tracer", {}))
                        if name == "switchy":
                            reports.append(report)
        for name, what in (("busy", "64 busy threads (ops/s)"), ("switchy", f"~10,000 switches/s (hops/s, work {work})")):
            on, off, tr, on_cpu, off_cpu = results[name]
            ratio = statistics.median(on) / statistics.median(off)
            per_cpu = statistics.median(on_cpu) / statistics.median(off_cpu)
            cpu = statistics.median([t.get("cpu_s", 0) for t in tr])
            lost = sum(t.get("lost_records", 0) for t in tr)
            print(f"{what}: throughput with / without the tracer {ratio:.4f}, work per CPU second {per_cpu:.4f} "
                  f"(medians of {a.pairs} interleaved pairs; tracer CPU {cpu:.3f} s per {a.seconds:.0f} s run; lost records {lost})")
        print(f"switch rate without the tracer: {statistics.median(results['switchy'][1]):.0f} hops/s; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        on_err, off_err = [], []
        for r in reports:
            traced = {t["tid"]: t for t in r.get("tracer", {}).get("threads", [])}
            for t in r.get("threads", []):
                x = traced.get(t["tid"])
                if not x or t["off_cpu_s"] < 0.05 or t["on_cpu_s"] < 0.05:
                    continue
                on_err.append((x["on_cpu_s"] - t["on_cpu_s"]) / t["on_cpu_s"])
                off = x["off_cpu_waiting_s"] + x["off_cpu_preempted_s"] - t["runqueue_s"]
                off_err.append((off - t["off_cpu_s"]) / t["off_cpu_s"])
        for what, errors in (("on-CPU", on_err), ("off-CPU", off_err)):
            if errors:
                worst = max(errors, key=abs)
                print(f"{what} time per thread, tracer against schedstat: median error {100 * statistics.median(errors):+.2f}%, "
                      f"worst {100 * worst:+.2f}% over {len(errors)} threads")

if __name__ == "__main__":
    sys.exit(main())
