/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel functions the programs call, through helper-style pointers
 * with the QS_KFUNC_* numbers of record.h: the loader rewrites those calls
 * into kernel-function calls (BTF ids of the running kernel; walk.rs,
 * link_kfuncs), which the loader library cannot resolve from extern
 * declarations itself. A program that calls none of one leaves no trace of
 * it in its object.
 */
#ifndef QS_KFUNCS_H
#define QS_KFUNCS_H

#include "record.h"

#define QS_KFUNC(ret, name, args, number) \
	static ret(*name) args __attribute__((unused)) = (void *)(number)

QS_KFUNC(int, qs_iter_task_new,
	 (struct bpf_iter_task *it, struct task_struct *task, unsigned int flags),
	 QS_KFUNC_ITER_TASK_NEW);
QS_KFUNC(struct task_struct *, qs_iter_task_next, (struct bpf_iter_task *it),
	 QS_KFUNC_ITER_TASK_NEXT);
QS_KFUNC(void, qs_iter_task_destroy, (struct bpf_iter_task *it), QS_KFUNC_ITER_TASK_DESTROY);
QS_KFUNC(void *, qs_rdonly_cast, (const void *obj, __u32 btf_id), QS_KFUNC_RDONLY_CAST);
QS_KFUNC(struct task_struct *, qs_task_from_vpid, (__s32 vpid), QS_KFUNC_TASK_FROM_VPID);
QS_KFUNC(void, qs_task_release, (struct task_struct *p), QS_KFUNC_TASK_RELEASE);
QS_KFUNC(int, qs_iter_num_new, (struct bpf_iter_num *it, int start, int end),
	 QS_KFUNC_ITER_NUM_NEW);
QS_KFUNC(int *, qs_iter_num_next, (struct bpf_iter_num *it), QS_KFUNC_ITER_NUM_NEXT);
QS_KFUNC(void, qs_iter_num_destroy, (struct bpf_iter_num *it), QS_KFUNC_ITER_NUM_DESTROY);

#endif
