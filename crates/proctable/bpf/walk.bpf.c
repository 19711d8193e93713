// SPDX-License-Identifier: GPL-2.0-only
/*
 * The process-table walk. Built into the committed walk.bpf.o by build.sh
 * (CO-RE, like proctable.bpf.o). The record layouts are in record.h, the
 * field reads in task.h.
 *
 *  qs_walk  raw_tp program run on demand with BPF_PROG_RUN (never attached):
 *           walks the task list (a pointer chase per task, no PID lookup or
 *           reference per task, as the iter/task link needs) and writes one
 *           qs_task per process (or thread) into qs_rows, a memory-mapped
 *           array the reader decodes in place: no copy through a read()
 *           buffer.
 *
 * The walk follows the list of thread groups by hand from init_task (which
 * the open-coded task iterator gives). In process mode it writes one row
 * per group, a multi-threaded group's live threads summed into its
 * leader's row from the group's thread list; in threads mode one row per
 * thread on that list. Every walker so runs the same loop, and the walk
 * finds PID 1 and its threads, which this machine's kernel's iterator
 * skips; per process the hand walk costs about what the iterator did (2-5%
 * less at 30,000 processes in alternating runs, BENCHMARKS.md run 17).
 *
 * A walk may be bounded by resident memory (qs_walk_args' rss_lo, rss_hi,
 * tie_rows; qs_within_bounds): a reader under a memory ceiling that keeps
 * only its most resident processes has rows written for those alone, the
 * bounds taken from the walk before's count by resident pages (rss_hist),
 * so that the rows (kernel memory, charged to its cgroup) are sized by
 * what it keeps, not by the tasks there are.
 *
 * The list is followed two links ahead of the walker (qs_prefetch_list):
 * a walk of thousands of tasks waits on memory, not on work.
 *
 * A process-mode walk may be split in stretches, one walker each, run on
 * several CPUs (qs_walk_args): the first starts at the list's head, the
 * others at tasks an earlier walk marked (qs_walk_from), each stopping
 * where the next starts; every walker visits a process through one global
 * function, qs_visit_next. A walker's entry in qs_walk_out is not tied to
 * its stretch: a stalled stretch may be walked again into a spare entry.
 *
 * The kernel functions (the task iterator's three and bpf_rdonly_cast) are
 * called through helper-style pointers with the QS_KFUNC_* numbers of
 * record.h; the loader rewrites those calls into kernel-function calls (BTF
 * ids of the running kernel), which the loader library cannot resolve from
 * extern declarations itself.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "record.h"
#include "kfuncs.h"
#include "task.h"
#include "maps.h"

char LICENSE[] SEC("license") = "GPL";


/* max_entries is set by the loader from the number of tasks. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QS_WALK_MIN_ROWS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct qs_task);
} qs_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QS_WALK_MIN_ROWS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct qs_io);
} qs_rows_io SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QS_WALK_MIN_ROWS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct qs_delays);
} qs_rows_delays SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QS_MAX_WALKERS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct qs_walk_out);
} qs_walk_out SEC(".maps");

/* The task at address `addr`, through a read-only cast: loads through it
 * cannot fault. */
#define qs_task_at(addr)                                                                   \
	((struct task_struct *)qs_rdonly_cast((void *)(addr),                               \
					      bpf_core_type_id_kernel(struct task_struct)))

/* The task whose `member` list node is at address `node`. */
#define qs_task_of(node, member) qs_task_at((node) - bpf_core_field_offset(struct task_struct, member))

/* A group's thread list, walked by hand from its leader's row. */
struct qs_thread_walk {
	__u64 pos;  /* address of the list node last visited */
	__u64 head; /* address of signal_struct.thread_head */
	__u32 idx;   /* the group's row */
	__u32 flags; /* what the row holds (qs_config.flags) */
};

/* bpf_loop callback: adds the next thread (not the leader) to the group's
 * row; stops back at the head. The list is RCU-protected, as the kernel's
 * own __next_thread walks it; addresses are read as numbers and the task
 * read through a read-only cast (loads that cannot fault). */
static long qs_add_next_thread(__u64 i, void *ctx)
{
	struct qs_thread_walk *w = ctx;
	struct task_struct *t;
	struct qs_task *rec;
	struct qs_io *io;
	__u64 next = 0;

	if (bpf_probe_read_kernel(&next, sizeof(next), (void *)w->pos) || !next ||
	    next == w->head)
		return 1;
	w->pos = next;
	t = qs_task_of(next, thread_node);
	if (t->pid == t->tgid)
		return 0;
	rec = bpf_map_lookup_elem(&qs_rows, &w->idx);
	if (!rec)
		return 1;
	qs_add_thread(rec, t, w->flags);
	if (w->flags & QS_CFG_IO) {
		io = bpf_map_lookup_elem(&qs_rows_io, &w->idx);
		if (io)
			qs_io_add(io, &t->ioac);
	}
	return 0;
}

/* The bucket of rss_hist for `pages` resident pages: the pages themselves
 * below 4, else four buckets per power of two (by the two bits after the
 * highest) up to 2^32 pages, the last one holding everything from there. The
 * highest bit is found by halving (the instruction set has no count of
 * leading zeros). */
static __always_inline __u32 qs_rss_bucket(__u64 pages)
{
	__u64 p = pages;
	__u32 msb = 0;

	if (pages < 4)
		return pages;
	if (pages >> 32)
		return QS_RSS_BUCKETS - 1;
	if (p >> 16) {
		p >>= 16;
		msb += 16;
	}
	if (p >> 8) {
		p >>= 8;
		msb += 8;
	}
	if (p >> 4) {
		p >>= 4;
		msb += 4;
	}
	if (p >> 2) {
		p >>= 2;
		msb += 2;
	}
	if (p >> 1)
		msb += 1;
	return (msb - 1) * 4 + ((pages >> (msb - 2)) & 3);
}

/* Whether `task` gets a row under the walk's bounds (qs_walk_args), and
 * its count in rss_hist when asked for. The mm's lines are read only then:
 * a walk without bounds or histogram costs what it did. */
static __always_inline int qs_within_bounds(struct qs_walk_out *out, struct task_struct *task,
					    __u32 flags)
{
	struct mm_struct *mm;
	__u64 rss = 0;
	__u32 b;

	if (!out->rss_hi && !(flags & QS_CFG_RSS_HIST))
		return 1;
	mm = task->mm;
	if (mm)
		rss = mm_rss(mm);
	if (flags & QS_CFG_RSS_HIST) {
		b = qs_rss_bucket(rss);
		if (b < QS_RSS_BUCKETS)
			out->rss_hist[b]++;
	}
	if (!out->rss_hi || rss >= out->rss_hi)
		return 1;
	if (rss >= out->rss_lo && out->ties < out->tie_rows) {
		out->ties++;
		return 1;
	}
	out->left_out++;
	return 0;
}

/* The next row, for `task`; NULL for the idle task, for a group the PID
 * filter or the bounds leave out, and when the walker's rows are full
 * (counted in `wanted`, so that the reader reloads with room). */
static __always_inline struct qs_task *qs_next_row(struct qs_walk_out *out,
						   struct task_struct *task, __u32 flags,
						   __u32 *idx)
{
	struct qs_task *rec;
	__u32 tgid = task->tgid;

	if (task->pid == 0)
		return NULL;
	if ((flags & QS_CFG_FILTER) && !bpf_map_lookup_elem(&qs_pids, &tgid))
		return NULL;
	if (!qs_within_bounds(out, task, flags))
		return NULL;
	out->wanted++;
	if (out->rows >= out->max_rows)
		return NULL;
	*idx = out->first_row + out->rows;
	rec = bpf_map_lookup_elem(&qs_rows, idx);
	if (rec)
		out->rows++;
	return rec;
}

#define QS_PF_WQ_WORKER 0x00000020
#define QS_PF_KTHREAD 0x00200000
/* "kworker/" as the first eight bytes of a comm, read as one word. */
#define QS_KWORKER 0x2f72656b726f776bULL

/* A kernel thread's name as /proc shows it, in the row after its own
 * (qs_task_name), where that is more than its comm: a name longer than
 * comm holds (kthread->full_name), or a workqueue worker's, its comm
 * followed by its last work's description while it is in a pool. Nothing
 * for other tasks, whose comm says so. The row is taken without the filter or
 * bounds, which the thread's own passed; when there is none left it is
 * counted in `wanted`, as a row is. */
static __always_inline void qs_fill_name(struct qs_walk_out *out, struct task_struct *task,
					 __u32 flags)
{
	struct qs_task_name *n;
	struct kthread *kt;
	struct worker *wk = NULL;
	char *full;
	__u32 idx;

	if (!(flags & QS_CFG_COMM))
		return;
	/* Only a name cut at comm's 15 bytes, or a worker's (kworker/...),
	 * may be longer in /proc: the line of flags is read for those alone
	 * (comm's own line is read already). */
	if (*(__u64 *)&task->comm[0] != QS_KWORKER && !task->comm[14])
		return;
	if (!(task->flags & QS_PF_KTHREAD) || !bpf_core_field_exists(task->worker_private))
		return;
	kt = qs_rdonly_cast(task->worker_private, bpf_core_type_id_kernel(struct kthread));
	if (!kt)
		return;
	full = kt->full_name;
	if (task->flags & QS_PF_WQ_WORKER) {
		wk = qs_rdonly_cast(kt->data, bpf_core_type_id_kernel(struct worker));
		if (wk && (!wk->pool || !wk->desc[0]))
			wk = NULL;
	}
	if (!full && !wk)
		return;
	out->wanted++;
	out->names++;
	if (out->rows >= out->max_rows)
		return;
	idx = out->first_row + out->rows;
	n = bpf_map_lookup_elem(&qs_rows, &idx);
	if (!n)
		return;
	out->rows++;
	n->pid = 0;
	n->tgid = task->pid;
	if (full)
		bpf_probe_read_kernel_str(n->name, sizeof(n->name), full);
	else
		bpf_probe_read_kernel_str(n->name, sizeof(task->comm), task->comm);
	n->desc[0] = 0;
	n->running = 0;
	if (wk) {
		bpf_probe_read_kernel_str(n->desc, sizeof(n->desc), wk->desc);
		n->running = wk->current_work != NULL;
	}
}

/* Fills row `idx` (and its I/O and delay records when asked). Call with a constant
 * group_row: with a variable one the compiler merges the two fills' loads,
 * which the verifier refuses (one load through a task and a map pointer). */
static __always_inline void qs_fill_row(struct qs_task *rec, __u32 idx, struct task_struct *task,
					__u32 flags, int group_row)
{
	struct qs_delays *w;
	struct qs_io *io;

	qs_fill_task(rec, task, group_row, flags);
	if (flags & QS_CFG_IO) {
		io = bpf_map_lookup_elem(&qs_rows_io, &idx);
		if (io)
			qs_fill_io(io, task, group_row);
	}
	if (flags & QS_CFG_DELAYACCT) {
		w = bpf_map_lookup_elem(&qs_rows_delays, &idx);
		if (w)
			qs_fill_delays(w, task);
	}
}

/* Loads, and drops, the next two links of the task list after `next` (the
 * task after the one being visited) ahead of the walker. The list is a
 * chain of dependent loads, each a cache miss on a large machine: started
 * while this task's row is filled, the next ones are in flight or in cache
 * when the walker follows them. The loads go through a read-only cast
 * (they cannot fault); the last task's next is init_task, as harmless to
 * read. Touching more of the next task (its other lines, its mm and
 * signal_struct) measured slower on the machine of BENCHMARKS.md, not
 * faster. */
static __always_inline void qs_prefetch_list(struct task_struct *next)
{
	struct list_head *after = next->tasks.next->next;

	asm volatile("" : : "r"(after));
}

/* Threads mode: one row for the thread at address `addr`. A global
 * function, checked once. */
__noinline int qs_visit_thread(__u32 walker, __u32 flags, __u64 addr)
{
	struct qs_walk_out *out = bpf_map_lookup_elem(&qs_walk_out, &walker);
	struct task_struct *task = qs_task_at(addr);
	struct qs_task *rec;
	__u32 idx;

	if (!out)
		return 1;
	rec = qs_next_row(out, task, flags, &idx);
	if (!rec)
		return 0;
	qs_fill_row(rec, idx, task, flags, 0);
	qs_fill_name(out, task, flags);
	return 0;
}

/* A group's thread list, walked by hand for threads mode's rows. */
struct qs_thread_rows {
	__u64 pos;  /* address of the list node last visited */
	__u64 head; /* address of signal_struct.thread_head */
	__u32 walker;
	__u32 flags;
};

/* bpf_loop callback: a row for the next thread of the group (the leader
 * too: every thread is on the list); stops back at the head. */
static long qs_next_thread_row(__u64 i, void *ctx)
{
	struct qs_thread_rows *w = ctx;
	__u64 next = 0;

	if (bpf_probe_read_kernel(&next, sizeof(next), (void *)w->pos) || !next ||
	    next == w->head)
		return 1;
	w->pos = next;
	qs_visit_thread(w->walker, w->flags,
			next - bpf_core_field_offset(struct task_struct, thread_node));
	return 0;
}

/* Notes every mark_every-th process visited, where a later walk may split
 * the list between walkers. */
static __always_inline void qs_mark(struct qs_walk_out *out, struct task_struct *task)
{
	__u64 n = out->marks;

	out->visited++;
	if (!out->mark_every || --out->mark_left)
		return;
	out->mark_left = out->mark_every;
	if (n >= QS_WALK_MARKS)
		return;
	out->mark_task[n] = (__u64)task;
	out->mark_ns[n] = task->start_boottime;
	out->mark_pid[n] = task->pid;
	out->marks = n + 1;
}

/* Visits out->next_task (of walker `walker`): its row, or in threads mode
 * a row for each of its threads; and moves out->next_task on to the next
 * process in the list. Returns 0, QS_VISIT_STOP where the
 * walker stops, or QS_VISIT_HEAD at the list's head (init_task, the one
 * task of PID 0 in the list; not visited). A walker stops at the task the
 * next walker starts at, or, should that task have left the list
 * meanwhile, at the first one started after it (the list is in fork order;
 * the margin in stop_after_ns covers forks that set their start time in
 * one order and joined the list in the other); rows walked twice then are
 * dropped by the reader.
 *
 * A global function, so that the verifier checks it once, not once for
 * every way into it: inlined in both walks' loops, whose every branch
 * multiplies the paths checked, loading took seconds. The task is read
 * through a read-only cast of its address (loads that cannot fault); the
 * list is RCU-protected, as the iterator walks it. */
#define QS_VISIT_STOP 1
#define QS_VISIT_HEAD 2
__noinline int qs_visit_next(__u32 walker, __u32 flags)
{
	struct qs_walk_out *out = bpf_map_lookup_elem(&qs_walk_out, &walker);
	struct task_struct *task, *next;
	__u64 addr;
	struct qs_thread_walk w;
	struct qs_task *rec;
	__u32 idx;

	if (!out)
		return QS_VISIT_STOP;
	addr = out->next_task;
	task = qs_task_at(addr);
	if (!task->pid)
		return QS_VISIT_HEAD;
	if (out->next_task == out->stop_task || task->start_boottime > out->stop_after_ns)
		return QS_VISIT_STOP;
	next = qs_task_of((__u64)task->tasks.next, tasks);
	out->next_task = (__u64)next;
	qs_prefetch_list(next);
	qs_mark(out, task);
	if (flags & QS_CFG_THREADS) {
		struct qs_thread_rows t = { .walker = walker, .flags = flags };
		__u32 threads = task->signal->nr_threads;

		/* One thread (or none live: a zombie): the leader, without
		 * walking the list. */
		if (threads <= 1)
			return qs_visit_thread(walker, flags, addr);
		t.head = (__u64)&task->signal->thread_head;
		t.pos = t.head;
		/* Threads may come while walking: room for twice as many. */
		bpf_loop(2 * threads + 16, qs_next_thread_row, &t, 0);
		return 0;
	}
	rec = qs_next_row(out, task, flags, &idx);
	if (!rec)
		return 0;
	qs_fill_row(rec, idx, task, flags, 1);
	qs_fill_name(out, task, flags);
	/* The live threads' counters are added only to the sums asked for. */
	if (rec->nr_threads <= 1 || !(flags & (QS_CFG_CPUTIME | QS_CFG_FAULTS | QS_CFG_IO)))
		return 0;
	w.head = (__u64)&task->signal->thread_head;
	w.pos = w.head;
	w.idx = idx;
	w.flags = flags;
	/* Threads may come while walking: room for twice as many. */
	bpf_loop(2 * rec->nr_threads + 16, qs_add_next_thread, &w, 0);
	return 0;
}

struct qs_walker {
	__u32 walker;
	__u32 flags;
};

/* bpf_loop callback of every walker: the next process, up to the list's
 * head or the walker's stop. */
static long qs_walk_step(__u64 i, void *ctx)
{
	struct qs_walker *w = ctx;

	return qs_visit_next(w->walker, w->flags) != 0;
}

/* A walker given a start task: from it, once it is found where it was marked:
 * the same PID and start time, and still linked in the list (its
 * successor's back link points at it; a task that left the list has not,
 * and its memory may have been reused). */
static __always_inline void qs_walk_from(struct qs_walk_out *out, struct qs_walk_args *args,
					 __u32 walker, __u32 flags)
{
	struct task_struct *task;
	struct qs_walker w = { .walker = walker, .flags = flags };
	__u64 link = args->start_task + bpf_core_field_offset(struct task_struct, tasks);

	task = qs_task_at(args->start_task);
	if (task->pid != args->start_pid || task->start_boottime != args->start_ns ||
	    (__u64)task->tasks.next->prev != link) {
		out->status = QS_WALK_STALE_START;
		return;
	}
	out->next_task = args->start_task;
	bpf_loop(QS_MAX_PIDS * 64, qs_walk_step, &w, 0);
}

/* A walker given no start task: from the list's head (init_task, the iterator's first task), by
 * hand. */
static __always_inline void qs_walk_from_head(struct qs_walk_out *out, __u32 walker,
					      __u32 flags)
{
	struct bpf_iter_task it;
	struct task_struct *task;
	struct qs_walker w = { .walker = walker, .flags = flags };

	qs_iter_task_new(&it, NULL, BPF_TASK_ITER_ALL_PROCS);
	task = qs_iter_task_next(&it);
	if (task)
		out->next_task = (__u64)qs_task_of((__u64)task->tasks.next, tasks);
	qs_iter_task_destroy(&it);
	if (!task)
		return;
	bpf_loop(QS_MAX_PIDS * 64, qs_walk_step, &w, 0);
}

SEC("raw_tp/qs_walk")
int qs_walk(struct qs_walk_args *args)
{
	struct qs_walk_out *out;
	struct qs_config *cfg;
	__u32 walker = args->walker;
	__u32 zero = 0;

	out = bpf_map_lookup_elem(&qs_walk_out, &walker);
	cfg = bpf_map_lookup_elem(&qs_config, &zero);
	if (!out || !cfg)
		return 1;
	/* The counters and the walk's bounds live in the map value, not in
	 * registers, so the verifier sees unknown values and checks each loop
	 * body once. */
	out->rows = 0;
	out->wanted = 0;
	out->visited = 0;
	out->status = 0;
	out->marks = 0;
	out->first_row = args->first_row;
	out->max_rows = args->max_rows;
	out->stop_task = args->stop_task;
	out->stop_after_ns = args->stop_after_ns;
	out->mark_every = args->mark_every;
	out->mark_left = args->mark_every;
	out->rss_lo = args->rss_lo;
	out->rss_hi = args->rss_hi;
	out->tie_rows = args->tie_rows;
	out->ties = 0;
	out->left_out = 0;
	out->names = 0;
	if (cfg->flags & QS_CFG_RSS_HIST)
		for (int b = 0; b < QS_RSS_BUCKETS; b++)
			out->rss_hist[b] = 0;
	if (!args->start_task)
		qs_walk_from_head(out, walker, cfg->flags);
	else
		qs_walk_from(out, args, walker, cfg->flags);
	return 0;
}
