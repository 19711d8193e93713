/* The C library's test, compiled against quietstat.h and linked with
 * libquietstat (shared and static) by tests/c.rs, run once per backend:
 *   qs_test bpf|procfs
 * It checks start times against /proc for children it starts, PIDs that
 * never existed, a PID reused between two calls, n = 0, n = 100,000, NULL
 * pointers, records in the order asked, snapshots, this process's TCP
 * bytes, its delay accounting and its GPU figures. Exits 0 when all
 * hold; otherwise prints what failed and exits 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "quietstat.h"

static int failures;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                  \
            fprintf(stderr, "\n");                                         \
            failures++;                                                    \
        }                                                                  \
    } while (0)

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
    char *p = strrchr(buf, ')'); /* the name may hold spaces and ')' */
    if (!p) return 0;
    p += 2; /* field 3 */
    for (int field = 3; field < 22; field++) {
        p = strchr(p, ' ');
        if (!p) return 0;
        p++;
    }
    return strtoull(p, NULL, 10);
}

/* A child that sleeps until killed, seen by /proc as sleeping. */
static pid_t sleeper(void) {
    pid_t pid = fork();
    if (pid == 0) {
        for (;;) pause();
    }
    /* Until it is in pause(): its state then reads S. */
    for (int i = 0; i < 2000; i++) {
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        FILE *f = fopen(path, "r");
        if (f) {
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = 0;
            char *p = strrchr(buf, ')');
            if (p && p[2] == 'S') break;
        }
        usleep(1000);
    }
    return pid;
}

static void reap(pid_t pid) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* Makes the next fork get `pid`, where the kernel allows it. */
static int set_last_pid(pid_t pid) {
    int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
    if (fd < 0) return -1;
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%d", pid - 1);
    int ok = write(fd, buf, n) == n;
    close(fd);
    return ok ? 0 : -1;
}

int main(int argc, char **argv) {
    const char *want = argc > 1 ? argv[1] : "procfs";
    uint32_t threads = argc > 2 ? (uint32_t)atoi(argv[2]) : 0;
    uint32_t backend = strcmp(want, "bpf") == 0 ? QS_BACKEND_BPF : QS_BACKEND_PROCFS;

    CHECK(qs_version() == QS_ABI_VERSION, "qs_version %u", qs_version());

    /* Refusals at open: a wrong ABI, an unknown backend. */
    struct qs_options bad = {.abi = QS_ABI_VERSION + 1, .backend = QS_BACKEND_PROCFS};
    CHECK(qs_open(&bad) == NULL, "a wrong ABI opened");
    CHECK(strstr(qs_last_error(NULL), "ABI") != NULL, "%s", qs_last_error(NULL));
    bad.abi = QS_ABI_VERSION;
    bad.backend = 9;
    CHECK(qs_open(&bad) == NULL, "backend 9 opened");
    CHECK(strstr(qs_last_error(NULL), "QS_BACKEND_PROCFS") != NULL, "%s", qs_last_error(NULL));
    bad.backend = QS_BACKEND_PROCFS;
    bad.threads = 99;
    CHECK(qs_open(&bad) == NULL, "99 threads opened");
    CHECK(strstr(qs_last_error(NULL), "threads") != NULL, "%s", qs_last_error(NULL));
    CHECK(qs_last_error_code(NULL) == QS_ERR_ARG, "code %d", qs_last_error_code(NULL));

    /* A read that fails: the call says QS_ERR_READ, qs_last_error_code
     * what kind of failure it was (a root that is not there). */
    struct qs_options gone = {
        .abi = QS_ABI_VERSION, .backend = QS_BACKEND_PROCFS, .proc_root = "/nonexistent"};
    qs_handle *g = qs_open(&gone);
    if (g) {
        struct qs_proc *t = NULL;
        size_t tn = 0;
        CHECK(qs_last_error_code(g) == QS_OK, "code %d", qs_last_error_code(g));
        CHECK(qs_snapshot(g, 0, &t, &tn) == QS_ERR_READ, "%s", qs_last_error(g));
        CHECK(qs_last_error_code(g) == QS_ERR_ABSENT, "code %d: %s", qs_last_error_code(g),
              qs_last_error(g));
        CHECK(strstr(qs_last_error(g), "/nonexistent") != NULL, "%s", qs_last_error(g));
        qs_close(g);
    } else {
        CHECK(qs_last_error_code(NULL) == QS_ERR_ABSENT, "code %d: %s", qs_last_error_code(NULL),
              qs_last_error(NULL));
    }

    struct qs_options opts = {.abi = QS_ABI_VERSION, .backend = backend, .threads = threads};
    qs_handle *h = qs_open(&opts);
    if (!h) {
        fprintf(stderr, "qs_open(%s): %s\n", want, qs_last_error(NULL));
        return 1;
    }
    CHECK(qs_backend(h) == (int32_t)backend, "backend %d", qs_backend(h));

    /* Start times of children, against /proc; PIDs that are no process. */
    enum { KIDS = 8 };
    int32_t pids[KIDS + 3];
    for (int i = 0; i < KIDS; i++) pids[i] = sleeper();
    pids[KIDS] = 0;
    pids[KIDS + 1] = -5;
    pids[KIDS + 2] = 0x7ffffff0; /* above any pid_max */
    uint64_t out[KIDS + 3];
    memset(out, 0xff, sizeof out);
    CHECK(qs_pid_start_times(h, pids, KIDS + 3, out) == QS_OK, "%s", qs_last_error(h));
    for (int i = 0; i < KIDS; i++) {
        uint64_t expect = proc_start(pids[i]);
        CHECK(expect != 0 && out[i] == expect, "pid %d: %llu, /proc says %llu", pids[i],
              (unsigned long long)out[i], (unsigned long long)expect);
    }
    for (int i = KIDS; i < KIDS + 3; i++)
        CHECK(out[i] == 0, "pid %d is no process, got %llu", pids[i], (unsigned long long)out[i]);

    /* Records in the order asked, with the fields asked. */
    struct qs_proc recs[3];
    int32_t order[3] = {pids[3], 0x7ffffff0, pids[0]};
    CHECK(qs_pids_read(h, order, 3, QS_FIELD_PPID | QS_FIELD_COMM | QS_FIELD_STATE, recs) == QS_OK,
          "%s", qs_last_error(h));
    CHECK(recs[0].pid == pids[3] && recs[2].pid == pids[0], "order %d %d", recs[0].pid, recs[2].pid);
    CHECK(recs[1].pid == 0 && recs[1].fields == 0, "a missing pid gave pid %d", recs[1].pid);
    for (int i = 0; i < 3; i += 2) {
        CHECK(recs[i].ppid == getpid(), "ppid %d", recs[i].ppid);
        CHECK(recs[i].state == 'S', "state %c", recs[i].state);
        CHECK(strcmp(recs[i].comm, "qs_test") == 0, "comm %s", recs[i].comm);
        CHECK(recs[i].start_ticks == out[i == 0 ? 3 : 0], "identity start %llu",
              (unsigned long long)recs[i].start_ticks);
        CHECK((recs[i].fields & (QS_FIELD_PPID | QS_FIELD_COMM | QS_FIELD_STATE)) ==
                  (QS_FIELD_PPID | QS_FIELD_COMM | QS_FIELD_STATE),
              "fields 0x%x", recs[i].fields);
        CHECK(recs[i].rss_bytes == 0 && !(recs[i].fields & QS_FIELD_RSS), "rss not asked");
    }

    /* A sleeper's run delay and timeslices, as /proc/PID/schedstat has
     * them (still while it sleeps). */
    struct qs_proc d;
    CHECK(qs_pids_read(h, &order[2], 1, QS_FIELD_DELAY, &d) == QS_OK, "%s", qs_last_error(h));
    char sched_path[64];
    snprintf(sched_path, sizeof sched_path, "/proc/%d/schedstat", (int)order[2]);
    FILE *sched = fopen(sched_path, "r");
    unsigned long long ran = 0, delay = 0, slices = 0;
    CHECK(sched && fscanf(sched, "%llu %llu %llu", &ran, &delay, &slices) == 3, "%s", sched_path);
    fclose(sched);
    CHECK((d.fields & QS_FIELD_DELAY) && d.run_delay_ns == delay && d.timeslices == slices,
          "delay %llu/%llu, schedstat %llu/%llu", (unsigned long long)d.run_delay_ns,
          (unsigned long long)d.timeslices, delay, slices);

    /* TCP bytes (BPF only: /proc cannot say): this process's connecting
     * end receives 100,000 bytes from its accepted end. */
    {
        enum { N = 100000 };
        static char buf[N];
        struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof addr;
        int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(l >= 0 && c >= 0, "socket: %s", strerror(errno));
        CHECK(bind(l, (struct sockaddr *)&addr, sizeof addr) == 0 && listen(l, 1) == 0 &&
                  getsockname(l, (struct sockaddr *)&addr, &len) == 0 &&
                  connect(c, (struct sockaddr *)&addr, sizeof addr) == 0,
              "listen and connect: %s", strerror(errno));
        int a = accept(l, NULL, NULL);
        CHECK(a >= 0 && send(a, buf, N, 0) == N, "accept and send: %s", strerror(errno));
        size_t got = 0;
        while (got < N) {
            ssize_t r = recv(c, buf, N - got, 0);
            CHECK(r > 0, "recv: %s", strerror(errno));
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        int32_t self = getpid();
        struct qs_proc n;
        CHECK(qs_pids_read(h, &self, 1, QS_FIELD_NET, &n) == QS_OK, "%s", qs_last_error(h));
        if (backend == QS_BACKEND_BPF)
            CHECK((n.fields & QS_FIELD_NET) && n.net_rx_bytes >= N && n.net_rx_bytes < N + 16,
                  "net fields 0x%x rx %llu", n.fields, (unsigned long long)n.net_rx_bytes);
        else
            CHECK(!(n.fields & QS_FIELD_NET) && n.net_rx_bytes == 0, "net from /proc: 0x%x",
                  n.fields);
        close(a);
        close(c);
        close(l);
    }

    /* Delay accounting: given by both backends as root (the procfs
     * backend asks taskstats), as the kernel keeps it (zeros while
     * kernel.task_delayacct is 0). */
    {
        int32_t self = getpid();
        struct qs_proc w;
        CHECK(qs_pids_read(h, &self, 1, QS_FIELD_DELAYACCT, &w) == QS_OK, "%s", qs_last_error(h));
        CHECK(w.fields & QS_FIELD_DELAYACCT, "delayacct fields 0x%x", w.fields);
    }

    /* GPU: given by both backends (this process holds no GPU: zeros). */
    {
        int32_t self = getpid();
        struct qs_proc g;
        CHECK(qs_pids_read(h, &self, 1, QS_FIELD_GPU, &g) == QS_OK, "%s", qs_last_error(h));
        CHECK(g.fields & QS_FIELD_GPU, "gpu fields 0x%x", g.fields);
        CHECK(g.gpu_clients == 0 && g.gpu_busy_ns == 0 && g.gpu_mem_bytes == 0,
              "gpu of a process holding none: %u clients", g.gpu_clients);
    }

    /* A PID reused between two calls: the second call gives the new
     * process's start time. The reuse is arranged with ns_last_pid (tried
     * until no other fork on the machine took the PID in between). */
    int reused = 0;
    for (int attempt = 0; attempt < 50 && !reused; attempt++) {
        pid_t first = sleeper();
        int32_t p = first;
        uint64_t before = 0, after = 0;
        CHECK(qs_pid_start_times(h, &p, 1, &before) == QS_OK, "%s", qs_last_error(h));
        reap(first);
        usleep(20000); /* a later tick: the new start time differs */
        if (set_last_pid(first) != 0) break;
        pid_t second = sleeper();
        if (second == first) {
            reused = 1;
            CHECK(qs_pid_start_times(h, &p, 1, &after) == QS_OK, "%s", qs_last_error(h));
            CHECK(before != 0, "the first process had no start time");
            CHECK(after == proc_start(second) && after != before,
                  "reused pid %d: before %llu, after %llu, /proc %llu", p, (unsigned long long)before,
                  (unsigned long long)after, (unsigned long long)proc_start(second));
        }
        reap(second);
    }
    CHECK(reused, "PID reuse could not be arranged through ns_last_pid (run as root)");

    /* n = 0 with NULL pointers; NULL with n > 0; a NULL handle. */
    CHECK(qs_pid_start_times(h, NULL, 0, NULL) == QS_OK, "n = 0: %s", qs_last_error(h));
    CHECK(qs_pid_start_times(h, NULL, 3, out) == QS_ERR_ARG, "NULL pids");
    CHECK(strstr(qs_last_error(h), "pids is NULL") != NULL, "%s", qs_last_error(h));
    CHECK(qs_pid_start_times(h, pids, 3, NULL) == QS_ERR_ARG, "NULL out");
    CHECK(qs_pid_start_times(NULL, pids, 3, out) == QS_ERR_ARG, "NULL handle");
    CHECK(qs_pids_read(h, pids, 2, 1u << 31, recs) == QS_ERR_ARG, "unknown field bits");

    /* n = 100,000: every PID below it; the children and PID 1 agree with
     * /proc, and a PID no process has is 0. */
    enum { MANY = 100000 };
    int32_t *many = malloc(MANY * sizeof *many);
    uint64_t *starts = malloc(MANY * sizeof *starts);
    for (int i = 0; i < MANY; i++) many[i] = i + 1;
    CHECK(qs_pid_start_times(h, many, MANY, starts) == QS_OK, "%s", qs_last_error(h));
    CHECK(starts[0] == proc_start(1), "pid 1: %llu", (unsigned long long)starts[0]);
    for (int i = 0; i < KIDS; i++)
        if (pids[i] <= MANY)
            CHECK(starts[pids[i] - 1] == out[i], "pid %d among many", pids[i]);
    int absent = 0;
    for (int i = 0; i < MANY; i++)
        if (starts[i] == 0 && proc_start(i + 1) == 0) absent++;
    CHECK(absent > 0, "no absent pid below %d", MANY);
    free(many);
    free(starts);

    /* Snapshots: library-owned, caller-owned, too small. */
    struct qs_proc *table = NULL;
    size_t n = 0;
    CHECK(qs_snapshot(h, QS_FIELDS_STAT, &table, &n) == QS_OK, "%s", qs_last_error(h));
    int found = 0;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < KIDS; k++)
            if (table[i].pid == pids[k] && table[i].start_ticks == out[k] && table[i].ppid == getpid())
                found++;
    CHECK(found == KIDS, "children in the snapshot: %d of %d", found, KIDS);
    qs_table_free(table, n);
    size_t need = 0;
    struct qs_proc one;
    CHECK(qs_snapshot_into(h, 0, &one, 1, &need) == QS_ERR_RANGE && need > 1, "need %zu", need);
    struct qs_proc *mine = calloc(need + 64, sizeof *mine);
    size_t got = 0;
    CHECK(qs_snapshot_into(h, QS_FIELD_COMM, mine, need + 64, &got) == QS_OK, "%s", qs_last_error(h));
    CHECK(got > 1 && got <= need + 64, "got %zu", got);
    free(mine);
    CHECK(qs_snapshot(h, 0, NULL, &n) == QS_ERR_ARG, "NULL out");

    for (int i = 0; i < KIDS; i++) reap(pids[i]);
    qs_close(h);
    qs_close(NULL);
    if (failures) {
        fprintf(stderr, "%d failures (%s)\n", failures, want);
        return 1;
    }
    printf("qs_test %s: all passed\n", want);
    return 0;
}
