// Two stages of work per item: `handover THREADS ITEMS WORK BATCH`. At 1 thread one thread does
// both stages of each item; at 2 each stage has a thread of its own, and the first hands its
// results to the second through a mailbox (a mutex and a condition variable) BATCH items at a
// time. With BATCH 1 nearly every item blocks one thread and wakes the other; with 1000 the
// two stages overlap and 2 threads take about half the time.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long items, work, batch;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int full;
static unsigned long *slot, sum;

static unsigned long stage(unsigned long x) {
    for (long i = 0; i < work; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

static void *produce(void *arg) {
    unsigned long *mine = arg;
    for (long i = 0; i < items; i += batch) {
        long n = items - i < batch ? items - i : batch;
        for (long k = 0; k < n; k++) mine[k] = stage((unsigned long)(i + k));
        pthread_mutex_lock(&lock);
        while (full) pthread_cond_wait(&changed, &lock);
        memcpy(slot, mine, n * sizeof *mine);
        full = 1;
        pthread_cond_signal(&changed);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void *consume(void *arg) {
    unsigned long *mine = arg;
    for (long i = 0; i < items; i += batch) {
        long n = items - i < batch ? items - i : batch;
        pthread_mutex_lock(&lock);
        while (!full) pthread_cond_wait(&changed, &lock);
        memcpy(mine, slot, n * sizeof *mine);
        full = 0;
        pthread_cond_signal(&changed);
        pthread_mutex_unlock(&lock);
        for (long k = 0; k < n; k++) sum += stage(mine[k]);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    items = argc > 2 ? atol(argv[2]) : 60000;
    work = argc > 3 ? atol(argv[3]) : 5000;
    batch = argc > 4 ? atol(argv[4]) : 1;
    if (threads < 2) {
        for (long i = 0; i < items; i++) sum += stage(stage((unsigned long)i));
    } else {
        slot = calloc(batch, sizeof *slot);
        unsigned long *a = calloc(batch, sizeof *a), *b = calloc(batch, sizeof *b);
        pthread_t p, c;
        pthread_create(&p, NULL, produce, a);
        pthread_create(&c, NULL, consume, b);
        pthread_join(p, NULL);
        pthread_join(c, NULL);
    }
    printf("%lu\n", sum);
    return 0;
}
