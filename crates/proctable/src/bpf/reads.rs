//! What the BPF programs read from the kernel for each group of fields
//! (`bpf/task.h`, `bpf/walk.bpf.c`), and which cache lines that costs a
//! process on the running kernel: the per-field breakdown of the walk's
//! memory traffic. The table describes the C code beside it; a test checks
//! that every member it names is read there and exists in this kernel.

use std::collections::BTreeSet;

use super::btf_types::KernelTypes;
use crate::fields::Field;
use crate::record::{
    QS_CFG_CGROUP, QS_CFG_COMM, QS_CFG_CPUTIME, QS_CFG_DELAY, QS_CFG_DELAYACCT, QS_CFG_EXEC,
    QS_CFG_FAULTS, QS_CFG_IO, QS_CFG_MM, QS_CFG_OOM, QS_CFG_PARENT, QS_CFG_PRIO, QS_CFG_STATE,
    QS_CFG_UID,
};

/// A kernel structure the walk reads, reached from the process's
/// `task_struct`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Struct {
    Task,
    /// The parent's `task_struct` (shared by siblings).
    Parent,
    Signal,
    Mm,
    /// `cred` (shared by a user's processes).
    Cred,
    /// `css_set`, `cgroup`, `kernfs_node` (shared by a cgroup's processes).
    CssSet,
    Cgroup,
    KernfsNode,
    /// `task_delay_info` (the task's own).
    Delays,
}

impl Struct {
    /// The C name of the structure.
    pub fn c_name(self) -> &'static str {
        match self {
            Struct::Task | Struct::Parent => "task_struct",
            Struct::Signal => "signal_struct",
            Struct::Mm => "mm_struct",
            Struct::Cred => "cred",
            Struct::CssSet => "css_set",
            Struct::Cgroup => "cgroup",
            Struct::KernfsNode => "kernfs_node",
            Struct::Delays => "task_delay_info",
        }
    }

    /// How the report names it: the parent's task apart from the task.
    pub fn label(self) -> &'static str {
        match self {
            Struct::Parent => "parent task_struct",
            s => s.c_name(),
        }
    }
}

/// One group of reads: its `qs_config` flag (0: always read), and the
/// members, each in its structure.
pub struct Group {
    pub flag: u32,
    pub name: &'static str,
    pub reads: &'static [(Struct, &'static str)],
}

use Struct::*;

/// Every group, in the order the report lists them. Reads that happen
/// only in rare cases (a task's `exit_state` once it is exiting; the dead
/// threads' sums in `signal_struct` once its `stats_lock` has moved; a
/// group's thread list) are in [`RARE`], not here.
pub const GROUPS: &[Group] = &[
    Group {
        flag: 0,
        name: "always: list link, identity, threads, context switches",
        reads: &[
            (Task, "tasks"),
            (Task, "pid"),
            (Task, "tgid"),
            (Task, "start_boottime"),
            (Task, "nvcsw"),
            (Task, "nivcsw"),
            (Task, "signal"),
            (Signal, "nr_threads"),
        ],
    },
    Group {
        flag: QS_CFG_PARENT as u32,
        name: "ppid",
        reads: &[(Task, "real_parent"), (Parent, "tgid")],
    },
    Group {
        flag: QS_CFG_COMM as u32,
        name: "comm",
        reads: &[(Task, "comm")],
    },
    Group {
        flag: QS_CFG_STATE as u32,
        name: "state, cpu",
        reads: &[
            (Task, "__state"),
            (Task, "flags"),
            (Task, "thread_info.cpu"),
        ],
    },
    Group {
        flag: QS_CFG_PRIO as u32,
        name: "nice, priority, policy",
        reads: &[
            (Task, "prio"),
            (Task, "static_prio"),
            (Task, "policy"),
            (Task, "rt_priority"),
        ],
    },
    Group {
        flag: QS_CFG_CPUTIME as u32,
        name: "utime, stime",
        reads: &[
            (Task, "utime"),
            (Task, "stime"),
            (Task, "se.sum_exec_runtime"),
            (Signal, "stats_lock"),
            (Signal, "prev_cputime.utime"),
            (Signal, "prev_cputime.stime"),
        ],
    },
    Group {
        flag: QS_CFG_FAULTS as u32,
        name: "minflt, majflt",
        reads: &[(Task, "min_flt"), (Task, "maj_flt"), (Signal, "stats_lock")],
    },
    Group {
        flag: QS_CFG_MM as u32,
        name: "rss, vsize",
        reads: &[
            (Task, "mm"),
            (Mm, "total_vm"),
            (Mm, "rss_stat[0].count"),
            (Mm, "rss_stat[1].count"),
            (Mm, "rss_stat[3].count"),
        ],
    },
    Group {
        flag: QS_CFG_CGROUP as u32,
        name: "cgroup",
        reads: &[
            (Task, "cgroups"),
            (CssSet, "dfl_cgrp"),
            (Cgroup, "kn"),
            (KernfsNode, "id"),
        ],
    },
    Group {
        flag: QS_CFG_IO as u32,
        name: "io",
        reads: &[(Task, "ioac")],
    },
    Group {
        flag: QS_CFG_UID as u32,
        name: "uid",
        reads: &[(Task, "cred"), (Cred, "euid")],
    },
    Group {
        flag: QS_CFG_EXEC as u32,
        name: "cmdline (exec count and name; the text from /proc once per program)",
        reads: &[(Task, "self_exec_id")],
    },
    Group {
        flag: QS_CFG_OOM as u32,
        name: "oom",
        reads: &[(Signal, "oom_score_adj")],
    },
    Group {
        flag: QS_CFG_DELAY as u32,
        name: "delay",
        reads: &[(Task, "sched_info.run_delay"), (Task, "sched_info.pcount")],
    },
    Group {
        flag: QS_CFG_DELAYACCT as u32,
        name: "delayacct",
        reads: &[
            (Task, "delays"),
            (Delays, "blkio_delay"),
            (Delays, "swapin_delay"),
            (Delays, "freepages_delay"),
            (Delays, "thrashing_delay"),
            (Delays, "compact_delay"),
            (Delays, "wpcopy_delay"),
            (Delays, "irq_delay"),
        ],
    },
];

/// Reads made only in rare cases, with the case.
pub const RARE: &[(&str, &[(Struct, &str)])] = &[
    (
        "a name cut at 15 bytes or a worker's (comm): is it a kernel thread's, longer in /proc",
        &[(Task, "flags"), (Task, "worker_private")],
    ),
    ("a task that is exiting (state)", &[(Task, "exit_state")]),
    (
        "a process that lost a thread or reaped a child (utime, stime, faults, io)",
        &[
            (Signal, "utime"),
            (Signal, "stime"),
            (Signal, "sum_sched_runtime"),
            (Signal, "min_flt"),
            (Signal, "maj_flt"),
            (Signal, "ioac"),
        ],
    ),
    (
        "each further thread of a process (utime, stime, faults, io)",
        &[(Signal, "thread_head"), (Task, "thread_node")],
    ),
];

/// One group's cache lines on this kernel.
#[derive(Debug, Clone)]
pub struct GroupLines {
    pub name: &'static str,
    pub flag: u32,
    /// The fields that ask for this group (see [`group_lines`]).
    pub fields: Vec<Field>,
    /// (structure, 64-byte line index) they touch, the always-read ones
    /// included.
    pub lines: BTreeSet<(Struct, u64)>,
    /// Those not already touched by the always-read group.
    pub extra: BTreeSet<(Struct, u64)>,
}

impl GroupLines {
    /// Extra lines per structure, as "task_struct 2, mm_struct 3".
    pub fn extra_by_struct(&self) -> Vec<(Struct, usize)> {
        let mut out: Vec<(Struct, usize)> = Vec::new();
        for (s, _) in &self.extra {
            match out.last_mut() {
                Some((last, n)) if last == s => *n += 1,
                _ => out.push((*s, 1)),
            }
        }
        out
    }
}

/// The 64-byte lines `reads` touch in this kernel's layout.
pub fn lines_of(
    types: &KernelTypes,
    reads: &[(Struct, &str)],
) -> Result<BTreeSet<(Struct, u64)>, sys::Error> {
    let mut out = BTreeSet::new();
    for &(s, path) in reads {
        let p = types.place(s.c_name(), path)?;
        let last = p.offset + p.size.max(1) - 1;
        for line in p.offset / 64..=last / 64 {
            out.insert((s, line));
        }
    }
    Ok(out)
}

/// Every group's lines on the kernel `types` describes: for each group, the
/// fields that read it (those that read it alone; for a group no field
/// reads alone, those that read it among others), and the lines of
/// everything those fields read, beyond the always-read ones.
pub fn group_lines(types: &KernelTypes) -> Result<Vec<GroupLines>, sys::Error> {
    let always = lines_of(types, GROUPS[0].reads)?;
    let alone = |f: Field| super::read_flags(crate::Fields::NONE.with(f));
    GROUPS
        .iter()
        .map(|g| {
            let mut fields: Vec<Field> = Vec::new();
            for (f, _) in super::READ_GROUPS {
                if alone(*f) == g.flag && !fields.contains(f) {
                    fields.push(*f);
                }
            }
            if fields.is_empty() && g.flag != 0 {
                for (f, _) in super::READ_GROUPS {
                    if alone(*f) & g.flag != 0 && !fields.contains(f) {
                        fields.push(*f);
                    }
                }
            }
            let flags = fields.iter().fold(0, |m, &f| m | alone(f));
            let reads: Vec<(Struct, &str)> = GROUPS
                .iter()
                .filter(|h| h.flag == 0 || flags & h.flag != 0)
                .flat_map(|h| h.reads.iter().copied())
                .collect();
            let lines = lines_of(types, &reads)?;
            let extra = if g.flag == 0 {
                lines.clone()
            } else {
                lines.difference(&always).copied().collect()
            };
            Ok(GroupLines {
                name: g.name,
                flag: g.flag,
                fields,
                lines,
                extra,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C the table describes.
    const SOURCES: &str = concat!(
        include_str!("../../bpf/task.h"),
        include_str!("../../bpf/walk.bpf.c")
    );

    #[test]
    fn every_member_named_is_read_by_the_programs() {
        let all = GROUPS
            .iter()
            .flat_map(|g| g.reads.iter())
            .chain(RARE.iter().flat_map(|(_, r)| r.iter()));
        for (s, path) in all {
            // The last member of the path, as the C writes it after `->`
            // or `.`; an index as the C's constant names it.
            let last = path.rsplit('.').next().unwrap();
            let member = last.split('[').next().unwrap();
            assert!(
                SOURCES.contains(&format!("->{member}"))
                    || SOURCES.contains(&format!(".{member}"))
                    || SOURCES.contains(&format!("{member}, thread_node"))
                    || SOURCES.contains(&format!("struct task_struct, {member}")),
                "{s:?}.{path}: not read in task.h or walk.bpf.c"
            );
        }
    }

    #[test]
    fn every_group_flag_is_one_the_fields_ask_for() {
        for g in &GROUPS[1..] {
            assert!(
                super::super::READ_GROUPS.iter().any(|(_, f)| *f == g.flag),
                "{}",
                g.name
            );
        }
        for (f, flag) in super::super::READ_GROUPS {
            assert!(GROUPS.iter().any(|g| g.flag == *flag), "{f:?}");
        }
    }

    /// On the running kernel every member resolves, and each group costs
    /// at least one line beyond the always-read ones but for those that
    /// share them.
    #[test]
    fn every_member_is_in_this_kernel() {
        let types = KernelTypes::running().expect("this kernel has BTF");
        let groups = group_lines(&types).unwrap();
        for (_, reads) in RARE {
            lines_of(&types, reads).unwrap();
        }
        let mm = groups.iter().find(|g| g.name == "rss, vsize").unwrap();
        // The mm pointer's line and at least one line of mm_struct.
        assert!(mm.extra.iter().any(|(s, _)| *s == Struct::Mm), "{mm:?}");
        assert!(mm.extra.iter().any(|(s, _)| *s == Struct::Task), "{mm:?}");
        assert!(groups[0].lines.len() >= 3, "{:?}", groups[0]);
        // Each group is measured with the fields that read it and nothing
        // else they would not; a command line reads the name too.
        let by_flag = |flag| groups.iter().find(|g| g.flag == flag).unwrap();
        let comm = by_flag(crate::record::QS_CFG_COMM as u32);
        let exec = by_flag(crate::record::QS_CFG_EXEC as u32);
        assert_eq!(comm.fields, [Field::Comm]);
        assert_eq!(exec.fields, [Field::Cmdline]);
        assert!(exec.extra.is_superset(&comm.extra), "{exec:?}");
        assert!(exec.extra.len() > comm.extra.len(), "{exec:?}");
        let faults = by_flag(crate::record::QS_CFG_FAULTS as u32);
        assert_eq!(faults.fields, [Field::Minflt, Field::Majflt]);
    }
}
