#!/usr/bin/env python3
"""The event tracer's cost and accuracy, measured side by side in one run.

`scalescope attach` drives the tracer (it runs the /proc sampler in both arms; `--no-trace` turns
the tracer off), so each pair differs by the tracer alone. Pairs are interleaved.

1. 64 busy threads (`scalescope probe scalable --threads 64`): the workload's throughput with /
   without the tracer (goal: >= 0.97), and the tracer's CPU time.
2. About 10,000 context switches a second (a token passed around two rings of two threads, each
   hop a calibrated amount of work; built here with cc): hops per second with / without the
   tracer (goal: >= 0.97), and the switch rate measured.
   The same rings with no work per hop switch as fast as the kernel lets them (a few hundred
   thousand times a second): the tracer stops itself early (tracer.stopped_s) rather than slow
   them down for the whole run; their throughput with / without it is given too.
   For both, the work done per CPU second of the workload (its rusage) is given too: the cost the
   tracer adds to the workload's own threads (switching its events in and out, writing records),
   which other load on a shared machine does not blur as it blurs throughput.
3. Per thread of case 2, against the kernel's own account: each thread reads its schedstat (time
   on a CPU, time runnable) just before it ends and prints it with its life. Compared: on-CPU time,
   and off-CPU time (the tracer's time off a CPU less that run-queue time, against life - on-CPU -
   run queue; goal: within 2%). The tracer's "waiting" intervals include the wake-up latency,
   which only scheduler tracepoints (privileged) could split off, hence the run-queue time from
   schedstat. On a virtual machine the hypervisor's steal time is counted differently: schedstat
   leaves it out of a thread's time on a CPU (CONFIG_PARAVIRT_TIME_ACCOUNTING), the tracer's
   clock runs through it. The share of the CPUs' busy time stolen during each run is read from
   /proc/stat, and the errors are given as measured and with that share taken from the tracer's
   on-CPU time (assuming steal falls evenly on the busy threads).

Usage: bench/tracer-overhead.py [--scalescope target/release/scalescope] [--pairs 5] [--seconds 3]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

RINGS = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static long work; static double secs; static volatile unsigned long sink;
static int fds[4][2]; static unsigned long hops[4];
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void *hop(void *a){long i=(long)a;int in=fds[i][0],out=fds[i^1][1];char c;double t0=now(),end=t0+secs;
 while(read(in,&c,1)==1){if(now()>end){close(out);break;}for(long k=0;k<work;k++)sink++;hops[i]++;if(write(out,&c,1)!=1)break;}
 unsigned long long on=0,rq=0;FILE*f=fopen("/proc/thread-self/schedstat","r");
 if(f){if(fscanf(f,"%llu %llu",&on,&rq)!=2)on=rq=0;fclose(f);}
 fprintf(stderr,"thread %d %llu %llu %.0f\n",(int)gettid(),on,rq,(now()-t0)*1e9);return 0;}
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


def cpu_ticks():
    """user, nice, system, idle, iowait, irq, softirq, steal of all CPUs, from /proc/stat."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:9]]


def traced_run(exe, workload, seconds, trace, out):
    """Starts the workload, attaches at once; returns its throughput, its work per CPU second, the
    attach report, the share of the CPUs' busy time stolen meanwhile, and what the workload's
    threads said of themselves (tid -> on-CPU s, run-queue s, life s)."""
    before = cpu_ticks()
    t0 = time.monotonic()
    with tempfile.TemporaryFile(mode="w+") as err:
        w = subprocess.Popen(workload, stdout=subprocess.PIPE, stderr=err, text=True)
        a = attach(exe, w.pid, seconds + 5, trace, out)
        text = w.stdout.read()
        _, _, ru = os.wait4(w.pid, 0)
        w.returncode = 0
        a.wait()
        err.seek(0)
        said = err.read()
    d = [y - x for x, y in zip(before, cpu_ticks())]
    busy = d[0] + d[1] + d[2] + d[5] + d[6] + d[7]
    steal = d[7] / busy if busy else 0.0
    own = {}
    for line in said.splitlines():
        f = line.split()
        if len(f) == 5 and f[0] == "thread":
            own[int(f[1])] = (int(f[2]) * 1e-9, int(f[3]) * 1e-9, float(f[4]) * 1e-9)
    rate = throughput(text)
    busy_s = time.monotonic() - t0 - 0.3
    return rate, rate * busy_s / (ru.ru_utime + ru.ru_stime), json.load(open(out)), steal, own


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
        storm = late([rings, "0", str(a.seconds)])
        results = {k: ([], [], [], [], []) for k in ("busy", "switchy", "storm")}
        reports = []
        for i in range(a.pairs):
            for name, workload in (("busy", busy), ("switchy", switchy), ("storm", storm)):
                for trace in (True, False):
                    out = os.path.join(tmp, f"{name}{i}{trace}.json")
                    figure, per_cpu, report, steal, own = traced_run(exe, workload, a.seconds, trace, out)
                    results[name][0 if trace else 1].append(figure)
                    results[name][3 if trace else 4].append(per_cpu)
                    if trace:
                        results[name][2].append(report.get("tracer", {}))
                        if name == "switchy":
                            reports.append((report, steal, own))
        cases = (("busy", "64 busy threads (ops/s)"), ("switchy", f"~10,000 switches/s (hops/s, work {work})"),
                 ("storm", "as many switches as the kernel allows (hops/s, no work)"))
        for name, what in cases:
            on, off, tr, on_cpu, off_cpu = results[name]
            ratio = statistics.median(on) / statistics.median(off)
            per_cpu = statistics.median(on_cpu) / statistics.median(off_cpu)
            cpu = statistics.median([t.get("cpu_s", 0) for t in tr])
            lost = sum(t.get("lost_records", 0) for t in tr)
            print(f"{what}: throughput with / without the tracer {ratio:.4f}, work per CPU second {per_cpu:.4f} "
                  f"(medians of {a.pairs} interleaved pairs; tracer CPU {cpu:.3f} s per {a.seconds:.0f} s run; lost records {lost})")
            stops = [t["stopped_s"] for t in tr if t.get("stopped_s") is not None]
            if stops:
                print(f"  the tracer stopped itself in {len(stops)} of {len(tr)} traced runs, "
                      f"after {statistics.median(stops):.2f} s (median)")
        print(f"switch rate without the tracer: {statistics.median(results['switchy'][1]):.0f} hops/s; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        errors = {k: [] for k in ("on", "off", "on_steal", "off_steal")}
        steals = []
        for r, steal, own in reports:
            steals.append(steal)
            traced = {t["tid"]: t for t in r.get("tracer", {}).get("threads", [])}
            for tid, (on, rq, life) in own.items():
                x = traced.get(tid)
                off = life - on - rq
                if not x or off < 0.05 or on < 0.05:
                    continue
                for suffix, stolen in (("", 0.0), ("_steal", steal * x["on_cpu_s"])):
                    t_on = x["on_cpu_s"] - stolen
                    t_off = x["off_cpu_waiting_s"] + x["off_cpu_preempted_s"] + stolen - rq
                    errors["on" + suffix].append((t_on - on) / on)
                    errors["off" + suffix].append((t_off - off) / off)
        print(f"steal time during the traced runs: {100 * statistics.median(steals):.1f}% of the CPUs' busy time "
              f"(median; {100 * min(steals):.1f}-{100 * max(steals):.1f}%)")
        for key, what in (("on", "on-CPU"), ("off", "off-CPU")):
            for suffix, how in (("", "as measured"), ("_steal", "steal taken from the tracer's on-CPU time")):
                e = errors[key + suffix]
                if e:
                    worst = max(e, key=abs)
                    print(f"{what} time per thread, tracer against the thread's own schedstat ({how}): median error "
                          f"{100 * statistics.median(e):+.2f}%, worst {100 * worst:+.2f}% over {len(e)} threads")

if __name__ == "__main__":
    sys.exit(main())
