/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * Records written by cgroups.bpf.c and read by the cgroups crate. This
 * header is the only definition of the layout: the crate's build script
 * generates its Rust structs and constants from it, so keep to the subset
 * it reads: `#define QS_NAME number` (`ULL` allowed), and structs whose
 * members are `__u64|__s64|__u32|__s32|char name;` or `name[N];`, each on
 * its own line, with only one-line C comments. Every struct is laid out
 * with no padding (8-byte members first).
 */
#ifndef QS_CG_RECORD_H
#define QS_CG_RECORD_H

#define QS_CG_MIN_ROWS 4096 /* qs_cg_rows' capacity is set at load: at least this */
#define QS_CG_MIN_CPUS 1    /* qs_cpu_off's capacity is set at load: the possible CPUs */

/* The kernel functions cgroups.bpf.c calls, each as a helper with this number;
 * the loader rewrites the call into a kernel-function call. */
#define QS_KFUNC_CSS_RSTAT_FLUSH 1879048449 /* css_rstat_flush */
#define QS_KFUNC_RDONLY_CAST 1879048450     /* bpf_rdonly_cast */

/* qs_cgroup.flags: which of its figures the walk filled */
#define QS_CG_PSI 1       /* psi_ns: the pressure totals (v2: the pressure files exist) */
#define QS_CG_CPU_CTL 2   /* v2: the cpu controller is enabled (cpu.stat has more than the base figures) */
#define QS_CG_BASE 4      /* v2: usage, user, system from the base statistics, before their adjustment */
#define QS_CG_CPUACCT 8   /* v1 cpuacct: usage, user, system summed over the possible CPUs */
#define QS_CG_CFS 16      /* v1 cpu: periods, throttling, quota, period */
#define QS_CG_MEMCG 32    /* v1 memory: charge, limit, failcnt, oom kills */
#define QS_CG_PIDS 64     /* v1 pids: tasks */
#define QS_CG_BLKIO 128   /* v1 blkio controller present */
#define QS_CG_BLKGS 256   /* v1 blkio: the cgroup has block groups (it or a descendant did I/O) */
#define QS_CG_POPULATED 512 /* the cgroup or a descendant has tasks */

/* qs_cg_out.mode: what the walk reads (set by the loader before each run) */
#define QS_CG_MODE_V2 1   /* flush the base statistics at the root */

/* One cgroup, as its files would give it. */
struct qs_cgroup {
	__u64 id;        /* its kernfs id: the directory's inode (the cgroup id in v2) */
	__u64 usage_ns;  /* QS_CG_BASE or QS_CG_CPUACCT */
	__u64 user_ns;
	__u64 system_ns;
	__u64 psi_ns[6]; /* total stalled: io some, io full, memory some, memory full, cpu some, cpu full */
	__u64 periods;   /* QS_CG_CFS: cpu.stat's nr_periods, nr_throttled, throttled_time */
	__u64 throttled_periods;
	__u64 throttled_ns;
	__u64 quota_ns;  /* the kernel's RUNTIME_INF (all ones): no quota */
	__u64 period_ns;
	__u64 memory_pages; /* QS_CG_MEMCG: the page counter's usage, limit, failcnt */
	__u64 memory_max_pages;
	__u64 memory_failcnt;
	__u64 oom_kills;
	__u64 pids;      /* QS_CG_PIDS */
	__u32 level;     /* 0 for the root */
	__u32 flags;
};

/* The walk's input and output (qs_cg_out's one entry). */
struct qs_cg_out {
	__u64 count;     /* cgroups visited: rows written, and those past the capacity */
	__u64 mode;      /* QS_CG_MODE_* */
	__u64 cpus;      /* entries of qs_cpu_off: the possible CPUs' numbers go up to this */
	__u64 cpus_found; /* CPUs whose per-CPU offset the walk found */
};

#endif
