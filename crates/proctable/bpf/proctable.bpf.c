// SPDX-License-Identifier: GPL-2.0-only
/*
 * Process-table programs. Built into the committed proctable.bpf.o by
 * build.sh (CO-RE: field offsets are relocated at load time against the
 * running kernel's BTF). The record layouts are in record.h.
 *
 *  qs_tasks  iter/task: one qs_task (and a qs_io when asked) per task, read
 *            by the reader in large batches from the iterator's fd.
 *  qs_exit   tp_btf/sched_process_exit: one qs_exit per thread group that
 *            ends, into a ring buffer that wakes its reader only past a
 *            watermark, so the sampler drains it on its own schedule.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "record.h"
#include "task.h"
#include "maps.h"

char LICENSE[] SEC("license") = "GPL";

#define SIGNAL_GROUP_EXIT 0x00000004

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, QS_EXIT_RING_BYTES);
} qs_exits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct qs_exit_stats);
} qs_exit_stats SEC(".maps");

SEC("iter/task")
int qs_tasks(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	__u32 zero = 0;
	struct qs_config *cfg;
	struct qs_task rec;
	__u32 tgid;
	int group_row;

	if (!task)
		return 0;
	cfg = bpf_map_lookup_elem(&qs_config, &zero);
	if (!cfg)
		return 0;
	tgid = task->tgid;
	if ((cfg->flags & QS_CFG_FILTER) && !bpf_map_lookup_elem(&qs_pids, &tgid))
		return 0;

	group_row = !(cfg->flags & QS_CFG_THREADS) && task->pid == tgid;
	qs_fill_task(&rec, task, group_row, cfg->flags);
	bpf_seq_write(seq, &rec, sizeof(rec));

	if (cfg->flags & QS_CFG_IO) {
		struct qs_io io;

		qs_fill_io(&io, task, group_row);
		bpf_seq_write(seq, &io, sizeof(io));
	}
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(qs_exit, struct task_struct *task)
{
	struct signal_struct *sig = task->signal;
	struct task_struct *leader = task->group_leader;
	struct qs_exit_stats *stats;
	struct qs_config *cfg;
	struct qs_exit *rec;
	struct mm_struct *mm;
	__u32 zero = 0;
	__u64 maxrss, hiwater, rss, avail;

	/* signal->live reaches 0 when the last thread of the group exits. */
	if (sig->live.counter != 0)
		return 0;
	stats = bpf_map_lookup_elem(&qs_exit_stats, &zero);
	cfg = bpf_map_lookup_elem(&qs_config, &zero);
	if (!stats || !cfg)
		return 0;
	__sync_fetch_and_add(&stats->seen, 1);
	rec = bpf_ringbuf_reserve(&qs_exits, sizeof(*rec), 0);
	if (!rec) {
		__sync_fetch_and_add(&stats->lost, 1);
		return 0;
	}

	/* Threads already reaped left their times in signal_struct; an exited
	 * leader is reaped last, so its own times are added here. */
	rec->utime_ns = sig->utime + task->utime;
	rec->stime_ns = sig->stime + task->stime;
	rec->runtime_ns = sig->sum_sched_runtime + task->se.sum_exec_runtime;
	rec->min_flt = sig->min_flt + task->min_flt;
	rec->maj_flt = sig->maj_flt + task->maj_flt;
	if (leader != task) {
		rec->utime_ns += leader->utime;
		rec->stime_ns += leader->stime;
		rec->runtime_ns += leader->se.sum_exec_runtime;
		rec->min_flt += leader->min_flt;
		rec->maj_flt += leader->maj_flt;
	}
	rec->prev_utime_ns = sig->prev_cputime.utime;
	rec->prev_stime_ns = sig->prev_cputime.stime;

	maxrss = sig->maxrss;
	mm = task->mm;
	if (mm) {
		hiwater = mm->hiwater_rss;
		rss = mm_rss(mm);
		if (rss > hiwater)
			hiwater = rss;
		if (hiwater > maxrss)
			maxrss = hiwater;
	}
	rec->maxrss_pages = maxrss;
	rec->start_boottime_ns = leader->start_boottime;
	rec->exit_boottime_ns = bpf_ktime_get_boot_ns();
	rec->pid = task->tgid;
	rec->ppid = task->real_parent->tgid;
	if (sig->flags & SIGNAL_GROUP_EXIT)
		rec->exit_code = sig->group_exit_code;
	else if (leader != task && leader->exit_state)
		rec->exit_code = leader->exit_code;
	else
		rec->exit_code = task->exit_code;
	rec->nr_threads = sig->nr_threads;
	copy_comm(rec->comm, leader);

	avail = bpf_ringbuf_query(&qs_exits, BPF_RB_AVAIL_DATA);
	bpf_ringbuf_submit(rec, avail >= cfg->wakeup_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
}
