//! The metric table, defined once, and its encoding from the agent's state.
//!
//! Every family node_exporter also exports keeps node_exporter's name,
//! labels, units and type, so dashboards work unchanged; the rest are
//! `quietstat_*`. [`FAMILIES`] lists them all (docs/metrics.md is checked
//! against it by a test); a family name containing `*` stands for one family
//! per kernel key (`node_memory_MemTotal_bytes`, `node_vmstat_pgfault`).
//!
//! Encoding goes through prometheus-client's OpenMetrics encoder; the classic
//! text format (0.0.4) is derived from it by [`to_text_format`].

use std::fmt::Write as _;

use agent::config::{AgentSource, ProcessMetrics, SortKey};
use std::sync::Arc;

use agent::config::Config;
use agent::{ProcessMetricsMode, SelfUsage, Shared, State};
use model::columns::{self, Column};
use model::process::{self, Group, GroupBy, Rank};
use model::units::{
    boot_ticks_to_unix_secs, ms_to_secs, ns_to_secs, sectors_to_bytes, ticks_to_secs, us_to_secs,
};
use procfs::pressure::Resource;
use procfs::stat::{CpuMode, CpuTimes};
use procfs::{Source, SystemSample};
use proctable::Proc;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    /// `untyped` in the text format (node_exporter's vmstat values).
    Unknown,
}

#[derive(Debug, Clone, Copy)]
pub struct Family {
    pub name: &'static str,
    pub kind: Kind,
    pub labels: &'static [&'static str],
    /// The agent source it comes from (`agent` for the agent's own figures).
    pub source: &'static str,
    pub help: &'static str,
}

/// Declares each family as a static (the encoders name it by that static,
/// so a family that is not declared does not compile) and [`FAMILIES`],
/// all of them in order.
macro_rules! families {
    ($( $id:ident $name:literal $kind:ident [$($l:literal),*] $src:literal $help:literal; )*) => {
        $( pub static $id: Family = Family {
            name: $name,
            kind: Kind::$kind,
            labels: &[$($l),*],
            source: $src,
            help: $help,
        }; )*
        pub static FAMILIES: &[&Family] = &[$( &$id, )*];
    };
}

families! {
    NODE_CPU_SECONDS_TOTAL "node_cpu_seconds_total" Counter ["cpu", "mode"] "stat" "Seconds the CPUs spent in each mode.";
    NODE_CPU_GUEST_SECONDS_TOTAL "node_cpu_guest_seconds_total" Counter ["cpu", "mode"] "stat" "Seconds the CPUs spent in guests (VMs) for each mode.";
    NODE_INTR_TOTAL "node_intr_total" Counter [] "stat" "Total number of interrupts serviced.";
    NODE_CONTEXT_SWITCHES_TOTAL "node_context_switches_total" Counter [] "stat" "Total number of context switches.";
    NODE_FORKS_TOTAL "node_forks_total" Counter [] "stat" "Total number of forks.";
    NODE_BOOT_TIME_SECONDS "node_boot_time_seconds" Gauge [] "stat" "Node boot time, in unixtime.";
    NODE_PROCS_RUNNING "node_procs_running" Gauge [] "stat" "Number of processes in runnable state.";
    NODE_PROCS_BLOCKED "node_procs_blocked" Gauge [] "stat" "Number of processes blocked waiting for I/O to complete.";
    NODE_SOFTIRQS_TOTAL "node_softirqs_total" Counter ["vector"] "stat" "Number of softirq calls.";
    NODE_LOAD1 "node_load1" Gauge [] "loadavg" "1m load average.";
    NODE_LOAD5 "node_load5" Gauge [] "loadavg" "5m load average.";
    NODE_LOAD15 "node_load15" Gauge [] "loadavg" "15m load average.";
    NODE_MEMORY_BYTES "node_memory_*_bytes" Gauge [] "meminfo" "Memory information field (bytes; lines in kB in /proc/meminfo).";
    NODE_MEMORY_HUGEPAGES "node_memory_HugePages_*" Gauge [] "meminfo" "Memory information field (a count of huge pages).";
    NODE_VMSTAT "node_vmstat_*" Unknown [] "vmstat" "/proc/vmstat information field (node_exporter's default set: oom_kill, pgpg*, pswp*, pg*fault*).";
    NODE_PRESSURE_CPU_WAITING_SECONDS_TOTAL "node_pressure_cpu_waiting_seconds_total" Counter [] "pressure_cpu" "Total time in seconds that processes have waited for CPU time";
    NODE_PRESSURE_MEMORY_WAITING_SECONDS_TOTAL "node_pressure_memory_waiting_seconds_total" Counter [] "pressure_memory" "Total time in seconds that processes have waited for memory";
    NODE_PRESSURE_MEMORY_STALLED_SECONDS_TOTAL "node_pressure_memory_stalled_seconds_total" Counter [] "pressure_memory" "Total time in seconds no process could make progress due to memory congestion";
    NODE_PRESSURE_IO_WAITING_SECONDS_TOTAL "node_pressure_io_waiting_seconds_total" Counter [] "pressure_io" "Total time in seconds that processes have waited due to IO congestion";
    NODE_PRESSURE_IO_STALLED_SECONDS_TOTAL "node_pressure_io_stalled_seconds_total" Counter [] "pressure_io" "Total time in seconds no process could make progress due to IO congestion";
    NODE_PRESSURE_IRQ_STALLED_SECONDS_TOTAL "node_pressure_irq_stalled_seconds_total" Counter [] "pressure_irq" "Total time in seconds no process could make progress due to IRQ congestion";
    NODE_DISK_READS_COMPLETED_TOTAL "node_disk_reads_completed_total" Counter ["device"] "diskstats" "The total number of reads completed successfully.";
    NODE_DISK_READS_MERGED_TOTAL "node_disk_reads_merged_total" Counter ["device"] "diskstats" "The total number of reads merged.";
    NODE_DISK_READ_BYTES_TOTAL "node_disk_read_bytes_total" Counter ["device"] "diskstats" "The total number of bytes read successfully.";
    NODE_DISK_READ_TIME_SECONDS_TOTAL "node_disk_read_time_seconds_total" Counter ["device"] "diskstats" "The total number of seconds spent by all reads.";
    NODE_DISK_WRITES_COMPLETED_TOTAL "node_disk_writes_completed_total" Counter ["device"] "diskstats" "The total number of writes completed successfully.";
    NODE_DISK_WRITES_MERGED_TOTAL "node_disk_writes_merged_total" Counter ["device"] "diskstats" "The number of writes merged.";
    NODE_DISK_WRITTEN_BYTES_TOTAL "node_disk_written_bytes_total" Counter ["device"] "diskstats" "The total number of bytes written successfully.";
    NODE_DISK_WRITE_TIME_SECONDS_TOTAL "node_disk_write_time_seconds_total" Counter ["device"] "diskstats" "This is the total number of seconds spent by all writes.";
    NODE_DISK_IO_NOW "node_disk_io_now" Gauge ["device"] "diskstats" "The number of I/Os currently in progress.";
    NODE_DISK_IO_TIME_SECONDS_TOTAL "node_disk_io_time_seconds_total" Counter ["device"] "diskstats" "Total seconds spent doing I/Os.";
    NODE_DISK_IO_TIME_WEIGHTED_SECONDS_TOTAL "node_disk_io_time_weighted_seconds_total" Counter ["device"] "diskstats" "The weighted # of seconds spent doing I/Os.";
    NODE_DISK_DISCARDS_COMPLETED_TOTAL "node_disk_discards_completed_total" Counter ["device"] "diskstats" "The total number of discards completed successfully.";
    NODE_DISK_DISCARDS_MERGED_TOTAL "node_disk_discards_merged_total" Counter ["device"] "diskstats" "The total number of discards merged.";
    NODE_DISK_DISCARDED_SECTORS_TOTAL "node_disk_discarded_sectors_total" Counter ["device"] "diskstats" "The total number of sectors discarded successfully.";
    NODE_DISK_DISCARD_TIME_SECONDS_TOTAL "node_disk_discard_time_seconds_total" Counter ["device"] "diskstats" "This is the total number of seconds spent by all discards.";
    NODE_DISK_FLUSH_REQUESTS_TOTAL "node_disk_flush_requests_total" Counter ["device"] "diskstats" "The total number of flush requests completed successfully";
    NODE_DISK_FLUSH_REQUESTS_TIME_SECONDS_TOTAL "node_disk_flush_requests_time_seconds_total" Counter ["device"] "diskstats" "This is the total number of seconds spent by all flush requests.";
    NODE_NETWORK_RECEIVE_TOTAL "node_network_receive_*_total" Counter ["device"] "net_dev" "Network device statistic receive_* (bytes, packets, errs, drop, fifo, frame, compressed, multicast).";
    NODE_NETWORK_TRANSMIT_TOTAL "node_network_transmit_*_total" Counter ["device"] "net_dev" "Network device statistic transmit_* (bytes, packets, errs, drop, fifo, colls, carrier, compressed).";
    NODE_INTERRUPTS_TOTAL "node_interrupts_total" Counter ["cpu", "devices", "info", "type"] "interrupts" "Interrupt details.";
    NODE_SCHEDSTAT_RUNNING_SECONDS_TOTAL "node_schedstat_running_seconds_total" Counter ["cpu"] "schedstat" "Number of seconds CPU spent running a process.";
    NODE_SCHEDSTAT_WAITING_SECONDS_TOTAL "node_schedstat_waiting_seconds_total" Counter ["cpu"] "schedstat" "Number of seconds spent by processing waiting for this CPU.";
    NODE_SCHEDSTAT_TIMESLICES_TOTAL "node_schedstat_timeslices_total" Counter ["cpu"] "schedstat" "Number of timeslices executed by CPU.";
    QUIETSTAT_INTERRUPTS_UNSPLIT_TOTAL "quietstat_interrupts_unsplit_total" Counter ["type"] "interrupts" "Interrupt counters /proc/interrupts prints without a per-CPU split (ERR, MIS).";
    QUIETSTAT_SOFTIRQS_CPU_TOTAL "quietstat_softirqs_cpu_total" Counter ["cpu", "vector"] "softirqs" "Softirqs raised per CPU and vector, from /proc/softirqs.";
    QUIETSTAT_PROCESSES "quietstat_processes" Gauge [] "processes" "Processes in the latest process table.";
    QUIETSTAT_PROCESS_THREADS_ALL "quietstat_process_threads_all" Gauge [] "processes" "Threads of all processes in the latest process table.";
    QUIETSTAT_PROCESS_EXITS_TOTAL "quietstat_process_exits_total" Counter [] "processes" "Processes whose exit was captured with final counters.";
    QUIETSTAT_PROCESS_EXITS_LOST_TOTAL "quietstat_process_exits_lost_total" Counter [] "processes" "Exit records dropped: BPF ring buffer full, or taskstats receive-buffer overflows (each at least one record).";
    QUIETSTAT_PROCESS_CPU_SECONDS_TOTAL "quietstat_process_cpu_seconds_total" Counter ["pid", "comm", "mode"] "processes" "CPU time of a selected process, user or system.";
    QUIETSTAT_PROCESS_RESIDENT_MEMORY_BYTES "quietstat_process_resident_memory_bytes" Gauge ["pid", "comm"] "processes" "Resident set size of a selected process.";
    QUIETSTAT_PROCESS_VIRTUAL_MEMORY_BYTES "quietstat_process_virtual_memory_bytes" Gauge ["pid", "comm"] "processes" "Virtual memory size of a selected process.";
    QUIETSTAT_PROCESS_MAJOR_FAULTS_TOTAL "quietstat_process_major_faults_total" Counter ["pid", "comm"] "processes" "Major page faults of a selected process.";
    QUIETSTAT_PROCESS_MINOR_FAULTS_TOTAL "quietstat_process_minor_faults_total" Counter ["pid", "comm"] "processes" "Minor page faults of a selected process.";
    QUIETSTAT_PROCESS_THREADS "quietstat_process_threads" Gauge ["pid", "comm"] "processes" "Threads of a selected process.";
    QUIETSTAT_PROCESS_START_TIME_SECONDS "quietstat_process_start_time_seconds" Gauge ["pid", "comm"] "processes" "Start time of a selected process, in unixtime.";
    QUIETSTAT_PROCESS_GROUP_PROCESSES "quietstat_process_group_processes" Gauge ["groupname"] "processes" "Processes with this comm.";
    QUIETSTAT_PROCESS_GROUP_THREADS "quietstat_process_group_threads" Gauge ["groupname"] "processes" "Threads of the processes with this comm.";
    QUIETSTAT_PROCESS_GROUP_CPU_SECONDS_TOTAL "quietstat_process_group_cpu_seconds_total" Counter ["groupname", "mode"] "processes" "CPU time of the live processes with this comm (falls when one exits).";
    QUIETSTAT_PROCESS_GROUP_RESIDENT_MEMORY_BYTES "quietstat_process_group_resident_memory_bytes" Gauge ["groupname"] "processes" "Resident set size of the processes with this comm.";
    QUIETSTAT_PROCESS_GROUP_MAJOR_FAULTS_TOTAL "quietstat_process_group_major_faults_total" Counter ["groupname"] "processes" "Major page faults of the live processes with this comm.";
    QUIETSTAT_SOURCE_READS_TOTAL "quietstat_source_reads_total" Counter ["source"] "agent" "Kernel reads of a source.";
    QUIETSTAT_SOURCE_DEMAND_READS_TOTAL "quietstat_source_demand_reads_total" Counter ["source"] "agent" "Kernel reads of a source a consumer asked for (max age), beyond the schedule.";
    QUIETSTAT_SOURCE_READ_SECONDS_TOTAL "quietstat_source_read_seconds_total" Counter ["source"] "agent" "Time in the read system calls of a source (the whole snapshot for processes).";
    QUIETSTAT_SOURCE_PARSE_SECONDS_TOTAL "quietstat_source_parse_seconds_total" Counter ["source"] "agent" "Time parsing a source.";
    QUIETSTAT_SOURCE_READ_BYTES_TOTAL "quietstat_source_read_bytes_total" Counter ["source"] "agent" "Bytes read from a source.";
    QUIETSTAT_SOURCE_LAST_COST_SECONDS "quietstat_source_last_cost_seconds" Gauge ["source"] "agent" "Read plus parse time of the last read of a source.";
    QUIETSTAT_SOURCE_INTERVAL_SECONDS "quietstat_source_interval_seconds" Gauge ["source"] "agent" "Interval in force (longer than configured while over the overhead budget).";
    QUIETSTAT_SOURCE_CONFIGURED_INTERVAL_SECONDS "quietstat_source_configured_interval_seconds" Gauge ["source"] "agent" "Interval configured.";
    QUIETSTAT_SOURCE_AGE_SECONDS "quietstat_source_age_seconds" Gauge ["source"] "agent" "Age of the data served for a source.";
    QUIETSTAT_SOURCE_UP "quietstat_source_up" Gauge ["source"] "agent" "1 when the last read of a source succeeded.";
    QUIETSTAT_AGENT_CPU_SECONDS_TOTAL "quietstat_agent_cpu_seconds_total" Counter ["mode"] "agent" "CPU time of the agent, all threads, user or system.";
    QUIETSTAT_AGENT_CONTEXT_SWITCHES_TOTAL "quietstat_agent_context_switches_total" Counter ["kind"] "agent" "Context switches of all agent threads (each one a wakeup or preemption).";
    QUIETSTAT_AGENT_SAMPLING_WAKEUPS_TOTAL "quietstat_agent_sampling_wakeups_total" Counter [] "agent" "Wakeups of the sampler that read the kernel.";
    QUIETSTAT_AGENT_RESIDENT_MEMORY_BYTES "quietstat_agent_resident_memory_bytes" Gauge [] "agent" "Resident set size of the agent.";
    QUIETSTAT_AGENT_THREADS "quietstat_agent_threads" Gauge [] "agent" "Threads of the agent.";
    QUIETSTAT_AGENT_START_TIME_SECONDS "quietstat_agent_start_time_seconds" Gauge [] "agent" "When the agent started, in unixtime.";
    QUIETSTAT_AGENT_INFO "quietstat_agent_info" Gauge ["version", "backend"] "agent" "Always 1: the agent's version and process-table backend.";
}

/// The catalog entry for `name` (a concrete name matches its `*` pattern).
pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES
        .iter()
        .copied()
        .find(|f| match f.name.split_once('*') {
            None => f.name == name,
            Some((pre, post)) => {
                name.len() > pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post)
            }
        })
}

type Fmt = Result<(), std::fmt::Error>;

struct Out<'a> {
    enc: DescriptorEncoder<'a>,
}

/// A family being encoded, with its catalog type (looked up once).
struct Fam<'s> {
    m: MetricEncoder<'s>,
    kind: Kind,
}

impl<'s> std::ops::Deref for Fam<'s> {
    type Target = MetricEncoder<'s>;
    fn deref(&self) -> &Self::Target {
        &self.m
    }
}

impl std::ops::DerefMut for Fam<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.m
    }
}

impl Out<'_> {
    /// Starts family `name`; counters are named without `_total` for the
    /// encoder, which appends it.
    fn family<'s>(&'s mut self, f: &'static Family) -> Result<Fam<'s>, std::fmt::Error> {
        debug_assert!(!f.name.contains('*'), "{} needs its key", f.name);
        self.start(f, f.name, f.help)
    }

    /// Starts one family of a per-key family `f` (`node_memory_*_bytes`):
    /// its name is `f`'s with `key` for the `*`.
    fn family_of<'s>(
        &'s mut self,
        f: &'static Family,
        key: &str,
        name: &'s mut String,
    ) -> Result<Fam<'s>, std::fmt::Error> {
        let (pre, post) = f.name.split_once('*').ok_or(std::fmt::Error)?;
        name.clear();
        name.push_str(pre);
        name.push_str(key);
        name.push_str(post);
        // node_exporter's wording for per-key families.
        let help = match f.source {
            "meminfo" => "Memory information field.",
            "vmstat" => "/proc/vmstat information field.",
            _ => "Network device statistic.",
        };
        self.start(f, name, help)
    }

    fn start<'s>(
        &'s mut self,
        f: &'static Family,
        name: &'s str,
        help: &'s str,
    ) -> Result<Fam<'s>, std::fmt::Error> {
        let (n, t) = match f.kind {
            Kind::Counter => (
                name.strip_suffix("_total").ok_or(std::fmt::Error)?,
                MetricType::Counter,
            ),
            Kind::Gauge => (name, MetricType::Gauge),
            Kind::Unknown => (name, MetricType::Unknown),
        };
        Ok(Fam {
            m: self.enc.encode_descriptor(n, help, None, t)?,
            kind: f.kind,
        })
    }
}

fn counter(m: &mut MetricEncoder<'_>, v: f64) -> Fmt {
    m.encode_counter::<NoLabelSet, f64, f64>(&v, None)
}

fn counter_l(m: &mut MetricEncoder<'_>, labels: &impl EncodeLabelSet, v: f64) -> Fmt {
    m.encode_family(labels)?
        .encode_counter::<NoLabelSet, f64, f64>(&v, None)
}

fn gauge_l(m: &mut MetricEncoder<'_>, labels: &impl EncodeLabelSet, v: f64) -> Fmt {
    m.encode_family(labels)?.encode_gauge(&v)
}

/// A labelled sample, as the family's catalog type says.
fn sample_l(m: &mut Fam<'_>, labels: &impl EncodeLabelSet, v: f64) -> Fmt {
    match m.kind {
        Kind::Counter => counter_l(m, labels, v),
        _ => gauge_l(m, labels, v),
    }
}

/// A family with one unlabelled sample.
fn one(out: &mut Out<'_>, f: &'static Family, v: f64) -> Fmt {
    let mut m = out.family(f)?;
    match m.kind {
        Kind::Counter => counter(&mut m, v),
        _ => m.encode_gauge(&v),
    }
}

/// node_exporter's names for /proc/stat's softirq columns.
const SOFTIRQ_VECTORS: [&str; 10] = [
    "hi",
    "timer",
    "net_tx",
    "net_rx",
    "block",
    "block_iopoll",
    "tasklet",
    "sched",
    "hrtimer",
    "rcu",
];

/// node_exporter's default `--collector.diskstats.device-exclude`:
/// `^(ram|loop|fd|(h|s|v|xv)d[a-z]|nvme\d+n\d+p)\d+$` (partitions and
/// pseudo-devices), matched by hand.
pub fn disk_excluded(name: &str) -> bool {
    let Some(digits_at) = name.rfind(|c: char| !c.is_ascii_digit()).map(|i| i + 1) else {
        return false;
    };
    if digits_at == name.len() {
        return false;
    }
    let stem = &name[..digits_at];
    if matches!(stem, "ram" | "loop" | "fd") {
        return true;
    }
    let b = stem.as_bytes();
    let letter_disk = |prefix: &str| {
        stem.len() == prefix.len() + 1
            && stem.starts_with(prefix)
            && b[b.len() - 1].is_ascii_lowercase()
    };
    if ["hd", "sd", "vd", "xvd"].into_iter().any(letter_disk) {
        return true;
    }
    // nvme<digits>n<digits>p
    if let Some(rest) = stem.strip_prefix("nvme").and_then(|r| r.strip_suffix('p')) {
        if let Some((a, b)) = rest.split_once('n') {
            return !a.is_empty()
                && !b.is_empty()
                && a.bytes().all(|c| c.is_ascii_digit())
                && b.bytes().all(|c| c.is_ascii_digit());
        }
    }
    false
}

/// node_exporter's default `--collector.vmstat.fields`:
/// `^(oom_kill|pgpg|pswp|pg.*fault).*`.
pub fn vmstat_exported(name: &str) -> bool {
    name.starts_with("oom_kill")
        || name.starts_with("pgpg")
        || name.starts_with("pswp")
        || (name.starts_with("pg") && name[2..].contains("fault"))
}

/// node_exporter's meminfo family for a key (`HugePages_*` are counts, the
/// rest bytes) and the part of its name that stands for the key:
/// `Active(anon)` -> `Active_anon`.
fn meminfo_family(key: &str, part: &mut String) -> &'static Family {
    part.clear();
    match key.strip_prefix("HugePages_") {
        Some(rest) => {
            part.push_str(rest);
            &NODE_MEMORY_HUGEPAGES
        }
        None => {
            part.extend(key.chars().filter(|&c| c != ')').map(|c| match c {
                '(' => '_',
                c => c,
            }));
            &NODE_MEMORY_BYTES
        }
    }
}

/// node_exporter's `mode`s: every column but the two guest ones, which
/// user and nice already include (they go to node_cpu_guest_seconds_total).
fn cpu_modes(t: &CpuTimes) -> impl Iterator<Item = (&'static str, u64)> + '_ {
    CpuMode::ALL
        .into_iter()
        .filter(|m| !matches!(m, CpuMode::Guest | CpuMode::GuestNice))
        .filter_map(|m| Some((m.name(), t.ticks(m)?)))
}

fn system(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    if s.ok(Source::Stat) {
        let st = &s.stat;
        let mut m = out.family(&NODE_CPU_SECONDS_TOTAL)?;
        for c in &st.cpus {
            let cpu = c.cpu.to_string();
            for (mode, ticks) in cpu_modes(&c.times) {
                counter_l(
                    &mut m,
                    &[("cpu", cpu.as_str()), ("mode", mode)],
                    ticks_to_secs(ticks),
                )?;
            }
        }
        let mut m = out.family(&NODE_CPU_GUEST_SECONDS_TOTAL)?;
        for c in &st.cpus {
            let cpu = c.cpu.to_string();
            for (mode, m2) in [("user", CpuMode::Guest), ("nice", CpuMode::GuestNice)] {
                if let Some(t) = c.times.ticks(m2) {
                    counter_l(
                        &mut m,
                        &[("cpu", cpu.as_str()), ("mode", mode)],
                        ticks_to_secs(t),
                    )?;
                }
            }
        }
        one(out, &NODE_INTR_TOTAL, st.intr_total as f64)?;
        one(out, &NODE_CONTEXT_SWITCHES_TOTAL, st.ctxt as f64)?;
        one(out, &NODE_FORKS_TOTAL, st.processes as f64)?;
        one(out, &NODE_BOOT_TIME_SECONDS, st.btime_secs as f64)?;
        if let Some(r) = st.procs_running {
            one(out, &NODE_PROCS_RUNNING, r as f64)?;
        }
        if let Some(b) = st.procs_blocked {
            one(out, &NODE_PROCS_BLOCKED, b as f64)?;
        }
        if !st.softirq_counts.is_empty() {
            let mut m = out.family(&NODE_SOFTIRQS_TOTAL)?;
            for (v, n) in SOFTIRQ_VECTORS.iter().zip(&st.softirq_counts) {
                counter_l(&mut m, &[("vector", *v)], *n as f64)?;
            }
        }
    }
    if s.ok(Source::Loadavg) {
        one(out, &NODE_LOAD1, s.loadavg.load1)?;
        one(out, &NODE_LOAD5, s.loadavg.load5)?;
        one(out, &NODE_LOAD15, s.loadavg.load15)?;
    }
    if s.ok(Source::Meminfo) {
        let (mut part, mut name) = (String::new(), String::new());
        for (k, v) in s.meminfo.all().iter() {
            let f = meminfo_family(k, &mut part);
            let mut m = out.family_of(f, &part, &mut name)?;
            m.encode_gauge(&(v as f64))?;
        }
    }
    if s.ok(Source::Vmstat) {
        let mut name = String::new();
        for (k, v) in s.vmstat.all().iter().filter(|(k, _)| vmstat_exported(k)) {
            let mut m = out.family_of(&NODE_VMSTAT, k, &mut name)?;
            m.encode_gauge(&(v as f64))?;
        }
    }
    for (r, waiting, stalled) in [
        (
            Resource::Cpu,
            Some(&NODE_PRESSURE_CPU_WAITING_SECONDS_TOTAL),
            None,
        ),
        (
            Resource::Memory,
            Some(&NODE_PRESSURE_MEMORY_WAITING_SECONDS_TOTAL),
            Some(&NODE_PRESSURE_MEMORY_STALLED_SECONDS_TOTAL),
        ),
        (
            Resource::Io,
            Some(&NODE_PRESSURE_IO_WAITING_SECONDS_TOTAL),
            Some(&NODE_PRESSURE_IO_STALLED_SECONDS_TOTAL),
        ),
        (
            Resource::Irq,
            None,
            Some(&NODE_PRESSURE_IRQ_STALLED_SECONDS_TOTAL),
        ),
    ] {
        let Some(p) = s.pressure(r) else { continue };
        if let (Some(n), Some(l)) = (waiting, p.some) {
            one(out, n, us_to_secs(l.total_usec))?;
        }
        if let (Some(n), Some(l)) = (stalled, p.full) {
            one(out, n, us_to_secs(l.total_usec))?;
        }
    }
    if s.ok(Source::Diskstats) {
        disks(out, s)?;
    }
    if s.ok(Source::NetDev) {
        net(out, s)?;
    }
    if s.ok(Source::Interrupts) {
        let t = &s.interrupts;
        let cpus: Vec<String> = t.cpus().iter().map(u32::to_string).collect();
        let per_cpu =
            |r: &procfs::Row<'_>| r.counts.len() >= cpus.len() && !r.description.is_empty();
        let mut m = out.family(&NODE_INTERRUPTS_TOTAL)?;
        for row in t.rows().filter(per_cpu) {
            // node_exporter: for a numbered IRQ, `info` is the chip (first
            // word after the counts) and `devices` the rest; for a named one
            // (NMI, LOC) `info` is the whole description.
            let mut words = row.description.split_whitespace();
            let numbered = row.label.bytes().all(|b| b.is_ascii_digit());
            let (info, devices) = if numbered {
                let info = words.next().unwrap_or("").to_string();
                (info, words.collect::<Vec<_>>().join(" "))
            } else {
                (words.collect::<Vec<_>>().join(" "), String::new())
            };
            for (cpu, n) in cpus.iter().zip(row.counts) {
                counter_l(
                    &mut m,
                    &[
                        ("cpu", cpu.as_str()),
                        ("devices", devices.as_str()),
                        ("info", info.as_str()),
                        ("type", row.label),
                    ],
                    *n as f64,
                )?;
            }
        }
    }
    if s.ok(Source::Interrupts)
        && s.interrupts
            .rows()
            .any(|r| r.counts.len() < s.interrupts.cpus().len() || r.description.is_empty())
    {
        // ERR and MIS: one system-wide count, no description; node_exporter
        // drops them.
        let mut m = out.family(&QUIETSTAT_INTERRUPTS_UNSPLIT_TOTAL)?;
        for row in s.interrupts.rows() {
            if row.counts.len() < s.interrupts.cpus().len() || row.description.is_empty() {
                counter_l(&mut m, &[("type", row.label)], row.total as f64)?;
            }
        }
    }
    if s.ok(Source::Softirqs) {
        let t = &s.softirqs;
        let cpus: Vec<String> = t.cpus().iter().map(u32::to_string).collect();
        let mut m = out.family(&QUIETSTAT_SOFTIRQS_CPU_TOTAL)?;
        for row in t.rows() {
            let vector = row.label.to_ascii_lowercase();
            for (cpu, n) in cpus.iter().zip(row.counts) {
                counter_l(
                    &mut m,
                    &[("cpu", cpu.as_str()), ("vector", vector.as_str())],
                    *n as f64,
                )?;
            }
        }
    }
    if s.ok(Source::Schedstat) {
        for (name, f) in [
            (&NODE_SCHEDSTAT_RUNNING_SECONDS_TOTAL, 0),
            (&NODE_SCHEDSTAT_WAITING_SECONDS_TOTAL, 1),
            (&NODE_SCHEDSTAT_TIMESLICES_TOTAL, 2),
        ] {
            let mut m = out.family(name)?;
            for c in &s.schedstat.cpus {
                let v = match f {
                    0 => ns_to_secs(c.running_ns),
                    1 => ns_to_secs(c.waiting_ns),
                    _ => c.timeslices as f64,
                };
                counter_l(&mut m, &[("cpu", c.cpu.to_string().as_str())], v)?;
            }
        }
    }
    Ok(())
}

fn disks(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    use procfs::diskstats::DiskStat;
    type Get = fn(&DiskStat) -> Option<f64>;
    let fields: [(&Family, Get); 17] = [
        (&NODE_DISK_READS_COMPLETED_TOTAL, |d| {
            Some(d.reads_completed as f64)
        }),
        (&NODE_DISK_READS_MERGED_TOTAL, |d| {
            Some(d.reads_merged as f64)
        }),
        (&NODE_DISK_READ_BYTES_TOTAL, |d| {
            Some(sectors_to_bytes(d.read_sectors) as f64)
        }),
        (&NODE_DISK_READ_TIME_SECONDS_TOTAL, |d| {
            Some(ms_to_secs(d.read_time_ms))
        }),
        (&NODE_DISK_WRITES_COMPLETED_TOTAL, |d| {
            Some(d.writes_completed as f64)
        }),
        (&NODE_DISK_WRITES_MERGED_TOTAL, |d| {
            Some(d.writes_merged as f64)
        }),
        (&NODE_DISK_WRITTEN_BYTES_TOTAL, |d| {
            Some(sectors_to_bytes(d.write_sectors) as f64)
        }),
        (&NODE_DISK_WRITE_TIME_SECONDS_TOTAL, |d| {
            Some(ms_to_secs(d.write_time_ms))
        }),
        (&NODE_DISK_IO_NOW, |d| Some(d.io_in_progress as f64)),
        (&NODE_DISK_IO_TIME_SECONDS_TOTAL, |d| {
            Some(ms_to_secs(d.io_time_ms))
        }),
        (&NODE_DISK_IO_TIME_WEIGHTED_SECONDS_TOTAL, |d| {
            Some(ms_to_secs(d.io_weighted_time_ms))
        }),
        (&NODE_DISK_DISCARDS_COMPLETED_TOTAL, |d| {
            d.discards_completed.map(|v| v as f64)
        }),
        (&NODE_DISK_DISCARDS_MERGED_TOTAL, |d| {
            d.discards_merged.map(|v| v as f64)
        }),
        (&NODE_DISK_DISCARDED_SECTORS_TOTAL, |d| {
            d.discard_sectors.map(|v| v as f64)
        }),
        (&NODE_DISK_DISCARD_TIME_SECONDS_TOTAL, |d| {
            d.discard_time_ms.map(ms_to_secs)
        }),
        (&NODE_DISK_FLUSH_REQUESTS_TOTAL, |d| {
            d.flushes_completed.map(|v| v as f64)
        }),
        (&NODE_DISK_FLUSH_REQUESTS_TIME_SECONDS_TOTAL, |d| {
            d.flush_time_ms.map(ms_to_secs)
        }),
    ];
    let disks: Vec<(String, &DiskStat)> = s
        .diskstats
        .iter()
        .map(|d| (d.name.to_string(), d))
        .filter(|(n, _)| !disk_excluded(n))
        .collect();
    for (name, get) in fields {
        if disks.iter().all(|(_, d)| get(d).is_none()) {
            continue;
        }
        let mut m = out.family(name)?;
        for (dev, d) in &disks {
            if let Some(v) = get(d) {
                sample_l(&mut m, &[("device", dev.as_str())], v)?;
            }
        }
    }
    Ok(())
}

fn net(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    use procfs::net_dev::NetDev;
    type Get = fn(&NetDev) -> u64;
    let fields: [(&Family, &str, Get); 16] = [
        (&NODE_NETWORK_RECEIVE_TOTAL, "bytes", |d| d.rx_bytes),
        (&NODE_NETWORK_RECEIVE_TOTAL, "packets", |d| d.rx_packets),
        (&NODE_NETWORK_RECEIVE_TOTAL, "errs", |d| d.rx_errs),
        (&NODE_NETWORK_RECEIVE_TOTAL, "drop", |d| d.rx_drop),
        (&NODE_NETWORK_RECEIVE_TOTAL, "fifo", |d| d.rx_fifo),
        (&NODE_NETWORK_RECEIVE_TOTAL, "frame", |d| d.rx_frame),
        (&NODE_NETWORK_RECEIVE_TOTAL, "compressed", |d| {
            d.rx_compressed
        }),
        (&NODE_NETWORK_RECEIVE_TOTAL, "multicast", |d| d.rx_multicast),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "bytes", |d| d.tx_bytes),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "packets", |d| d.tx_packets),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "errs", |d| d.tx_errs),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "drop", |d| d.tx_drop),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "fifo", |d| d.tx_fifo),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "colls", |d| d.tx_colls),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "carrier", |d| d.tx_carrier),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "compressed", |d| {
            d.tx_compressed
        }),
    ];
    let devs: Vec<(String, &NetDev)> = s.net_dev.iter().map(|d| (d.name.to_string(), d)).collect();
    let mut name = String::new();
    for (f, key, get) in fields {
        let mut m = out.family_of(f, key, &mut name)?;
        for (dev, d) in &devs {
            counter_l(&mut m, &[("device", dev.as_str())], get(d) as f64)?;
        }
    }
    Ok(())
}

/// The processes `pm` selects: by name or cgroup, or the top N.
fn selected<'a>(st: &'a State, pm: &ProcessMetrics) -> Vec<&'a Proc> {
    match pm.mode {
        ProcessMetricsMode::Off | ProcessMetricsMode::Group => Vec::new(),
        ProcessMetricsMode::Filter => st
            .procs
            .iter()
            .filter(|p| {
                pm.names.iter().any(|n| n.as_bytes() == p.comm.as_bytes())
                    || (st.cgroup_filter_id.is_some() && p.cgroup_id == st.cgroup_filter_id)
            })
            .collect(),
        ProcessMetricsMode::Top => {
            let rank = match pm.sort_by {
                SortKey::Cpu => Rank::CpuPct,
                SortKey::Rss => Rank::Column(&columns::RSS_BYTES),
                SortKey::Majflt => Rank::Column(&columns::MAJFLT),
                SortKey::Threads => Rank::Column(&columns::THREADS),
            };
            process::top(&st.procs_prev, &st.procs, st.procs_secs, rank, pm.top_n)
        }
    }
}

fn processes(out: &mut Out<'_>, st: &State, pm: &ProcessMetrics) -> Fmt {
    if !st.stats[AgentSource::Processes.index()].scheduled {
        return Ok(());
    }
    one(out, &QUIETSTAT_PROCESSES, st.procs.len() as f64)?;
    let threads: u64 = st.procs.iter().map(|p| p.num_threads as u64).sum();
    one(out, &QUIETSTAT_PROCESS_THREADS_ALL, threads as f64)?;
    if st.exits.capture.is_some() {
        one(
            out,
            &QUIETSTAT_PROCESS_EXITS_TOTAL,
            st.exits.captured as f64,
        )?;
        one(
            out,
            &QUIETSTAT_PROCESS_EXITS_LOST_TOTAL,
            st.exits.lost as f64,
        )?;
    }
    let btime = st.sample.stat.btime_secs;
    let sel = selected(st, pm);
    if !sel.is_empty() {
        let ids: Vec<(String, String)> = sel
            .iter()
            .map(|p| (p.pid.to_string(), p.comm.to_string_lossy().into_owned()))
            .collect();
        let l = |i: usize| [("pid", ids[i].0.as_str()), ("comm", ids[i].1.as_str())];
        let mut m = out.family(&QUIETSTAT_PROCESS_CPU_SECONDS_TOTAL)?;
        for (i, p) in sel.iter().enumerate() {
            let [a, b] = l(i);
            counter_l(&mut m, &[a, b, ("mode", "user")], ns_to_secs(p.utime_ns))?;
            counter_l(&mut m, &[a, b, ("mode", "system")], ns_to_secs(p.stime_ns))?;
        }
        // Each family's value is its process field's, as `ps` shows it.
        let fields: [(&Family, &Column); 5] = [
            (
                &QUIETSTAT_PROCESS_RESIDENT_MEMORY_BYTES,
                &columns::RSS_BYTES,
            ),
            (
                &QUIETSTAT_PROCESS_VIRTUAL_MEMORY_BYTES,
                &columns::VSIZE_BYTES,
            ),
            (&QUIETSTAT_PROCESS_MAJOR_FAULTS_TOTAL, &columns::MAJFLT),
            (&QUIETSTAT_PROCESS_MINOR_FAULTS_TOTAL, &columns::MINFLT),
            (&QUIETSTAT_PROCESS_THREADS, &columns::THREADS),
        ];
        for (f, col) in fields {
            let mut m = out.family(f)?;
            for (i, p) in sel.iter().enumerate() {
                sample_l(&mut m, &l(i), col.number(p).unwrap_or(0.0))?;
            }
        }
        let mut m = out.family(&QUIETSTAT_PROCESS_START_TIME_SECONDS)?;
        for (i, p) in sel.iter().enumerate() {
            let t = boot_ticks_to_unix_secs(btime, p.start_ticks);
            gauge_l(&mut m, &l(i), t)?;
        }
    }
    if pm.mode == ProcessMetricsMode::Group {
        let groups = process::groups(&st.procs, GroupBy::Comm);
        type Get = fn(&Group) -> f64;
        let gauges: [(&Family, Get); 4] = [
            (&QUIETSTAT_PROCESS_GROUP_PROCESSES, |g| g.processes as f64),
            (&QUIETSTAT_PROCESS_GROUP_THREADS, |g| g.threads as f64),
            (&QUIETSTAT_PROCESS_GROUP_RESIDENT_MEMORY_BYTES, |g| {
                g.rss_bytes as f64
            }),
            (&QUIETSTAT_PROCESS_GROUP_MAJOR_FAULTS_TOTAL, |g| {
                g.majflt as f64
            }),
        ];
        for (f, get) in gauges {
            let mut m = out.family(f)?;
            for (name, g) in &groups {
                sample_l(&mut m, &[("groupname", name.as_str())], get(g))?;
            }
        }
        let mut m = out.family(&QUIETSTAT_PROCESS_GROUP_CPU_SECONDS_TOTAL)?;
        for (name, g) in &groups {
            for (mode, ns) in [("user", g.utime_ns), ("system", g.stime_ns)] {
                counter_l(
                    &mut m,
                    &[("groupname", name.as_str()), ("mode", mode)],
                    ns_to_secs(ns),
                )?;
            }
        }
    }
    Ok(())
}

fn agent_figures(out: &mut Out<'_>, st: &State, ctx: &Context) -> Fmt {
    let now = sys::mono_ns();
    let srcs: Vec<AgentSource> = AgentSource::ALL
        .into_iter()
        .filter(|s| st.stats[s.index()].scheduled)
        .collect();
    type Get = fn(&State, &Context, AgentSource, u64) -> f64;
    let fields: [(&Family, Get); 10] = [
        (&QUIETSTAT_SOURCE_READS_TOTAL, |st, _, s, _| {
            st.stats[s.index()].reads as f64
        }),
        (&QUIETSTAT_SOURCE_DEMAND_READS_TOTAL, |st, _, s, _| {
            st.stats[s.index()].demand_reads as f64
        }),
        (&QUIETSTAT_SOURCE_READ_SECONDS_TOTAL, |st, _, s, _| {
            ns_to_secs(st.stats[s.index()].read_ns)
        }),
        (&QUIETSTAT_SOURCE_PARSE_SECONDS_TOTAL, |st, _, s, _| {
            ns_to_secs(st.stats[s.index()].parse_ns)
        }),
        (&QUIETSTAT_SOURCE_READ_BYTES_TOTAL, |st, _, s, _| {
            st.stats[s.index()].bytes as f64
        }),
        (&QUIETSTAT_SOURCE_LAST_COST_SECONDS, |st, _, s, _| {
            ns_to_secs(st.stats[s.index()].last_cost_ns)
        }),
        (&QUIETSTAT_SOURCE_INTERVAL_SECONDS, |st, _, s, _| {
            st.stats[s.index()].interval.as_secs_f64()
        }),
        (
            &QUIETSTAT_SOURCE_CONFIGURED_INTERVAL_SECONDS,
            |_, ctx, s, _| ctx.config.source(s).interval.as_secs_f64(),
        ),
        (&QUIETSTAT_SOURCE_AGE_SECONDS, |st, _, s, now| {
            ns_to_secs(now.saturating_sub(st.read_mono_ns[s.index()]))
        }),
        (&QUIETSTAT_SOURCE_UP, |st, _, s, _| {
            let ok = match s {
                AgentSource::System(src) => st.sample.ok(src),
                AgentSource::Processes => st.procs_status == procfs::SourceStatus::Ok,
            };
            if ok { 1.0 } else { 0.0 }
        }),
    ];
    for (name, get) in fields {
        let mut m = out.family(name)?;
        for &s in &srcs {
            sample_l(&mut m, &[("source", s.key())], get(st, ctx, s, now))?;
        }
    }
    let u = &ctx.usage;
    let mut m = out.family(&QUIETSTAT_AGENT_CPU_SECONDS_TOTAL)?;
    counter_l(&mut m, &[("mode", "user")], ns_to_secs(u.user_ns))?;
    counter_l(&mut m, &[("mode", "system")], ns_to_secs(u.system_ns))?;
    let mut m = out.family(&QUIETSTAT_AGENT_CONTEXT_SWITCHES_TOTAL)?;
    counter_l(&mut m, &[("kind", "voluntary")], u.voluntary_ctxsw as f64)?;
    counter_l(
        &mut m,
        &[("kind", "involuntary")],
        u.involuntary_ctxsw as f64,
    )?;
    one(
        out,
        &QUIETSTAT_AGENT_SAMPLING_WAKEUPS_TOTAL,
        st.sampling_wakeups as f64,
    )?;
    one(
        out,
        &QUIETSTAT_AGENT_RESIDENT_MEMORY_BYTES,
        u.rss_bytes as f64,
    )?;
    one(out, &QUIETSTAT_AGENT_THREADS, u.threads as f64)?;
    one(
        out,
        &QUIETSTAT_AGENT_START_TIME_SECONDS,
        ns_to_secs(ctx.started_unix_ns),
    )?;
    let mut m = out.family(&QUIETSTAT_AGENT_INFO)?;
    let backend = st.backend.map_or("none", |b| b.name());
    gauge_l(
        &mut m,
        &[("version", env!("CARGO_PKG_VERSION")), ("backend", backend)],
        1.0,
    )?;
    Ok(())
}

/// What an encoding needs besides the state.
pub struct Context {
    pub config: Arc<Config>,
    pub usage: SelfUsage,
    pub started_unix_ns: u64,
}

/// The prometheus-client collector: on each scrape it takes the state's read
/// lock and encodes the latest snapshots. It reads no kernel file itself
/// (the agent's own usage is one getrusage call and /proc/self/statm).
struct AgentCollector(Arc<Shared>);

impl std::fmt::Debug for AgentCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentCollector")
    }
}

impl Collector for AgentCollector {
    fn encode(&self, enc: DescriptorEncoder) -> Fmt {
        let ctx = Context {
            config: self.0.config(),
            usage: agent::self_usage(),
            started_unix_ns: self.0.started_unix_ns,
        };
        let st = self.0.state.read().unwrap_or_else(|e| e.into_inner());
        encode_state(enc, &st, &ctx)
    }
}

/// A registry whose one collector serves the agent's state.
pub fn registry(shared: Arc<Shared>) -> Registry {
    let mut r = Registry::default();
    r.register_collector(Box::new(AgentCollector(shared)));
    r
}

/// Everything, as OpenMetrics text (ending in `# EOF`).
pub fn encode_openmetrics(registry: &Registry, w: &mut String) -> Fmt {
    prometheus_client::encoding::text::encode(w, registry)
}

fn encode_state(enc: DescriptorEncoder<'_>, st: &State, ctx: &Context) -> Fmt {
    let mut out = Out { enc };
    system(&mut out, &st.sample)?;
    processes(&mut out, st, &ctx.config.process_metrics)?;
    agent_figures(&mut out, st, ctx)
}

/// The classic text format (version 0.0.4) from OpenMetrics text: counter
/// families are named with `_total`, `unknown` becomes `untyped`, and the
/// `# UNIT` and `# EOF` lines go.
pub fn to_text_format(om: &str) -> String {
    let mut out = String::with_capacity(om.len());
    let mut pending_help: Option<&str> = None;
    for line in om.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            pending_help = Some(rest);
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, "untyped"));
            let (name, kind) = match kind {
                "counter" => (format!("{name}_total"), "counter"),
                "unknown" => (name.to_string(), "untyped"),
                "gauge" | "histogram" | "summary" => (name.to_string(), kind),
                _ => (name.to_string(), "untyped"),
            };
            if let Some(h) = pending_help.take() {
                let help = h.split_once(' ').map_or("", |(_, t)| t);
                let _ = writeln!(out, "# HELP {name} {help}");
            }
            let _ = writeln!(out, "# TYPE {name} {kind}");
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_exporter_disk_exclusions() {
        for d in [
            "loop0",
            "ram12",
            "sda1",
            "vda2",
            "xvdb3",
            "nvme0n1p2",
            "fd0",
        ] {
            assert!(disk_excluded(d), "{d}");
        }
        for d in ["sda", "vda", "nvme0n1", "zram0", "dm-0", "md127", "mmcblk0"] {
            assert!(!disk_excluded(d), "{d}");
        }
    }

    #[test]
    fn node_exporter_vmstat_fields() {
        for f in ["oom_kill", "pgpgin", "pswpout", "pgfault", "pgmajfault"] {
            assert!(vmstat_exported(f), "{f}");
        }
        for f in ["nr_free_pages", "pgfree", "workingset_refault_anon"] {
            assert!(!vmstat_exported(f), "{f}");
        }
    }

    #[test]
    fn meminfo_names_match_node_exporter() {
        let name = |key: &str| {
            let mut part = String::new();
            let f = meminfo_family(key, &mut part);
            f.name.replace('*', &part)
        };
        assert_eq!(name("Active(anon)"), "node_memory_Active_anon_bytes");
        assert_eq!(name("HugePages_Total"), "node_memory_HugePages_Total");
        assert_eq!(name("Hugepagesize"), "node_memory_Hugepagesize_bytes");
        assert!(family("node_memory_Active_anon_bytes").is_some());
        assert!(family("node_memory_HugePages_Total").is_some());
        assert!(family("node_vmstat_pgfault").is_some());
        assert!(family("node_bogus").is_none());
    }

    #[test]
    fn text_format_renames_counter_families() {
        let om = "# HELP node_forks Total number of forks.\n# TYPE node_forks counter\nnode_forks_total 5\n# HELP node_vmstat_pgfault x.\n# TYPE node_vmstat_pgfault unknown\nnode_vmstat_pgfault 3\n# EOF\n";
        assert_eq!(
            to_text_format(om),
            "# HELP node_forks_total Total number of forks.\n# TYPE node_forks_total counter\nnode_forks_total 5\n# HELP node_vmstat_pgfault x.\n# TYPE node_vmstat_pgfault untyped\nnode_vmstat_pgfault 3\n"
        );
    }

    #[test]
    fn every_family_name_carries_its_unit_and_type_suffix() {
        for f in FAMILIES {
            assert!(
                f.name.starts_with("node_") || f.name.starts_with("quietstat_"),
                "{}",
                f.name
            );
            assert_eq!(
                f.kind == Kind::Counter,
                f.name.ends_with("_total"),
                "{}",
                f.name
            );
        }
    }
}

#[cfg(test)]
mod doc_sync {
    use super::FAMILIES;

    /// docs/metrics.md lists exactly the families of [`FAMILIES`], each with
    /// its type and labels.
    #[test]
    fn docs_metrics_md_lists_every_family_and_no_other() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/metrics.md");
        let doc = std::fs::read_to_string(path).unwrap();
        // The families' table, before the process fields'.
        let doc = doc.split("\n## Process fields").next().unwrap();
        let rows: Vec<&str> = doc.lines().filter(|l| l.starts_with("| `")).collect();
        for f in FAMILIES {
            let kind = format!("{:?}", f.kind).to_lowercase();
            let labels = f.labels.join(", ");
            let row = rows
                .iter()
                .find(|r| r.starts_with(&format!("| `{}` |", f.name)))
                .unwrap_or_else(|| panic!("{} missing from docs/metrics.md", f.name));
            assert!(
                row.contains(&format!("| {kind} |")),
                "{}: type {kind}: {row}",
                f.name
            );
            assert!(
                row.contains(&format!("| {labels} |")),
                "{}: labels {labels}: {row}",
                f.name
            );
        }
        for r in &rows {
            let name = r.split('`').nth(1).unwrap();
            assert!(
                FAMILIES.iter().any(|f| f.name == name),
                "docs/metrics.md lists {name}, which is not exported"
            );
        }
    }

    /// Prints the table for docs/metrics.md: `cargo test -p exporter print_metrics_table -- --ignored --nocapture`.
    #[test]
    #[ignore = "a generator, not a check"]
    fn print_metrics_table() {
        println!("| family | type | labels | source | meaning |\n|---|---|---|---|---|");
        for f in FAMILIES {
            println!(
                "| `{}` | {} | {} | {} | {} |",
                f.name,
                format!("{:?}", f.kind).to_lowercase(),
                f.labels.join(", "),
                f.source,
                f.help
            );
        }
    }
}
