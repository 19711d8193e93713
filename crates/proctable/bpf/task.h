/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Filling qs_task and qs_io records from a task_struct: shared by the
 * iterator (proctable.bpf.c) and the walk (walk.bpf.c). Include after
 * vmlinux.h and record.h.
 */
#ifndef QS_TASK_H
#define QS_TASK_H

/* include/linux/sched.h: set by do_exit before exit_state is. */
#define QS_PF_EXITING 0x00000004

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

/* Whether signal_struct may hold dead threads' counters. They are only ever
 * added under stats_lock (__exit_signal; wait_task_zombie writes under it
 * too, for reaped children), so while its sequence is 0 they are all 0 and
 * their cache lines (three, with the I/O ones) need not be read: the common
 * case of a process that never lost a thread nor reaped a child. */
static __always_inline int dead_threads_counted(struct signal_struct *sig)
{
	return sig->stats_lock.seqcount.seqcount.sequence != 0;
}

/* The task's own counters; on a group row (a leader in process mode) plus
 * those the group's dead threads left in signal_struct, as /proc/PID/stat
 * adds them. Only the groups of `flags` are read (each group's cache lines
 * are named by its QS_CFG_* flag); the others are written as zeros, over
 * whatever an earlier walk left in the row. The identity (pid, tgid, start
 * time), the thread count and the task's own context switches (on the
 * start time's line) are always read. */
static __always_inline void qs_fill_task(struct qs_task *rec, struct task_struct *task,
					 int group_row, __u32 flags)
{
	struct signal_struct *sig = task->signal;
	int dead = group_row && (flags & (QS_CFG_CPUTIME | QS_CFG_FAULTS)) &&
		   dead_threads_counted(sig);

	rec->start_boottime_ns = task->start_boottime;
	if (flags & QS_CFG_CPUTIME) {
		rec->utime_ns = task->utime;
		rec->stime_ns = task->stime;
		rec->runtime_ns = task->se.sum_exec_runtime;
		if (dead) {
			rec->utime_ns += sig->utime;
			rec->stime_ns += sig->stime;
			rec->runtime_ns += sig->sum_sched_runtime;
		}
		if (group_row) {
			rec->prev_utime_ns = sig->prev_cputime.utime;
			rec->prev_stime_ns = sig->prev_cputime.stime;
		} else {
			rec->prev_utime_ns = task->prev_cputime.utime;
			rec->prev_stime_ns = task->prev_cputime.stime;
		}
	} else {
		rec->utime_ns = 0;
		rec->stime_ns = 0;
		rec->runtime_ns = 0;
		rec->prev_utime_ns = 0;
		rec->prev_stime_ns = 0;
	}
	if (flags & QS_CFG_FAULTS) {
		rec->min_flt = task->min_flt;
		rec->maj_flt = task->maj_flt;
		if (dead) {
			rec->min_flt += sig->min_flt;
			rec->maj_flt += sig->maj_flt;
		}
	} else {
		rec->min_flt = 0;
		rec->maj_flt = 0;
	}
	rec->nvcsw = task->nvcsw;
	rec->nivcsw = task->nivcsw;
	rec->vm_pages = 0;
	rec->rss_pages = 0;
	if (flags & QS_CFG_MM) {
		struct mm_struct *mm = task->mm;

		if (mm) {
			rec->vm_pages = mm->total_vm;
			rec->rss_pages = mm_rss(mm);
		}
	}
	rec->cgroup_id = flags & QS_CFG_CGROUP ? task->cgroups->dfl_cgrp->kn->id : 0;
	rec->exec_id = flags & QS_CFG_EXEC ? task->self_exec_id : 0;
	if (flags & QS_CFG_DELAY) {
		rec->run_delay_ns = task->sched_info.run_delay;
		rec->pcount = task->sched_info.pcount;
	} else {
		rec->run_delay_ns = 0;
		rec->pcount = 0;
	}
	rec->euid = flags & QS_CFG_UID ? task->cred->euid.val : 0;
	rec->oom_score_adj = flags & QS_CFG_OOM ? sig->oom_score_adj : 0;
	rec->pid = task->pid;
	rec->tgid = task->tgid;
	rec->ppid = flags & QS_CFG_PARENT ? task->real_parent->tgid : 0;
	if (flags & QS_CFG_STATE) {
		rec->state = task->__state;
		rec->flags = task->flags;
		/* exit_state has a cache line to itself among the fields read
		 * here; it is only ever set after PF_EXITING (flags share a
		 * line with __state), so a live task's is not read. */
		rec->exit_state = rec->flags & QS_PF_EXITING ? task->exit_state : 0;
		rec->cpu = task->thread_info.cpu;
	} else {
		rec->state = 0;
		rec->flags = 0;
		rec->exit_state = 0;
		rec->cpu = 0;
	}
	if (flags & QS_CFG_PRIO) {
		rec->prio = task->prio;
		rec->static_prio = task->static_prio;
		rec->policy = task->policy;
		rec->rt_priority = task->rt_priority;
	} else {
		rec->prio = 0;
		rec->static_prio = 0;
		rec->policy = 0;
		rec->rt_priority = 0;
	}
	rec->nr_threads = sig->nr_threads;
	if (flags & QS_CFG_COMM) {
		copy_comm(rec->comm, task);
	} else {
		__u64 *d = (__u64 *)rec->comm;

		d[0] = 0;
		d[1] = 0;
	}
}

/* A live thread's own counters, added to its group's row: those of
 * `flags`. */
static __always_inline void qs_add_thread(struct qs_task *rec, struct task_struct *t, __u32 flags)
{
	if (flags & QS_CFG_CPUTIME) {
		rec->utime_ns += t->utime;
		rec->stime_ns += t->stime;
		rec->runtime_ns += t->se.sum_exec_runtime;
	}
	if (flags & QS_CFG_FAULTS) {
		rec->min_flt += t->min_flt;
		rec->maj_flt += t->maj_flt;
	}
}

/* Adds one set of I/O counters (a task's, or a group's dead threads'). */
static __always_inline void qs_io_add(struct qs_io *io, struct task_io_accounting *ac)
{
	io->rchar += ac->rchar;
	io->wchar += ac->wchar;
	io->syscr += ac->syscr;
	io->syscw += ac->syscw;
	io->read_bytes += ac->read_bytes;
	io->write_bytes += ac->write_bytes;
	io->cancelled_write_bytes += ac->cancelled_write_bytes;
}

static __always_inline void qs_fill_io(struct qs_io *io, struct task_struct *task, int group_row)
{
	__builtin_memset(io, 0, sizeof(*io));
	qs_io_add(io, &task->ioac);
	if (group_row && dead_threads_counted(task->signal))
		qs_io_add(io, &task->signal->ioac);
}

/* The task's own delay accounting: zeros where the kernel allocated none
 * (delays is NULL) or has no such member. */
static __always_inline void qs_fill_delays(struct qs_delays *w, struct task_struct *task)
{
	struct task_delay_info *d = task->delays;

	__builtin_memset(w, 0, sizeof(*w));
	if (!d)
		return;
	w->blkio_ns = d->blkio_delay;
	w->swapin_ns = d->swapin_delay;
	w->reclaim_ns = d->freepages_delay;
	w->thrashing_ns = d->thrashing_delay;
	w->compact_ns = d->compact_delay;
	if (bpf_core_field_exists(d->wpcopy_delay))
		w->wpcopy_ns = d->wpcopy_delay;
	if (bpf_core_field_exists(d->irq_delay))
		w->irq_ns = d->irq_delay;
}

#endif
