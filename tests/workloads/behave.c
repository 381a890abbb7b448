/* One known behaviour per mode, for the sampler's tests. Each mode runs about half a second.
 *   lock            2 threads contend for one global mutex (queue_lock)
 *   sleep           2 threads sleep in short naps
 *   pipe            a reader blocks on a pipe fed slowly by a writer
 *   io FILE         random 4 KiB reads of a cold file
 *   mmap            4 threads map, protect, touch and unmap memory (the mmap_lock storm)
 *   busy N          N threads burn CPU
 *   join            the main thread joins a busy worker
 *   condvar         2 consumers wait on a condition variable for a slow producer
 *   churn           10,000 short-lived threads a second, for one second
 *   idle N [S]      N threads blocked for S seconds (default 1)
 *   alloc MB        touch MB megabytes of memory, then exit
 *   share K MB      map and touch MB megabytes, then fork K workers that only read them for 1 s
 *                   (the tree's PSS stays MB while its summed RSS is K + 1 times that)
 *   grow MB         touch MB megabytes steadily over 1.5 s, then exit
 *   spike MB        sleep 0.3 s, touch MB megabytes at once and unmap them at once, sleep 0.3 s
 *                   (the tree holds its peak for a moment no paced reading is likely to catch)
 *   perworker K MB  K threads each touch MB megabytes of their own, then all hold them for 1 s
 *                   (the tree's PSS grows by MB per thread)
 *   mapfile FILE    map FILE read-only and read it for 0.6 s, 0.4 s more per SCALESCOPE_RANK (copies
 *                   share its pages through the page cache and leave one after another)
 *   nap S           one thread works 0.1 s, then sleeps S seconds in one nanosleep
 *   pool N K        N workers take K items of 0.1 s from a shared queue; a worker that finds it
 *                   empty waits on a condition variable until the last item is done (xz's tail)
 *   spinlock N K    N threads share K items of 0.3 ms of work, then 0.7 ms more holding one
 *                   pthread spin lock (its waiters spin on a CPU: at most 1.43x, whatever N)
 *   turns           0.2 s turns for 1.6 s: 2 threads run while a third waits in poll, then the
 *                   third runs while the 2 sleep (its waits come while the CPUs are busy)
 *   print N K       N threads each do K items of 20 us of work and write a line for each, one
 *                   write per line (ripgrep's threads print each file's count so)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile unsigned long sink;
static int items, done_flag, pipe_fds[2];
static const char *io_path;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void spin(double seconds) {
    double end = now() + seconds;
    while (now() < end) sink++;
}

static void *locker(void *a) {
    (void)a;
    double end = now() + 0.5;
    while (now() < end) {
        pthread_mutex_lock(&queue_lock);
        for (volatile int k = 0; k < 200000; k++) sink++;
        pthread_mutex_unlock(&queue_lock);
    }
    return 0;
}

static double turns_t0;

/* Turn k ends at turns_t0 + 0.2 (k + 1): the pair runs in even turns, the third in odd ones. */
static void *turn_taker(void *a) {
    int odd = a != 0;
    for (int k = 0; k < 8; k++) {
        double end = turns_t0 + 0.2 * (k + 1);
        if ((k % 2 == 1) == odd) {
            spin(end - now());
        } else if (odd) {
            while (now() < end) poll(0, 0, (int)((end - now()) * 1e3) + 1);
        } else {
            struct timespec ts = {(time_t)end, (long)((end - (time_t)end) * 1e9)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, 0)) {}
        }
    }
    return 0;
}

static void *sleeper(void *a) {
    (void)a;
    for (int i = 0; i < 50; i++) usleep(10000);
    return 0;
}

static void *pipe_writer(void *a) {
    (void)a;
    for (int i = 0; i < 25; i++) {
        usleep(20000);
        if (write(pipe_fds[1], "x", 1) != 1) break;
    }
    close(pipe_fds[1]);
    return 0;
}

static void *mapper(void *a) {
    (void)a;
    double end = now() + 0.5;
    size_t len = 1 << 20;
    while (now() < end) {
        char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        for (size_t i = 0; i < len; i += 4096) p[i] = 1;
        mprotect(p, len, PROT_READ);
        mprotect(p, len, PROT_READ | PROT_WRITE);
        munmap(p, len);
    }
    return 0;
}

static void *burner(void *a) {
    spin(*(double *)a);
    return 0;
}

static void *consumer(void *a) {
    (void)a;
    pthread_mutex_lock(&cv_lock);
    while (!done_flag) {
        while (items == 0 && !done_flag) pthread_cond_wait(&cv, &cv_lock);
        if (items > 0) items--;
    }
    pthread_mutex_unlock(&cv_lock);
    return 0;
}

static void *nothing(void *a) { return a; }

static size_t per_worker_len;
static pthread_barrier_t all_touched;

/* Touches its own memory, waits until every thread has, then holds it for 1 s: the tree's peak
 * lasts long enough for the sampler's paced readings to see it. */
static void *holder(void *a) {
    (void)a;
    char *p = malloc(per_worker_len);
    if (p) memset(p, 1, per_worker_len);
    pthread_barrier_wait(&all_touched);
    double end = now() + 1.0;
    while (now() < end) usleep(10000);
    if (p) sink += p[per_worker_len / 2];
    free(p);
    return 0;
}

static void *blocked(void *a) {
    (void)a;
    pthread_mutex_lock(&cv_lock);
    while (!done_flag) pthread_cond_wait(&cv, &cv_lock);
    pthread_mutex_unlock(&cv_lock);
    return 0;
}

static void run_threads(int n, void *(*f)(void *), void *arg) {
    pthread_t *t = calloc(n, sizeof *t);
    for (int i = 0; i < n; i++) pthread_create(&t[i], 0, f, arg);
    for (int i = 0; i < n; i++) pthread_join(t[i], 0);
    free(t);
}

static int print_items;

static void *printer(void *a) {
    char line[64];
    for (int i = 0; i < print_items; i++) {
        spin(0.00002);
        int n = snprintf(line, sizeof line, "thread %ld item %d\n", (long)a, i);
        if (write(1, line, n) != n) break;
    }
    return 0;
}

static int naps_each;
static int pool_next, pool_items, pool_busy;

static void *pooled(void *a) {
    (void)a;
    pthread_mutex_lock(&cv_lock);
    while (!done_flag) {
        if (pool_next < pool_items) {
            pool_next++;
            pool_busy++;
            pthread_mutex_unlock(&cv_lock);
            spin(0.1);
            pthread_mutex_lock(&cv_lock);
            if (--pool_busy == 0 && pool_next >= pool_items) {
                done_flag = 1;
                pthread_cond_broadcast(&cv);
            }
        } else {
            pthread_cond_wait(&cv, &cv_lock);
        }
    }
    pthread_mutex_unlock(&cv_lock);
    return 0;
}
static pthread_spinlock_t item_lock;
static int items_each;

static void *spin_locker(void *a) {
    (void)a;
    for (int i = 0; i < items_each; i++) {
        spin(0.0003);
        pthread_spin_lock(&item_lock);
        spin(0.0007);
        pthread_spin_unlock(&item_lock);
    }
    return 0;
}

static void *napper(void *a) {
    (void)a;
    for (int i = 0; i < naps_each; i++) {
        spin(0.001);
        usleep(4000);
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "lock")) {
        run_threads(2, locker, 0);
    } else if (!strcmp(mode, "sleep")) {
        run_threads(2, sleeper, 0);
    } else if (!strcmp(mode, "pipe")) {
        pthread_t w;
        char c;
        if (pipe(pipe_fds)) return 1;
        pthread_create(&w, 0, pipe_writer, 0);
        while (read(pipe_fds[0], &c, 1) == 1) sink++;
        pthread_join(w, 0);
    } else if (!strcmp(mode, "io") && argc > 2) {
        io_path = argv[2];
        int fd = open(io_path, O_RDONLY);
        if (fd < 0) return 1;
        posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
        off_t size = lseek(fd, 0, SEEK_END);
        char buf[4096];
        srand(42);
        double end = now() + 0.5;
        while (now() < end) {
            off_t off = ((off_t)rand() % (size / 4096)) * 4096;
            if (pread(fd, buf, sizeof buf, off) < 0) return 1;
        }
    } else if (!strcmp(mode, "mmap")) {
        run_threads(4, mapper, 0);
    } else if (!strcmp(mode, "busy")) {
        double s = 0.5;
        run_threads(argc > 2 ? atoi(argv[2]) : 2, burner, &s);
    } else if (!strcmp(mode, "join")) {
        double s = 0.5;
        run_threads(1, burner, &s);
    } else if (!strcmp(mode, "condvar")) {
        pthread_t c[2];
        for (int i = 0; i < 2; i++) pthread_create(&c[i], 0, consumer, 0);
        for (int i = 0; i < 10; i++) {
            spin(0.05);
            pthread_mutex_lock(&cv_lock);
            items++;
            pthread_cond_signal(&cv);
            pthread_mutex_unlock(&cv_lock);
        }
        pthread_mutex_lock(&cv_lock);
        done_flag = 1;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&cv_lock);
        for (int i = 0; i < 2; i++) pthread_join(c[i], 0);
    } else if (!strcmp(mode, "segv")) {
        volatile int *nowhere = 0;
        return *nowhere;
    } else if (!strcmp(mode, "churn")) {
        double end = now() + 1.0;
        int created = 0;
        while (now() < end) {
            pthread_t t[10];
            for (int i = 0; i < 10; i++) pthread_create(&t[i], 0, nothing, 0);
            for (int i = 0; i < 10; i++) pthread_join(t[i], 0);
            created += 10;
        }
        printf("scalescope-metric threads_created %d\n", created);
    } else if (!strcmp(mode, "idle")) {
        int n = argc > 2 ? atoi(argv[2]) : 1000;
        double seconds = argc > 3 ? atof(argv[3]) : 1.0;
        pthread_t *t = calloc(n, sizeof *t);
        for (int i = 0; i < n; i++) pthread_create(&t[i], 0, blocked, 0);
        usleep((useconds_t)(seconds * 1e6));
        pthread_mutex_lock(&cv_lock);
        done_flag = 1;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&cv_lock);
        for (int i = 0; i < n; i++) pthread_join(t[i], 0);
    } else if (!strcmp(mode, "naps") && argc > 3) {
        /* `naps N LOOPS`: N threads share LOOPS of 1 ms of work and a 4 ms sleep (a request
         * waiting on a slow service): more threads overlap their sleeps. */
        int n = atoi(argv[2]);
        naps_each = atoi(argv[3]) / (n > 0 ? n : 1);
        run_threads(n, napper, 0);
    } else if (!strcmp(mode, "pool") && argc > 3) {
        pool_items = atoi(argv[3]);
        run_threads(atoi(argv[2]), pooled, 0);
    } else if (!strcmp(mode, "spinlock") && argc > 3) {
        int n = atoi(argv[2]);
        items_each = atoi(argv[3]) / (n > 0 ? n : 1);
        pthread_spin_init(&item_lock, PTHREAD_PROCESS_PRIVATE);
        run_threads(n, spin_locker, 0);
    } else if (!strcmp(mode, "nap") && argc > 2) {
        double seconds = atof(argv[2]);
        spin(0.1);
        struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
        nanosleep(&ts, 0);
    } else if (!strcmp(mode, "print") && argc > 3) {
        int n = atoi(argv[2]);
        pthread_t t[64];
        print_items = atoi(argv[3]);
        for (long i = 0; i < n && i < 64; i++) pthread_create(&t[i], 0, printer, (void *)i);
        for (int i = 0; i < n && i < 64; i++) pthread_join(t[i], 0);
    } else if (!strcmp(mode, "turns")) {
        pthread_t t[3];
        turns_t0 = now() + 0.05;
        for (int i = 0; i < 3; i++) pthread_create(&t[i], 0, turn_taker, i == 2 ? (void *)1 : 0);
        for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
    } else if (!strcmp(mode, "alloc") && argc > 2) {
        size_t len = (size_t)atol(argv[2]) << 20;
        char *p = malloc(len);
        if (!p) return 1;
        memset(p, 1, len);
        sink = p[len / 2];
    } else if (!strcmp(mode, "share") && argc > 3) {
        int k = atoi(argv[2]);
        size_t len = (size_t)atol(argv[3]) << 20;
        char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return 1;
        memset(p, 1, len);
        for (int i = 0; i < k; i++) {
            if (fork() == 0) {
                double end = now() + 1.0;
                unsigned long s = 0;
                while (now() < end)
                    for (size_t at = 0; at < len; at += 4096) s += p[at];
                sink = s;
                _exit(0);
            }
        }
        while (wait(0) > 0) {}
    } else if (!strcmp(mode, "spike") && argc > 2) {
        size_t len = (size_t)atol(argv[2]) << 20;
        usleep(300000);
        char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return 1;
        memset(p, 1, len);
        sink = p[len / 2];
        munmap(p, len);
        usleep(300000);
    } else if (!strcmp(mode, "grow") && argc > 2) {
        size_t len = (size_t)atol(argv[2]) << 20, step = len / 150;
        char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return 1;
        for (size_t at = 0; at + step <= len; at += step) {
            memset(p + at, 1, step);
            usleep(10000);
        }
        sink = p[len / 2];
    } else if (!strcmp(mode, "perworker") && argc > 3) {
        int k = atoi(argv[2]);
        per_worker_len = (size_t)atol(argv[3]) << 20;
        pthread_barrier_init(&all_touched, 0, k);
        run_threads(k, holder, 0);
    } else if (!strcmp(mode, "mapfile") && argc > 2) {
        int fd = open(argv[2], O_RDONLY);
        off_t len = fd < 0 ? 0 : lseek(fd, 0, SEEK_END);
        const char *rank = getenv("SCALESCOPE_RANK");
        if (len <= 0) return 1;
        const volatile char *p = mmap(0, len, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) return 1;
        double end = now() + 0.6 + 0.4 * (rank ? atoi(rank) : 0);
        unsigned long s = 0;
        while (now() < end)
            for (off_t at = 0; at < len; at += 4096) s += p[at];
        sink = s;
    } else {
        fprintf(stderr, "unknown mode '%s'\n", mode);
        return 2;
    }
    return 0;
}
