/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The maps both programs (proctable.bpf.c, walk.bpf.c) are configured
 * through: the one qs_config entry and the PID filter. Include after
 * record.h.
 */
#ifndef QS_MAPS_H
#define QS_MAPS_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct qs_config);
} qs_config SEC(".maps");

/*
 * Entries allocated as they are added, not reserved: a filter is set only
 * for a query by PID, and 65,536 preallocated entries are 5 MiB of kernel
 * memory charged to the agent's cgroup in each of the two objects.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, QS_MAX_PIDS);
	__type(key, __u32);
	__type(value, __u8);
} qs_pids SEC(".maps");

#endif
