// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cgroup walk of the v2 hierarchy. Built into the committed
 * cgroups.bpf.o by build.sh (CO-RE); the record layout is in record.h.
 *
 *  qs_cgroups  sleepable iter/cgroup program, linked to the hierarchy's
 *              root in pre-order (parents first): at the root it flushes
 *              the hierarchy's base statistics once (what each cgroup's
 *              cpu.stat read flushes for itself), then writes one qs_cgroup
 *              per cgroup into qs_cg_rows, a memory-mapped array read in
 *              place: no text, no file per figure. Nothing is written to
 *              the iterator's own output (a cgroup iterator cannot resume
 *              past one buffer of it).
 *
 * The pressure totals are the ones the kernel's averaging work last
 * gathered (every 2 s while the cgroup has tasks changing state; a read
 * of the file gathers them first).
 *
 * css_rstat_flush is called through a helper-style pointer with the
 * QS_KFUNC_CSS_RSTAT_FLUSH number of record.h; the loader rewrites the
 * call into a kernel-function call (the BTF id of the running kernel),
 * which the loader library cannot resolve from an extern declaration.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "record.h"

char LICENSE[] SEC("license") = "GPL";

static void (*qs_css_rstat_flush)(struct cgroup_subsys_state *css) =
	(void *)QS_KFUNC_CSS_RSTAT_FLUSH;

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

SEC("iter.s/cgroup")
int qs_cgroups(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cg = ctx->cgroup;
	struct qs_cg_out *out;
	struct qs_cgroup *r;
	struct psi_group *psi;
	__u32 zero = 0, i;
	int k;

	out = bpf_map_lookup_elem(&qs_cg_out, &zero);
	if (!cg || !out)
		return 0;
	if (out->count == 0)
		qs_css_rstat_flush(&cg->self);
	i = out->count;
	out->count = i + 1;
	r = bpf_map_lookup_elem(&qs_cg_rows, &i);
	if (!r)
		return 0;
	r->id = BPF_CORE_READ(cg, kn, id);
	r->level = BPF_CORE_READ(cg, level);
	r->usage_ns = BPF_CORE_READ(cg, bstat.cputime.sum_exec_runtime);
	r->user_ns = BPF_CORE_READ(cg, bstat.cputime.utime);
	r->system_ns = BPF_CORE_READ(cg, bstat.cputime.stime);
	r->flags = 0;
	if (bpf_core_enum_value_exists(enum cgroup_subsys_id, cpu_cgrp_id)) {
		int cpu = bpf_core_enum_value(enum cgroup_subsys_id, cpu_cgrp_id);
		struct cgroup_subsys_state *css = NULL;

		if (cpu >= 0 && cpu < 64)
			bpf_core_read(&css, sizeof(css), &cg->subsys[cpu]);
		if (css)
			r->flags |= QS_CG_CPU_CTL;
	}
	psi = BPF_CORE_READ(cg, psi);
	if (psi) {
		bool on = true;

		if (bpf_core_field_exists(psi->enabled))
			on = BPF_CORE_READ(psi, enabled);
		if (on) {
			r->flags |= QS_CG_PSI;
			/* The first row of total[aggregator][state]: PSI_AVGS's. */
			for (k = 0; k < 6; k++)
				bpf_core_read(&r->psi_ns[k], sizeof(__u64), &psi->total[k]);
		}
	}
	return 0;
}
