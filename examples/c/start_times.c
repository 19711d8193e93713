/* The kernel proposal's micro-benchmark, through libquietstat: the start
 * times of every process, first by opening, reading and closing
 * /proc/PID/stat for each, then in one qs_pid_start_times call on an open
 * handle; the two must agree. Timed twice: alternating rounds (each on the
 * caches the other left: the loop's files push the call's task structures
 * out), then each's rounds in a row.
 *
 *   cc -O2 -I crates/capi/include examples/c/start_times.c \
 *      -L target/release -lquietstat -o start_times
 *   LD_LIBRARY_PATH=target/release ./start_times [ROUNDS [THREADS]]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "quietstat.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Field 22 of /proc/PID/stat, or 0 when there is no such process. */
static uint64_t proc_start(int pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p) return 0;
    p += 2;
    for (int field = 3; field < 22; field++) {
        p = strchr(p, ' ');
        if (!p) return 0;
        p++;
    }
    return strtoull(p, NULL, 10);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 11;
    if (rounds < 1) rounds = 1;
    struct qs_options opts = {.abi = QS_ABI_VERSION,
                              .backend = QS_BACKEND_AUTO,
                              .threads = argc > 2 ? (uint32_t)atoi(argv[2]) : 0};
    /* Every PID /proc lists now. */
    size_t n = 0, cap = 1024;
    int32_t *pids = malloc(cap * sizeof *pids);
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        int pid = atoi(e->d_name);
        if (pid <= 0) continue;
        if (n == cap) pids = realloc(pids, (cap *= 2) * sizeof *pids);
        pids[n++] = pid;
    }
    if (d) closedir(d);
    uint64_t *naive = calloc(n, sizeof *naive), *vectored = calloc(n, sizeof *vectored);
    double *t_naive = calloc(rounds, sizeof(double)), *t_vec = calloc(rounds, sizeof(double));

    double t0 = now_ms();
    qs_handle *h = qs_open(&opts);
    double t_open = now_ms() - t0;
    if (!h) {
        fprintf(stderr, "qs_open: %s\n", qs_last_error(NULL));
        return 1;
    }
    const char *note = qs_backend_note(h);
    /* Alternating rounds: each figure beside its baseline, same conditions. */
    for (int r = 0; r < rounds; r++) {
        t0 = now_ms();
        for (size_t i = 0; i < n; i++) naive[i] = proc_start(pids[i]);
        t_naive[r] = now_ms() - t0;
        t0 = now_ms();
        if (qs_pid_start_times(h, pids, n, vectored) != QS_OK) {
            fprintf(stderr, "qs_pid_start_times: %s\n", qs_last_error(h));
            return 1;
        }
        t_vec[r] = now_ms() - t0;
    }
    /* Then each on its own, rounds in a row: the call on the caches its
     * own last round left (a caller asking every second with little else
     * running), the loop likewise. */
    double *b_naive = calloc(rounds, sizeof(double)), *b_vec = calloc(rounds, sizeof(double));
    for (int r = 0; r < rounds; r++) {
        t0 = now_ms();
        for (size_t i = 0; i < n; i++) naive[i] = proc_start(pids[i]);
        b_naive[r] = now_ms() - t0;
    }
    for (int r = 0; r < rounds; r++) {
        t0 = now_ms();
        if (qs_pid_start_times(h, pids, n, vectored) != QS_OK) {
            fprintf(stderr, "qs_pid_start_times: %s\n", qs_last_error(h));
            return 1;
        }
        b_vec[r] = now_ms() - t0;
    }
    /* They agree wherever the process lived through both reads. */
    size_t differ = 0;
    for (size_t i = 0; i < n; i++)
        if (naive[i] && vectored[i] && naive[i] != vectored[i]) differ++;
    qsort(t_naive, rounds, sizeof(double), cmp);
    qsort(t_vec, rounds, sizeof(double), cmp);
    qsort(b_naive, rounds, sizeof(double), cmp);
    qsort(b_vec, rounds, sizeof(double), cmp);
    double mn = t_naive[rounds / 2], mv = t_vec[rounds / 2];
    double bn = b_naive[rounds / 2], bv = b_vec[rounds / 2];
    printf("pids %zu rounds %d threads %u backend %s%s%s\n", n, rounds, opts.threads,
           qs_backend(h) == QS_BACKEND_BPF ? "bpf" : "procfs", *note ? " note: " : "", note);
    printf("qs_open_ms %.3f\n", t_open);
    printf("naive_proc_loop_ms_median %.3f\n", mn);
    printf("qs_pid_start_times_ms_median %.3f\n", mv);
    printf("ratio %.1f\n", mn / mv);
    printf("in_a_row_naive_proc_loop_ms_median %.3f\n", bn);
    printf("in_a_row_qs_pid_start_times_ms_median %.3f\n", bv);
    printf("in_a_row_ratio %.1f\n", bn / bv);
    printf("disagreements %zu\n", differ);
    qs_close(h);
    return differ ? 1 : 0;
}
