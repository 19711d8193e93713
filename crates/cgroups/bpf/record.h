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

/* The kernel function cgroups.bpf.c calls, as a helper with this number;
 * the loader rewrites the call into a kernel-function call. */
#define QS_KFUNC_CSS_RSTAT_FLUSH 1879048449 /* css_rstat_flush */

/* qs_cgroup.flags */
#define QS_CG_PSI 1     /* psi holds the pressure totals (the pressure files exist) */
#define QS_CG_CPU_CTL 2 /* the cpu controller is enabled: cpu.stat has more than the base figures */

/* One cgroup of the v2 hierarchy, as its files would give it. */
struct qs_cgroup {
	__u64 id;        /* its kernfs id: the directory's inode, the cgroup id */
	__u64 usage_ns;  /* cpu.stat's usage, user and system, before their adjustment (flushed) */
	__u64 user_ns;
	__u64 system_ns;
	__u64 psi_ns[6]; /* total stalled: io some, io full, memory some, memory full, cpu some, cpu full */
	__u32 level;     /* 0 for the root */
	__u32 flags;
};

/* What the last walk wrote (qs_cg_out's one entry). */
struct qs_cg_out {
	__u64 count;     /* cgroups visited: rows written, and those past the capacity */
};

#endif
