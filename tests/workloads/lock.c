/* N threads that spend most of their time waiting for one global mutex. */
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>

pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long shared_counter;

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 4000; i++) {
        pthread_mutex_lock(&queue_lock);
        for (volatile int k = 0; k < 20000; k++) shared_counter++;
        pthread_mutex_unlock(&queue_lock);
    }
    return 0;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 4;
    pthread_t t[256];
    for (int i = 0; i < n; i++) pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < n; i++) pthread_join(t[i], 0);
    printf("%lu\n", shared_counter);
    return 0;
}
