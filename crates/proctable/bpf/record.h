/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * Records written by the BPF programs in proctable.bpf.c and decoded by the
 * proctable crate. This header is the only definition of the layout: the
 * crate's build script generates its Rust structs and constants from it, so
 * keep to the subset it reads: `#define QS_NAME number` (`ULL` allowed), and structs whose
 * members are `__u64|__s64|__u32|__s32|char name;` or `name[N];`, each on its
 * own line, with only one-line C comments. Every struct is laid out with
 * no padding (8-byte members first).
 */
#ifndef QS_RECORD_H
#define QS_RECORD_H

/* qs_config.flags */
#define QS_CFG_THREADS 1 /* one row per thread; otherwise leader rows carry the dead threads' sums */
#define QS_CFG_IO 2      /* append a qs_io after every qs_task */
#define QS_CFG_FILTER 4  /* only thread groups whose tgid is a key of qs_pids */
#define QS_CFG_CGROUP 8  /* read the cgroup id (three dependent loads per task) */
#define QS_CFG_EXEC 16   /* read the exec count (one more cache line per task) */
#define QS_CFG_UID 32    /* read the effective uid (the task's cred: one more line, shared by a user's tasks) */
#define QS_CFG_OOM 64    /* read the OOM adjustment (signal_struct, another line of it) */
#define QS_CFG_STATE 128   /* read the state letter's flags and the last CPU (the task's first line) */
#define QS_CFG_PRIO 256    /* read prio, static_prio, policy, rt_priority (two lines) */
#define QS_CFG_CPUTIME 512 /* read utime, stime, runtime, prev_cputime (two lines; signal_struct's with dead threads) */
#define QS_CFG_FAULTS 1024 /* read min_flt and maj_flt (with dead threads': signal_struct) */
#define QS_CFG_MM 2048     /* read vsize and rss (the mm pointer's line and three of mm_struct) */
#define QS_CFG_PARENT 4096 /* read the parent's tgid (a line of the task and one of its parent) */
#define QS_CFG_COMM 8192   /* read the task name (one line) */
#define QS_CFG_RSS_HIST 16384 /* count rows by resident pages in qs_walk_out.rss_hist (the mm's lines) */
#define QS_CFG_DELAY 32768 /* read the task's run delay and timeslices (sched_info: one line) */
#define QS_CFG_DELAYACCT 65536 /* append a qs_delays after every qs_task (and qs_io): task->delays, four lines */

#define QS_MAX_PIDS 65536
#define QS_WALK_MIN_ROWS 4096 /* qs_rows' capacity is set at load: at least this */

/* Kernel functions walk.bpf.c calls. The object calls them as helpers with
 * these numbers; the loader rewrites each such call into a kernel-function
 * call with the function's BTF id in the running kernel. */
#define QS_KFUNC_ITER_TASK_NEW 1879048193     /* bpf_iter_task_new */
#define QS_KFUNC_ITER_TASK_NEXT 1879048194    /* bpf_iter_task_next */
#define QS_KFUNC_ITER_TASK_DESTROY 1879048195 /* bpf_iter_task_destroy */
#define QS_KFUNC_RDONLY_CAST 1879048196       /* bpf_rdonly_cast */
#define QS_KFUNC_TASK_FROM_VPID 1879048197    /* bpf_task_from_vpid (lookup.bpf.c) */
#define QS_KFUNC_TASK_RELEASE 1879048198      /* bpf_task_release (lookup.bpf.c) */
#define QS_KFUNC_ITER_NUM_NEW 1879048199      /* bpf_iter_num_new (lookup.bpf.c) */
#define QS_KFUNC_ITER_NUM_NEXT 1879048200     /* bpf_iter_num_next (lookup.bpf.c) */
#define QS_KFUNC_ITER_NUM_DESTROY 1879048201  /* bpf_iter_num_destroy (lookup.bpf.c) */
#define QS_COMM_LEN 16
#define QS_EXIT_RING_BYTES 4194304

/* The one entry of the qs_config array map, written by the reader before a scan. */
struct qs_config {
	__u32 flags;
	__u32 wakeup_bytes; /* exit ring: wake the reader only once this many bytes wait */
};

/* A process-mode walk may be split between walkers, each run on its own CPU:
 * walker 0 from the list's head, walker k from a task an earlier walk marked,
 * each stopping where the next starts. */
#define QS_MAX_WALKERS 16
#define QS_WALK_MARKS 32
#define QS_RSS_BUCKETS 125 /* qs_walk_out.rss_hist: four per power of two of pages below 2^32, then one (qs_rss_bucket) */
#define QS_WALK_STALE_START 1 /* qs_walk_out.status: the start task is no longer where it was marked */

/* What one walker is told: BPF_PROG_RUN's context (the tracepoint arguments). */
struct qs_walk_args {
	__u64 walker;        /* its entry in qs_walk_out */
	__u64 first_row;     /* its rows go to qs_rows[first_row, first_row + max_rows) */
	__u64 max_rows;
	__u64 start_task;    /* the task to start at, as a walk marked it; 0: the list's head */
	__u64 start_ns;      /* and that task's start_boottime and pid, checked first */
	__u64 start_pid;
	__u64 stop_task;     /* stop before this task (the next walker's start); 0: none */
	__u64 stop_after_ns; /* or before a task started after this: the stop task left the list */
	__u64 mark_every;    /* mark every this many processes visited; 0: none */
	__u64 rss_lo;        /* with rss_hi > 0, rows only for tasks resident in rss_hi pages or more, */
	__u64 rss_hi;        /* and for the first tie_rows resident in rss_lo pages or more; */
	__u64 tie_rows;      /* the rest are left out (counted in left_out) */
};

/* One entry per walker of walk.bpf.c's qs_walk_out array: what its last walk wrote. */
struct qs_walk_out {
	__u64 rows;  /* records written to qs_rows (and qs_rows_io) */
	__u64 wanted; /* records that would have been written: > rows when its rows did not fit */
	__u64 visited; /* processes visited, rows or not (the PID filter leaves some out) */
	__u64 status;  /* 0, or QS_WALK_STALE_START (nothing walked) */
	__u64 marks;   /* entries of mark_* written */
	__u64 first_row; /* the walk's own state from here to mark_left */
	__u64 max_rows;
	__u64 stop_task;
	__u64 stop_after_ns;
	__u64 mark_every;
	__u64 mark_left;
	__u64 next_task; /* the task to visit next */
	__u64 rss_lo;    /* the walk's bounds (qs_walk_args) */
	__u64 rss_hi;
	__u64 tie_rows;
	__u64 ties;      /* rows written for tasks between rss_lo and rss_hi */
	__u64 left_out;  /* tasks the bounds left out */
	__u64 names;     /* of wanted, rows for a kernel thread's name (qs_task_name) */
	__u64 mark_task[32]; /* every mark_every-th process visited: its address, */
	__u64 mark_ns[32];   /* start_boottime */
	__u64 mark_pid[32];  /* and pid */
	__u64 rss_hist[125]; /* with QS_CFG_RSS_HIST: the tasks the PID filter passes, by qs_rss_bucket of their resident pages */
};

/* lookup.bpf.c: PIDs looked up one by one. qs_lookup_pids[i] holds a PID
 * (in the caller's PID namespace); qs_lookup_starts[i] gets the start_boottime
 * of the task it names with QS_LOOKUP_FOUND set, or 0 when it names none. */
#define QS_LOOKUP_MIN_PIDS 4096 /* the arrays' capacity is set at load: at least this */
#define QS_LOOKUP_FOUND 9223372036854775808ULL

/* What one lookup run is told: BPF_PROG_RUN's context. */
struct qs_lookup_args {
	__u64 first; /* look up qs_lookup_pids[first, first + count) */
	__u64 count;
};

/* One task seen by the task iterator (or walk). Counters are the task's own, plus, on a
 * leader's row in process mode, those the group's dead threads left in
 * signal_struct (as /proc/PID/stat adds them). */
struct qs_task {
	__u64 start_boottime_ns;
	__u64 utime_ns;
	__u64 stime_ns;
	__u64 runtime_ns;   /* se.sum_exec_runtime: the base of cputime scaling */
	__u64 prev_utime_ns; /* prev_cputime: the last scaled values /proc reported */
	__u64 prev_stime_ns;
	__u64 min_flt;
	__u64 maj_flt;
	__u64 nvcsw;        /* this task's own, as /proc/PID/status shows */
	__u64 nivcsw;
	__u64 vm_pages;     /* mm->total_vm; 0 for kernel threads */
	__u64 rss_pages;    /* file + anon + shmem, each clamped at 0 as /proc does */
	__u64 cgroup_id;    /* cgroup v2 id (kernfs node id = inode number) */
	__u64 exec_id;      /* self_exec_id: counts the task's execs; 0 unless asked */
	__u64 run_delay_ns; /* the task's own sched_info.run_delay: waiting for a CPU; 0 unless asked */
	__u64 pcount;       /* and sched_info.pcount: times given one */
	__u32 pid;
	__u32 tgid;
	__u32 ppid;
	__u32 state;        /* task->__state */
	__u32 exit_state;
	__u32 flags;        /* PF_* */
	__s32 prio;
	__s32 static_prio;
	__u32 policy;
	__u32 rt_priority;
	__u32 cpu;
	__u32 nr_threads;
	__u32 euid;         /* effective uid (cred->euid), as ps's USER; 0 unless asked */
	__s32 oom_score_adj; /* signal->oom_score_adj; 0 unless asked */
	char comm[16];
};

/* A kernel thread's name where /proc shows more than its comm: its full
 * name (kthread->full_name, for a name longer than comm holds), or a
 * workqueue worker's with the description of its last work. With
 * QS_CFG_COMM the walk writes it in the row after the thread's own, laid
 * over a qs_task: pid 0 (no task's) marks it, tgid names the thread. */
struct qs_task_name {
	char name[64];  /* the full name, or comm; NUL-terminated */
	char desc[32];  /* a worker's worker->desc, or empty */
	__u32 running;  /* the worker runs that work now (shown '+', else '-') */
	__u32 _pad;
	__u64 _over[3]; /* up to qs_task's pid */
	__u32 pid;      /* 0 */
	__u32 tgid;     /* the thread's pid */
};

/* I/O accounting, following a qs_task when QS_CFG_IO is set. */
struct qs_io {
	__u64 rchar;
	__u64 wchar;
	__u64 syscr;
	__u64 syscw;
	__u64 read_bytes;
	__u64 write_bytes;
	__u64 cancelled_write_bytes;
};

/* The task's own delay accounting (task->delays, kept while
 * kernel.task_delayacct is 1), following a qs_task (and its qs_io) when
 * QS_CFG_DELAYACCT is set: total nanoseconds spent waiting for each cause. */
struct qs_delays {
	__u64 blkio_ns;     /* synchronous block I/O */
	__u64 swapin_ns;    /* swapping a page in */
	__u64 reclaim_ns;   /* direct memory reclaim (freepages_delay) */
	__u64 thrashing_ns; /* a page of the working set refaulting */
	__u64 compact_ns;   /* memory compaction */
	__u64 wpcopy_ns;    /* copying a page on write */
	__u64 irq_ns;       /* interrupts taken while it ran */
};

/* One thread group that ended, written to the qs_exits ring buffer by the
 * last of its threads to exit. */
struct qs_exit {
	__u64 start_boottime_ns;
	__u64 exit_boottime_ns;
	__u64 utime_ns;
	__u64 stime_ns;
	__u64 runtime_ns;
	__u64 prev_utime_ns;
	__u64 prev_stime_ns;
	__u64 min_flt;
	__u64 maj_flt;
	__u64 maxrss_pages; /* high-water mark of the group's RSS */
	__u32 pid;          /* the tgid */
	__u32 ppid;
	__s32 exit_code;    /* wait status: code << 8 | signal */
	__u32 nr_threads;
	__u32 euid;         /* effective uid (cred->euid), as ps's USER; 0 unless asked */
	__u32 _pad;
	char comm[16];
};

/* The one entry of the qs_exit_stats array map. */
struct qs_exit_stats {
	__u64 seen;
	__u64 lost; /* ring buffer full */
};

/* net.bpf.c: the owner of a TCP socket, kept in the socket's own storage
 * (copied into each connection a listening socket accepts), and the
 * socket's counts as last charged to it. */
#define QS_SK_LISTENER 1 /* qs_sk_owner.flags: given by listen(): the listener's, or a copy in a connection it accepted */
struct qs_sk_owner {
	__u64 start_ns; /* the owning thread group's leader's start_boottime */
	__u32 tgid;
	__u32 flags;
	__u64 rx_seen;  /* bytes_received when the socket was last visited */
	__u64 tx_seen;  /* bytes_acked then */
};

/* net.bpf.c: a process's sums in qs_net_sums, or an unheld connection
 * written out by the sweep: payload bytes as the kernel counts them in
 * tcp_sock. */
#define QS_SOCK_UNHELD 1 /* qs_sock.flags: an accepted connection no holder scan has found the holder of yet */
struct qs_sock {
	__u64 start_ns;  /* the owner's start_boottime */
	__u64 rx_bytes;  /* bytes_received: payload received in order */
	__u64 tx_bytes;  /* bytes_acked: payload sent and acknowledged */
	__u32 tgid;      /* the owner */
	__u32 flags;
};

/* net.bpf.c: the one entry of qs_net_stats. */
struct qs_net_stats {
	__u64 lost;         /* visits whose counts found no room in qs_net_sums */
	__u64 touched_full; /* visits whose owner found no room in qs_net_touched */
};

/* net.bpf.c: qs_net_sums's key, a socket's owner. */
struct qs_owner {
	__u64 start_ns; /* its start_boottime */
	__u32 tgid;
	__u32 pad;
};

#define QS_NET_SUMS_MAX 65536 /* processes whose sockets' sums are kept */
#define QS_NET_TOUCHED_MAX 4096 /* owners whose sums changed, kept between two reads */

/* gpu.bpf.c: a descriptor of a GPU's character device, found by the scan
 * (qs_gpu_files). */
struct qs_gpu_file {
	__u32 tgid; /* the process holding it */
	__u32 fd;   /* its number there: /proc/TGID/fdinfo/FD */
};

/* gpu.bpf.c: the one entry of qs_gpu_cfg. */
struct qs_gpu_cfg {
	__u32 majors[4]; /* character-device majors counted as GPUs; 0: unused */
	__u32 hits;      /* qs_gpu_walk: descriptors found (past capacity too) */
	__u32 capacity;  /* qs_gpu_walk: entries of qs_gpu_hits */
};

#define QS_GPU_HITS_MIN 1 /* qs_gpu_hits' entries in the object; the loader sets the count */

#endif
