#!/usr/bin/env python3
"""How often the diagnosis is right on real programs nobody wrote for it.

Sweeps programs from Debian packages and language runtimes over the parameter that counts their
threads (or processes), and compares the first finding with what is known of each program on this
kind of machine (2 CPUs), established without scalescope: the program's documented threading model,
and wall time, CPU time and speed-up measured at each count (each case's comment gives the figures).
The corpus:

- programs designed to scale that reach 90% efficiency or more at 2 threads expect `scales-well`:
  the compressors (pigz, xz, pbzip2, lbzip2, zstd, 7-Zip), make -j, xargs -P, GNU parallel,
  sysbench cpu, stress-ng --cpu, openssl speed -multi (a fixed-time benchmark, read through its
  throughput), a Python process pool, Python threads hashing in C with the GIL released, numpy's
  matrix product on OpenBLAS, Node.js worker_threads, Go goroutines, Perl ithreads, a Java fixed
  thread pool;
- a global interpreter lock (CPython's GIL, Ruby's GVL), a Perl `lock` held around the work, a Go
  `sync.Mutex` held around it, a `multiprocessing.Lock` held by Python processes around theirs, a
  Java monitor (`synchronized`) and sysbench's one mutex serialise their threads: `lock-contention`;
- GraphicsMagick decodes a PNG on one thread (libpng) before its OpenMP blur: `serial-phase`;
  GNU sort and SQLite's index build merge on one thread after their parallel sort:
  `serial-fraction` (SQLite's from threads=1, which already keeps 1.55 CPUs busy, reads as the
  busy baseline below);
- a pipe limited to half of what one pigz thread compresses, or fed by one gzip, starves its
  consumer: `wait-for-work`;
- reads of an evicted file wait for the disk: `io-bound`;
- a program without threads (sha256sum) or one that does not use the count for this input
  (xz decompressing a single-block file) ignores the parameter: `threads-ignored`;
- runs of a few milliseconds: `startup-dominated`;
- counts beyond what the CPUs can run gain nothing: `cpu-oversubscription` (pigz over 1,2,4,8;
  Java's common pool, whose caller thread works beside `parallelism` workers; stress-ng's futex
  stressor, two busy processes per instance);
- a superlinear speed-up (each thread's half of a pointer chase fits its core's L2, the whole does
  not) needs an explanation rather than praise: `on-cpu-inefficiency`, the kind that compares the
  CPU per unit of work with the baseline's (there the baseline is the inefficient run).

The cases are split into a TUNING half and an EVALUATION half, by hand, so that each half mixes
scaling programs, locks, serial parts, I/O, ignored parameters, start-up and the runtimes; tune
scalescope's rules on one half, check them on the other. A case whose miss led to a rule's change
moves to the tuning half and a new program takes its place in the evaluation half (Java's parallel
stream and SQLite's index build, whose busy baselines shaped the rule that reads such a baseline
first, gave way to a Java fixed pool and a Go mutex; the Go mutex, whose idle thread parked in
Go's scheduler shaped the rule on a runtime's idle threads, gave way to Python processes taking
turns on one multiprocessing.Lock; those, whose waits the accounting took for a coordinator's
until a waiter that works as long again after its wait was read as waiting for its turn, gave way
to Java threads synchronized on one monitor; those, whose waiting thread's wait fell off the
list of a run's waits behind the JVM's helper threads' until the work threads' waits came first,
gave way to stress-ng's matrix stressor).

A case is right when its first finding (noise findings left out) is the expected one. A false
alarm is a finding above "info", other than the case's expected kind, on a sweep whose efficiency
at the largest count that fits the CPUs is 90% or more, or on a case that is expected to scale.
Prints every case (efficiency, first finding, expected one, the sweep's wall time, the findings
above info, and "[busy machine]" where a medium noisy-measurement put the gap down to other load),
then for each half the accuracy, the false alarms, the sweeps that ended undecided ("the runs
cannot tell") on a program 5 points or more from the 90% line, and the time spent in scalescope,
and with --repeat how often each case gave the same answer. Exits 1 when the accuracy of a half
that ran is below 90% or it raised a false alarm. Cases whose program is not installed are
skipped, and said so. Every input is made by the script (nothing is downloaded); scalescope's
output of each sweep is kept beside its results folder (r<i>.log) in --dir.

Packages: pigz pbzip2 lbzip2 xz-utils zstd p7zip-full make gcc findutils parallel coreutils
  sysbench stress-ng python3 python3-numpy libopenblas0-pthread graphicsmagick pv fio sqlite3
  nodejs openjdk-17-jdk-headless golang-go perl ruby openssl

Usage: bench/real-programs.py [--scalescope target/release/scalescope] [--half tune|eval|all]
  [--runs N] [--repeat 1] [--only NAME] [--dir DIR]
  (without --runs no -r is passed: scalescope chooses the runs of each point)
"""
import argparse, json, os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from findings_common import efficiency  # noqa: E402

# n processes taking turns on one multiprocessing.Lock (shared with the integration tests).
MP_LOCK = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "tests", "workloads", "mp_lock.py")

PY_GIL = """import threading, sys
n = int(sys.argv[1])
def work():
    s = 0
    for i in range(6000000 // n): s += i * i
ts = [threading.Thread(target=work) for _ in range(n)]
[t.start() for t in ts]; [t.join() for t in ts]"""

# A process pool: 48 pieces of pure-Python work shared among n processes (fork).
PY_POOL = """import multiprocessing as mp, sys
def work(k):
    s = 0
    for i in range(k * 1000000, (k + 1) * 1000000): s += i * i % 7
    return s
with mp.Pool(int(sys.argv[1])) as p:
    print(sum(p.map(work, range(48), chunksize=1)))"""

# Threads that spend their time in OpenSSL's SHA-256, which hashlib calls with the GIL released.
PY_HASH = """import hashlib, sys, threading
n = int(sys.argv[1]); buf = b"x" * (64 << 20)
def work():
    for _ in range(64 // n): hashlib.sha256(buf).digest()
ts = [threading.Thread(target=work) for _ in range(n)]
[t.start() for t in ts]; [t.join() for t in ts]"""

NUMPY_MM = """import numpy as np
a = np.random.default_rng(1).random((3000, 3000)); b = a.T.copy()
for _ in range(2): c = a @ b"""

SOURCES = {
    # 64 pieces of floating-point work dealt to n worker_threads.
    "workers.js": """const { Worker, isMainThread, workerData, parentPort } = require('worker_threads');
const TOTAL = 64;
function unit(k) { let s = 0; for (let i = 0; i < 3e6; i++) s = (s + Math.sqrt(i * k + 1)) % 1e9; return s; }
if (isMainThread) {
  const n = +process.argv[2]; let done = 0, sum = 0;
  for (let w = 0; w < n; w++) {
    const wk = new Worker(__filename, { workerData: { w, n } });
    wk.on('message', (m) => { sum += m; if (++done === n) console.log(sum); });
  }
} else {
  let s = 0; for (let k = workerData.w; k < TOTAL; k += workerData.n) s += unit(k);
  parentPort.postMessage(s);
}
""",
    # A parallel stream of 64 pieces on the common ForkJoinPool (the caller thread works too).
    "Par.java": """import java.util.stream.LongStream;
public class Par {
    public static void main(String[] a) {
        long s = LongStream.range(0, 64).parallel().map(k -> {
            long x = k; for (int i = 0; i < 20_000_000; i++) x = x * 6364136223846793005L + 1442695040888963407L ^ (x >>> 29);
            return x & 1023; }).sum();
        System.out.println(s);
    }
}
""",
    # A fixed pool of n threads and 64 independent tasks; the main thread only waits for them.
    "Pool.java": """import java.util.concurrent.*;
import java.util.*;
public class Pool {
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]);
        ExecutorService p = Executors.newFixedThreadPool(n);
        List<Future<Long>> fs = new ArrayList<>();
        for (int k = 0; k < 64; k++) {
            final long k0 = k;
            fs.add(p.submit(() -> { long x = k0; for (int i = 0; i < 20_000_000; i++) x = x * 6364136223846793005L + 1442695040888963407L ^ (x >>> 29); return x & 1023; }));
        }
        long s = 0; for (Future<Long> f : fs) s += f.get();
        p.shutdown();
        System.out.println(s);
    }
}
""",
    # n threads doing 1,200 pieces of work between them, each piece inside one synchronized block.
    "Sync.java": """public class Sync {
    static final Object LOCK = new Object();
    static long state = 1;
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]);
        Thread[] ts = new Thread[n];
        for (int t = 0; t < n; t++) {
            ts[t] = new Thread(() -> {
                for (int k = 0; k < 1200 / n; k++) {
                    synchronized (LOCK) {
                        long x = state;
                        for (int i = 0; i < 1_000_000; i++) x = x * 6364136223846793005L + 1442695040888963407L ^ (x >>> 29);
                        state = x;
                    }
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        System.out.println(state & 1023);
    }
}
""",
    # GOMAXPROCS goroutines that do all their work holding one sync.Mutex.
    "golock.go": """package main

import (
	"fmt"
	"runtime"
	"sync"
)

func main() {
	n := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	state := uint64(1)
	per := 12000 / n
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < per; k++ {
				mu.Lock()
				x := state
				for i := 0; i < 100000; i++ {
					x = x*6364136223846793005 + 1442695040888963407 ^ (x >> 29)
				}
				state = x
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	fmt.Println(state & 1023)
}
""",
    # GOMAXPROCS goroutines taking 64 pieces from a channel.
    "gor.go": """package main

import (
	"fmt"
	"runtime"
	"sync"
)

func main() {
	n := runtime.GOMAXPROCS(0)
	jobs := make(chan int, 64)
	for k := 0; k < 64; k++ {
		jobs <- k
	}
	close(jobs)
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := uint64(0)
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				x := uint64(k)
				for i := 0; i < 15000000; i++ {
					x = x*6364136223846793005 + 1442695040888963407 ^ (x >> 29)
				}
				mu.Lock()
				total += x & 1023
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	fmt.Println(total)
}
""",
    # Perl ithreads: each thread is an interpreter of its own; the work is split n ways.
    "threads.pl": """use strict; use threads;
my $n = shift; my $total = 30_000_000;
sub work { my ($k) = @_; my $s = 0; for my $i (1 .. $total / $n) { $s += ($i * $k) % 7 } return $s }
my @t = map { threads->create(\\&work, $_) } 1 .. $n;
my $s = 0; $s += $_->join for @t; print "$s\\n";
""",
    # The same, but every piece of work is done holding one shared lock.
    "lock.pl": """use strict; use threads; use threads::shared;
my $n = shift; my $total = 1_200_000; my $c :shared = 0;
sub work { for my $i (1 .. $total / $n) { lock($c); my $s = 0; $s += $_ * $i % 7 for 1 .. 20; $c += $s } }
$_->join for map { threads->create(\\&work) } 1 .. $n;
print "$c\\n";
""",
    # Pure-Ruby work in n threads: MRI runs one at a time (the GVL).
    "gvl.rb": """n = ARGV[0].to_i
total = 40_000_000
ts = (1..n).map { Thread.new { s = 0; (total / n).times { |i| s += i * i % 7 }; s } }
puts ts.map(&:value).sum
""",
    # n threads, each chasing a random cycle through its 1/n share of one array, STEPS/n steps
    # each: the same work at every n, a working set per thread of KB/n.
    "chase.c": """#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
static uint32_t *a; static long per_steps; static size_t share;
static void *run(void *arg) {
    uint32_t *b = a + (size_t)(uintptr_t)arg * share, i = 0;
    for (long s = 0; s < per_steps; s++) i = b[i];
    return (void *)(uintptr_t)i;
}
int main(int argc, char **argv) {
    int n = atoi(argv[1]); size_t len = (size_t)atol(argv[2]) * 1024 / 4; long steps = atol(argv[3]);
    if (n < 1 || n > 64) return 2;
    a = malloc(len * 4); share = len / n; per_steps = steps / n;
    srand(1);
    for (int t = 0; t < n; t++) {   /* one random cycle (Sattolo) through each share */
        uint32_t *b = a + t * share;
        for (size_t i = 0; i < share; i++) b[i] = i;
        for (size_t i = share - 1; i > 0; i--) { size_t j = rand() % i; uint32_t x = b[i]; b[i] = b[j]; b[j] = x; }
    }
    pthread_t th[64]; uintptr_t sum = 0;
    for (int t = 0; t < n; t++) pthread_create(&th[t], 0, run, (void *)(uintptr_t)t);
    for (int t = 0; t < n; t++) { void *r; pthread_join(th[t], &r); sum += (uintptr_t)r; }
    printf("%lu\\n", (unsigned long)sum);
    return 0;
}
""",
}

SQL_INDEX = "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA threads={threads}; CREATE INDEX i ON t(b);"


def cases(d, feed_mb_s=20):
    """(name, half, programs needed, scalescope options, command, expected first finding). `feed_mb_s`
    is the rate at which pv feeds pigz: below what one pigz thread compresses on this machine, so
    that the workers are starved at every count. The figures in the comments were measured on this
    project's 2-CPU VM without scalescope (median of 3 runs at each count, after a warm-up, on a
    quiet machine: wall time, CPU time, efficiency = speed-up / count)."""
    t40, t160, r20, f32k = f"{d}/t40.txt", f"{d}/t160.txt", f"{d}/r20.bin", f"{d}/small/32k.txt"
    src, big = f"{d}/src", f"{d}/big.bin"
    py = "/usr/bin/python3"
    xargs_gzip = f"ls {d}/files/* | xargs -P {{threads}} -n 2 sh -c 'gzip -6 -c \"$@\" > /dev/null' _"
    par_gzip = f"ls {d}/files/* | parallel -j {{threads}} 'gzip -6 -c {{}} > /dev/null'"
    xargs_sha = f"ls {d}/many/* | xargs -P {{threads}} -n 8 sha256sum > /dev/null"
    readers = (f"n={{threads}}; per=$((400 / n)); i=0; while [ $i -lt $n ]; do dd if={big} of=/dev/null bs=1M "
               f"skip=$((i * per)) count=$per status=none & i=$((i + 1)); done; wait")
    T, E = "tune", "eval"
    return [
        # 1.61-1.80 s -> 0.87-0.94 s, 197% CPU at 2: 92-95%; pigz compresses 128 KiB blocks in parallel.
        ("pigz", T, ["pigz"], [], ["pigz", "-p", "{threads}", "-c", t40], "scales-well"),
        # 2.81-3.17 s -> 1.46-1.72 s: 92-96%; 2 MiB blocks, one per worker.
        ("xz", E, ["xz"], [], ["xz", "-T{threads}", "-0", "--block-size=2MiB", "-c", t40], "scales-well"),
        # 2.70 s -> 1.38-1.50 s: 90-98%; 900 KB bzip2 blocks, one per worker.
        ("pbzip2", T, ["pbzip2"], [], ["pbzip2", "-p{threads}", "-c", "-k", t40], "scales-well"),
        # 2.43 s -> 1.32-1.40 s: 87-92% (CPU +6-13%); designed to scale, at the 90% line on this VM.
        ("lbzip2", E, ["lbzip2"], [], ["lbzip2", "-n", "{threads}", "-c", t40], "scales-well"),
        # 16 independent gcc jobs: 4.06 s -> 2.19 s, 190% CPU: 92%.
        ("make -j", T, ["make", "gcc"], ["--prepare", f"make -s -C {d}/mk clean"],
         ["make", "-s", "-C", f"{d}/mk", "-j{threads}"], "scales-well"),
        # 20 independent gzip processes: 1.86 s -> 0.95 s: 98%.
        ("xargs -P gzip", E, ["xargs", "gzip"], ["--shell"], [xargs_gzip], "scales-well"),
        # 40 independent gzip jobs: 2.57 s -> 1.34 s: 96%.
        ("parallel gzip", T, ["parallel", "gzip"], ["--shell"], [par_gzip], "scales-well"),
        # Independent prime searches: 1.83 s -> 0.93 s: 98%.
        ("sysbench cpu", E, ["sysbench"], [],
         ["sysbench", "cpu", "--threads={threads}", "--events=8000", "--time=0", "run"], "scales-well"),
        # CPython runs one thread at a time: 0.30 s -> 0.28 s, still 100% CPU at 2 threads (1.08x).
        ("python threads (GIL)", T, [py], [], [py, "-c", PY_GIL, "{threads}"], "lock-contention"),
        # Every lock is the same mutex: 0.135 s -> 0.37 s at 176% CPU (0.37x): the threads hand it over.
        ("sysbench mutex", E, ["sysbench"], [],
         ["sysbench", "mutex", "--threads={threads}", "--mutex-num=1", "--mutex-locks=2000000",
          "--mutex-loops=100", "run"], "lock-contention"),
        # 1.21 s -> 0.76 s (79%, 162% CPU): libpng decodes on one thread before the OpenMP blur.
        ("gm convert (OpenMP)", T, ["gm"], ["--env", "OMP_NUM_THREADS={threads}"],
         ["gm", "convert", f"{d}/big.png", "-blur", "0x4", "-resize", "150%", "null:"], "serial-phase"),
        # pv delivers 40 MB at half of one pigz thread's rate (~11 MB/s here): ~3.6 s at both counts, pigz idle.
        ("pv | pigz", T, ["pv", "pigz"], ["--shell"], [f"pv -qL {feed_mb_s}m {t40} | pigz -p {{threads}} > /dev/null"],
         "wait-for-work"),
        # sha256sum has no threads and no such option: one thread, ~0.17 s (240 MB/s) at both counts.
        ("sha256sum", T, ["sha256sum"], [], ["sha256sum", t40], "threads-ignored"),
        # Less than one of pigz's 128 KiB blocks: runs of ~2.5 ms, 1.1 ms of them pigz's start-up.
        ("pigz on 32 KB", T, ["pigz"], ["-r", "5"], ["pigz", "-p", "{threads}", "-c", f32k], "startup-dominated"),
        # bs is not a count: 400 MB cold at ~1.8 GB/s, dd at 14-40% CPU: it waits for the disk.
        ("dd, evicted", T, ["dd"], ["--param", "bs=64K,1M", "--evict", big],
         ["dd", f"if={big}", "of=/dev/null", "bs={bs}"], "io-bound"),
        # Each job reads --io_size: the work grows with the jobs (--weak). 4 KiB
        # psync reads of an evicted file: each job waits for every read (dd reads it at 14-40% CPU).
        ("fio randread, evicted", E, ["fio"], ["--weak", "--evict", big],
         ["fio", "--name=r", f"--filename={big}", "--rw=randread", "--bs=4k", "--size=400M",
          "--io_size=40M", "--numjobs={threads}", "--ioengine=psync", "--group_reporting", "--thread"],
         "io-bound"),
        # --- added cases ---
        # Incompressible input, 768 KiB blocks: 2.64 s -> 1.32 s, 195% CPU: 100%.
        ("xz, random 20 MB", T, ["xz"], [], ["xz", "-T{threads}", "-0", "-c", r20], "scales-well"),
        # 0.40-0.48 s -> 0.21-0.23 s, 196% CPU: 95-104%.
        ("pigz, random 20 MB", E, ["pigz"], [], ["pigz", "-p", "{threads}", "-c", r20], "scales-well"),
        # 306 files of 512 KB, 8 per sha256sum process: 0.82 s -> 0.39 s: 105%.
        ("xargs -P sha256sum", T, ["xargs", "sha256sum"], ["--shell"], [xargs_sha], "scales-well"),
        # 2.38-2.48 s -> 1.35 s, 190% CPU: 88-92% (two measurements). At -3 it reads 81-87%: its I/O
        # threads already use 5-8% of a second CPU at -T1; at -5 on 160 MB compression dominates.
        # At the 90% line, like lbzip2: designed to scale, so scales-well; a serial-fraction is defensible.
        ("zstd -5, 160 MB", E, ["zstd"], [], ["zstd", "-T{threads}", "-5", "-c", t160], "scales-well"),
        # LZMA2 blocks compressed in parallel: 2.76 s -> 1.41 s, 196% CPU: 98%.
        ("7z xz -mx1", E, ["7z"], ["--shell"], [f"7z a -txz -mx=1 -mmt={{threads}} -so -an {t40} > /dev/null"],
         "scales-well"),
        # Processes have a GIL each: 1.95 s -> 1.05 s, 186% CPU: 93%. With a quarter of this work
        # (0.56 s a run on this machine) the interpreter's serial 80 ms start-up made it 82-86%,
        # and a medium serial-phase or serial-fraction: right at that size, not what this case is.
        ("python Pool", T, [py], [], [py, "-c", PY_POOL, "{threads}"], "scales-well"),
        # hashlib drops the GIL for buffers over 2 KB: 2.52 s -> 1.31 s, 192% CPU: 96%.
        ("python threads, hashlib", E, [py], [], [py, "-c", PY_HASH, "{threads}"], "scales-well"),
        # OpenBLAS's dgemm splits the product: 3.72 s -> 1.94 s for 3 products (192% CPU): 96%.
        ("numpy matmul (OpenBLAS)", T, [py, "numpy+openblas"], ["--env", "OPENBLAS_NUM_THREADS={threads}"], [py, "-c", NUMPY_MM],
         "scales-well"),
        # 2000 bogo ops shared among independent processes: 2.24 s -> 1.08 s: 104% (87% in a run
        # where the VM's CPUs were slower; no shared state, designed to scale).
        ("stress-ng --cpu", E, ["stress-ng"], [],
         ["stress-ng", "--cpu", "{threads}", "--cpu-ops", "2000", "--cpu-method", "matrixprod"], "scales-well"),
        # One instance is a waiter and a waker process that together keep both CPUs busy (181-194% CPU,
        # 2.5-2.7 s); two instances are 4 busy processes on 2 CPUs: 2.9 s (0.85-0.94x), CPU +17%.
        # Per-instance futexes, nothing shared: the count goes past what the CPUs run.
        # 12,000 matrix operations shared by the instances: 0.62 s -> 0.33 s for 3,000 (197% CPU).
        ("stress-ng --matrix", E, ["stress-ng"], [],
         ["stress-ng", "--matrix", "{threads}", "--matrix-ops", "12000", "--quiet"], "scales-well"),
        ("stress-ng --futex", T, ["stress-ng"], [], ["stress-ng", "--futex", "{threads}", "--futex-ops", "200000"],
         "cpu-oversubscription"),
        # PRAGMA threads = helper threads of the sorter (0: none). 1.85 s -> 1.58 s (155% CPU) -> 1.55 s
        # (152%), CPU 1.85 -> 2.45 -> 2.35 s: the PMA sorts overlap the table scan for ~0.75 s, then
        # the main thread alone merges and builds the b-tree (~1.4 s at one CPU). threads=0 is no
        # count of workers, so the speed-up is read from threads=1, which already keeps 1.55 CPUs
        # busy (main thread and one helper): on 2 CPUs threads=2 can gain at most 1.29x, and that
        # limit is most of the gap to the counts' 2x (the serial merge is why 1.55 and not 2).
        ("sqlite index, threads=0,1,2", T, ["sqlite3"],
         ["--param", "threads=0,1,2", "--prepare", f"sqlite3 {d}/sq.db 'DROP INDEX IF EXISTS i'"],
         ["sqlite3", f"{d}/sq.db", SQL_INDEX], "cpu-oversubscription"),
        # Each worker is an isolate of its own: 2.90 s -> 1.53 s, 192% CPU: 95%.
        ("node worker_threads", T, ["node"], [], ["node", f"{src}/workers.js", "{threads}"], "scales-well"),
        # The caller thread joins the common pool's workers: parallelism=1 already runs 2 threads
        # (0.94 s, 194% CPU); parallelism=2 is 3 busy threads on 2 CPUs: 0.99 s (0.95x).
        ("java parallel stream", T, ["java", "javac"], [],
         ["java", "-Djava.util.concurrent.ForkJoinPool.common.parallelism={threads}", "-cp", src, "Par"],
         "cpu-oversubscription"),
        # 1.35 s -> 0.68 s, 198% CPU: 99%.
        # 64 tasks on Executors.newFixedThreadPool(n): 1.83 s -> 0.99 s, 186% CPU: 92%.
        ("java fixed pool", E, ["java", "javac"], [], ["java", "-cp", src, "Pool", "{threads}"], "scales-well"),
        # Every piece of work under one sync.Mutex: 1.6 s -> 1.9 s (117% CPU): nothing runs in parallel.
        ("go mutex", T, ["go"], ["--env", "GOMAXPROCS={threads}"], [f"{src}/golock"], "lock-contention"),
        # Every piece of work holds one multiprocessing.Lock: 1.09 s -> 1.07 s, 100% CPU at 2
        # processes: they take turns on a semaphore.
        ("python processes, one mp.Lock", T, [py], [], [py, MP_LOCK, "{threads}"],
         "lock-contention"),
        # Every piece of work inside one synchronized block: 1.68 s -> 1.69 s, 100% CPU at 2 threads.
        ("java synchronized", T, ["java", "javac"], [], ["java", "-cp", src, "Sync", "{threads}"],
         "lock-contention"),
        ("go goroutines", E, ["go"], ["--env", "GOMAXPROCS={threads}"], [f"{src}/gor"], "scales-well"),
        # ithreads are interpreters of their own, no global lock: 1.34 s -> 0.69 s, 194% CPU: 97%.
        ("perl threads", E, ["perl"], [], ["perl", f"{src}/threads.pl", "{threads}"], "scales-well"),
        # All work holds one shared lock: 1.44 s -> 1.86 s at 126% CPU (0.77x), CPU 1.43 -> 2.34 s.
        ("perl threads, shared lock", T, ["perl"], [], ["perl", f"{src}/lock.pl", "{threads}"], "lock-contention"),
        # MRI's GVL (a mutex and condition variable, a timer thread asking the holder to yield):
        # 1.70 s -> 1.62 s, 100% CPU at 2 threads (1.05x).
        ("ruby threads (GVL)", E, ["ruby"], [], ["ruby", f"{src}/gvl.rb", "{threads}"], "lock-contention"),
        # 2.61 s -> 1.62 s, 163% CPU: 81%. The threads sort halves in parallel, then one thread merges
        # them and writes the output (~0.8 s of 2.4 s on one CPU): a serial step at the end, not
        # unequal shares. Ambiguous: the idle thread blocks on the merge tree's node mutex meanwhile,
        # so a lock is where it waits; but no shorter critical section helps, the root merge is serial.
        ("sort --parallel", T, ["sort"], ["--env", "LC_ALL=C.UTF-8"],
         ["sort", "--parallel={threads}", "-S", "1G", "-o", "/dev/null", t160], "serial-fraction"),
        # Fixed time (2 s): read by its throughput, 1.74 -> 3.49 GB/s with 2 processes (1.99x,
        # 198% CPU).
        ("openssl speed -multi", T, ["openssl"], ["--metric", r"throughput=sha256 +([0-9.]+)k"],
         ["openssl", "speed", "-multi", "{threads}", "-seconds", "2", "-bytes", "16384", "sha256"], "scales-well"),
        # gzip -6 alone takes 1.84 s, one pigz thread compresses its output in 0.49 s: the pipeline
        # takes 2.21 s -> 2.06 s (1.07x, 107 -> 119% CPU), pigz waiting on the pipe for gzip.
        ("cat | gzip | pigz", E, ["gzip", "pigz"], ["--shell"],
         [f"cat {t40} | gzip -6 -c | pigz -p {{threads}} -c > /dev/null"], "wait-for-work"),
        # n dd's, each reading its 1/n of a cold 400 MB file: 0.22-0.30 s with one, 0.22-0.23 s with
        # two at 14-39% CPU: the device (~1.8 GB/s) is the limit, the readers wait for it.
        ("dd readers, evicted", E, ["dd"], ["--shell", "--evict", big], [readers], "io-bound"),
        # xz 5.4 decodes in threads only files with block sizes in their headers: this one (xz -T1)
        # stays on one thread at -T2, 0.68 s at both counts.
        ("xz -d, one block", E, ["xz"], [], ["xz", "-d", "-T{threads}", "-c", f"{d}/t40.xz"], "threads-ignored"),
        # One block for 32 KB: runs of 4-7 ms at both counts, ~1-2 ms of them process start.
        ("xz on 32 KB", E, ["xz"], [], ["xz", "-T{threads}", "-0", "-c", f32k], "startup-dominated"),
        # 0.40 s -> 0.21 s (95%) at 2, then 0.21 s and 0.22 s at 4 and 8: nothing gained past 2 CPUs.
        ("pigz over 1,2,4,8", T, ["pigz"], ["--param", "threads=1,2,4,8"], ["pigz", "-p", "{threads}", "-c", r20],
         "cpu-oversubscription"),
        # 2.29 s -> 0.94 s (2.43x, 122%), CPU 2.28 -> 1.76 s: each thread's 768 KB fits its core's
        # 1 MB L2, the whole 1.5 MB does not (at 512 KB: 97%; at 4 MB: no gain). No kind names
        # superlinearity; the explanation is the CPU per unit of work against the baseline's, the
        # measure of on-cpu-inefficiency (here the baseline is the inefficient run). Praise is wrong.
        ("pointer chase, 1.5 MB (superlinear)", E, ["gcc"], [], [f"{src}/chase", "{threads}", "1536", "200000000"],
         "on-cpu-inefficiency"),
    ]


def have(program):
    if program == "numpy+openblas":
        # Debian's numpy without libopenblas0 multiplies with the reference BLAS, one thread: a
        # different program from the one the case is about.
        # What numpy loads, not what it was built against.
        out = subprocess.run(["/usr/bin/python3", "-c", "import numpy; print(open('/proc/self/maps').read())"],
                             capture_output=True, text=True)
        return out.returncode == 0 and "openblas" in out.stdout.lower()
    # A path is taken as written; a bare name only from PATH (not a folder of that name here).
    return shutil.which(program) is not None or ("/" in program and os.access(program, os.X_OK))


def prepare(exe, d):
    """The inputs: 40 MB of text and 160 MB (four copies), 40 files of 1 MB, 306 of 512 KB, one of
    32 KB, 20 MB of random bytes, a single-block .xz, a PNG, 16 C files, an evictable 400 MB file,
    an SQLite table of 3 million random keys, and the programs in Java, Go and C (built here)."""
    run = lambda *c, **k: subprocess.run(list(c), check=True, stdout=subprocess.DEVNULL, **k)
    if not os.path.exists(f"{d}/t40.txt"):
        run(exe, "gen", "text", "--out", f"{d}/t40.txt", "--size", "40MB")
    if not os.path.exists(f"{d}/t160.txt"):
        with open(f"{d}/t40.txt", "rb") as f, open(f"{d}/t160.tmp", "wb") as o:
            text = f.read()
            for _ in range(4):
                o.write(text)
        os.rename(f"{d}/t160.tmp", f"{d}/t160.txt")
    os.makedirs(f"{d}/files", exist_ok=True)
    with open(f"{d}/t40.txt", "rb") as f:
        for i in range(1, 41):
            with open(f"{d}/files/f{i}.txt", "wb") as o:
                o.write(f.read(1 << 20))
    if not os.path.isdir(f"{d}/many"):
        os.makedirs(f"{d}/many.tmp", exist_ok=True)
        with open(f"{d}/t160.txt", "rb") as f:
            for i in range(10000):
                block = f.read(512 << 10)
                if not block:
                    break
                with open(f"{d}/many.tmp/p{i:04}", "wb") as o:
                    o.write(block)
        os.rename(f"{d}/many.tmp", f"{d}/many")
    os.makedirs(f"{d}/small", exist_ok=True)
    with open(f"{d}/t40.txt", "rb") as f, open(f"{d}/small/32k.txt", "wb") as o:
        o.write(f.read(32 << 10))
    if not os.path.exists(f"{d}/r20.bin"):
        run("sh", "-c", f"head -c 20M /dev/urandom > {d}/r20.tmp && mv {d}/r20.tmp {d}/r20.bin")
    # One block: xz -T1 (single-threaded mode) writes no block sizes that a threaded decoder needs.
    if have("xz") and not os.path.exists(f"{d}/t40.xz"):
        run("sh", "-c", f"xz -T1 -6 -c {d}/t40.txt > {d}/t40.xz.tmp && mv {d}/t40.xz.tmp {d}/t40.xz")
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
        run("sync")
    if have("sqlite3") and not os.path.exists(f"{d}/sq.db"):
        run("sqlite3", f"{d}/sq.tmp", "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
            "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
            "SELECT x + 1 FROM c WHERE x < 3000000) INSERT INTO t SELECT x, hex(randomblob(16)) FROM c;")
        os.rename(f"{d}/sq.tmp", f"{d}/sq.db")
    src = f"{d}/src"
    os.makedirs(src, exist_ok=True)
    for name, text in SOURCES.items():
        with open(f"{src}/{name}", "w") as f:
            f.write(text)
    built = lambda out: os.path.exists(out)
    if have("javac") and not built(f"{src}/Par.class"):
        run("javac", "-d", src, f"{src}/Par.java")
    if have("javac") and not built(f"{src}/Pool.class"):
        run("javac", "-d", src, f"{src}/Pool.java")
    if have("javac") and not built(f"{src}/Sync.class"):
        run("javac", "-d", src, f"{src}/Sync.java")
    if have("go") and not built(f"{src}/gor"):
        run("go", "build", "-o", f"{src}/gor", f"{src}/gor.go", cwd=src)
    if have("go") and not built(f"{src}/golock"):
        run("go", "build", "-o", f"{src}/golock", f"{src}/golock.go", cwd=src)
    if have("gcc") and not built(f"{src}/chase"):
        run("gcc", "-O2", "-pthread", "-o", f"{src}/chase", f"{src}/chase.c")


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
    args += [] if "-r" in opts or runs is None else ["-r", str(runs)]
    args += [] if "--param" in opts else ["--param", "threads=1,2"]
    p = subprocess.run(args + opts + ["--"] + cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=dict(os.environ, NO_COLOR="1"))
    with open(out + ".log", "w") as f:
        f.write(p.stdout)
    if p.returncode != 0:
        return None, p.stdout.strip().splitlines()[-1:] or ["no message"]
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f), None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scalescope", default="target/release/scalescope")
    ap.add_argument("--half", choices=["tune", "eval", "all"], default="all", help="which half of the corpus")
    ap.add_argument("--repeat", type=int, default=1, help="sweeps of each case (stability)")
    ap.add_argument("--runs", type=int, help="runs per point (-r N); scalescope chooses without it")
    ap.add_argument("--only", help="cases whose name contains this")
    ap.add_argument("--dir", help="where the inputs are made (kept); a temporary folder by default")
    a = ap.parse_args()
    exe = os.path.abspath(a.scalescope)
    tmp = None
    d = a.dir or (tmp := tempfile.mkdtemp(prefix="scalescope-real-", dir="/var/tmp"))
    d = os.path.abspath(d)
    os.makedirs(d, exist_ok=True)
    try:
        prepare(exe, d)
        rate = feed_rate(d)
        chosen = [c for c in cases(d, rate)
                  if (a.half == "all" or c[1] == a.half) and (not a.only or a.only in c[0])]
        halves = [h for h in ("tune", "eval") if any(c[1] == h for c in chosen)]
        score = {h: {"right": 0, "total": 0, "alarms": [], "seconds": 0.0, "undecided_far": []} for h in halves}
        skipped, answers = [], {}
        for rep in range(a.repeat):
            for i, (name, half, need, opts, cmd, expect) in enumerate(chosen):
                missing = [p for p in need if not have(p)]
                if missing:
                    if rep == 0:
                        skipped.append(f"{name} ({', '.join(missing)} not installed)")
                    continue
                t = time.monotonic()
                doc, err = sweep(exe, d, i, opts, cmd, a.runs)
                took = time.monotonic() - t
                h = score[half]
                h["seconds"] += took
                h["total"] += 1
                if doc is None:
                    print(f"BAD {half} {name:36} sweep failed: {err[0]}", flush=True)
                    answers.setdefault(name, []).append("failed")
                    continue
                f = [x for x in doc.get("findings", []) if x["kind"] != "noisy-measurement"]
                first = f[0]["kind"] if f else "none"
                serious = [f"{x['kind']} ({x['severity']})" for x in f if x["severity"] in ("medium", "high")]
                eff = efficiency(doc)
                ok = first == expect
                h["right"] += ok
                answers.setdefault(name, []).append(first)
                false = [f"{x['kind']} ({x['severity']})" for x in f
                         if x["severity"] in ("medium", "high") and x["kind"] != expect]
                if false and (expect == "scales-well" or (eff is not None and eff >= 0.9)):
                    h["alarms"].append(f"{name}: {', '.join(false)} at efficiency {eff:.0%}" if eff is not None
                                       else f"{name}: {', '.join(false)}")
                e = f"{eff:5.0%}" if eff is not None else "    —"
                # The stopping rule's promise: a sweep ends undecided only on a program whose
                # efficiency is within 5 points of the 90% line.
                undecided = any(x["kind"] == "noisy-measurement" and "cannot tell" in x["summary"]
                                for x in doc.get("findings", []))
                if undecided and eff is not None and abs(eff - 0.9) >= 0.05:
                    h["undecided_far"].append(f"{name} at {eff:.0%}")
                # Said, not scored: scalescope found the machine's other load (or the host) behind the gap.
                busy = any(x["kind"] == "noisy-measurement" and x["severity"] in ("medium", "high")
                           for x in doc.get("findings", []))
                print(f"{'ok ' if ok else 'BAD'} {half} {name:36} eff {e}  first: {first:20} expected: {expect:20}"
                      f" {took:5.0f} s  above info: {', '.join(serious) or '—'}{'  [busy machine]' if busy else ''}",
                      flush=True)
        print()
        for s in skipped:
            print(f"skipped: {s}")
        if a.repeat > 1:
            same = sum(1 for v in answers.values() if len(set(v)) == 1)
            print(f"stable: {same}/{len(answers)} cases gave the same first finding in all {a.repeat} repeats")
            for n, v in answers.items():
                if len(set(v)) > 1:
                    print(f"  {n}: {', '.join(v)}")
        passed = bool(halves)
        for hn in halves:
            h = score[hn]
            acc = h["right"] / h["total"] if h["total"] else 0.0
            print(f"{hn}: accuracy {h['right']}/{h['total']} sweeps ({acc:.0%}) had the expected first finding; "
                  f"false alarms: {len(h['alarms'])}; {h['seconds']:.0f} s in scalescope")
            for x in h["alarms"]:
                print(f"  {x}")
            if h["undecided_far"]:
                print(f"  ended undecided 5 points or more from 90%: {', '.join(h['undecided_far'])}")
            passed = passed and h["total"] > 0 and acc >= 0.9 and not h["alarms"]
        if len(halves) > 1:
            right, total = sum(score[h]["right"] for h in halves), sum(score[h]["total"] for h in halves)
            print(f"all: {right}/{total} sweeps ({right / total if total else 0:.0%}); "
                  f"{sum(score[h]['seconds'] for h in halves):.0f} s in scalescope")
        sys.exit(0 if passed else 1)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
