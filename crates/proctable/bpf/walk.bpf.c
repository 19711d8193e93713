// SPDX-License-Identifier: GPL-2.0-only
/*
 * The process-table walk. Built into the committed walk.bpf.o by build.sh
 * (CO-RE, like proctable.bpf.o). The record layouts are in record.h, the
 * field reads in task.h.
 *
 *  qs_walk  raw_tp program run on demand with BPF_PROG_RUN (never attached):
 *           walks the task list with the open-coded task iterator (a
 *           pointer chase per task, no PID lookup or reference per task, as
 *           the iter/task link needs) and writes one qs_task per process
 *           (or thread) into qs_rows, a memory-mapped array the reader
 *           decodes in place: no copy through a read() buffer.
 *
 * In process mode a group's live threads are summed into its leader's row
 * here: the iterator visits a leader and then each of its threads.
 *
 * The three iterator kernel functions are called through helper-style
 * pointers with the QS_KFUNC_* numbers of record.h; the loader rewrites those
 * calls into kernel-function calls (BTF ids of the running kernel), which
 * the loader library cannot resolve from extern declarations itself.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "record.h"
#include "task.h"

char LICENSE[] SEC("license") = "GPL";

static int (*qs_iter_task_new)(struct bpf_iter_task *it, struct task_struct *task,
			       unsigned int flags) = (void *)QS_KFUNC_ITER_TASK_NEW;
static struct task_struct *(*qs_iter_task_next)(struct bpf_iter_task *it) =
	(void *)QS_KFUNC_ITER_TASK_NEXT;
static void (*qs_iter_task_destroy)(struct bpf_iter_task *it) =
	(void *)QS_KFUNC_ITER_TASK_DESTROY;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct qs_config);
} qs_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, QS_MAX_PIDS);
	__type(key, __u32);
	__type(value, __u8);
} qs_pids SEC(".maps");

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
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct qs_walk_out);
} qs_walk_out SEC(".maps");

SEC("raw_tp/qs_walk")
int qs_walk(void *ctx)
{
	struct bpf_iter_task it;
	struct task_struct *task;
	struct qs_walk_out *out;
	struct qs_config *cfg;
	__u32 zero = 0, flags;
	int threads;

	out = bpf_map_lookup_elem(&qs_walk_out, &zero);
	cfg = bpf_map_lookup_elem(&qs_config, &zero);
	if (!out || !cfg)
		return 1;
	flags = cfg->flags;
	threads = flags & QS_CFG_THREADS;
	out->rows = 0;
	out->wanted = 0;
	/* The counters live in the map value, not in registers, so the
	 * verifier sees an unknown index and checks the loop body once. */
	qs_iter_task_new(&it, NULL, BPF_TASK_ITER_ALL_THREADS);
	while ((task = qs_iter_task_next(&it))) {
		struct qs_task *rec;
		struct qs_io *io;
		__u32 idx, tgid = task->tgid;

		if (task->pid == 0)
			continue;
		if ((flags & QS_CFG_FILTER) && !bpf_map_lookup_elem(&qs_pids, &tgid))
			continue;
		if (!threads && task->pid != tgid) {
			/* A thread after its leader: add it to the leader's row. */
			idx = out->rows - 1;
			rec = bpf_map_lookup_elem(&qs_rows, &idx);
			if (!rec || rec->tgid != tgid)
				continue;
			qs_add_thread(rec, task);
			if (flags & QS_CFG_IO) {
				io = bpf_map_lookup_elem(&qs_rows_io, &idx);
				if (io)
					qs_add_thread_io(io, task);
			}
			continue;
		}
		out->wanted++;
		idx = out->rows;
		rec = bpf_map_lookup_elem(&qs_rows, &idx);
		if (!rec)
			continue;
		out->rows = idx + 1;
		/* Constant group_row arguments: with one variable argument the
		 * compiler merges the two fills' loads, which the verifier
		 * refuses (one load through a task and a map pointer). */
		if (threads)
			qs_fill_task(rec, task, 0, flags & QS_CFG_CGROUP);
		else
			qs_fill_task(rec, task, 1, flags & QS_CFG_CGROUP);
		if (flags & QS_CFG_IO) {
			io = bpf_map_lookup_elem(&qs_rows_io, &idx);
			if (io && threads)
				qs_fill_io(io, task, 0);
			else if (io)
				qs_fill_io(io, task, 1);
		}
	}
	qs_iter_task_destroy(&it);
	return 0;
}
