// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cgroup walk of one hierarchy, v2 or v1. Built into the committed
 * cgroups.bpf.o by build.sh (CO-RE); the record layout is in record.h.
 *
 *  qs_cgroups  sleepable iter/cgroup program, linked to the hierarchy's
 *              root in pre-order (parents first). At the root it finds
 *              each possible CPU's per-CPU offset and, in v2, flushes the
 *              hierarchy's base statistics once (what each cgroup's
 *              cpu.stat read flushes for itself); then it writes one
 *              qs_cgroup per cgroup into qs_cg_rows, a memory-mapped array
 *              read in place: no text, no file per figure. Nothing is
 *              written to the iterator's own output (a cgroup iterator
 *              cannot resume past one buffer of it).
 *
 * What each controller's files print, read where the kernel keeps it:
 *  v2       cpu.stat's usage, user, system (the base statistics, before
 *           the adjustment the file makes) and the pressure totals the
 *           kernel's averaging work last gathered (every 2 s while the
 *           cgroup has tasks changing state; a read of the file gathers
 *           them first).
 *  cpuacct  cpuacct.usage{,_user,_sys}: the per-CPU usage and cpustat,
 *           summed over the possible CPUs as the files sum them.
 *  cpu      cpu.stat's bandwidth counters, cpu.cfs_{quota,period}_us.
 *  memory   memory.usage_in_bytes (the page counter: not the root's),
 *           memory.limit_in_bytes, memory.failcnt, oom_control's oom_kill.
 *  pids     pids.current.
 *  blkio    whether the cgroup has block groups: without, its throttle
 *           files count nothing.
 *
 * A per-CPU pointer is an offset in the per-CPU area: the walk learns each
 * CPU's offset from a per-CPU array of its own (the address its value has
 * on that CPU less the per-CPU pointer the array holds), then reads each
 * CPU's copy with bpf_probe_read_kernel. The kernel's BTF carries no
 * per-CPU tags on these pointers, so bpf_per_cpu_ptr cannot take them.
 *
 * Figures are loaded directly (the verifier makes each load one that
 * cannot fault), not with a helper call each: the iterator's cgroup is a
 * typed pointer, and a controller's state is reached from its css
 * through bpf_rdonly_cast (which the verifier turns into a move).
 *
 * css_rstat_flush and bpf_rdonly_cast are called through helper-style
 * pointers with the QS_KFUNC_* numbers of record.h; the loader rewrites
 * each call into a kernel-function call (the BTF id of the running
 * kernel), which the loader library cannot resolve from an extern
 * declaration.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "record.h"

char LICENSE[] SEC("license") = "GPL";

static void (*qs_css_rstat_flush)(struct cgroup_subsys_state *css) =
	(void *)QS_KFUNC_CSS_RSTAT_FLUSH;
static void *(*qs_rdonly_cast)(const void *obj, __u32 btf_id) = (void *)QS_KFUNC_RDONLY_CAST;

/* `p` (a pointer or an address) as a `type`, read-only: loads through it
 * cannot fault. */
#define qs_cast(type, p) ((type *)qs_rdonly_cast((void *)(p), bpf_core_type_id_kernel(type)))

/* max_entries is set by the loader from the number of cgroups. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QS_CG_MIN_ROWS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct qs_cgroup);
} qs_cg_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct qs_cg_out);
} qs_cg_out SEC(".maps");

/* Each CPU's per-CPU offset; all ones for a CPU that is not possible (set
 * by the loader). max_entries is set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QS_CG_MIN_CPUS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} qs_cpu_off SEC(".maps");

/* Only its per-CPU addresses are used. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} qs_pcpu SEC(".maps");

#define NO_CPU (~0ULL)

/* A pointer's value as a number: copied out of the stack slot it is
 * spilled to, so that the verifier sees a number, not a pointer. */
static __always_inline __u64 addr_of(void *p)
{
	void *volatile slot = p;
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (void *)&slot);
	return v;
}

struct offsets {
	__u64 base;  /* qs_pcpu's per-CPU pointer */
	__u64 found;
};

static long find_offset(__u32 cpu, struct offsets *o)
{
	__u32 zero = 0;
	__u64 *off = bpf_map_lookup_elem(&qs_cpu_off, &cpu);
	void *v;

	if (!off)
		return 1;
	if (*off == NO_CPU)
		return 0;
	v = bpf_map_lookup_percpu_elem(&qs_pcpu, &zero, cpu);
	if (!v) {
		*off = NO_CPU;
		return 0;
	}
	*off = addr_of(v) - o->base;
	o->found++;
	return 0;
}

/* Fills qs_cpu_off; returns the CPUs found. */
static __always_inline __u64 find_offsets(__u64 cpus)
{
	struct offsets o = {};
	__u64 arr = addr_of(&qs_pcpu);

	if (bpf_probe_read_kernel(&o.base, sizeof(o.base),
				  (void *)(arr + bpf_core_field_offset(struct bpf_array, pptrs))))
		return 0;
	bpf_loop(cpus, find_offset, &o, 0);
	return o.found;
}

struct cpuacct_sum {
	__u64 usage;  /* per-CPU pointers */
	__u64 stat;
	__u64 usage_ns, user_ns, system_ns;
};

static long add_cpu(__u32 cpu, struct cpuacct_sum *s)
{
	__u64 *off = bpf_map_lookup_elem(&qs_cpu_off, &cpu);
	struct kernel_cpustat *st;
	__u64 u = 0;

	if (!off)
		return 1;
	if (*off == NO_CPU)
		return 0;
	bpf_probe_read_kernel(&u, sizeof(u), (void *)(s->usage + *off));
	st = qs_cast(struct kernel_cpustat, s->stat + *off);
	s->usage_ns += u;
	s->user_ns += st->cpustat[CPUTIME_USER] + st->cpustat[CPUTIME_NICE];
	s->system_ns += st->cpustat[CPUTIME_SYSTEM] + st->cpustat[CPUTIME_IRQ] +
			st->cpustat[CPUTIME_SOFTIRQ];
	return 0;
}

/* The css of subsystem `id` (an enum cgroup_subsys_id value), or NULL. */
static __always_inline struct cgroup_subsys_state *css_of(struct cgroup *cg, int id)
{
	if (id < 0 || id >= 64)
		return NULL;
	return cg->subsys[id];
}

#define SUBSYS(name) \
	(bpf_core_enum_value_exists(enum cgroup_subsys_id, name) ? \
	 (int)bpf_core_enum_value(enum cgroup_subsys_id, name) : -1)

static __always_inline void read_v2(struct cgroup *cg, struct qs_cgroup *r)
{
	struct psi_group *psi;
	int k;

	r->usage_ns = cg->bstat.cputime.sum_exec_runtime;
	r->user_ns = cg->bstat.cputime.utime;
	r->system_ns = cg->bstat.cputime.stime;
	r->flags |= QS_CG_BASE;
	if (css_of(cg, SUBSYS(cpu_cgrp_id)))
		r->flags |= QS_CG_CPU_CTL;
	psi = cg->psi;
	if (psi) {
		bool on = true;

		if (bpf_core_field_exists(psi->enabled))
			on = psi->enabled;
		if (on) {
			r->flags |= QS_CG_PSI;
			/* The first row of total[aggregator][state]: PSI_AVGS's. */
			for (k = 0; k < 6; k++)
				r->psi_ns[k] = psi->total[k];
		}
	}
}

static __always_inline void read_v1(struct cgroup *cg, struct qs_cgroup *r, __u64 cpus)
{
	struct cgroup_subsys_state *css;

	css = css_of(cg, SUBSYS(cpuacct_cgrp_id));
	if (css) {
		struct cpuacct *ca = qs_cast(struct cpuacct, css);
		struct cpuacct_sum s = {
			.usage = (__u64)ca->cpuusage,
			.stat = addr_of(ca->cpustat),
		};

		if (s.usage && s.stat) {
			bpf_loop(cpus, add_cpu, &s, 0);
			r->usage_ns = s.usage_ns;
			r->user_ns = s.user_ns;
			r->system_ns = s.system_ns;
			r->flags |= QS_CG_CPUACCT;
		}
	}
	css = css_of(cg, SUBSYS(cpu_cgrp_id));
	if (css && bpf_core_type_exists(struct cfs_bandwidth)) {
		struct task_group *tg = qs_cast(struct task_group, css);

		r->periods = (__u32)tg->cfs_bandwidth.nr_periods;
		r->throttled_periods = (__u32)tg->cfs_bandwidth.nr_throttled;
		r->throttled_ns = tg->cfs_bandwidth.throttled_time;
		r->quota_ns = tg->cfs_bandwidth.quota;
		r->period_ns = tg->cfs_bandwidth.period;
		r->flags |= QS_CG_CFS;
	}
	css = css_of(cg, SUBSYS(memory_cgrp_id));
	if (css) {
		struct mem_cgroup *m = qs_cast(struct mem_cgroup, css);
		int kill = bpf_core_enum_value(enum memcg_memory_event, MEMCG_OOM_KILL);

		r->memory_pages = m->memory.usage.counter;
		r->memory_max_pages = m->memory.max;
		r->memory_failcnt = m->memory.failcnt;
		if (kill >= 0 && kill < 16)
			r->oom_kills = m->memory_events[kill].counter;
		r->flags |= QS_CG_MEMCG;
	}
	css = css_of(cg, SUBSYS(pids_cgrp_id));
	if (css) {
		struct pids_cgroup *p = qs_cast(struct pids_cgroup, css);

		r->pids = p->counter.counter;
		r->flags |= QS_CG_PIDS;
	}
	css = css_of(cg, SUBSYS(io_cgrp_id));
	if (css) {
		struct blkcg *b = qs_cast(struct blkcg, css);

		r->flags |= QS_CG_BLKIO;
		if (b->blkg_list.first)
			r->flags |= QS_CG_BLKGS;
	}
}

SEC("iter.s/cgroup")
int qs_cgroups(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cg = ctx->cgroup;
	struct qs_cg_out *out;
	struct qs_cgroup *r;
	__u32 zero = 0, i;

	out = bpf_map_lookup_elem(&qs_cg_out, &zero);
	if (!cg || !out)
		return 0;
	if (out->count == 0) {
		if (out->mode & QS_CG_MODE_V2)
			qs_css_rstat_flush(&cg->self);
		out->cpus_found = find_offsets(out->cpus);
	}
	i = out->count;
	out->count = i + 1;
	r = bpf_map_lookup_elem(&qs_cg_rows, &i);
	if (!r)
		return 0;
	__builtin_memset(r, 0, sizeof(*r));
	r->id = cg->kn->id;
	r->level = cg->level;
	if (cg->nr_populated_csets || cg->nr_populated_domain_children ||
	    cg->nr_populated_threaded_children)
		r->flags |= QS_CG_POPULATED;
	if (out->mode & QS_CG_MODE_V2)
		read_v2(cg, r);
	else
		read_v1(cg, r, out->cpus_found ? out->cpus : 0);
	return 0;
}
