/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * Counters kept by noise.bpf.c and read by the probe crate at the end of a
 * window. This header is the only definition of the layout: the crate's
 * build script generates the Rust side from it (bpfgen), so keep to its
 * subset: `#define QN_NAME number`, structs of `__u64|__s64|__u32|__s32`
 * members one per line, one-line C comments, 8-byte members first.
 */
#ifndef QN_NOISE_H
#define QN_NOISE_H

/* qn_key.kind: what interrupted a measured CPU, and what `id` means. */
#define QN_IPI_FROM_CPU 1 /* IPI received; id = sending CPU */
#define QN_IPI_SITE 2     /* IPI received; id = call site address */
#define QN_IPI_FUNC 3     /* IPI received; id = function run by it (0: none) */
#define QN_IPI_BY_TGID 4  /* IPI received; id = process of the sending task */
#define QN_IRQ 5          /* hardware IRQ handled; id = IRQ number; time */
#define QN_VECTOR 6       /* x86 system vector; id = QN_VEC_*; time */
#define QN_SOFTIRQ 7      /* softirq run; id = vector number; time */
#define QN_TIMER 8        /* timer expired; id = callback address */
#define QN_SWITCH_IN 9    /* context switch to a task; id = its tid */
#define QN_RUNTIME 10     /* time a task ran; id = its tid; time */
#define QN_WAKEUP 11      /* task woken to run here; id = its tid */
#define QN_WAKEUP_BY 12   /* task woken to run here; id = process of the waker */
#define QN_PID_IPI_SITE 13 /* IPI sent here by the watched process; id = call site */
#define QN_PID_WAKEE 14    /* task woken here by the watched process; id = its tid */

/* qn_key.id of QN_VECTOR */
#define QN_VEC_LOCAL_TIMER 1
#define QN_VEC_CALL_FUNCTION 2
#define QN_VEC_CALL_FUNCTION_SINGLE 3
#define QN_VEC_RESCHEDULE 4
#define QN_VEC_IRQ_WORK 5

/* The "process" of an IPI sent or a wakeup made from interrupt context
 * (an IRQ handler, a system vector such as the tick, or a softirq), which is
 * not the interrupted task's doing. */
#define QN_IN_INTERRUPT 4294967295

#define QN_MAX_KEYS 65536
#define QN_MAX_CPUS 1024
#define QN_MAX_LIST 256 /* measured CPUs at most */

struct qn_key {
	__u64 id;
	__u32 kind;
	__u32 cpu; /* the measured CPU it landed on */
};

struct qn_value {
	__u64 count;
	__u64 total_ns;
	__u64 max_ns;
};

#endif
