/* Threads add to one sum inside an OpenMP critical section in the hot loop (`critical`), or each
 * to its own partial sum merged once at the end (`reduction`): the lock users meet in OpenMP code.
 * `static` and `dynamic` make the first half of the iterations three times as costly: a static
 * schedule leaves the thread with the second half waiting at the loop's end for the first, a
 * dynamic one hands the pieces out evenly.
 * Usage: critical critical|reduction|static|dynamic ITERATIONS (threads from OMP_NUM_THREADS). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double work(long i) {
    double x = (double)i;
    for (int k = 0; k < 20; k++) x = x * 1.0000001 + 1e-9;
    return x * 1e-12;
}

static double uneven(long i, long n) {
    double x = work(i);
    if (i < n / 2) x += work(i + 1) + work(i + 2);
    return x;
}

int main(int argc, char **argv) {
    const char *variant = argc > 1 ? argv[1] : "reduction";
    int critical = strcmp(variant, "critical") == 0;
    long n = argc > 2 ? atol(argv[2]) : 10000000;
    double sum = 0;
    if (strcmp(variant, "static") == 0) {
#pragma omp parallel for reduction(+ : sum) schedule(static)
        for (long i = 0; i < n; i++) sum += uneven(i, n);
    } else if (strcmp(variant, "dynamic") == 0) {
#pragma omp parallel for reduction(+ : sum) schedule(dynamic, 10000)
        for (long i = 0; i < n; i++) sum += uneven(i, n);
    } else if (critical) {
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
