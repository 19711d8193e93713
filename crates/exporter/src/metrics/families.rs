//! The metric families, each defined once: name, type, labels, source and
//! help. The encoders name a family by its static, so a family that is not
//! declared here does not compile; docs/metrics.md is checked against
//! [`FAMILIES`] by a test.

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
    NODE_FILEFD_ALLOCATED "node_filefd_allocated" Gauge [] "filefd" "File descriptor statistics: allocated.";
    NODE_FILEFD_MAXIMUM "node_filefd_maximum" Gauge [] "filefd" "File descriptor statistics: maximum.";
    NODE_ENTROPY_AVAILABLE_BITS "node_entropy_available_bits" Gauge [] "entropy" "Bits of available entropy.";
    NODE_ENTROPY_POOL_SIZE_BITS "node_entropy_pool_size_bits" Gauge [] "entropy" "Bits of entropy pool.";
    NODE_UNAME_INFO "node_uname_info" Gauge ["sysname", "release", "version", "machine", "nodename", "domainname"] "uname" "Labeled system information as provided by the uname system call.";
    NODE_SOCKSTAT_SOCKETS_USED "node_sockstat_sockets_used" Gauge [] "sockstat" "Number of IPv4 sockets in use.";
    NODE_SOCKSTAT "node_sockstat_*" Gauge [] "sockstat" "Number of sockets of a protocol in a state, from /proc/net/sockstat and sockstat6 (`mem` in pages, and `mem_bytes` in bytes).";
    NODE_NETSTAT "node_netstat_*" Unknown [] "netstat" "Protocol counter from /proc/net/netstat, snmp or snmp6 (node_exporter's default field filter).";
    NODE_SOFTNET_PROCESSED_TOTAL "node_softnet_processed_total" Counter ["cpu"] "softnet" "Number of processed packets";
    NODE_SOFTNET_DROPPED_TOTAL "node_softnet_dropped_total" Counter ["cpu"] "softnet" "Number of dropped packets";
    NODE_SOFTNET_TIMES_SQUEEZED_TOTAL "node_softnet_times_squeezed_total" Counter ["cpu"] "softnet" "Number of times processing packets ran out of quota";
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
    NODE_SCRAPE_COLLECTOR_DURATION_SECONDS "node_scrape_collector_duration_seconds" Gauge ["collector"] "agent" "node_exporter: Duration of a collector scrape.";
    NODE_SCRAPE_COLLECTOR_SUCCESS "node_scrape_collector_success" Gauge ["collector"] "agent" "node_exporter: Whether a collector succeeded.";
    QUIETSTAT_BUILD_INFO "quietstat_build_info" Gauge ["version", "revision", "rustc", "arch", "os"] "agent" "Always 1: the version, commit and compiler quietstat was built from, and its target.";
    QUIETSTAT_HTTP_CONNECTIONS "quietstat_http_connections" Gauge [] "agent" "HTTP connections open now.";
    QUIETSTAT_HTTP_CONNECTIONS_MAX "quietstat_http_connections_max" Gauge [] "agent" "The cap on HTTP connections (lowered to fit the descriptor limit).";
    QUIETSTAT_HTTP_CONNECTIONS_EVICTED_TOTAL "quietstat_http_connections_evicted_total" Counter [] "agent" "Idle HTTP connections closed to make room for new ones at the cap.";
    QUIETSTAT_HTTP_CONNECTIONS_REFUSED_TOTAL "quietstat_http_connections_refused_total" Counter [] "agent" "HTTP connections refused (503) at the cap, every open one being mid-request.";
    QUIETSTAT_HTTP_ACCEPT_ERRORS_TOTAL "quietstat_http_accept_errors_total" Counter [] "agent" "Failed accepts of HTTP connections (out of descriptors, ...), each retried after a backoff.";
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

#[cfg(test)]
mod tests {
    use super::*;

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
