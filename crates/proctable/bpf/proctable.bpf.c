// SPDX-License-Identifier: GPL-2.0-only
/*
 * Process-table programs. Built into the committed proctable.bpf.o by
 * build.sh (CO-RE: field offsets are relocated at load time against the
 * running kernel's BTF). The record layouts are in record.h.
 *
 *  qs_tasks  iter/task: one qs_task (and a qs_io, a qs_delays when asked) per task, read
 *            by the reader in large batches from the iterator's fd.
 *  qs_exit   tp_btf/sched_process_exit: one qs_exit per thread group that
 *            ends, into a ring buffer that wakes its reader only past a
 *            watermark, so the sampler drains it on its own schedule.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
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
	if (cfg->flags & QS_CFG_DELAYACCT) {
		struct qs_delays w;

		qs_fill_delays(&w, task);
		bpf_seq_write(seq, &w, sizeof(w));
	}
	return 0;
}

/* A group's counters at its end, summed as the kernel's own
 * thread_group_cputime() sums them: what released threads left in
 * signal_struct, plus every thread still on the group's list. */
struct qs_exit_sum {
	__u64 pos;  /* address of the list node last visited */
	__u64 head; /* address of signal_struct.thread_head */
	__u64 utime, stime, runtime, min_flt, maj_flt;
};

/* bpf_loop callback: adds the next thread on the list; stops back at the
 * head. The list is RCU-protected and this program runs under RCU; node
 * addresses and counters are read with bpf_probe_read_kernel. */
static long qs_exit_add_thread(__u64 i, void *ctx)
{
	struct qs_exit_sum *s = ctx;
	struct task_struct *t;
	__u64 next = 0;

	if (bpf_probe_read_kernel(&next, sizeof(next), (void *)s->pos) || !next ||
	    next == s->head)
		return 1;
	s->pos = next;
	t = (void *)(next - bpf_core_field_offset(struct task_struct, thread_node));
	s->utime += BPF_CORE_READ(t, utime);
	s->stime += BPF_CORE_READ(t, stime);
	s->runtime += BPF_CORE_READ(t, se.sum_exec_runtime);
	s->min_flt += BPF_CORE_READ(t, min_flt);
	s->maj_flt += BPF_CORE_READ(t, maj_flt);
	return 0;
}

static __always_inline __u32 qs_stats_seq(struct signal_struct *sig)
{
	return BPF_CORE_READ(sig, stats_lock.seqcount.seqcount.sequence);
}

/* Sums the group's counters. The task that takes signal->live to 0 is not
 * always the last to leave: a thread that dropped it earlier may still be
 * on its way out, its counters neither in signal_struct yet (they move
 * there when it is released) nor in this task's. So every thread still on
 * the list is added. A released thread's counters move into signal_struct
 * and the thread leaves the list in one stats_lock write section, so the
 * sum is retaken while the lock's sequence changes under it (a few
 * instructions at most; on the last try the sum is kept as it is). */
static __always_inline void qs_exit_counters(struct qs_exit_sum *s, struct signal_struct *sig,
					     __u32 threads)
{
	__u32 seq;
	int try;

	for (try = 0; try < 8; try++) {
		seq = qs_stats_seq(sig);
		if ((seq & 1) && try < 7)
			continue;
		s->head = (__u64)&sig->thread_head;
		s->pos = s->head;
		s->utime = sig->utime;
		s->stime = sig->stime;
		s->runtime = sig->sum_sched_runtime;
		s->min_flt = sig->min_flt;
		s->maj_flt = sig->maj_flt;
		bpf_loop(2 * threads + 16, qs_exit_add_thread, s, 0);
		if (qs_stats_seq(sig) == seq && !(seq & 1))
			return;
	}
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(qs_exit, struct task_struct *task)
{
	struct signal_struct *sig = task->signal;
	struct task_struct *leader = task->group_leader;
	struct qs_exit_stats *stats;
	struct qs_exit_sum sum;
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
	qs_exit_counters(&sum, sig, sig->nr_threads);
	rec = bpf_ringbuf_reserve(&qs_exits, sizeof(*rec), 0);
	if (!rec) {
		__sync_fetch_and_add(&stats->lost, 1);
		return 0;
	}

	rec->utime_ns = sum.utime;
	rec->stime_ns = sum.stime;
	rec->runtime_ns = sum.runtime;
	rec->min_flt = sum.min_flt;
	rec->maj_flt = sum.maj_flt;
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
