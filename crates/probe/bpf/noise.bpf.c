// SPDX-License-Identifier: GPL-2.0-only
/*
 * What interrupts a set of CPUs, counted in the kernel. Built into the
 * committed noise.bpf.o by build.sh (CO-RE). Every program returns at once
 * on a CPU that is not measured (one array lookup); on a measured CPU it
 * adds to a hash map entry keyed by (kind, cpu, id): see noise.h. Nothing is
 * sent to user space until the window ends, so measuring adds no wakeups and
 * no IPIs to the measured CPUs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "noise.h"

char LICENSE[] SEC("license") = "GPL";

/* Set at load time: how many CPUs qn_list holds, and the process `--pid`
 * watches (0: none). */
const volatile __u32 qn_list_len = 0;
const volatile __u32 qn_pid = 0;

/* qn_cpus[cpu] = 1 for a measured CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QN_MAX_CPUS);
	__type(key, __u32);
	__type(value, __u8);
} qn_cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, QN_MAX_KEYS);
	__type(key, struct qn_key);
	__type(value, struct qn_value);
} qn_counts SEC(".maps");

/* Per CPU: when the current IRQ, vector, softirq or task began, and how
 * deep in interrupt context the CPU is (kept on every CPU, so that an IPI
 * or wakeup sent from an interrupt is not charged to the interrupted task). */
struct qn_start {
	__u64 irq;
	__u64 vector;
	__u64 softirq;
	__u64 task;
	__u64 depth;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct qn_start);
} qn_start SEC(".maps");

/* Waker's process by wakee tid, between sched_waking and sched_wakeup. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u32);
} qn_waker SEC(".maps");

static __always_inline int measured(__u32 cpu)
{
	__u8 *on = bpf_map_lookup_elem(&qn_cpus, &cpu);
	return on && *on;
}

static __always_inline void add(__u32 kind, __u32 cpu, __u64 id, __u64 ns)
{
	struct qn_key k = { .id = id, .kind = kind, .cpu = cpu };
	struct qn_value *v = bpf_map_lookup_elem(&qn_counts, &k);
	if (!v) {
		struct qn_value zero = {};
		bpf_map_update_elem(&qn_counts, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&qn_counts, &k);
		if (!v)
			return;
	}
	__sync_fetch_and_add(&v->count, 1);
	if (ns) {
		__sync_fetch_and_add(&v->total_ns, ns);
		if (ns > v->max_ns)
			v->max_ns = ns; /* racy max: good enough for a maximum */
	}
}

static __always_inline struct qn_start *start(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&qn_start, &zero);
}

/* The process doing what the current context does, or QN_IN_INTERRUPT. */
static __always_inline __u32 actor(void)
{
	struct qn_start *s = start();
	if (s && s->depth)
		return QN_IN_INTERRUPT;
	return bpf_get_current_pid_tgid() >> 32;
}

static __always_inline void ipi_to(__u32 target, __u64 callsite, __u64 callback)
{
	if (!measured(target))
		return;
	__u32 from = bpf_get_smp_processor_id();
	__u32 tgid = actor();
	add(QN_IPI_FROM_CPU, target, from, 0);
	add(QN_IPI_SITE, target, callsite, 0);
	add(QN_IPI_FUNC, target, callback, 0);
	add(QN_IPI_BY_TGID, target, tgid, 0);
	if (qn_pid && tgid == qn_pid)
		add(QN_PID_IPI_SITE, target, callsite, 0);
}

SEC("tp_btf/ipi_send_cpu")
int BPF_PROG(qn_ipi_cpu, unsigned int cpu, unsigned long callsite, void *callback)
{
	ipi_to(cpu, callsite, (__u64)callback);
	return 0;
}

/* The measured CPUs as a list (qn_list[0..qn_list_len]), so a cpumask IPI
 * costs one bit test per measured CPU, in a loop the verifier checks once. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QN_MAX_LIST);
	__type(key, __u32);
	__type(value, __u32);
} qn_list SEC(".maps");



struct mask_ctx {
	struct cpumask *mask;
	__u64 callsite;
	__u64 callback;
};

static long mask_one(__u32 i, void *data)
{
	struct mask_ctx *c = data;
	__u32 *cpu = bpf_map_lookup_elem(&qn_list, &i);
	if (!cpu || *cpu >= QN_MAX_CPUS)
		return 1;
	__u64 word = 0;
	if (bpf_probe_read_kernel(&word, sizeof(word), &c->mask->bits[*cpu / 64]))
		return 0;
	if (word & (1ULL << (*cpu % 64)))
		ipi_to(*cpu, c->callsite, c->callback);
	return 0;
}

SEC("tp_btf/ipi_send_cpumask")
int BPF_PROG(qn_ipi_mask, struct cpumask *mask, unsigned long callsite, void *callback)
{
	struct mask_ctx c = { .mask = mask, .callsite = callsite, .callback = (__u64)callback };
	bpf_loop(qn_list_len, mask_one, &c, 0);
	return 0;
}

/* Entering interrupt context on any CPU: one level deeper; on a measured
 * CPU, also when it began. `which`: 0 IRQ, 1 system vector, 2 softirq. */
static __always_inline void enter(int which)
{
	struct qn_start *s = start();
	if (!s)
		return;
	s->depth++;
	if (!measured(bpf_get_smp_processor_id()))
		return;
	__u64 now = bpf_ktime_get_ns();
	if (which == 0)
		s->irq = now;
	else if (which == 1)
		s->vector = now;
	else
		s->softirq = now;
}

/* Leaving it: one level up; on a measured CPU, count it with its time. */
static __always_inline void leave(int which, __u32 kind, __u64 id)
{
	struct qn_start *s = start();
	if (!s)
		return;
	if (s->depth)
		s->depth--;
	__u32 cpu = bpf_get_smp_processor_id();
	if (!measured(cpu))
		return;
	__u64 began = which == 0 ? s->irq : which == 1 ? s->vector : s->softirq;
	__u64 ns = began ? bpf_ktime_get_ns() - began : 0;
	if (which == 0)
		s->irq = 0;
	else if (which == 1)
		s->vector = 0;
	else
		s->softirq = 0;
	add(kind, cpu, id, ns);
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(qn_irq_entry, int irq, struct irqaction *action)
{
	enter(0);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(qn_irq_exit, int irq, struct irqaction *action, int ret)
{
	leave(0, QN_IRQ, irq);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(qn_softirq_entry, unsigned int vec)
{
	enter(2);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(qn_softirq_exit, unsigned int vec)
{
	leave(2, QN_SOFTIRQ, vec);
	return 0;
}

#define VECTOR(name, id)                                            \
	SEC("tp_btf/" #name "_entry")                               \
	int BPF_PROG(qn_##name##_entry, int vector)                 \
	{                                                           \
		enter(1);                                           \
		return 0;                                           \
	}                                                           \
	SEC("tp_btf/" #name "_exit")                                \
	int BPF_PROG(qn_##name##_exit, int vector)                  \
	{                                                           \
		leave(1, QN_VECTOR, id);                            \
		return 0;                                           \
	}

VECTOR(local_timer, QN_VEC_LOCAL_TIMER)
VECTOR(call_function, QN_VEC_CALL_FUNCTION)
VECTOR(call_function_single, QN_VEC_CALL_FUNCTION_SINGLE)
VECTOR(reschedule, QN_VEC_RESCHEDULE)
VECTOR(irq_work, QN_VEC_IRQ_WORK)

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(qn_hrtimer, struct hrtimer *t, ktime_t *now)
{
	__u32 cpu = bpf_get_smp_processor_id();
	if (measured(cpu))
		add(QN_TIMER, cpu, (__u64)BPF_CORE_READ(t, function), 0);
	return 0;
}

SEC("tp_btf/timer_expire_entry")
int BPF_PROG(qn_timer, struct timer_list *t, unsigned long baseclk)
{
	__u32 cpu = bpf_get_smp_processor_id();
	if (measured(cpu))
		add(QN_TIMER, cpu, (__u64)BPF_CORE_READ(t, function), 0);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(qn_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct qn_start *s = start();
	if (!s || !measured(cpu))
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u32 prev_tid = BPF_CORE_READ(prev, pid);
	__u32 next_tid = BPF_CORE_READ(next, pid);
	/* Time the previous task ran here (not the idle task, tid 0). */
	if (s->task && prev_tid)
		add(QN_RUNTIME, cpu, prev_tid, now - s->task);
	s->task = now;
	if (next_tid)
		add(QN_SWITCH_IN, cpu, next_tid, 0);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(qn_waking, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	__u32 waker = actor();
	bpf_map_update_elem(&qn_waker, &tid, &waker, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(qn_wakeup, struct task_struct *p)
{
	__u32 cpu = BPF_CORE_READ(p, thread_info.cpu);
	if (!measured(cpu))
		return 0;
	__u32 tid = BPF_CORE_READ(p, pid);
	add(QN_WAKEUP, cpu, tid, 0);
	__u32 *waker = bpf_map_lookup_elem(&qn_waker, &tid);
	if (waker) {
		add(QN_WAKEUP_BY, cpu, *waker, 0);
		if (qn_pid && *waker == qn_pid)
			add(QN_PID_WAKEE, cpu, tid, 0);
	}
	return 0;
}
