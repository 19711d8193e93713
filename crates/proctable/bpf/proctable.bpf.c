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

char LICENSE[] SEC("license") = "GPL";

#define SIGNAL_GROUP_EXIT 0x00000004

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

static __always_inline __u64 counter(struct mm_struct *mm, int i)
{
	__s64 n = mm->rss_stat[i].count;
	return n < 0 ? 0 : n;
}

static __always_inline __u64 mm_rss(struct mm_struct *mm)
{
	return counter(mm, MM_FILEPAGES) + counter(mm, MM_ANONPAGES) +
	       counter(mm, MM_SHMEMPAGES);
}

/* Two 8-byte loads instead of a helper call. */
static __always_inline void copy_comm(char *dst, struct task_struct *task)
{
	__u64 *d = (__u64 *)dst;

	d[0] = *(__u64 *)&task->comm[0];
	d[1] = *(__u64 *)&task->comm[8];
}

SEC("iter/task")
int qs_tasks(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	__u32 zero = 0;
	struct qs_config *cfg;
	struct signal_struct *sig;
	struct mm_struct *mm;
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

	sig = task->signal;
	mm = task->mm;
	group_row = !(cfg->flags & QS_CFG_THREADS) && task->pid == tgid;

	rec.start_boottime_ns = task->start_boottime;
	rec.utime_ns = task->utime;
	rec.stime_ns = task->stime;
	rec.runtime_ns = task->se.sum_exec_runtime;
	rec.min_flt = task->min_flt;
	rec.maj_flt = task->maj_flt;
	if (group_row) {
		rec.utime_ns += sig->utime;
		rec.stime_ns += sig->stime;
		rec.runtime_ns += sig->sum_sched_runtime;
		rec.min_flt += sig->min_flt;
		rec.maj_flt += sig->maj_flt;
		rec.prev_utime_ns = sig->prev_cputime.utime;
		rec.prev_stime_ns = sig->prev_cputime.stime;
	} else {
		rec.prev_utime_ns = task->prev_cputime.utime;
		rec.prev_stime_ns = task->prev_cputime.stime;
	}
	rec.nvcsw = task->nvcsw;
	rec.nivcsw = task->nivcsw;
	if (mm) {
		rec.vm_pages = mm->total_vm;
		rec.rss_pages = mm_rss(mm);
	} else {
		rec.vm_pages = 0;
		rec.rss_pages = 0;
	}
	rec.cgroup_id = (cfg->flags & QS_CFG_CGROUP) ? task->cgroups->dfl_cgrp->kn->id : 0;
	rec.pid = task->pid;
	rec.tgid = tgid;
	rec.ppid = task->real_parent->tgid;
	rec.state = task->__state;
	rec.exit_state = task->exit_state;
	rec.flags = task->flags;
	rec.prio = task->prio;
	rec.static_prio = task->static_prio;
	rec.policy = task->policy;
	rec.rt_priority = task->rt_priority;
	rec.cpu = task->thread_info.cpu;
	rec.nr_threads = sig->nr_threads;
	copy_comm(rec.comm, task);
	bpf_seq_write(seq, &rec, sizeof(rec));

	if (cfg->flags & QS_CFG_IO) {
		struct qs_io io;

		io.rchar = task->ioac.rchar;
		io.wchar = task->ioac.wchar;
		io.syscr = task->ioac.syscr;
		io.syscw = task->ioac.syscw;
		io.read_bytes = task->ioac.read_bytes;
		io.write_bytes = task->ioac.write_bytes;
		io.cancelled_write_bytes = task->ioac.cancelled_write_bytes;
		if (group_row) {
			io.rchar += sig->ioac.rchar;
			io.wchar += sig->ioac.wchar;
			io.syscr += sig->ioac.syscr;
			io.syscw += sig->ioac.syscw;
			io.read_bytes += sig->ioac.read_bytes;
			io.write_bytes += sig->ioac.write_bytes;
			io.cancelled_write_bytes += sig->ioac.cancelled_write_bytes;
		}
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
