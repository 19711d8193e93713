/* libquietstat: the vectored process table (docs/library.md). Generated from crates/capi/src/lib.rs by cbindgen: do not edit. */

#ifndef QUIETSTAT_H
#define QUIETSTAT_H

#include <stddef.h>
#include <stdint.h>

// The ABI this library implements: `qs_options.abi` must carry it, and
// `qs_version()` returns it.
#define QS_ABI_VERSION 6

// Success.
#define QS_OK 0

// A NULL pointer where one is needed, or an argument out of its range.
#define QS_ERR_ARG -1

// The kernel could not be read (the message says what and why).
#define QS_ERR_READ -2

// A caller's array is too small; the length needed is given back.
#define QS_ERR_RANGE -3

// `qs_options.abi` is not this library's `QS_ABI_VERSION`.
#define QS_ERR_ABI -4

// A defect inside the library (a panic, caught).
#define QS_ERR_INTERNAL -5

// `qs_last_error_code`'s finer codes of a `QS_ERR_READ` (a call returns
// `QS_ERR_READ` itself): a file or directory that is not there (a root
// that does not exist).
#define QS_ERR_ABSENT -6

// Of a `QS_ERR_READ`: permission refused (another user's files, BPF
// without CAP_BPF).
#define QS_ERR_DENIED -7

// Of a `QS_ERR_READ`: a file whose text could not be parsed, or a record
// stream that does not decode.
#define QS_ERR_MALFORMED -8

// Of a `QS_ERR_READ`: the kernel refused a call (BPF, taskstats).
#define QS_ERR_KERNEL -9

// `qs_options.backend`: BPF where it loads, else /proc.
#define QS_BACKEND_AUTO 0

// The BPF task walk (root, or CAP_BPF with CAP_PERFMON), or fail.
#define QS_BACKEND_BPF 1

// /proc, read with kept-open descriptors.
#define QS_BACKEND_PROCFS 2

// `qs_served_by`: the last read came from the handle's own backend.
#define QS_SERVED_SELF 0

// `qs_served_by`: the last read came from the running agent's table.
#define QS_SERVED_AGENT 1

// An open process table: its backend, loaded once, and the last error.
typedef struct qs_handle qs_handle;

// How a handle is opened. Zeroed members take their defaults.
typedef struct qs_options {
  // `QS_ABI_VERSION`, as the caller's header has it.
  uint32_t abi;
  // `QS_BACKEND_AUTO`, `QS_BACKEND_BPF` or `QS_BACKEND_PROCFS`.
  uint32_t backend;
  // The proc root to read (NULL: /proc). BPF reads the running kernel,
  // so another root means /proc's backend.
  const char *proc_root;
  // The sys root (NULL: /sys).
  const char *sys_root;
  // Threads a read is split between: 0 or 1, the calling thread alone
  // (no other CPU is woken); up to 15, helpers on the CPUs the caller
  // may run on but its own, which finish a large table sooner for the
  // same CPU time.
  uint32_t threads;
  // Serve `qs_pids_read` and `qs_snapshot*` from a running agent's
  // table (no read of the kernel) when it has the fields asked and is
  // fresh enough, else read as without it: NULL, never; "", the
  // agent's default snapshot (/run/quietstat/snapshot); else the path of
  // its snapshot (`shm_path`). `qs_pid_start_times` always reads the
  // kernel: a table seconds old cannot tell a reused PID.
  const char *agent;
  // How old the agent's table may be, in milliseconds; 0: the agent's
  // process interval plus a second (the agent is asked for a new table
  // when its last one is older).
  uint32_t agent_max_age_ms;
} qs_options;

// `qs_fields` bits: which fields a record holds. pid, tgid and the start
// time (the identity) are in every record.
typedef uint32_t qs_fields;

// One process, a fixed-size record. `fields` says which members hold
// values; the others are zero.
typedef struct qs_proc {
  int32_t pid;
  int32_t tgid;
  int32_t ppid;
  // One of `RSDTtXZPI`, as /proc shows it.
  char state;
  // The `qs_fields` this record holds.
  qs_fields fields;
  // Start time since boot in clock ticks, as /proc/PID/stat field 22.
  uint64_t start_ticks;
  // The same in nanoseconds (exact from BPF; tick resolution from /proc).
  uint64_t start_ns;
  // CPU time, process-wide with dead threads, nanoseconds.
  uint64_t utime_ns;
  uint64_t stime_ns;
  uint64_t minflt;
  uint64_t majflt;
  uint64_t rss_bytes;
  uint64_t vsize_bytes;
  // cgroup v2 id (its directory's inode number).
  uint64_t cgroup_id;
  // /proc/PID/io: bytes through read and write calls, those calls, and
  // bytes from and to storage.
  uint64_t rchar;
  uint64_t wchar;
  uint64_t syscr;
  uint64_t syscw;
  uint64_t read_bytes;
  uint64_t write_bytes;
  // Voluntary and involuntary context switches (the leader thread's).
  uint64_t voluntary_ctxsw;
  uint64_t involuntary_ctxsw;
  // Time waiting on a run queue for a CPU (ns) and times given one (the
  // leader thread's, as /proc/PID/schedstat).
  uint64_t run_delay_ns;
  uint64_t timeslices;
  // Payload bytes the process's TCP sockets received and sent (BPF
  // only).
  uint64_t net_rx_bytes;
  uint64_t net_tx_bytes;
  // The task's own delays by cause, from the kernel's delay accounting
  // (kernel.task_delayacct; from /proc through taskstats, with
  // CAP_NET_ADMIN): block I/O, swap-in, direct
  // reclaim, thrashing, compaction, copy-on-write, IRQs.
  uint64_t blkio_delay_ns;
  uint64_t swapin_delay_ns;
  uint64_t reclaim_delay_ns;
  uint64_t thrashing_delay_ns;
  uint64_t compact_delay_ns;
  uint64_t wpcopy_delay_ns;
  uint64_t irq_delay_ns;
  // Time GPU engines were busy with the process's clients (ns, summed
  // over engines) and the GPU memory they hold resident (bytes), from
  // DRM fdinfo and NVIDIA's library (docs/proctable.md).
  uint64_t gpu_busy_ns;
  uint64_t gpu_mem_bytes;
  uint32_t num_threads;
  int32_t nice;
  int32_t priority;
  uint32_t policy;
  uint32_t rt_priority;
  // CPU last run on.
  uint32_t cpu;
  // Effective user id.
  uint32_t uid;
  int32_t oom_score_adj;
  // GPU clients (opens of a GPU's device) the process is charged with.
  uint32_t gpu_clients;
  // The task name, NUL-terminated.
  char comm[64];
} qs_proc;

#define QS_FIELD_PPID (1 << 2)

#define QS_FIELD_COMM (1 << 3)

#define QS_FIELD_STATE (1 << 4)

#define QS_FIELD_START (1 << 5)

#define QS_FIELD_UTIME (1 << 6)

#define QS_FIELD_STIME (1 << 7)

#define QS_FIELD_MINFLT (1 << 8)

#define QS_FIELD_MAJFLT (1 << 9)

#define QS_FIELD_THREADS (1 << 10)

#define QS_FIELD_RSS (1 << 11)

#define QS_FIELD_VSIZE (1 << 12)

#define QS_FIELD_NICE (1 << 13)

#define QS_FIELD_PRIORITY (1 << 14)

#define QS_FIELD_POLICY (1 << 15)

#define QS_FIELD_CPU (1 << 16)

#define QS_FIELD_CGROUP (1 << 17)

#define QS_FIELD_IO (1 << 18)

#define QS_FIELD_CTXSW (1 << 19)

#define QS_FIELD_UID (1 << 20)

#define QS_FIELD_OOM (1 << 22)

#define QS_FIELD_DELAY (1 << 23)

#define QS_FIELD_NET (1 << 24)

#define QS_FIELD_DELAYACCT (1 << 25)

#define QS_FIELD_GPU (1 << 26)

// Every field /proc/PID/stat has (ppid to cpu).
#define QS_FIELDS_STAT 131068

// Every field above.
#define QS_FIELDS_ALL 132120572

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// The library's ABI version (`QS_ABI_VERSION`).
uint32_t qs_version(void);

// Opens a process table: loads the BPF walk and the PID lookup once (with
// `QS_BACKEND_AUTO`, /proc when BPF is not allowed; `qs_backend_note`
// says why). NULL
// options take the defaults. Returns NULL on failure: `qs_last_error(NULL)`
// says why, on the calling thread.
//
// # Safety
// `opts` is NULL or points to a `qs_options` whose strings are NULL or
// NUL-terminated.
struct qs_handle *qs_open(const struct qs_options *opts);

// Closes a handle (NULL is ignored).
//
// # Safety
// `h` is NULL or a handle from `qs_open`, not used again.
void qs_close(struct qs_handle *h);

// The backend in use: `QS_BACKEND_BPF` or `QS_BACKEND_PROCFS`;
// `QS_ERR_ARG` for NULL.
//
// # Safety
// `h` is NULL or an open handle.
int32_t qs_backend(struct qs_handle *h);

// Why `QS_BACKEND_AUTO` took /proc rather than BPF, and why
// `qs_pid_start_times` walks the table on BPF rather than looking each PID
// up (a kernel before 6.13); "" when neither. Valid until the handle is
// closed.
//
// # Safety
// `h` is NULL or an open handle.
const char *qs_backend_note(const struct qs_handle *h);

// Who served the handle's last `qs_pids_read` or `qs_snapshot*`:
// `QS_SERVED_AGENT` (the running agent's table) or `QS_SERVED_SELF` (the
// handle's own read; also before any); `QS_ERR_ARG` for NULL.
//
// # Safety
// `h` is NULL or an open handle.
int32_t qs_served_by(struct qs_handle *h);

// Why the handle's last read was not served from the agent though
// `qs_options.agent` asked for it (no agent running, its table too old,
// a field it does not read); "" when it was, or when not asked. Valid
// until the next call on the handle.
//
// # Safety
// `h` is NULL or an open handle.
const char *qs_agent_note(const struct qs_handle *h);

// What the handle's last failed call was about; with NULL, why the
// calling thread's last `qs_open` failed. Valid until the next call on
// the handle (or the next `qs_open` on the thread).
//
// # Safety
// `h` is NULL or an open handle.
const char *qs_last_error(const struct qs_handle *h);

// The code of the last failure on `h` (`QS_OK` when none yet): the code
// the call returned, or for a `QS_ERR_READ` the finer one that says what
// kind of failure it was (`QS_ERR_ABSENT`, `QS_ERR_DENIED`,
// `QS_ERR_MALFORMED`, `QS_ERR_KERNEL`; `QS_ERR_READ` for any other).
// With NULL, the calling thread's last `qs_open`'s (`QS_OK` when it
// opened).
//
// # Safety
// `h` is NULL or an open handle.
int32_t qs_last_error_code(const struct qs_handle *h);

// The vectored call: the start time of each of `n` PIDs, in clock ticks
// since boot (/proc/PID/stat field 22), into `out[i]`; 0 for a PID that
// names no process or thread. On BPF one program run looks every PID up
// in the kernel (a kernel before 6.13: one walk of the table, where a
// thread's id gives 0); on /proc, each PID's stat file is read.
//
// # Safety
// `pids` and `out` point to `n` values each (or are NULL with `n` 0).
int32_t qs_pid_start_times(struct qs_handle *h, const int32_t *pids, size_t n, uint64_t *out);

// The fields of `mask` for each of `n` PIDs, into `out[i]` in the order
// asked; a PID that is no process gets a zeroed record (pid 0).
//
// # Safety
// `pids` and `out` point to `n` values each (or are NULL with `n` 0).
int32_t qs_pids_read(struct qs_handle *h,
                     const int32_t *pids,
                     size_t n,
                     qs_fields mask,
                     struct qs_proc *out);

// Every process, with the fields of `mask`, into an array the library
// allocates: `*out` and `*n` on success; free it with `qs_table_free`.
//
// # Safety
// `out` and `n` point to writable locations.
int32_t qs_snapshot(struct qs_handle *h, qs_fields mask, struct qs_proc **out, size_t *n);

// Every process, with the fields of `mask`, into the caller's array of
// `cap` records; `*n` is set to the count. When `cap` is too small,
// nothing is written but `*n`, the count needed, and `QS_ERR_RANGE` is
// returned.
//
// # Safety
// `out` points to `cap` writable records (or is NULL with `cap` 0), `n`
// to a writable location.
int32_t qs_snapshot_into(struct qs_handle *h,
                         qs_fields mask,
                         struct qs_proc *out,
                         size_t cap,
                         size_t *n);

// Frees an array from `qs_snapshot` (NULL is ignored).
//
// # Safety
// `table` and `n` are what one `qs_snapshot` gave, freed once.
void qs_table_free(struct qs_proc *table, size_t n);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* QUIETSTAT_H */
