/* Threads add to one sum inside an OpenMP critical section in the hot loop (`critical`), or each
 * to its own partial sum merged once at the end (`reduction`): the lock users meet in OpenMP code.
 * Usage: critical critical|reduction ITERATIONS (threads from OMP_NUM_THREADS). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double work(long i) {
    double x = (double)i;
    for (int k = 0; k < 20; k++) x = x * 1.0000001 + 1e-9;
    return x * 1e-12;
}

int main(int argc, char **argv) {
    int critical = argc > 1 && strcmp(argv[1], "critical") == 0;
    long n = argc > 2 ? atol(argv[2]) : 10000000;
    double sum = 0;
    if (critical) {
#pragma omp parallel for
        for (long i = 0; i < n; i++) {
            double x = work(i);
#pragma omp critical
            sum += x;
        }
    } else {
#pragma omp parallel for reduction(+ : sum)
        for (long i = 0; i < n; i++) sum += work(i);
    }
    printf("%g\n", sum);
    return 0;
}
