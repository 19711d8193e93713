//! Which fields a snapshot fills. A field that is not asked for is neither read
//! nor parsed where the backend can avoid it (the procfs backend opens
//! /proc/PID/status, io, cgroup and oom_score_adj only for the fields that
//! need them, but parses all of /proc/PID/stat once it reads it; the BPF
//! programs read each group of kernel members only when one of its fields
//! is asked, and leave the others zero).

use std::fmt;

macro_rules! fields {
    ($($variant:ident = $name:literal: $doc:literal,)*) => {
        /// One column of the process table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Field {
            $(#[doc = $doc] $variant,)*
        }

        impl Field {
            /// Parses a comma-separated list in its order, without repeats;
            /// `all` stands for every field.
            pub fn parse_list(list: &str) -> Result<Vec<Field>, UnknownField> {
                let mut out: Vec<Field> = Vec::new();
                for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                    let found: &[Field] = if word == "all" {
                        Field::ALL
                    } else {
                        let i = Field::ALL
                            .iter()
                            .position(|f| f.name() == word)
                            .ok_or_else(|| UnknownField(word.to_string()))?;
                        &Field::ALL[i..=i]
                    };
                    for f in found {
                        if !out.contains(f) {
                            out.push(*f);
                        }
                    }
                }
                Ok(out)
            }

            pub const ALL: &'static [Field] = &[$(Field::$variant,)*];

            pub fn name(self) -> &'static str {
                match self {
                    $(Field::$variant => $name,)*
                }
            }

            pub fn describe(self) -> &'static str {
                match self {
                    $(Field::$variant => $doc,)*
                }
            }
        }
    };
}

fields! {
    Pid = "pid": "process (or thread) id",
    Tgid = "tgid": "thread-group id (the process's PID)",
    Ppid = "ppid": "parent's PID",
    Comm = "comm": "task name",
    State = "state": "R S D T t X Z P I",
    Start = "start": "start time since boot (ns, and clock ticks as /proc shows)",
    Utime = "utime": "user CPU time, process-wide with dead threads",
    Stime = "stime": "system CPU time, process-wide with dead threads",
    Minflt = "minflt": "minor page faults",
    Majflt = "majflt": "major page faults",
    Threads = "threads": "number of threads",
    Rss = "rss": "resident set size (bytes)",
    Vsize = "vsize": "virtual memory size (bytes)",
    Nice = "nice": "nice value",
    Priority = "priority": "kernel priority as /proc shows it (prio - 100)",
    Policy = "policy": "scheduling policy and real-time priority",
    Cpu = "cpu": "CPU last run on",
    Cgroup = "cgroup": "cgroup v2 id",
    Io = "io": "I/O: bytes read and written, read/write syscalls",
    Ctxsw = "ctxsw": "voluntary and involuntary context switches (of the task itself)",
    Uid = "uid": "effective user id, as ps's USER (of the task itself)",
    Cmdline = "cmdline": "command line, arguments joined by spaces (first 4096 bytes; read once per program the process runs)",
    OomScoreAdj = "oom": "the OOM killer's adjustment, -1000 (never) to 1000",
    Delay = "delay": "time waiting on a run queue for a CPU, and times given one (of the task itself)",
    Net = "net": "payload bytes received and sent by the process's TCP sockets (BPF only)",
    DelayAcct = "delayacct": "time blocked on I/O, swap-in, reclaim, thrashing, compaction, copy-on-write and IRQs, by delay accounting (kernel.task_delayacct; of the task itself)",
    Gpu = "gpu": "GPU engines' busy time, GPU memory and clients, from DRM fdinfo and NVIDIA's library (of the process)",
}

/// A set of [`Field`]s.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Fields(u32);

impl Fields {
    pub const NONE: Fields = Fields(0);

    /// Every field.
    pub fn all() -> Fields {
        Field::ALL.iter().fold(Fields::NONE, |s, &f| s.with(f))
    }

    /// Every field the kernel gives in /proc/PID/stat (all but cgroup, I/O,
    /// context switches, uid, command line, OOM adjustment, run delay,
    /// network bytes, delay accounting and GPU).
    pub fn stat() -> Fields {
        Fields::all()
            .without(Field::Cgroup)
            .without(Field::Io)
            .without(Field::Ctxsw)
            .without(Field::Uid)
            .without(Field::Cmdline)
            .without(Field::OomScoreAdj)
            .without(Field::Delay)
            .without(Field::Net)
            .without(Field::DelayAcct)
            .without(Field::Gpu)
    }

    /// The set as bits, one per field in [`Field::ALL`]'s order.
    pub fn bits(self) -> u32 {
        self.0
    }

    /// The set from [`Fields::bits`]; bits past the known fields are dropped.
    pub fn from_bits(bits: u32) -> Fields {
        Fields(bits & Fields::all().0)
    }

    pub fn with(self, f: Field) -> Fields {
        Fields(self.0 | 1 << f as u32)
    }

    pub fn without(self, f: Field) -> Fields {
        Fields(self.0 & !(1 << f as u32))
    }

    pub fn has(self, f: Field) -> bool {
        self.0 & (1 << f as u32) != 0
    }

    /// True if any field of /proc/PID/stat is wanted.
    /// Whether /proc/PID/stat must be read: for its own fields, and for a
    /// command line (its start time and exec marker tell a cached one is
    /// still the process's).
    pub fn needs_stat(self) -> bool {
        self.0 & Fields::stat().with(Field::Cmdline).0 != 0
    }

    pub fn iter(self) -> impl Iterator<Item = Field> {
        Field::ALL.iter().copied().filter(move |&f| self.has(f))
    }

    /// Parses a comma-separated list such as `pid,comm,utime`; `all` names
    /// every field.
    pub fn parse(list: &str) -> Result<Fields, UnknownField> {
        Ok(Field::parse_list(list)?
            .into_iter()
            .fold(Fields::NONE, Fields::with))
    }
}

impl fmt::Debug for Fields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(Field::name))
            .finish()
    }
}

/// A field name that is not one of [`Field::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown field {0:?}; accepted: all, {list}", list = Field::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", "))]
pub struct UnknownField(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_lists() {
        let f = Fields::parse("pid, comm,utime").unwrap();
        assert!(f.has(Field::Pid) && f.has(Field::Comm) && f.has(Field::Utime));
        assert!(!f.has(Field::Io));
        assert_eq!(Fields::parse("all").unwrap(), Fields::all());
        let e = Fields::parse("pid,bogus").unwrap_err();
        assert!(e.to_string().contains("\"bogus\"") && e.to_string().contains("ctxsw"));
        assert!(!Fields::stat().has(Field::Io) && Fields::stat().has(Field::Rss));
    }
}
