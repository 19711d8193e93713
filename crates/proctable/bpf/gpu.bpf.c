// SPDX-License-Identifier: GPL-2.0-only
/*
 * The processes that hold a GPU: every descriptor of every process is
 * looked at in the kernel, and those whose file is a character device of a
 * GPU's major (DRM's 226, compute accelerators' 261, as the reader sets
 * them in qs_gpu_cfg) are written out, a qs_gpu_file each. Nothing is
 * opened, and no process is woken: the reader then reads
 * /proc/TGID/fdinfo/FD of those descriptors only. Built into the
 * committed gpu.bpf.o by build.sh (CO-RE).
 *
 *  qs_gpu_walk   run on demand (a syscall program), the whole machine: the
 *                open-coded task iterator over every process (Linux 6.7),
 *                each table read as below; the descriptors found go to the
 *                mapped array qs_gpu_hits, as tgid << 32 | fd.
 *  qs_gpu_tasks  iter/task, a call per task (a process's, by PID, or where
 *                the walk does not load): each thread-group leader's
 *                table of descriptors is read by hand, where its bitmap
 *                of open descriptors shows any, with no reference
 *                taken on any file (a descriptor closed meanwhile may be
 *                missed or seen stale; the reader's read of its fdinfo is
 *                what counts). Needs the kernel functions bpf_iter_num_*
 *                and bpf_rdonly_cast (Linux 6.4), called through the
 *                QS_KFUNC_* numbers the loader rewrites (walk.rs).
 *  qs_gpu_files  iter/task_file, a call per descriptor, each file's
 *                reference taken and dropped: five times the cost, for
 *                kernels without those functions.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "record.h"
#include "kfuncs.h"

char LICENSE[] SEC("license") = "GPL";

#define QS_S_IFMT 00170000
#define QS_S_IFCHR 0020000
#define QS_MINORBITS 20


struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct qs_gpu_cfg);
} qs_gpu_cfg SEC(".maps");

/* qs_gpu_walk's output; max_entries is set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QS_GPU_HITS_MIN);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} qs_gpu_hits SEC(".maps");

/* Whether `inode` is a character device of one of cfg's majors. */
static __always_inline int qs_is_gpu(struct inode *inode, struct qs_gpu_cfg *cfg)
{
	__u32 major;

	if (!inode || (inode->i_mode & QS_S_IFMT) != QS_S_IFCHR)
		return 0;
	major = inode->i_rdev >> QS_MINORBITS;
	for (int i = 0; i < 4; i++)
		if (cfg->majors[i] && cfg->majors[i] == major)
			return 1;
	return 0;
}

/* Calls found(ctx, fd) for each descriptor of `task`'s table that is a GPU's.
 * The table is read by hand: a word of its bitmap of open descriptors at a
 * time, then each open one's file. */
#define QS_GPU_TABLE(task, cfg, found, ctx)                                                 \
	do {                                                                                 \
		struct files_struct *files_ = (task)->files;                                 \
		struct bpf_iter_num it_;                                                     \
		struct fdtable *fdt_;                                                        \
		__u64 fds_, open_, bits_, fp_;                                               \
		int *w_;                                                                     \
                                                                                             \
		if (!files_ || !(fdt_ = files_->fdt))                                        \
			break;                                                               \
		fds_ = (__u64)fdt_->fd;                                                      \
		open_ = (__u64)fdt_->open_fds;                                               \
		qs_iter_num_new(&it_, 0, fdt_->max_fds / 64);                                \
		while ((w_ = qs_iter_num_next(&it_))) {                                      \
			__u64 word_ = (__u32)*w_;                                            \
                                                                                             \
			if (bpf_probe_read_kernel(&bits_, 8, (void *)(open_ + word_ * 8)) || \
			    !bits_)                                                          \
				continue;                                                    \
			for (int b_ = 0; b_ < 64; b_++) {                                    \
				struct file *f_;                                             \
                                                                                             \
				if (!((bits_ >> b_) & 1))                                    \
					continue;                                            \
				if (bpf_probe_read_kernel(&fp_, 8,                           \
							  (void *)(fds_ + (word_ * 64 + b_) * 8)) || \
				    !fp_)                                                    \
					continue;                                            \
				f_ = qs_rdonly_cast((void *)fp_,                             \
						    bpf_core_type_id_kernel(struct file));   \
				if (qs_is_gpu(f_->f_inode, cfg))                             \
					found(ctx, word_ * 64 + b_);                         \
			}                                                                    \
		}                                                                            \
		qs_iter_num_destroy(&it_);                                                   \
	} while (0)

struct qs_gpu_seq {
	struct seq_file *seq;
	__u32 tgid;
};

static __always_inline void qs_gpu_write(struct qs_gpu_seq *s, __u32 fd)
{
	struct qs_gpu_file rec = { .tgid = s->tgid, .fd = fd };

	bpf_seq_write(s->seq, &rec, sizeof(rec));
}

SEC("iter/task")
int qs_gpu_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct qs_gpu_seq s;
	struct qs_gpu_cfg *cfg;
	__u32 zero = 0;

	/* Threads share their leader's table. */
	if (!task || task->pid != task->tgid)
		return 0;
	cfg = bpf_map_lookup_elem(&qs_gpu_cfg, &zero);
	if (!cfg)
		return 0;
	s.seq = ctx->meta->seq;
	s.tgid = task->tgid;
	QS_GPU_TABLE(task, cfg, qs_gpu_write, &s);
	return 0;
}

static __always_inline void qs_gpu_hit(struct qs_gpu_cfg *cfg, __u64 key)
{
	__u32 at = cfg->hits;
	__u64 *slot;

	if (at < cfg->capacity) {
		slot = bpf_map_lookup_elem(&qs_gpu_hits, &at);
		if (slot)
			*slot = key;
	}
	cfg->hits = at + 1;
}

struct qs_gpu_walk_ctx {
	struct qs_gpu_cfg *cfg;
	__u64 tgid;
};

static __always_inline void qs_gpu_walk_found(struct qs_gpu_walk_ctx *c, __u32 fd)
{
	qs_gpu_hit(c->cfg, c->tgid << 32 | fd);
}

SEC("raw_tp/qs_gpu_walk")
int qs_gpu_walk(void *args)
{
	struct bpf_iter_task it;
	struct task_struct *task;
	struct qs_gpu_walk_ctx c;
	struct qs_gpu_cfg *cfg;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&qs_gpu_cfg, &zero);
	if (!cfg)
		return 1;
	/* The count lives in the map value, not in a register, so that the
	 * verifier checks each loop body once. */
	cfg->hits = 0;
	c.cfg = cfg;
	qs_iter_task_new(&it, NULL, BPF_TASK_ITER_ALL_PROCS);
	while ((task = qs_iter_task_next(&it))) {
		c.tgid = task->tgid;
		QS_GPU_TABLE(task, cfg, qs_gpu_walk_found, &c);
	}
	qs_iter_task_destroy(&it);
	return 0;
}

SEC("iter/task_file")
int qs_gpu_files(struct bpf_iter__task_file *ctx)
{
	struct task_struct *task = ctx->task;
	struct file *file = ctx->file;
	struct qs_gpu_file rec;
	struct qs_gpu_cfg *cfg;
	__u32 zero = 0;

	if (!task || !file)
		return 0;
	cfg = bpf_map_lookup_elem(&qs_gpu_cfg, &zero);
	if (!cfg || !qs_is_gpu(file->f_inode, cfg))
		return 0;
	rec.tgid = task->tgid;
	rec.fd = ctx->fd;
	bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
	return 0;
}
