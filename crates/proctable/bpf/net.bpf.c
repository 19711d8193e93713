// SPDX-License-Identifier: GPL-2.0-only
/*
 * Network bytes per process, read from the counters the kernel keeps in
 * every TCP socket (tcp_sock's bytes_received and bytes_acked), with no
 * hook on any packet or send or receive call. Built into the committed
 * net.bpf.o by build.sh (CO-RE, -mcpu=v3 for the atomic exchange).
 *
 * Each TCP socket is given an owner in its own storage (qs_sk_owner, freed
 * with the socket). A visit to a socket charges its owner's entry of
 * qs_net_sums with what the socket's counts grew by since the last visit
 * (the counts last charged are kept beside the owner, taken with an atomic
 * exchange so that two visits at once charge each byte once). The sums
 * are kept from read to read: any set of sockets may be visited, and a
 * socket not visited is charged later, never twice. Only tracepoints are
 * used (BTF-typed, tp_btf): they fire for a socket's changes of state, a
 * few times in its life.
 *
 *  qs_sk_state    tp_btf/inet_sock_set_state: a socket that connects
 *                 (SYN_SENT) is the caller's, one that listens is the
 *                 listener's, flagged QS_SK_LISTENER; one that closes is
 *                 visited (a disconnect clears its counts). A connection
 *                 the listening socket accepts is made in the kernel's
 *                 receive path, in no process's call, and gets a copy of
 *                 the listener's owner (the map's BPF_F_CLONE): until a
 *                 holder scan finds which process holds it, it is
 *                 "unheld", and not visited.
 *  qs_sk_ended    tp_btf/tcp_destroy_sock (IPv4 and IPv6): the socket's
 *                 last visit (an unheld one's charged to the listener),
 *                 so that the bytes of a socket closed between two reads
 *                 are still charged.
 *  qs_sk_files    iter/task_file, over the descriptors of the processes the
 *                 reader names (every process at load): a socket without
 *                 an owner, or an unheld connection, is given to the first
 *                 process found holding it; each owned socket is visited.
 *                 The reader names those that ran since its last read:
 *                 a socket whose holders did not run is visited by the
 *                 next sweep.
 *  qs_socks       iter/bpf_sk_storage_map over qs_sk_owner, the sweep:
 *                 every owned socket, whatever its network namespace,
 *                 visited; an unheld connection written out as a qs_sock
 *                 instead. No socket locked or referenced.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "record.h"

char LICENSE[] SEC("license") = "GPL";

#define QS_AF_INET 2
#define QS_AF_INET6 10
#define QS_IPPROTO_TCP 6
#define QS_SOCK_STREAM 1
#define QS_TCP_SYN_SENT 2
#define QS_TCP_CLOSE 7
#define QS_E2BIG 7
#define QS_TCP_LISTEN 10

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_CLONE);
	__type(key, int);
	__type(value, struct qs_sk_owner);
} qs_sk_owner SEC(".maps");

/* Each owner's sums, allocated as owners are added; the reader drops
 * those of processes that ended. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, QS_NET_SUMS_MAX);
	__type(key, struct qs_owner);
	__type(value, struct qs_sock);
} qs_net_sums SEC(".maps");

/* The owners whose sums changed since the reader last took this map's
 * entries: it reads those sums only (all of them where this overflowed).
 * Preallocated: its entries come and go at every read, and an allocated
 * map refills its caches from a self-interrupt (irq_work) on the CPU that
 * inserts, an isolated CPU's own connections included. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, QS_NET_TOUCHED_MAX);
	__type(key, struct qs_owner);
	__type(value, __u32);
} qs_net_touched SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct qs_net_stats);
} qs_net_stats SEC(".maps");

static __always_inline struct qs_net_stats *qs_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&qs_net_stats, &zero);
}

static __always_inline int qs_is_tcp(struct sock *sk)
{
	__u16 family = sk->__sk_common.skc_family;

	return sk->sk_protocol == QS_IPPROTO_TCP && sk->sk_type == QS_SOCK_STREAM &&
	       (family == QS_AF_INET || family == QS_AF_INET6);
}

/* A connection accepted by a listening socket whose holder is not known. */
static __always_inline int qs_unheld(struct sock *sk, struct qs_sk_owner *o)
{
	return (o->flags & QS_SK_LISTENER) && sk->__sk_common.skc_state != QS_TCP_LISTEN;
}

/* A socket's record: its owner and counts. */
static __always_inline void qs_counts(struct qs_sock *rec, struct qs_sk_owner *o,
				      struct tcp_sock *tp)
{
	rec->tgid = o->tgid;
	rec->start_ns = o->start_ns;
	rec->rx_bytes = tp->bytes_received;
	rec->tx_bytes = tp->bytes_acked;
}

/* What a count grew by since `*seen`, which it replaces; all of it where
 * it fell (a disconnect clears a socket's counts). */
static __always_inline __u64 qs_growth(__u64 *seen, __u64 now)
{
	__u64 was = __sync_lock_test_and_set(seen, now);

	return now >= was ? now - was : now;
}

/* Notes that `key`'s sums changed. */
static __always_inline void qs_touch(struct qs_owner *key)
{
	struct qs_net_stats *st;
	__u32 one = 1;

	if (bpf_map_lookup_elem(&qs_net_touched, key))
		return;
	/* -EEXIST: another CPU noted it meanwhile. */
	if (bpf_map_update_elem(&qs_net_touched, key, &one, BPF_NOEXIST) != -QS_E2BIG)
		return;
	st = qs_stats();
	if (st)
		__sync_fetch_and_add(&st->touched_full, 1);
}

/* Charges the socket's owner with what its counts grew by. */
static __always_inline void qs_visit(struct qs_sk_owner *o, struct tcp_sock *tp)
{
	struct qs_owner key = {};
	struct qs_net_stats *st;
	struct qs_sock *sum;
	struct qs_sock add = {};

	add.rx_bytes = qs_growth(&o->rx_seen, tp->bytes_received);
	add.tx_bytes = qs_growth(&o->tx_seen, tp->bytes_acked);
	if (!add.rx_bytes && !add.tx_bytes)
		return;
	add.tgid = key.tgid = o->tgid;
	add.start_ns = key.start_ns = o->start_ns;
	/* Two tries: the owner's first entry may be added between the lookup
	 * and the insertion by another CPU visiting its other socket. */
	for (int i = 0; i < 2; i++) {
		sum = bpf_map_lookup_elem(&qs_net_sums, &key);
		if (sum) {
			__sync_fetch_and_add(&sum->rx_bytes, add.rx_bytes);
			__sync_fetch_and_add(&sum->tx_bytes, add.tx_bytes);
			qs_touch(&key);
			return;
		}
		if (!bpf_map_update_elem(&qs_net_sums, &key, &add, BPF_NOEXIST)) {
			qs_touch(&key);
			return;
		}
	}
	st = qs_stats();
	if (st)
		__sync_fetch_and_add(&st->lost, 1);
}

/* Gives `sk` to `task`'s process: its storage, made where there was none. */
static __always_inline struct qs_sk_owner *qs_own(struct sock *sk, struct task_struct *task,
						  __u32 flags)
{
	struct qs_sk_owner *o;

	o = bpf_sk_storage_get(&qs_sk_owner, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!o)
		return 0;
	o->tgid = task->tgid;
	o->start_ns = task->group_leader->start_boottime;
	o->flags = flags;
	return o;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(qs_sk_state, struct sock *sk, int old, int new)
{
	struct qs_sk_owner *o;
	struct tcp_sock *tp;

	if (!qs_is_tcp(sk))
		return 0;
	/* Both in the caller's connect() (or a Fast Open send) and listen(). */
	if (new == QS_TCP_SYN_SENT) {
		qs_own(sk, bpf_get_current_task_btf(), 0);
	} else if (new == QS_TCP_LISTEN) {
		qs_own(sk, bpf_get_current_task_btf(), QS_SK_LISTENER);
	} else if (new == QS_TCP_CLOSE) {
		o = bpf_sk_storage_get(&qs_sk_owner, sk, 0, 0);
		tp = bpf_skc_to_tcp_sock(sk);
		if (o && tp && !qs_unheld(sk, o))
			qs_visit(o, tp);
	}
	return 0;
}

SEC("tp_btf/tcp_destroy_sock")
int BPF_PROG(qs_sk_ended, struct sock *sk)
{
	struct qs_sk_owner *o;
	struct tcp_sock *tp;

	o = bpf_sk_storage_get(&qs_sk_owner, sk, 0, 0);
	if (!o)
		return 0;
	tp = bpf_skc_to_tcp_sock(sk);
	if (tp)
		qs_visit(o, tp);
	/* The storage is left to go with the socket: deleted here, it would
	 * wait for an RCU Tasks Trace grace period, whose IPIs reach the CPU
	 * of every running task (an isolated CPU's included); freed with the
	 * socket, it takes an ordinary one. A sweep that visits it before
	 * then finds nothing more to charge. */
	return 0;
}

SEC("iter/task_file")
int qs_sk_files(struct bpf_iter__task_file *ctx)
{
	struct task_struct *task = ctx->task;
	struct file *file = ctx->file;
	struct qs_sk_owner *o;
	struct tcp_sock *tp;
	struct socket *sock;
	struct sock *sk;

	if (!task || !file)
		return 0;
	sock = bpf_sock_from_file(file);
	if (!sock)
		return 0;
	sk = sock->sk;
	if (!sk || !qs_is_tcp(sk))
		return 0;
	/* The first holder found keeps it: the iterator goes by PID, so a
	 * parent before the children it shares its sockets with. */
	o = bpf_sk_storage_get(&qs_sk_owner, sk, 0, 0);
	if (!o)
		o = qs_own(sk, task, sk->__sk_common.skc_state == QS_TCP_LISTEN ? QS_SK_LISTENER : 0);
	else if (qs_unheld(sk, o))
		o = qs_own(sk, task, 0);
	tp = bpf_skc_to_tcp_sock(sk);
	if (o && tp)
		qs_visit(o, tp);
	return 0;
}

SEC("iter/bpf_sk_storage_map")
int qs_socks(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	struct qs_sk_owner *o = ctx->value;
	struct sock *sk = ctx->sk;
	struct tcp_sock *tp;
	struct qs_sock rec = {};

	if (!sk || !o)
		return 0;
	tp = bpf_skc_to_tcp_sock(sk);
	if (!tp)
		return 0;
	if (qs_unheld(sk, o)) {
		qs_counts(&rec, o, tp);
		rec.flags = QS_SOCK_UNHELD;
		bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
		return 0;
	}
	qs_visit(o, tp);
	return 0;
}
