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
use procfs::pressure::Resource;
use procfs::stat::{CpuMode, CpuTimes};
use procfs::{Source, SystemSample};
use proctable::{NS_PER_TICK, Proc};
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

macro_rules! families {
    ($( $name:literal $kind:ident [$($l:literal),*] $src:literal $help:literal; )*) => {
        pub static FAMILIES: &[Family] = &[$(Family {
            name: $name,
            kind: Kind::$kind,
            labels: &[$($l),*],
            source: $src,
            help: $help,
        },)*];
    };
}

families! {
    "node_cpu_seconds_total" Counter ["cpu", "mode"] "stat" "Seconds the CPUs spent in each mode.";
    "node_cpu_guest_seconds_total" Counter ["cpu", "mode"] "stat" "Seconds the CPUs spent in guests (VMs) for each mode.";
    "node_intr_total" Counter [] "stat" "Total number of interrupts serviced.";
    "node_context_switches_total" Counter [] "stat" "Total number of context switches.";
    "node_forks_total" Counter [] "stat" "Total number of forks.";
    "node_boot_time_seconds" Gauge [] "stat" "Node boot time, in unixtime.";
    "node_procs_running" Gauge [] "stat" "Number of processes in runnable state.";
    "node_procs_blocked" Gauge [] "stat" "Number of processes blocked waiting for I/O to complete.";
    "node_softirqs_total" Counter ["vector"] "stat" "Number of softirq calls.";
    "node_load1" Gauge [] "loadavg" "1m load average.";
    "node_load5" Gauge [] "loadavg" "5m load average.";
    "node_load15" Gauge [] "loadavg" "15m load average.";
    "node_memory_*_bytes" Gauge [] "meminfo" "Memory information field (bytes; lines in kB in /proc/meminfo).";
    "node_memory_HugePages_*" Gauge [] "meminfo" "Memory information field (a count of huge pages).";
    "node_vmstat_*" Unknown [] "vmstat" "/proc/vmstat information field (node_exporter's default set: oom_kill, pgpg*, pswp*, pg*fault*).";
    "node_pressure_cpu_waiting_seconds_total" Counter [] "pressure_cpu" "Total time in seconds that processes have waited for CPU time";
    "node_pressure_memory_waiting_seconds_total" Counter [] "pressure_memory" "Total time in seconds that processes have waited for memory";
    "node_pressure_memory_stalled_seconds_total" Counter [] "pressure_memory" "Total time in seconds no process could make progress due to memory congestion";
    "node_pressure_io_waiting_seconds_total" Counter [] "pressure_io" "Total time in seconds that processes have waited due to IO congestion";
    "node_pressure_io_stalled_seconds_total" Counter [] "pressure_io" "Total time in seconds no process could make progress due to IO congestion";
    "node_pressure_irq_stalled_seconds_total" Counter [] "pressure_irq" "Total time in seconds no process could make progress due to IRQ congestion";
    "node_disk_reads_completed_total" Counter ["device"] "diskstats" "The total number of reads completed successfully.";
    "node_disk_reads_merged_total" Counter ["device"] "diskstats" "The total number of reads merged.";
    "node_disk_read_bytes_total" Counter ["device"] "diskstats" "The total number of bytes read successfully.";
    "node_disk_read_time_seconds_total" Counter ["device"] "diskstats" "The total number of seconds spent by all reads.";
    "node_disk_writes_completed_total" Counter ["device"] "diskstats" "The total number of writes completed successfully.";
    "node_disk_writes_merged_total" Counter ["device"] "diskstats" "The number of writes merged.";
    "node_disk_written_bytes_total" Counter ["device"] "diskstats" "The total number of bytes written successfully.";
    "node_disk_write_time_seconds_total" Counter ["device"] "diskstats" "This is the total number of seconds spent by all writes.";
    "node_disk_io_now" Gauge ["device"] "diskstats" "The number of I/Os currently in progress.";
    "node_disk_io_time_seconds_total" Counter ["device"] "diskstats" "Total seconds spent doing I/Os.";
    "node_disk_io_time_weighted_seconds_total" Counter ["device"] "diskstats" "The weighted # of seconds spent doing I/Os.";
    "node_disk_discards_completed_total" Counter ["device"] "diskstats" "The total number of discards completed successfully.";
    "node_disk_discards_merged_total" Counter ["device"] "diskstats" "The total number of discards merged.";
    "node_disk_discarded_sectors_total" Counter ["device"] "diskstats" "The total number of sectors discarded successfully.";
    "node_disk_discard_time_seconds_total" Counter ["device"] "diskstats" "This is the total number of seconds spent by all discards.";
    "node_disk_flush_requests_total" Counter ["device"] "diskstats" "The total number of flush requests completed successfully";
    "node_disk_flush_requests_time_seconds_total" Counter ["device"] "diskstats" "This is the total number of seconds spent by all flush requests.";
    "node_network_receive_*_total" Counter ["device"] "net_dev" "Network device statistic receive_* (bytes, packets, errs, drop, fifo, frame, compressed, multicast).";
    "node_network_transmit_*_total" Counter ["device"] "net_dev" "Network device statistic transmit_* (bytes, packets, errs, drop, fifo, colls, carrier, compressed).";
    "node_interrupts_total" Counter ["cpu", "devices", "info", "type"] "interrupts" "Interrupt details.";
    "node_schedstat_running_seconds_total" Counter ["cpu"] "schedstat" "Number of seconds CPU spent running a process.";
    "node_schedstat_waiting_seconds_total" Counter ["cpu"] "schedstat" "Number of seconds spent by processing waiting for this CPU.";
    "node_schedstat_timeslices_total" Counter ["cpu"] "schedstat" "Number of timeslices executed by CPU.";
    "quietstat_interrupts_unsplit_total" Counter ["type"] "interrupts" "Interrupt counters /proc/interrupts prints without a per-CPU split (ERR, MIS).";
    "quietstat_softirqs_cpu_total" Counter ["cpu", "vector"] "softirqs" "Softirqs raised per CPU and vector, from /proc/softirqs.";
    "quietstat_processes" Gauge [] "processes" "Processes in the latest process table.";
    "quietstat_process_threads_all" Gauge [] "processes" "Threads of all processes in the latest process table.";
    "quietstat_process_exits_total" Counter [] "processes" "Processes whose exit was captured with final counters.";
    "quietstat_process_exits_lost_total" Counter [] "processes" "Exit records dropped: BPF ring buffer full, or taskstats receive-buffer overflows (each at least one record).";
    "quietstat_process_cpu_seconds_total" Counter ["pid", "comm", "mode"] "processes" "CPU time of a selected process, user or system.";
    "quietstat_process_resident_memory_bytes" Gauge ["pid", "comm"] "processes" "Resident set size of a selected process.";
    "quietstat_process_virtual_memory_bytes" Gauge ["pid", "comm"] "processes" "Virtual memory size of a selected process.";
    "quietstat_process_major_faults_total" Counter ["pid", "comm"] "processes" "Major page faults of a selected process.";
    "quietstat_process_minor_faults_total" Counter ["pid", "comm"] "processes" "Minor page faults of a selected process.";
    "quietstat_process_threads" Gauge ["pid", "comm"] "processes" "Threads of a selected process.";
    "quietstat_process_start_time_seconds" Gauge ["pid", "comm"] "processes" "Start time of a selected process, in unixtime.";
    "quietstat_process_group_processes" Gauge ["groupname"] "processes" "Processes with this comm.";
    "quietstat_process_group_threads" Gauge ["groupname"] "processes" "Threads of the processes with this comm.";
    "quietstat_process_group_cpu_seconds_total" Counter ["groupname", "mode"] "processes" "CPU time of the live processes with this comm (falls when one exits).";
    "quietstat_process_group_resident_memory_bytes" Gauge ["groupname"] "processes" "Resident set size of the processes with this comm.";
    "quietstat_process_group_major_faults_total" Counter ["groupname"] "processes" "Major page faults of the live processes with this comm.";
    "quietstat_source_reads_total" Counter ["source"] "agent" "Kernel reads of a source.";
    "quietstat_source_demand_reads_total" Counter ["source"] "agent" "Kernel reads of a source a consumer asked for (max age), beyond the schedule.";
    "quietstat_source_read_seconds_total" Counter ["source"] "agent" "Time in the read system calls of a source (the whole snapshot for processes).";
    "quietstat_source_parse_seconds_total" Counter ["source"] "agent" "Time parsing a source.";
    "quietstat_source_read_bytes_total" Counter ["source"] "agent" "Bytes read from a source.";
    "quietstat_source_last_cost_seconds" Gauge ["source"] "agent" "Read plus parse time of the last read of a source.";
    "quietstat_source_interval_seconds" Gauge ["source"] "agent" "Interval in force (longer than configured while over the overhead budget).";
    "quietstat_source_configured_interval_seconds" Gauge ["source"] "agent" "Interval configured.";
    "quietstat_source_age_seconds" Gauge ["source"] "agent" "Age of the data served for a source.";
    "quietstat_source_up" Gauge ["source"] "agent" "1 when the last read of a source succeeded.";
    "quietstat_agent_cpu_seconds_total" Counter ["mode"] "agent" "CPU time of the agent, all threads, user or system.";
    "quietstat_agent_context_switches_total" Counter ["kind"] "agent" "Context switches of all agent threads (each one a wakeup or preemption).";
    "quietstat_agent_sampling_wakeups_total" Counter [] "agent" "Wakeups of the sampler that read the kernel.";
    "quietstat_agent_resident_memory_bytes" Gauge [] "agent" "Resident set size of the agent.";
    "quietstat_agent_threads" Gauge [] "agent" "Threads of the agent.";
    "quietstat_agent_start_time_seconds" Gauge [] "agent" "When the agent started, in unixtime.";
    "quietstat_agent_info" Gauge ["version", "backend"] "agent" "Always 1: the agent's version and process-table backend.";
}

/// The catalog entry for `name` (a concrete name matches its `*` pattern).
pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| match f.name.split_once('*') {
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
    fn family<'s>(&'s mut self, name: &'s str) -> Result<Fam<'s>, std::fmt::Error> {
        let f = family(name).unwrap_or_else(|| panic!("{name} is not in FAMILIES"));
        let (n, t) = match f.kind {
            Kind::Counter => (
                name.strip_suffix("_total").expect("counters end in _total"),
                MetricType::Counter,
            ),
            Kind::Gauge => (name, MetricType::Gauge),
            Kind::Unknown => (name, MetricType::Unknown),
        };
        let help = if f.name.contains('*') {
            // node_exporter's wording for per-key families.
            match f.source {
                "meminfo" => "Memory information field.",
                "vmstat" => "/proc/vmstat information field.",
                _ => "Network device statistic.",
            }
        } else {
            f.help
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
fn one(out: &mut Out<'_>, name: &str, v: f64) -> Fmt {
    let mut m = out.family(name)?;
    match m.kind {
        Kind::Counter => counter(&mut m, v),
        _ => m.encode_gauge(&v),
    }
}

const USER_HZ: f64 = 100.0;

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

/// node_exporter's meminfo name: `Active(anon)` -> `Active_anon`, and
/// `_bytes` for lines in kB.
fn meminfo_name(key: &str, buf: &mut String) {
    buf.clear();
    buf.push_str("node_memory_");
    for c in key.chars() {
        match c {
            '(' => buf.push('_'),
            ')' => {}
            c => buf.push(c),
        }
    }
    if !key.starts_with("HugePages_") {
        buf.push_str("_bytes");
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
        let mut m = out.family("node_cpu_seconds_total")?;
        for c in &st.cpus {
            let cpu = c.cpu.to_string();
            for (mode, ticks) in cpu_modes(&c.times) {
                counter_l(
                    &mut m,
                    &[("cpu", cpu.as_str()), ("mode", mode)],
                    ticks as f64 / USER_HZ,
                )?;
            }
        }
        let mut m = out.family("node_cpu_guest_seconds_total")?;
        for c in &st.cpus {
            let cpu = c.cpu.to_string();
            for (mode, m2) in [("user", CpuMode::Guest), ("nice", CpuMode::GuestNice)] {
                if let Some(t) = c.times.ticks(m2) {
                    counter_l(
                        &mut m,
                        &[("cpu", cpu.as_str()), ("mode", mode)],
                        t as f64 / USER_HZ,
                    )?;
                }
            }
        }
        one(out, "node_intr_total", st.intr_total as f64)?;
        one(out, "node_context_switches_total", st.ctxt as f64)?;
        one(out, "node_forks_total", st.processes as f64)?;
        one(out, "node_boot_time_seconds", st.btime_secs as f64)?;
        if let Some(r) = st.procs_running {
            one(out, "node_procs_running", r as f64)?;
        }
        if let Some(b) = st.procs_blocked {
            one(out, "node_procs_blocked", b as f64)?;
        }
        if !st.softirq_counts.is_empty() {
            let mut m = out.family("node_softirqs_total")?;
            for (v, n) in SOFTIRQ_VECTORS.iter().zip(&st.softirq_counts) {
                counter_l(&mut m, &[("vector", *v)], *n as f64)?;
            }
        }
    }
    if s.ok(Source::Loadavg) {
        one(out, "node_load1", s.loadavg.load1)?;
        one(out, "node_load5", s.loadavg.load5)?;
        one(out, "node_load15", s.loadavg.load15)?;
    }
    if s.ok(Source::Meminfo) {
        let mut name = String::new();
        for (k, v) in s.meminfo.all().iter() {
            meminfo_name(k, &mut name);
            let mut m = out.family(&name)?;
            m.encode_gauge(&(v as f64))?;
        }
    }
    if s.ok(Source::Vmstat) {
        let mut name = String::new();
        for (k, v) in s.vmstat.all().iter().filter(|(k, _)| vmstat_exported(k)) {
            name.clear();
            name.push_str("node_vmstat_");
            name.push_str(k);
            let mut m = out.family(&name)?;
            m.encode_gauge(&(v as f64))?;
        }
    }
    for (r, waiting, stalled) in [
        (
            Resource::Cpu,
            Some("node_pressure_cpu_waiting_seconds_total"),
            None,
        ),
        (
            Resource::Memory,
            Some("node_pressure_memory_waiting_seconds_total"),
            Some("node_pressure_memory_stalled_seconds_total"),
        ),
        (
            Resource::Io,
            Some("node_pressure_io_waiting_seconds_total"),
            Some("node_pressure_io_stalled_seconds_total"),
        ),
        (
            Resource::Irq,
            None,
            Some("node_pressure_irq_stalled_seconds_total"),
        ),
    ] {
        let Some(p) = s.pressure(r) else { continue };
        if let (Some(n), Some(l)) = (waiting, p.some) {
            one(out, n, l.total_usec as f64 / 1e6)?;
        }
        if let (Some(n), Some(l)) = (stalled, p.full) {
            one(out, n, l.total_usec as f64 / 1e6)?;
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
        let mut m = out.family("node_interrupts_total")?;
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
        let mut m = out.family("quietstat_interrupts_unsplit_total")?;
        for row in s.interrupts.rows() {
            if row.counts.len() < s.interrupts.cpus().len() || row.description.is_empty() {
                counter_l(&mut m, &[("type", row.label)], row.total as f64)?;
            }
        }
    }
    if s.ok(Source::Softirqs) {
        let t = &s.softirqs;
        let cpus: Vec<String> = t.cpus().iter().map(u32::to_string).collect();
        let mut m = out.family("quietstat_softirqs_cpu_total")?;
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
            ("node_schedstat_running_seconds_total", 0),
            ("node_schedstat_waiting_seconds_total", 1),
            ("node_schedstat_timeslices_total", 2),
        ] {
            let mut m = out.family(name)?;
            for c in &s.schedstat.cpus {
                let v = match f {
                    0 => c.running_ns as f64 / 1e9,
                    1 => c.waiting_ns as f64 / 1e9,
                    _ => c.timeslices as f64,
                };
                counter_l(&mut m, &[("cpu", c.cpu.to_string().as_str())], v)?;
            }
        }
    }
    Ok(())
}

fn disks(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    use procfs::diskstats::{DiskStat, SECTOR_BYTES};
    type Get = fn(&DiskStat) -> Option<f64>;
    let fields: [(&str, Get); 17] = [
        ("node_disk_reads_completed_total", |d| {
            Some(d.reads_completed as f64)
        }),
        ("node_disk_reads_merged_total", |d| {
            Some(d.reads_merged as f64)
        }),
        ("node_disk_read_bytes_total", |d| {
            Some(d.read_sectors as f64 * SECTOR_BYTES as f64)
        }),
        ("node_disk_read_time_seconds_total", |d| {
            Some(d.read_time_ms as f64 / 1e3)
        }),
        ("node_disk_writes_completed_total", |d| {
            Some(d.writes_completed as f64)
        }),
        ("node_disk_writes_merged_total", |d| {
            Some(d.writes_merged as f64)
        }),
        ("node_disk_written_bytes_total", |d| {
            Some(d.write_sectors as f64 * SECTOR_BYTES as f64)
        }),
        ("node_disk_write_time_seconds_total", |d| {
            Some(d.write_time_ms as f64 / 1e3)
        }),
        ("node_disk_io_now", |d| Some(d.io_in_progress as f64)),
        ("node_disk_io_time_seconds_total", |d| {
            Some(d.io_time_ms as f64 / 1e3)
        }),
        ("node_disk_io_time_weighted_seconds_total", |d| {
            Some(d.io_weighted_time_ms as f64 / 1e3)
        }),
        ("node_disk_discards_completed_total", |d| {
            d.discards_completed.map(|v| v as f64)
        }),
        ("node_disk_discards_merged_total", |d| {
            d.discards_merged.map(|v| v as f64)
        }),
        ("node_disk_discarded_sectors_total", |d| {
            d.discard_sectors.map(|v| v as f64)
        }),
        ("node_disk_discard_time_seconds_total", |d| {
            d.discard_time_ms.map(|v| v as f64 / 1e3)
        }),
        ("node_disk_flush_requests_total", |d| {
            d.flushes_completed.map(|v| v as f64)
        }),
        ("node_disk_flush_requests_time_seconds_total", |d| {
            d.flush_time_ms.map(|v| v as f64 / 1e3)
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
    let fields: [(&str, Get); 16] = [
        ("node_network_receive_bytes_total", |d| d.rx_bytes),
        ("node_network_receive_packets_total", |d| d.rx_packets),
        ("node_network_receive_errs_total", |d| d.rx_errs),
        ("node_network_receive_drop_total", |d| d.rx_drop),
        ("node_network_receive_fifo_total", |d| d.rx_fifo),
        ("node_network_receive_frame_total", |d| d.rx_frame),
        ("node_network_receive_compressed_total", |d| d.rx_compressed),
        ("node_network_receive_multicast_total", |d| d.rx_multicast),
        ("node_network_transmit_bytes_total", |d| d.tx_bytes),
        ("node_network_transmit_packets_total", |d| d.tx_packets),
        ("node_network_transmit_errs_total", |d| d.tx_errs),
        ("node_network_transmit_drop_total", |d| d.tx_drop),
        ("node_network_transmit_fifo_total", |d| d.tx_fifo),
        ("node_network_transmit_colls_total", |d| d.tx_colls),
        ("node_network_transmit_carrier_total", |d| d.tx_carrier),
        ("node_network_transmit_compressed_total", |d| {
            d.tx_compressed
        }),
    ];
    let devs: Vec<(String, &NetDev)> = s.net_dev.iter().map(|d| (d.name.to_string(), d)).collect();
    for (name, get) in fields {
        let mut m = out.family(name)?;
        for (dev, d) in &devs {
            counter_l(&mut m, &[("device", dev.as_str())], get(d) as f64)?;
        }
    }
    Ok(())
}

/// The processes `pm` selects, with their CPU seconds over the last interval
/// for `top` by CPU.
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
            let mut v: Vec<(f64, &Proc)> = match pm.sort_by {
                SortKey::Cpu => {
                    let rates = proctable::rates::between(&st.procs_prev, &st.procs, st.procs_secs);
                    // Both sorted by PID: walk them together.
                    let mut r = rates.iter().peekable();
                    st.procs
                        .iter()
                        .map(|p| {
                            while r.peek().is_some_and(|x| x.identity.pid < p.pid) {
                                r.next();
                            }
                            let pct = r
                                .peek()
                                .filter(|x| x.identity == p.identity())
                                .map_or(0.0, |x| {
                                    x.user_pct.unwrap_or(0.0) + x.system_pct.unwrap_or(0.0)
                                });
                            (pct, p)
                        })
                        .collect()
                }
                SortKey::Rss => st.procs.iter().map(|p| (p.rss_bytes as f64, p)).collect(),
                SortKey::Majflt => st.procs.iter().map(|p| (p.majflt as f64, p)).collect(),
                SortKey::Threads => st.procs.iter().map(|p| (p.num_threads as f64, p)).collect(),
            };
            v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.pid.cmp(&b.1.pid)));
            v.truncate(pm.top_n);
            v.into_iter().map(|(_, p)| p).collect()
        }
    }
}

fn processes(out: &mut Out<'_>, st: &State, pm: &ProcessMetrics) -> Fmt {
    if !st.stats[AgentSource::Processes.index()].scheduled {
        return Ok(());
    }
    one(out, "quietstat_processes", st.procs.len() as f64)?;
    let threads: u64 = st.procs.iter().map(|p| p.num_threads as u64).sum();
    one(out, "quietstat_process_threads_all", threads as f64)?;
    if st.exits.capture.is_some() {
        one(
            out,
            "quietstat_process_exits_total",
            st.exits.captured as f64,
        )?;
        one(
            out,
            "quietstat_process_exits_lost_total",
            st.exits.lost as f64,
        )?;
    }
    let btime = st.sample.stat.btime_secs as f64;
    let sel = selected(st, pm);
    if !sel.is_empty() {
        let ids: Vec<(String, String)> = sel
            .iter()
            .map(|p| (p.pid.to_string(), p.comm.to_string_lossy().into_owned()))
            .collect();
        let l = |i: usize| [("pid", ids[i].0.as_str()), ("comm", ids[i].1.as_str())];
        let mut m = out.family("quietstat_process_cpu_seconds_total")?;
        for (i, p) in sel.iter().enumerate() {
            let [a, b] = l(i);
            counter_l(&mut m, &[a, b, ("mode", "user")], p.utime_ns as f64 / 1e9)?;
            counter_l(&mut m, &[a, b, ("mode", "system")], p.stime_ns as f64 / 1e9)?;
        }
        type Get = fn(&Proc, f64) -> f64;
        let fields: [(&str, Get); 6] = [
            ("quietstat_process_resident_memory_bytes", |p, _| {
                p.rss_bytes as f64
            }),
            ("quietstat_process_virtual_memory_bytes", |p, _| {
                p.vsize_bytes as f64
            }),
            ("quietstat_process_major_faults_total", |p, _| {
                p.majflt as f64
            }),
            ("quietstat_process_minor_faults_total", |p, _| {
                p.minflt as f64
            }),
            ("quietstat_process_threads", |p, _| p.num_threads as f64),
            ("quietstat_process_start_time_seconds", |p, bt| {
                bt + (p.start_ticks * NS_PER_TICK) as f64 / 1e9
            }),
        ];
        for (name, get) in fields {
            let mut m = out.family(name)?;
            for (i, p) in sel.iter().enumerate() {
                sample_l(&mut m, &l(i), get(p, btime))?;
            }
        }
    }
    if pm.mode == ProcessMetricsMode::Group {
        let mut groups: std::collections::BTreeMap<String, [f64; 6]> = Default::default();
        for p in &st.procs {
            let g = groups
                .entry(p.comm.to_string_lossy().into_owned())
                .or_default();
            g[0] += 1.0;
            g[1] += p.num_threads as f64;
            g[2] += p.utime_ns as f64 / 1e9;
            g[3] += p.stime_ns as f64 / 1e9;
            g[4] += p.rss_bytes as f64;
            g[5] += p.majflt as f64;
        }
        let mut m = out.family("quietstat_process_group_processes")?;
        for (g, v) in &groups {
            gauge_l(&mut m, &[("groupname", g.as_str())], v[0])?;
        }
        let mut m = out.family("quietstat_process_group_threads")?;
        for (g, v) in &groups {
            gauge_l(&mut m, &[("groupname", g.as_str())], v[1])?;
        }
        let mut m = out.family("quietstat_process_group_cpu_seconds_total")?;
        for (g, v) in &groups {
            counter_l(&mut m, &[("groupname", g.as_str()), ("mode", "user")], v[2])?;
            counter_l(
                &mut m,
                &[("groupname", g.as_str()), ("mode", "system")],
                v[3],
            )?;
        }
        let mut m = out.family("quietstat_process_group_resident_memory_bytes")?;
        for (g, v) in &groups {
            gauge_l(&mut m, &[("groupname", g.as_str())], v[4])?;
        }
        let mut m = out.family("quietstat_process_group_major_faults_total")?;
        for (g, v) in &groups {
            counter_l(&mut m, &[("groupname", g.as_str())], v[5])?;
        }
    }
    Ok(())
}

fn agent_figures(out: &mut Out<'_>, st: &State, ctx: &Context) -> Fmt {
    let now = shm::mono_ns();
    let srcs: Vec<AgentSource> = AgentSource::ALL
        .into_iter()
        .filter(|s| st.stats[s.index()].scheduled)
        .collect();
    type Get = fn(&State, &Context, AgentSource, u64) -> f64;
    let fields: [(&str, Get); 10] = [
        ("quietstat_source_reads_total", |st, _, s, _| {
            st.stats[s.index()].reads as f64
        }),
        ("quietstat_source_demand_reads_total", |st, _, s, _| {
            st.stats[s.index()].demand_reads as f64
        }),
        ("quietstat_source_read_seconds_total", |st, _, s, _| {
            st.stats[s.index()].read_ns as f64 / 1e9
        }),
        ("quietstat_source_parse_seconds_total", |st, _, s, _| {
            st.stats[s.index()].parse_ns as f64 / 1e9
        }),
        ("quietstat_source_read_bytes_total", |st, _, s, _| {
            st.stats[s.index()].bytes as f64
        }),
        ("quietstat_source_last_cost_seconds", |st, _, s, _| {
            st.stats[s.index()].last_cost_ns as f64 / 1e9
        }),
        ("quietstat_source_interval_seconds", |st, _, s, _| {
            st.stats[s.index()].interval.as_secs_f64()
        }),
        (
            "quietstat_source_configured_interval_seconds",
            |_, ctx, s, _| ctx.config.source(s).interval.as_secs_f64(),
        ),
        ("quietstat_source_age_seconds", |st, _, s, now| {
            now.saturating_sub(st.read_mono_ns[s.index()]) as f64 / 1e9
        }),
        ("quietstat_source_up", |st, _, s, _| {
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
    let mut m = out.family("quietstat_agent_cpu_seconds_total")?;
    counter_l(&mut m, &[("mode", "user")], u.user_ns as f64 / 1e9)?;
    counter_l(&mut m, &[("mode", "system")], u.system_ns as f64 / 1e9)?;
    let mut m = out.family("quietstat_agent_context_switches_total")?;
    counter_l(&mut m, &[("kind", "voluntary")], u.voluntary_ctxsw as f64)?;
    counter_l(
        &mut m,
        &[("kind", "involuntary")],
        u.involuntary_ctxsw as f64,
    )?;
    one(
        out,
        "quietstat_agent_sampling_wakeups_total",
        st.sampling_wakeups as f64,
    )?;
    one(
        out,
        "quietstat_agent_resident_memory_bytes",
        u.rss_bytes as f64,
    )?;
    one(out, "quietstat_agent_threads", u.threads as f64)?;
    one(
        out,
        "quietstat_agent_start_time_seconds",
        ctx.started_unix_ns as f64 / 1e9,
    )?;
    let mut m = out.family("quietstat_agent_info")?;
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
        let mut b = String::new();
        meminfo_name("Active(anon)", &mut b);
        assert_eq!(b, "node_memory_Active_anon_bytes");
        meminfo_name("HugePages_Total", &mut b);
        assert_eq!(b, "node_memory_HugePages_Total");
        meminfo_name("Hugepagesize", &mut b);
        assert_eq!(b, "node_memory_Hugepagesize_bytes");
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
