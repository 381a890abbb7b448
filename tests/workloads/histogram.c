/* Workers that contend on a heap-allocated mutex, for the stack tests.
 *   contend N S   N workers fill a shared histogram for S seconds; each update takes a mutex that
 *                 lives in the heap (so it has no symbol: only the stack can name the wait)
 *   startup N S   a start-up phase (0.3 s) in which N loaders contend on a heap mutex in
 *                 load_config, then N workers burn CPU for S seconds
 *   relay N S     N pairs of threads pass a byte back and forth through pipes for S seconds, with
 *                 no work between: they leave their CPUs as often as the kernel lets them
 * update_histogram, worker and load_config are kept out of line; built with -DINLINED (and -g),
 * update_histogram is inlined into its callers, which only the debug information then names.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t *histogram_lock;
static unsigned long *bins;
static volatile unsigned long sink;
static double seconds;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#ifdef INLINED
#define UPDATE static inline __attribute__((always_inline))
#else
#define UPDATE __attribute__((noinline))
#endif

UPDATE void update_histogram(unsigned long v) {
    pthread_mutex_lock(histogram_lock);
    for (volatile int k = 0; k < 20000; k++) bins[(v + k) % 64]++;
    pthread_mutex_unlock(histogram_lock);
}

__attribute__((noinline)) void *worker(void *arg) {
    unsigned long v = (unsigned long)arg;
    double end = now() + seconds;
    while (now() < end) update_histogram(v++);
    return 0;
}

__attribute__((noinline)) void *load_config(void *arg) {
    unsigned long v = (unsigned long)arg;
    double end = now() + 0.3;
    while (now() < end) update_histogram(v++);
    return 0;
}

__attribute__((noinline)) void *burn(void *arg) {
    (void)arg;
    double end = now() + seconds;
    while (now() < end) sink++;
    return 0;
}

static int pipes[512][2];

/* Thread i reads from its pipe and writes to its partner's (i ^ 1) until the time is up. */
__attribute__((noinline)) void *relay(void *arg) {
    long i = (long)arg;
    double end = now() + seconds;
    char c;
    while (read(pipes[i][0], &c, 1) == 1) {
        sink++;
        if (now() > end) {
            close(pipes[i ^ 1][1]);
            break;
        }
        if (write(pipes[i ^ 1][1], &c, 1) != 1) break;
    }
    return 0;
}

static void run(int n, void *(*f)(void *)) {
    pthread_t t[256];
    for (long i = 0; i < n; i++) pthread_create(&t[i], 0, f, (void *)i);
    for (int i = 0; i < n; i++) pthread_join(t[i], 0);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: histogram contend|startup|relay N SECONDS\n");
        return 2;
    }
    int n = atoi(argv[2]);
    if (n < 1 || n > 256) return 2;
    seconds = atof(argv[3]);
    histogram_lock = malloc(sizeof *histogram_lock);
    pthread_mutex_init(histogram_lock, 0);
    bins = calloc(64, sizeof *bins);
    if (argv[1][0] == 'c') {
        run(n, worker);
    } else if (argv[1][0] == 'r') {
        if (n > 128) return 2;
        for (int i = 0; i < 2 * n; i++)
            if (pipe(pipes[i])) return 1;
        for (int i = 0; i < 2 * n; i += 2)
            if (write(pipes[i][1], "x", 1) != 1) return 1;
        run(2 * n, relay);
    } else {
        run(n, load_config);
        run(n, burn);
    }
    printf("%lu\n", bins[0] + sink);
    return 0;
}
