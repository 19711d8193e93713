// SPDX-License-Identifier: GPL-2.0-only
/*
 * The vectored lookup: the start time of each PID of an array, as the
 * proposed pids_start_time system call gives it. Built into the committed
 * lookup.bpf.o by build.sh (CO-RE, like walk.bpf.o).
 *
 *  qs_lookup  BPF_PROG_TYPE_SYSCALL program (sleepable), run on demand with
 *             BPF_PROG_RUN: the one type that may both call
 *             bpf_task_from_vpid and be run so. Its section name is only
 *             what the loader's object parser takes; lookup.rs loads it
 *             as that type. For i in [first, first + count), looks
 *             qs_lookup_pids[i] up in the caller's PID namespace and writes
 *             the start_boottime of the task it names (a process, or a
 *             thread by its id, as /proc/PID/stat answers for either),
 *             QS_LOOKUP_FOUND set, to qs_lookup_starts[i]; 0 for a PID that
 *             names no task.
 *
 * Both arrays are memory-mapped by the reader: the PIDs are written and the
 * start times read in place, no copy through a system call. The cost is
 * per PID asked for (a PID-hash lookup, a reference taken and dropped, one
 * cache line of the task), not per task on the machine as a walk's is.
 *
 * The kernel functions (bpf_task_from_vpid, bpf_task_release and the
 * number iterator's three) are called through helper-style
 * pointers with the QS_KFUNC_* numbers of record.h, which the loader
 * rewrites into kernel-function calls (walk.rs, link_kfuncs).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "record.h"
#include "kfuncs.h"

char LICENSE[] SEC("license") = "GPL";


/* max_entries of both is set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QS_LOOKUP_MIN_PIDS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64); /* an array's values are 8 bytes apart whatever their size */
} qs_lookup_pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QS_LOOKUP_MIN_PIDS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} qs_lookup_starts SEC(".maps");

SEC("raw_tp/qs_lookup")
int qs_lookup(struct qs_lookup_args *ctx)
{
	struct bpf_iter_num it;
	struct task_struct *task;
	__u64 *start;
	__u64 *pid;
	__u32 first = ctx->first;
	int *i;

	/* An open-coded loop: verified once whatever the count, and no
	 * callback (a subprogram would need BTF function records the loader
	 * does not pass). */
	qs_iter_num_new(&it, 0, ctx->count);
	while ((i = qs_iter_num_next(&it))) {
		__u32 at = first + *i;

		pid = bpf_map_lookup_elem(&qs_lookup_pids, &at);
		start = bpf_map_lookup_elem(&qs_lookup_starts, &at);
		if (!pid || !start)
			break;
		*start = 0;
		if (*pid == 0 || *pid > 0x7fffffff)
			continue;
		task = qs_task_from_vpid(*pid);
		if (!task)
			continue;
		*start = task->start_boottime | QS_LOOKUP_FOUND;
		qs_task_release(task);
	}
	qs_iter_num_destroy(&it);
	return 0;
}
