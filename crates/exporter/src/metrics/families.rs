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
    NODE_CPU_ISOLATED "node_cpu_isolated" Gauge ["cpu"] "cpu_isolated" "Whether each core is isolated, information from /sys/devices/system/cpu/isolated.";
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
    NODE_DISK_INFO "node_disk_info" Gauge ["device", "major", "minor", "path", "wwn", "model", "serial", "revision", "rotational"] "diskstats" "Info of /sys/block/<block_device>.";
    NODE_DISK_FILESYSTEM_INFO "node_disk_filesystem_info" Gauge ["device", "type", "usage", "uuid", "version"] "udev" "Info about disk filesystem.";
    NODE_DISK_DEVICE_MAPPER_INFO "node_disk_device_mapper_info" Gauge ["device", "name", "uuid", "vg_name", "lv_name", "lv_layer"] "udev" "Info about disk device mapper.";
    NODE_DISK_ATA_WRITE_CACHE "node_disk_ata_write_cache" Gauge ["device"] "udev" "ATA disk has a write cache.";
    NODE_DISK_ATA_WRITE_CACHE_ENABLED "node_disk_ata_write_cache_enabled" Gauge ["device"] "udev" "ATA disk has its write cache enabled.";
    NODE_DISK_ATA_ROTATION_RATE_RPM "node_disk_ata_rotation_rate_rpm" Gauge ["device"] "udev" "ATA disk rotation rate in RPMs (0 for SSDs).";
    NODE_NETWORK_RECEIVE_TOTAL "node_network_receive_*_total" Counter ["device"] "net_dev" "Network device statistic receive_* (bytes, packets, errs, drop, fifo, frame, compressed, multicast).";
    NODE_NETWORK_TRANSMIT_TOTAL "node_network_transmit_*_total" Counter ["device"] "net_dev" "Network device statistic transmit_* (bytes, packets, errs, drop, fifo, colls, carrier, compressed).";
    NODE_INTERRUPTS_TOTAL "node_interrupts_total" Counter ["cpu", "devices", "info", "type"] "interrupts" "Interrupt details.";
    NODE_SOFTIRQS_FUNCTIONS_TOTAL "node_softirqs_functions_total" Counter ["cpu", "type"] "softirqs" "Softirq counts per CPU.";
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
    NODE_SOFTNET_CPU_COLLISION_TOTAL "node_softnet_cpu_collision_total" Counter ["cpu"] "softnet" "Number of collision occur while obtaining device lock while transmitting";
    NODE_SOFTNET_RECEIVED_RPS_TOTAL "node_softnet_received_rps_total" Counter ["cpu"] "softnet" "Number of times cpu woken up received_rps";
    NODE_SOFTNET_FLOW_LIMIT_COUNT_TOTAL "node_softnet_flow_limit_count_total" Counter ["cpu"] "softnet" "Number of times flow limit has been reached";
    NODE_SOFTNET_BACKLOG_LEN "node_softnet_backlog_len" Gauge ["cpu"] "softnet" "Softnet backlog status";
    NODE_NETWORK_UP "node_network_up" Gauge ["device"] "netclass" "Value is 1 if operstate is 'up', 0 otherwise.";
    NODE_NETWORK_INFO "node_network_info" Gauge ["device", "address", "broadcast", "duplex", "operstate", "adminstate", "ifalias"] "netclass" "Non-numeric data from /sys/class/net/<iface>, value is always 1.";
    NODE_NETWORK_ADDRESS_ASSIGN_TYPE "node_network_address_assign_type" Gauge ["device"] "netclass" "Network device property: address_assign_type";
    NODE_NETWORK_CARRIER "node_network_carrier" Gauge ["device"] "netclass" "Network device property: carrier";
    NODE_NETWORK_CARRIER_CHANGES_TOTAL "node_network_carrier_changes_total" Counter ["device"] "netclass" "Network device property: carrier_changes_total";
    NODE_NETWORK_CARRIER_UP_CHANGES_TOTAL "node_network_carrier_up_changes_total" Counter ["device"] "netclass" "Network device property: carrier_up_changes_total";
    NODE_NETWORK_CARRIER_DOWN_CHANGES_TOTAL "node_network_carrier_down_changes_total" Counter ["device"] "netclass" "Network device property: carrier_down_changes_total";
    NODE_NETWORK_DEVICE_ID "node_network_device_id" Gauge ["device"] "netclass" "Network device property: device_id";
    NODE_NETWORK_DORMANT "node_network_dormant" Gauge ["device"] "netclass" "Network device property: dormant";
    NODE_NETWORK_FLAGS "node_network_flags" Gauge ["device"] "netclass" "Network device property: flags";
    NODE_NETWORK_IFACE_ID "node_network_iface_id" Gauge ["device"] "netclass" "Network device property: iface_id";
    NODE_NETWORK_IFACE_LINK "node_network_iface_link" Gauge ["device"] "netclass" "Network device property: iface_link";
    NODE_NETWORK_IFACE_LINK_MODE "node_network_iface_link_mode" Gauge ["device"] "netclass" "Network device property: iface_link_mode";
    NODE_NETWORK_MTU_BYTES "node_network_mtu_bytes" Gauge ["device"] "netclass" "Network device property: mtu_bytes";
    NODE_NETWORK_NAME_ASSIGN_TYPE "node_network_name_assign_type" Gauge ["device"] "netclass" "Network device property: name_assign_type";
    NODE_NETWORK_NET_DEV_GROUP "node_network_net_dev_group" Gauge ["device"] "netclass" "Network device property: net_dev_group";
    NODE_NETWORK_SPEED_BYTES "node_network_speed_bytes" Gauge ["device"] "netclass" "Network device property: speed_bytes";
    NODE_NETWORK_TRANSMIT_QUEUE_LENGTH "node_network_transmit_queue_length" Gauge ["device"] "netclass" "Network device property: transmit_queue_length";
    NODE_NETWORK_PROTOCOL_TYPE "node_network_protocol_type" Gauge ["device"] "netclass" "Network device property: protocol_type";
    NODE_NETWORK_RECEIVE_NOHANDLER_TOTAL "node_network_receive_nohandler_total" Counter ["device"] "netclass" "Network device statistic receive_nohandler.";
    NODE_FILESYSTEM_AVAIL_BYTES "node_filesystem_avail_bytes" Gauge ["device", "fstype", "mountpoint"] "filesystem" "Filesystem space available to non-root users in bytes.";
    NODE_FILESYSTEM_DEVICE_ERROR "node_filesystem_device_error" Gauge ["device", "fstype", "mountpoint"] "filesystem" "Whether an error occurred while getting statistics for the given device.";
    NODE_FILESYSTEM_FILES "node_filesystem_files" Gauge ["device", "fstype", "mountpoint"] "filesystem" "Filesystem total file nodes.";
    NODE_FILESYSTEM_FILES_FREE "node_filesystem_files_free" Gauge ["device", "fstype", "mountpoint"] "filesystem" "Filesystem total free file nodes.";
    NODE_FILESYSTEM_FREE_BYTES "node_filesystem_free_bytes" Gauge ["device", "fstype", "mountpoint"] "filesystem" "Filesystem free space in bytes.";
    NODE_FILESYSTEM_READONLY "node_filesystem_readonly" Gauge ["device", "fstype", "mountpoint"] "filesystem" "Filesystem read-only status.";
    NODE_FILESYSTEM_SIZE_BYTES "node_filesystem_size_bytes" Gauge ["device", "fstype", "mountpoint"] "filesystem" "Filesystem size in bytes.";
    NODE_TIME_SECONDS "node_time_seconds" Gauge [] "time" "System time in seconds since epoch (1970).";
    NODE_TIME_ZONE_OFFSET_SECONDS "node_time_zone_offset_seconds" Gauge ["time_zone"] "time" "System time zone offset in seconds.";
    NODE_TIME_CLOCKSOURCE_AVAILABLE_INFO "node_time_clocksource_available_info" Gauge ["device", "clocksource"] "time" "Available clocksources read from '/sys/devices/system/clocksource'.";
    NODE_TIME_CLOCKSOURCE_CURRENT_INFO "node_time_clocksource_current_info" Gauge ["device", "clocksource"] "time" "Current clocksource read from '/sys/devices/system/clocksource'.";
    NODE_TIMEX_OFFSET_SECONDS "node_timex_offset_seconds" Gauge [] "timex" "Time offset in between local system and reference clock.";
    NODE_TIMEX_FREQUENCY_ADJUSTMENT_RATIO "node_timex_frequency_adjustment_ratio" Gauge [] "timex" "Local clock frequency adjustment.";
    NODE_TIMEX_MAXERROR_SECONDS "node_timex_maxerror_seconds" Gauge [] "timex" "Maximum error in seconds.";
    NODE_TIMEX_ESTIMATED_ERROR_SECONDS "node_timex_estimated_error_seconds" Gauge [] "timex" "Estimated error in seconds.";
    NODE_TIMEX_STATUS "node_timex_status" Gauge [] "timex" "Value of the status array bits.";
    NODE_TIMEX_LOOP_TIME_CONSTANT "node_timex_loop_time_constant" Gauge [] "timex" "Phase-locked loop time constant.";
    NODE_TIMEX_TICK_SECONDS "node_timex_tick_seconds" Gauge [] "timex" "Seconds between clock ticks.";
    NODE_TIMEX_PPS_FREQUENCY_HERTZ "node_timex_pps_frequency_hertz" Gauge [] "timex" "Pulse per second frequency.";
    NODE_TIMEX_PPS_JITTER_SECONDS "node_timex_pps_jitter_seconds" Gauge [] "timex" "Pulse per second jitter.";
    NODE_TIMEX_PPS_SHIFT_SECONDS "node_timex_pps_shift_seconds" Gauge [] "timex" "Pulse per second interval duration.";
    NODE_TIMEX_PPS_STABILITY_HERTZ "node_timex_pps_stability_hertz" Gauge [] "timex" "Pulse per second stability, average of recent frequency changes.";
    NODE_TIMEX_PPS_JITTER_TOTAL "node_timex_pps_jitter_total" Counter [] "timex" "Pulse per second count of jitter limit exceeded events.";
    NODE_TIMEX_PPS_CALIBRATION_TOTAL "node_timex_pps_calibration_total" Counter [] "timex" "Pulse per second count of calibration intervals.";
    NODE_TIMEX_PPS_ERROR_TOTAL "node_timex_pps_error_total" Counter [] "timex" "Pulse per second count of calibration errors.";
    NODE_TIMEX_PPS_STABILITY_EXCEEDED_TOTAL "node_timex_pps_stability_exceeded_total" Counter [] "timex" "Pulse per second count of stability limit exceeded events.";
    NODE_TIMEX_TAI_OFFSET_SECONDS "node_timex_tai_offset_seconds" Gauge [] "timex" "International Atomic Time (TAI) offset.";
    NODE_TIMEX_SYNC_STATUS "node_timex_sync_status" Gauge [] "timex" "Is clock synchronized to a reliable server (1 = yes, 0 = no).";
    NODE_OS_INFO "node_os_info" Gauge ["build_id", "id", "id_like", "image_id", "image_version", "name", "pretty_name", "variant", "variant_id", "version", "version_codename", "version_id"] "os" "A metric with a constant '1' value labeled by build_id, id, id_like, image_id, image_version, name, pretty_name, variant, variant_id, version, version_codename, version_id.";
    NODE_OS_VERSION "node_os_version" Gauge ["id", "id_like", "name"] "os" "Metric containing the major.minor part of the OS version.";
    NODE_SELINUX_ENABLED "node_selinux_enabled" Gauge [] "selinux" "SELinux is enabled, 1 is true, 0 is false";
    NODE_SELINUX_CURRENT_MODE "node_selinux_current_mode" Gauge [] "selinux" "Current SELinux enforcement mode";
    NODE_SELINUX_CONFIG_MODE "node_selinux_config_mode" Gauge [] "selinux" "Configured SELinux enforcement mode";
    NODE_ARP_ENTRIES "node_arp_entries" Gauge ["device"] "arp" "ARP entries by device";
    NODE_UDP_QUEUES "node_udp_queues" Gauge ["ip", "queue"] "udp_queues" "Number of allocated memory in the kernel for UDP datagrams in bytes.";
    NODE_NF_CONNTRACK_ENTRIES "node_nf_conntrack_entries" Gauge [] "conntrack" "Number of currently allocated flow entries for connection tracking.";
    NODE_NF_CONNTRACK_ENTRIES_LIMIT "node_nf_conntrack_entries_limit" Gauge [] "conntrack" "Maximum size of connection tracking table.";
    NODE_NF_CONNTRACK_STAT_FOUND "node_nf_conntrack_stat_found" Gauge [] "conntrack" "Number of searched entries which were successful.";
    NODE_NF_CONNTRACK_STAT_INVALID "node_nf_conntrack_stat_invalid" Gauge [] "conntrack" "Number of packets seen which can not be tracked.";
    NODE_NF_CONNTRACK_STAT_IGNORE "node_nf_conntrack_stat_ignore" Gauge [] "conntrack" "Number of packets seen which are already connected to a conntrack entry.";
    NODE_NF_CONNTRACK_STAT_INSERT "node_nf_conntrack_stat_insert" Gauge [] "conntrack" "Number of entries inserted into the list.";
    NODE_NF_CONNTRACK_STAT_INSERT_FAILED "node_nf_conntrack_stat_insert_failed" Gauge [] "conntrack" "Number of entries for which list insertion was attempted but failed.";
    NODE_NF_CONNTRACK_STAT_DROP "node_nf_conntrack_stat_drop" Gauge [] "conntrack" "Number of packets dropped due to conntrack failure.";
    NODE_NF_CONNTRACK_STAT_EARLY_DROP "node_nf_conntrack_stat_early_drop" Gauge [] "conntrack" "Number of dropped conntrack entries to make room for new ones, if maximum table size was reached.";
    NODE_NF_CONNTRACK_STAT_SEARCH_RESTART "node_nf_conntrack_stat_search_restart" Gauge [] "conntrack" "Number of conntrack table lookups which had to be restarted due to hashtable resizes.";
    NODE_TEXTFILE_SCRAPE_ERROR "node_textfile_scrape_error" Gauge [] "textfile" "1 if there was an error opening or reading a file, 0 otherwise";
    NODE_TEXTFILE_MTIME_SECONDS "node_textfile_mtime_seconds" Gauge ["file"] "textfile" "Unixtime mtime of textfiles successfully read.";
    NODE_CPU_FREQUENCY_HERTZ "node_cpu_frequency_hertz" Gauge ["cpu", "package", "core"] "cpufreq" "Current cpu thread frequency in hertz.";
    NODE_CPU_FREQUENCY_MIN_HERTZ "node_cpu_frequency_min_hertz" Gauge ["cpu"] "cpufreq" "Minimum cpu thread frequency in hertz.";
    NODE_CPU_FREQUENCY_MAX_HERTZ "node_cpu_frequency_max_hertz" Gauge ["cpu"] "cpufreq" "Maximum cpu thread frequency in hertz.";
    NODE_CPU_SCALING_FREQUENCY_HERTZ "node_cpu_scaling_frequency_hertz" Gauge ["cpu"] "cpufreq" "Current scaled CPU thread frequency in hertz.";
    NODE_CPU_SCALING_FREQUENCY_MIN_HERTZ "node_cpu_scaling_frequency_min_hertz" Gauge ["cpu"] "cpufreq" "Minimum scaled CPU thread frequency in hertz.";
    NODE_CPU_SCALING_FREQUENCY_MAX_HERTZ "node_cpu_scaling_frequency_max_hertz" Gauge ["cpu"] "cpufreq" "Maximum scaled CPU thread frequency in hertz.";
    NODE_CPU_SCALING_GOVERNOR "node_cpu_scaling_governor" Gauge ["cpu", "governor"] "cpufreq" "Current enabled CPU frequency governor.";
    NODE_THERMAL_ZONE_TEMP "node_thermal_zone_temp" Gauge ["zone", "type"] "thermal_zone" "Zone temperature in Celsius";
    NODE_COOLING_DEVICE_CUR_STATE "node_cooling_device_cur_state" Gauge ["name", "type"] "thermal_zone" "Current throttle state of the cooling device";
    NODE_COOLING_DEVICE_MAX_STATE "node_cooling_device_max_state" Gauge ["name", "type"] "thermal_zone" "Maximum throttle state of the cooling device";
    NODE_DMI_INFO "node_dmi_info" Gauge ["bios_date", "bios_release", "bios_vendor", "bios_version", "board_asset_tag", "board_name", "board_serial", "board_vendor", "board_version", "chassis_asset_tag", "chassis_serial", "chassis_vendor", "chassis_version", "product_family", "product_name", "product_serial", "product_sku", "product_uuid", "product_version", "system_vendor"] "dmi" "A metric with a constant '1' value labeled by bios_date, bios_release, bios_vendor, bios_version, board_asset_tag, board_name, board_serial, board_vendor, board_version, chassis_asset_tag, chassis_serial, chassis_vendor, chassis_version, product_family, product_name, product_serial, product_sku, product_uuid, product_version, system_vendor if provided by DMI.";
    NODE_BONDING_SLAVES "node_bonding_slaves" Gauge ["master"] "bonding" "Number of configured slaves per bonding interface.";
    NODE_BONDING_ACTIVE "node_bonding_active" Gauge ["master"] "bonding" "Number of active slaves per bonding interface.";
    NODE_MD_STATE "node_md_state" Gauge ["device", "state"] "mdstat" "Indicates the state of md-device.";
    NODE_MD_DISKS "node_md_disks" Gauge ["device", "state"] "mdstat" "Number of active/failed/spare disks of device.";
    NODE_MD_DISKS_REQUIRED "node_md_disks_required" Gauge ["device"] "mdstat" "Total number of disks of device.";
    NODE_MD_BLOCKS "node_md_blocks" Gauge ["device"] "mdstat" "Total number of blocks on device.";
    NODE_MD_BLOCKS_SYNCED "node_md_blocks_synced" Gauge ["device"] "mdstat" "Number of blocks synced on device.";
    NODE_MD_RAID_DISKS "node_md_raid_disks" Gauge ["device"] "mdraid" "Number of raid disks on device.";
    NODE_MD_DEGRADED "node_md_degraded" Gauge ["device"] "mdraid" "Number of degraded disks on device.";
    NODE_HWMON_CHIP_NAMES "node_hwmon_chip_names" Gauge ["chip", "chip_name"] "hwmon" "Annotation metric for human-readable chip names";
    NODE_HWMON_SENSOR_LABEL "node_hwmon_sensor_label" Gauge ["chip", "sensor", "label"] "hwmon" "Label for given chip and sensor";
    NODE_HWMON "node_hwmon_*" Gauge ["chip", "sensor"] "hwmon" "Hardware monitor reading, named by sensor type, property and unit as node_exporter (temp_celsius, temp_crit_celsius, fan_rpm, in_volts, curr_amps, power_watt, humidity, pwm, *_alarm, ...).";
    NODE_HWMON_JOULE_TOTAL "node_hwmon_*_joule_total" Counter ["chip", "sensor"] "hwmon" "Hardware monitor for joules used so far.";
    NODE_MEMORY_NUMA "node_memory_numa_*" Gauge ["node"] "numa" "Memory information field of a NUMA node, in bytes (meminfo_numa; kB in /sys/devices/system/node/nodeN/meminfo; HugePages counts as they are).";
    NODE_MEMORY_NUMA_TOTAL "node_memory_numa_*_total" Counter ["node"] "numa" "NUMA allocation counter of a node (numastat: numa_hit, numa_miss, local_node, ...).";
    NODE_BUDDYINFO_BLOCKS "node_buddyinfo_blocks" Gauge ["node", "zone", "size"] "buddyinfo" "Count of free blocks according to size.";
    NODE_ZONEINFO "node_zoneinfo_*" Gauge ["node", "zone"] "zoneinfo" "Zone field from /proc/zoneinfo, named as node_exporter (watermarks min_pages, low_pages, high_pages; spanned_pages, present_pages, managed_pages; nr_*_pages; protection_N).";
    NODE_ZONEINFO_TOTAL "node_zoneinfo_*_total" Counter ["node", "zone"] "zoneinfo" "Zone counter from /proc/zoneinfo (nr_dirtied, nr_written, numa_hit, numa_miss, ...).";
    NODE_SLABINFO_ACTIVE_OBJECTS "node_slabinfo_active_objects" Gauge ["slab"] "slabinfo" "The number of objects that are currently active (i.e., in use).";
    NODE_SLABINFO_OBJECTS "node_slabinfo_objects" Gauge ["slab"] "slabinfo" "The total number of allocated objects (i.e., objects that are both in use and not in use).";
    NODE_SLABINFO_OBJECT_SIZE_BYTES "node_slabinfo_object_size_bytes" Gauge ["slab"] "slabinfo" "The size of objects in this slab, in bytes.";
    NODE_SLABINFO_OBJECTS_PER_SLAB "node_slabinfo_objects_per_slab" Gauge ["slab"] "slabinfo" "The number of objects stored in each slab.";
    NODE_SLABINFO_PAGES_PER_SLAB "node_slabinfo_pages_per_slab" Gauge ["slab"] "slabinfo" "The number of pages allocated for each slab.";
    NODE_KSMD_FULL_SCANS_TOTAL "node_ksmd_full_scans_total" Counter [] "ksm" "ksmd 'full_scans' file.";
    NODE_KSMD_MERGE_ACROSS_NODES "node_ksmd_merge_across_nodes" Gauge [] "ksm" "ksmd 'merge_across_nodes' file.";
    NODE_KSMD_PAGES_SHARED "node_ksmd_pages_shared" Gauge [] "ksm" "ksmd 'pages_shared' file.";
    NODE_KSMD_PAGES_SHARING "node_ksmd_pages_sharing" Gauge [] "ksm" "ksmd 'pages_sharing' file.";
    NODE_KSMD_PAGES_TO_SCAN "node_ksmd_pages_to_scan" Gauge [] "ksm" "ksmd 'pages_to_scan' file.";
    NODE_KSMD_PAGES_UNSHARED "node_ksmd_pages_unshared" Gauge [] "ksm" "ksmd 'pages_unshared' file.";
    NODE_KSMD_PAGES_VOLATILE "node_ksmd_pages_volatile" Gauge [] "ksm" "ksmd 'pages_volatile' file.";
    NODE_KSMD_RUN "node_ksmd_run" Gauge [] "ksm" "ksmd 'run' file.";
    NODE_KSMD_SLEEP_SECONDS "node_ksmd_sleep_seconds" Gauge [] "ksm" "ksmd 'sleep_millisecs' file.";
    NODE_KSMD_GENERAL_PROFIT_BYTES "node_ksmd_general_profit_bytes" Gauge [] "ksm" "How effective is KSM. ksm_saved_pages * sizeof(page) - (all_rmap_items) * sizeof(rmap_item)";
    NODE_CPU_FLAG_INFO "node_cpu_flag_info" Gauge ["flag"] "cpuinfo" "The `flags` field of CPU information from /proc/cpuinfo taken from the first core.";
    NODE_CPU_BUG_INFO "node_cpu_bug_info" Gauge ["bug"] "cpuinfo" "The `bugs` field of CPU information from /proc/cpuinfo taken from the first core.";
    NODE_CPU_INFO "node_cpu_info" Gauge ["package", "core", "cpu", "vendor", "family", "model", "model_name", "microcode", "stepping", "cachesize"] "cpuinfo" "CPU information from /proc/cpuinfo.";
    NODE_CPU_PACKAGE_THROTTLES_TOTAL "node_cpu_package_throttles_total" Counter ["package"] "thermal_throttle" "Number of times this CPU package has been throttled.";
    NODE_CPU_CORE_THROTTLES_TOTAL "node_cpu_core_throttles_total" Counter ["package", "core"] "thermal_throttle" "Number of times this CPU core has been throttled.";
    NODE_POWER_SUPPLY "node_power_supply_*" Gauge ["power_supply"] "power_supply" "Value of /sys/class/power_supply/<power_supply>/<attribute>, named and scaled as node_exporter (capacity, online, current_ampere, voltage_volt, energy_watthour, power_watt, temp_celsius, time_to_empty_seconds, ...).";
    NODE_POWER_SUPPLY_INFO "node_power_supply_info" Gauge ["power_supply", "capacity_level", "charge_type", "health", "manufacturer", "model_name", "serial_number", "status", "technology", "type", "usb_type", "scope"] "power_supply" "info of /sys/class/power_supply/<power_supply>.";
    NODE_NVME_INFO "node_nvme_info" Gauge ["device", "firmware_revision", "model", "serial", "state", "cntlid"] "nvme" "Non-numeric data from /sys/class/nvme/<device>, value is always 1.";
    NODE_NVME_NAMESPACE_INFO "node_nvme_namespace_info" Gauge ["device", "nsid", "ana_state"] "nvme" "Information about NVMe namespaces. Value is always 1";
    NODE_NVME_NAMESPACE_CAPACITY_BYTES "node_nvme_namespace_capacity_bytes" Gauge ["device", "nsid"] "nvme" "Capacity of the NVMe namespace in bytes (its size: 512-byte sectors in /sys/class/nvme/<device>/<namespace>/size).";
    NODE_NVME_NAMESPACE_SIZE_BYTES "node_nvme_namespace_size_bytes" Gauge ["device", "nsid"] "nvme" "Size of the NVMe namespace in bytes. Available in /sys/class/nvme/<device>/<namespace>/size (512-byte sectors).";
    NODE_NVME_NAMESPACE_USED_BYTES "node_nvme_namespace_used_bytes" Gauge ["device", "nsid"] "nvme" "Used space of the NVMe namespace in bytes. Available in /sys/class/nvme/<device>/<namespace>/nuse (logical blocks).";
    NODE_NVME_NAMESPACE_LOGICAL_BLOCK_SIZE_BYTES "node_nvme_namespace_logical_block_size_bytes" Gauge ["device", "nsid"] "nvme" "Logical block size of the NVMe namespace in bytes. Usually 4Kb. Available in /sys/class/nvme/<device>/<namespace>/queue/logical_block_size";
    NODE_WATCHDOG_BOOTSTATUS "node_watchdog_bootstatus" Gauge ["name"] "watchdog" "Value of /sys/class/watchdog/<watchdog>/bootstatus";
    NODE_WATCHDOG_FW_VERSION "node_watchdog_fw_version" Gauge ["name"] "watchdog" "Value of /sys/class/watchdog/<watchdog>/fw_version";
    NODE_WATCHDOG_NOWAYOUT "node_watchdog_nowayout" Gauge ["name"] "watchdog" "Value of /sys/class/watchdog/<watchdog>/nowayout";
    NODE_WATCHDOG_TIMELEFT_SECONDS "node_watchdog_timeleft_seconds" Gauge ["name"] "watchdog" "Value of /sys/class/watchdog/<watchdog>/timeleft";
    NODE_WATCHDOG_TIMEOUT_SECONDS "node_watchdog_timeout_seconds" Gauge ["name"] "watchdog" "Value of /sys/class/watchdog/<watchdog>/timeout";
    NODE_WATCHDOG_PRETIMEOUT_SECONDS "node_watchdog_pretimeout_seconds" Gauge ["name"] "watchdog" "Value of /sys/class/watchdog/<watchdog>/pretimeout";
    NODE_WATCHDOG_ACCESS_CS0 "node_watchdog_access_cs0" Gauge ["name"] "watchdog" "Value of /sys/class/watchdog/<watchdog>/access_cs0";
    NODE_WATCHDOG_INFO "node_watchdog_info" Gauge ["name", "options", "identity", "state", "status", "pretimeout_governor"] "watchdog" "Info of /sys/class/watchdog/<watchdog>";
    NODE_RAPL_JOULES_TOTAL "node_rapl_*_joules_total" Counter ["index", "path"] "rapl" "Current RAPL <zone> value in joules (the zone's name without its index: package, core, uncore, dram, psys).";
    NODE_EDAC_CORRECTABLE_ERRORS_TOTAL "node_edac_correctable_errors_total" Counter ["controller"] "edac" "Total correctable memory errors.";
    NODE_EDAC_UNCORRECTABLE_ERRORS_TOTAL "node_edac_uncorrectable_errors_total" Counter ["controller"] "edac" "Total uncorrectable memory errors.";
    NODE_EDAC_CSROW_CORRECTABLE_ERRORS_TOTAL "node_edac_csrow_correctable_errors_total" Counter ["controller", "csrow"] "edac" "Total correctable memory errors for this csrow.";
    NODE_EDAC_CSROW_UNCORRECTABLE_ERRORS_TOTAL "node_edac_csrow_uncorrectable_errors_total" Counter ["controller", "csrow"] "edac" "Total uncorrectable memory errors for this csrow.";
    NODE_EDAC_CHANNEL_CORRECTABLE_ERRORS_TOTAL "node_edac_channel_correctable_errors_total" Counter ["controller", "csrow", "channel", "dimm_label"] "edac" "Total correctable memory errors for this channel.";
    NODE_EDAC_CHANNEL_UNCORRECTABLE_ERRORS_TOTAL "node_edac_channel_uncorrectable_errors_total" Counter ["controller", "csrow", "channel", "dimm_label"] "edac" "Total uncorrectable memory errors for this channel.";
    NODE_TAPE_IO_NOW "node_tape_io_now" Gauge ["device"] "tape" "The number of I/Os currently outstanding to this device.";
    NODE_TAPE_IO_TIME_SECONDS_TOTAL "node_tape_io_time_seconds_total" Counter ["device"] "tape" "The amount of time spent waiting for all I/O to complete (including read and write). This includes tape movement commands such as seeking between file or set marks and implicit tape movement such as when rewind on close tape devices are used.";
    NODE_TAPE_IO_OTHERS_TOTAL "node_tape_io_others_total" Counter ["device"] "tape" "The number of I/Os issued to the tape drive other than read or write commands. The time taken to complete these commands uses the following calculation io_time_seconds_total-read_time_seconds_total-write_time_seconds_total";
    NODE_TAPE_READ_BYTES_TOTAL "node_tape_read_bytes_total" Counter ["device"] "tape" "The number of bytes read from the tape drive.";
    NODE_TAPE_READS_COMPLETED_TOTAL "node_tape_reads_completed_total" Counter ["device"] "tape" "The number of read requests issued to the tape drive.";
    NODE_TAPE_READ_TIME_SECONDS_TOTAL "node_tape_read_time_seconds_total" Counter ["device"] "tape" "The amount of time spent waiting for read requests to complete.";
    NODE_TAPE_RESIDUAL_TOTAL "node_tape_residual_total" Counter ["device"] "tape" "The number of times during a read or write we found the residual amount to be non-zero. This should mean that a program is issuing a read larger thean the block size on tape. For write not all data made it to tape.";
    NODE_TAPE_WRITTEN_BYTES_TOTAL "node_tape_written_bytes_total" Counter ["device"] "tape" "The number of bytes written to the tape drive.";
    NODE_TAPE_WRITES_COMPLETED_TOTAL "node_tape_writes_completed_total" Counter ["device"] "tape" "The number of write requests issued to the tape drive.";
    NODE_TAPE_WRITE_TIME_SECONDS_TOTAL "node_tape_write_time_seconds_total" Counter ["device"] "tape" "The amount of time spent waiting for write requests to complete.";
    NODE_FIBRECHANNEL_INFO "node_fibrechannel_info" Gauge ["fc_host", "speed", "port_state", "port_type", "port_id", "port_name", "fabric_name", "symbolic_name", "supported_classes", "supported_speeds", "dev_loss_tmo"] "fc_host" "Non-numeric data from /sys/class/fc_host/<host>, value is always 1.";
    NODE_FIBRECHANNEL_TOTAL "node_fibrechannel_*_total" Counter ["fc_host"] "fc_host" "A Fibre Channel host's statistics counter (/sys/class/fc_host/<host>/statistics; rx_frames, tx_words, link_failure, ..., as node_exporter names them); counters the firmware does not implement are left out.";
    NODE_INFINIBAND_INFO "node_infiniband_info" Gauge ["board_id", "device", "firmware_version", "hca_type"] "infiniband" "Non-numeric data from /sys/class/infiniband/<device>, value is always 1.";
    NODE_INFINIBAND "node_infiniband_*" Gauge ["device", "port"] "infiniband" "An InfiniBand port's state_id, physical_state_id or rate_bytes_per_second.";
    NODE_INFINIBAND_TOTAL "node_infiniband_*_total" Counter ["device", "port"] "infiniband" "An InfiniBand port's counter (/sys/class/infiniband/<device>/ports/<port>/counters and counters_ext, as node_exporter names them; data in bytes).";
    NODE_XFS_TOTAL "node_xfs_*_total" Counter ["device"] "xfs" "An XFS filesystem's counter from /sys/fs/xfs/<device>/stats/stats, as node_exporter names it (extent_allocation_*, allocation_btree_*, block_mapping_*, block_map_btree_*, directory_operation_*, read_calls, write_calls, vnode_*).";
    NODE_BTRFS_INFO "node_btrfs_info" Gauge ["uuid", "label"] "btrfs" "Filesystem information";
    NODE_BTRFS_COMMITS_TOTAL "node_btrfs_commits_total" Counter ["uuid"] "btrfs" "The total number of commits that have occurred.";
    NODE_BTRFS_LAST_COMMIT_SECONDS "node_btrfs_last_commit_seconds" Gauge ["uuid"] "btrfs" "Duration of the most recent commit, in seconds.";
    NODE_BTRFS_MAX_COMMIT_SECONDS "node_btrfs_max_commit_seconds" Gauge ["uuid"] "btrfs" "Duration of the slowest commit, in seconds.";
    NODE_BTRFS_COMMIT_SECONDS_TOTAL "node_btrfs_commit_seconds_total" Counter ["uuid"] "btrfs" "Sum of the duration of all commits, in seconds.";
    NODE_BTRFS_GLOBAL_RSV_SIZE_BYTES "node_btrfs_global_rsv_size_bytes" Gauge ["uuid"] "btrfs" "Size of global reserve.";
    NODE_BTRFS_RESERVED_BYTES "node_btrfs_reserved_bytes" Gauge ["uuid", "block_group_type"] "btrfs" "Amount of space reserved for a data type";
    NODE_BTRFS_USED_BYTES "node_btrfs_used_bytes" Gauge ["uuid", "block_group_type", "mode"] "btrfs" "Amount of used space by a layout/data type";
    NODE_BTRFS_SIZE_BYTES "node_btrfs_size_bytes" Gauge ["uuid", "block_group_type", "mode"] "btrfs" "Amount of space allocated for a layout/data type";
    NODE_BTRFS_ALLOCATION_RATIO "node_btrfs_allocation_ratio" Gauge ["uuid", "block_group_type", "mode"] "btrfs" "Data allocation ratio for a layout/data type";
    NODE_BTRFS_DEVICE_SIZE_BYTES "node_btrfs_device_size_bytes" Gauge ["uuid", "device", "btrfs_dev_uuid"] "btrfs" "Size of a device that is part of the filesystem.";
    NODE_BTRFS_DEVICE_UNUSED_BYTES "node_btrfs_device_unused_bytes" Gauge ["uuid", "device", "btrfs_dev_uuid"] "btrfs" "Unused bytes unused on a device that is part of the filesystem.";
    NODE_BTRFS_DEVICE_ERRORS_TOTAL "node_btrfs_device_errors_total" Counter ["uuid", "type", "device", "btrfs_dev_uuid"] "btrfs" "Errors reported for the device";
    NODE_NFS_PACKETS_TOTAL "node_nfs_packets_total" Counter ["protocol"] "nfs" "Total NFSd network packets (sent+received) by protocol type.";
    NODE_NFS_CONNECTIONS_TOTAL "node_nfs_connections_total" Counter [] "nfs" "Total number of NFSd TCP connections.";
    NODE_NFS_RPCS_TOTAL "node_nfs_rpcs_total" Counter [] "nfs" "Total number of RPCs performed.";
    NODE_NFS_RPC_RETRANSMISSIONS_TOTAL "node_nfs_rpc_retransmissions_total" Counter [] "nfs" "Number of RPC transmissions performed.";
    NODE_NFS_RPC_AUTHENTICATION_REFRESHES_TOTAL "node_nfs_rpc_authentication_refreshes_total" Counter [] "nfs" "Number of RPC authentication refreshes performed.";
    NODE_NFS_REQUESTS_TOTAL "node_nfs_requests_total" Counter ["proto", "method"] "nfs" "Number of NFS procedures invoked.";
    NODE_NFSD_REPLY_CACHE_HITS_TOTAL "node_nfsd_reply_cache_hits_total" Counter [] "nfsd" "Total number of NFSd Reply Cache hits (client lost server response).";
    NODE_NFSD_REPLY_CACHE_MISSES_TOTAL "node_nfsd_reply_cache_misses_total" Counter [] "nfsd" "Total number of NFSd Reply Cache an operation that requires caching (idempotent).";
    NODE_NFSD_REPLY_CACHE_NOCACHE_TOTAL "node_nfsd_reply_cache_nocache_total" Counter [] "nfsd" "Total number of NFSd Reply Cache non-idempotent operations (rename/delete/…).";
    NODE_NFSD_FILE_HANDLES_STALE_TOTAL "node_nfsd_file_handles_stale_total" Counter [] "nfsd" "Total number of NFSd stale file handles";
    NODE_NFSD_DISK_BYTES_READ_TOTAL "node_nfsd_disk_bytes_read_total" Counter [] "nfsd" "Total NFSd bytes read.";
    NODE_NFSD_DISK_BYTES_WRITTEN_TOTAL "node_nfsd_disk_bytes_written_total" Counter [] "nfsd" "Total NFSd bytes written.";
    NODE_NFSD_SERVER_THREADS "node_nfsd_server_threads" Gauge [] "nfsd" "Total number of NFSd kernel threads that are running.";
    NODE_NFSD_READ_AHEAD_CACHE_SIZE_BLOCKS "node_nfsd_read_ahead_cache_size_blocks" Gauge [] "nfsd" "How large the read ahead cache is in blocks.";
    NODE_NFSD_READ_AHEAD_CACHE_NOT_FOUND_TOTAL "node_nfsd_read_ahead_cache_not_found_total" Counter [] "nfsd" "Total number of NFSd read ahead cache not found.";
    NODE_NFSD_PACKETS_TOTAL "node_nfsd_packets_total" Counter ["proto"] "nfsd" "Total NFSd network packets (sent+received) by protocol type.";
    NODE_NFSD_CONNECTIONS_TOTAL "node_nfsd_connections_total" Counter [] "nfsd" "Total number of NFSd TCP connections.";
    NODE_NFSD_RPC_ERRORS_TOTAL "node_nfsd_rpc_errors_total" Counter ["error"] "nfsd" "Total number of NFSd RPC errors by error type.";
    NODE_NFSD_SERVER_RPCS_TOTAL "node_nfsd_server_rpcs_total" Counter [] "nfsd" "Total number of NFSd RPCs.";
    NODE_NFSD_REQUESTS_TOTAL "node_nfsd_requests_total" Counter ["proto", "method"] "nfsd" "Total number NFSd Requests by method and protocol.";
    NODE_IPVS_CONNECTIONS_TOTAL "node_ipvs_connections_total" Counter [] "ipvs" "The total number of connections made.";
    NODE_IPVS_INCOMING_PACKETS_TOTAL "node_ipvs_incoming_packets_total" Counter [] "ipvs" "The total number of incoming packets.";
    NODE_IPVS_OUTGOING_PACKETS_TOTAL "node_ipvs_outgoing_packets_total" Counter [] "ipvs" "The total number of outgoing packets.";
    NODE_IPVS_INCOMING_BYTES_TOTAL "node_ipvs_incoming_bytes_total" Counter [] "ipvs" "The total amount of incoming data.";
    NODE_IPVS_OUTGOING_BYTES_TOTAL "node_ipvs_outgoing_bytes_total" Counter [] "ipvs" "The total amount of outgoing data.";
    NODE_IPVS_BACKEND_CONNECTIONS_ACTIVE "node_ipvs_backend_connections_active" Gauge ["local_address", "local_port", "remote_address", "remote_port", "proto", "local_mark"] "ipvs" "The current active connections by local and remote address.";
    NODE_IPVS_BACKEND_CONNECTIONS_INACTIVE "node_ipvs_backend_connections_inactive" Gauge ["local_address", "local_port", "remote_address", "remote_port", "proto", "local_mark"] "ipvs" "The current inactive connections by local and remote address.";
    NODE_IPVS_BACKEND_WEIGHT "node_ipvs_backend_weight" Gauge ["local_address", "local_port", "remote_address", "remote_port", "proto", "local_mark"] "ipvs" "The current backend weight by local and remote address.";
    NODE_ZFS "node_zfs_*" Unknown [] "zfs" "A ZFS kstat (help: kstat.zfs.misc.<file>.<name>), named node_zfs_<abd|arc|dbuf|dmu_tx|dnode|fm|vdev_cache|vdev_mirror|xuio|zfetch|zil>_<name> as node_exporter.";
    NODE_ZFS_ZPOOL "node_zfs_zpool_*" Unknown ["zpool"] "zfs" "A pool's I/O statistic from /proc/spl/kstat/zfs/<pool>/io (nread, nwritten, reads, writes, wtime, ...).";
    NODE_ZFS_ZPOOL_DATASET "node_zfs_zpool_dataset_*" Unknown ["zpool", "dataset"] "zfs" "A dataset's statistic from /proc/spl/kstat/zfs/<pool>/objset-* (reads, writes, nread, nwritten, ...).";
    NODE_ZFS_ZPOOL_STATE "node_zfs_zpool_state" Gauge ["zpool", "state"] "zfs" "kstat.zfs.misc.state";
    NODE_BCACHE_AVERAGE_KEY_SIZE_SECTORS "node_bcache_average_key_size_sectors" Gauge ["uuid"] "bcache" "Average data per key in the btree (sectors).";
    NODE_BCACHE_BTREE_CACHE_SIZE_BYTES "node_bcache_btree_cache_size_bytes" Gauge ["uuid"] "bcache" "Amount of memory currently used by the btree cache.";
    NODE_BCACHE_CACHE_AVAILABLE_PERCENT "node_bcache_cache_available_percent" Gauge ["uuid"] "bcache" "Percentage of cache device without dirty data, usable for writeback (may contain clean cached data).";
    NODE_BCACHE_CONGESTED "node_bcache_congested" Gauge ["uuid"] "bcache" "Congestion.";
    NODE_BCACHE_ROOT_USAGE_PERCENT "node_bcache_root_usage_percent" Gauge ["uuid"] "bcache" "Percentage of the root btree node in use (tree depth increases if too high).";
    NODE_BCACHE_TREE_DEPTH "node_bcache_tree_depth" Gauge ["uuid"] "bcache" "Depth of the btree.";
    NODE_BCACHE_ACTIVE_JOURNAL_ENTRIES "node_bcache_active_journal_entries" Gauge ["uuid"] "bcache" "Number of journal entries that are newer than the index.";
    NODE_BCACHE_BTREE_NODES "node_bcache_btree_nodes" Gauge ["uuid"] "bcache" "Total nodes in the btree.";
    NODE_BCACHE_BTREE_READ_AVERAGE_DURATION_SECONDS "node_bcache_btree_read_average_duration_seconds" Gauge ["uuid"] "bcache" "Average btree read duration.";
    NODE_BCACHE_CACHE_READ_RACES_TOTAL "node_bcache_cache_read_races_total" Counter ["uuid"] "bcache" "Counts instances where while data was being read from the cache, the bucket was reused and invalidated - i.e. where the pointer was stale after the read completed.";
    NODE_BCACHE_DIRTY_DATA_BYTES "node_bcache_dirty_data_bytes" Gauge ["uuid", "backing_device"] "bcache" "Amount of dirty data for this backing device in the cache.";
    NODE_BCACHE_DIRTY_TARGET_BYTES "node_bcache_dirty_target_bytes" Gauge ["uuid", "backing_device"] "bcache" "Current dirty data target threshold in bytes.";
    NODE_BCACHE_WRITEBACK_RATE "node_bcache_writeback_rate" Gauge ["uuid", "backing_device"] "bcache" "Current writeback rate in bytes.";
    NODE_BCACHE_WRITEBACK_RATE_PROPORTIONAL_TERM "node_bcache_writeback_rate_proportional_term" Gauge ["uuid", "backing_device"] "bcache" "Current result of proportional controller, part of writeback rate";
    NODE_BCACHE_WRITEBACK_RATE_INTEGRAL_TERM "node_bcache_writeback_rate_integral_term" Gauge ["uuid", "backing_device"] "bcache" "Current result of integral controller, part of writeback rate";
    NODE_BCACHE_WRITEBACK_CHANGE "node_bcache_writeback_change" Gauge ["uuid", "backing_device"] "bcache" "Last writeback rate change.";
    NODE_BCACHE_BYPASSED_BYTES_TOTAL "node_bcache_bypassed_bytes_total" Counter ["uuid", "backing_device"] "bcache" "Amount of IO (both reads and writes) that has bypassed the cache.";
    NODE_BCACHE_CACHE_HITS_TOTAL "node_bcache_cache_hits_total" Counter ["uuid", "backing_device"] "bcache" "Hits counted per individual IO as bcache sees them.";
    NODE_BCACHE_CACHE_MISSES_TOTAL "node_bcache_cache_misses_total" Counter ["uuid", "backing_device"] "bcache" "Misses counted per individual IO as bcache sees them.";
    NODE_BCACHE_CACHE_BYPASS_HITS_TOTAL "node_bcache_cache_bypass_hits_total" Counter ["uuid", "backing_device"] "bcache" "Hits for IO intended to skip the cache.";
    NODE_BCACHE_CACHE_BYPASS_MISSES_TOTAL "node_bcache_cache_bypass_misses_total" Counter ["uuid", "backing_device"] "bcache" "Misses for IO intended to skip the cache.";
    NODE_BCACHE_CACHE_MISS_COLLISIONS_TOTAL "node_bcache_cache_miss_collisions_total" Counter ["uuid", "backing_device"] "bcache" "Instances where data insertion from cache miss raced with write (data already present).";
    NODE_BCACHE_CACHE_READAHEADS_TOTAL "node_bcache_cache_readaheads_total" Counter ["uuid", "backing_device"] "bcache" "Count of times readahead occurred.";
    NODE_BCACHE_IO_ERRORS "node_bcache_io_errors" Gauge ["uuid", "cache_device"] "bcache" "Number of errors that have occurred, decayed by io_error_halflife.";
    NODE_BCACHE_METADATA_WRITTEN_BYTES_TOTAL "node_bcache_metadata_written_bytes_total" Counter ["uuid", "cache_device"] "bcache" "Sum of all non data writes (btree writes and all other metadata).";
    NODE_BCACHE_WRITTEN_BYTES_TOTAL "node_bcache_written_bytes_total" Counter ["uuid", "cache_device"] "bcache" "Sum of all data that has been written to the cache.";
    NODE_PROCESSES_PIDS "node_processes_pids" Gauge [] "processes" "Number of PIDs";
    NODE_PROCESSES_THREADS "node_processes_threads" Gauge [] "processes" "Allocated threads in system";
    NODE_PROCESSES_STATE "node_processes_state" Gauge ["state"] "processes" "Number of processes in each state.";
    NODE_PROCESSES_MAX_PROCESSES "node_processes_max_processes" Gauge [] "task_limits" "Number of max PIDs limit";
    NODE_PROCESSES_MAX_THREADS "node_processes_max_threads" Gauge [] "task_limits" "Limit of threads in the system";
    NODE_KERNEL_HUNG_TASKS_TOTAL "node_kernel_hung_tasks_total" Counter [] "kernel_hung" "Total number of tasks that have been detected as hung since the system booted.";
    NODE_LNSTAT_TOTAL "node_lnstat_*_total" Counter ["cpu", "subsystem"] "lnstat" "linux network cache stats (a family per column of /proc/net/stat/*: node_lnstat_allocs_total, node_lnstat_entries_total, ...).";
    NODE_BCACHEFS_INFO "node_bcachefs_info" Gauge ["uuid"] "bcachefs" "Filesystem information.";
    NODE_BCACHEFS_BTREE_CACHE_SIZE_BYTES "node_bcachefs_btree_cache_size_bytes" Gauge ["uuid"] "bcachefs" "Btree cache memory usage in bytes.";
    NODE_BCACHEFS_COMPRESSION_COMPRESSED_BYTES "node_bcachefs_compression_compressed_bytes" Gauge ["uuid", "algorithm"] "bcachefs" "Compressed size by algorithm.";
    NODE_BCACHEFS_COMPRESSION_UNCOMPRESSED_BYTES "node_bcachefs_compression_uncompressed_bytes" Gauge ["uuid", "algorithm"] "bcachefs" "Uncompressed size by algorithm.";
    NODE_BCACHEFS_ERRORS_TOTAL "node_bcachefs_errors_total" Counter ["uuid", "error_type"] "bcachefs" "Error count by error type.";
    NODE_BCACHEFS_BTREE_WRITES_TOTAL "node_bcachefs_btree_writes_total" Counter ["uuid", "type"] "bcachefs" "Number of btree writes by type.";
    NODE_BCACHEFS_BTREE_WRITE_AVERAGE_SIZE_BYTES "node_bcachefs_btree_write_average_size_bytes" Gauge ["uuid", "type"] "bcachefs" "Average btree write size by type.";
    NODE_BCACHEFS_DEVICE_INFO "node_bcachefs_device_info" Gauge ["uuid", "device", "label", "state"] "bcachefs" "Device information.";
    NODE_BCACHEFS_DEVICE_BUCKET_SIZE_BYTES "node_bcachefs_device_bucket_size_bytes" Gauge ["uuid", "device"] "bcachefs" "Bucket size in bytes.";
    NODE_BCACHEFS_DEVICE_BUCKETS "node_bcachefs_device_buckets" Gauge ["uuid", "device"] "bcachefs" "Total number of buckets.";
    NODE_BCACHEFS_DEVICE_DURABILITY "node_bcachefs_device_durability" Gauge ["uuid", "device"] "bcachefs" "Device durability setting.";
    NODE_BCACHEFS_DEVICE_IO_DONE_BYTES_TOTAL "node_bcachefs_device_io_done_bytes_total" Counter ["uuid", "device", "operation", "data_type"] "bcachefs" "IO bytes by operation type and data type.";
    NODE_BCACHEFS_DEVICE_IO_ERRORS_TOTAL "node_bcachefs_device_io_errors_total" Counter ["uuid", "device", "type"] "bcachefs" "IO errors by error type.";
    NODE_BCACHEFS_COUNTER_TOTAL "node_bcachefs_*_total" Counter ["uuid"] "bcachefs" "Bcachefs counter since filesystem creation (a family per file of counters/: node_bcachefs_btree_node_read_total, node_bcachefs_data_read_total, ...).";
    NODE_MOUNTSTATS_NFS_AGE_SECONDS_TOTAL "node_mountstats_nfs_age_seconds_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "The age of the NFS mount in seconds.";
    NODE_MOUNTSTATS_NFS_MOUNTPOINT_INFO "node_mountstats_nfs_mountpoint_info" Gauge ["export", "protocol", "mountaddr", "mountpoint"] "mountstats" "Info metric for an NFS mountpoint.";
    NODE_MOUNTSTATS_NFS_READ_BYTES_TOTAL "node_mountstats_nfs_read_bytes_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of bytes read using the read() syscall.";
    NODE_MOUNTSTATS_NFS_WRITE_BYTES_TOTAL "node_mountstats_nfs_write_bytes_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of bytes written using the write() syscall.";
    NODE_MOUNTSTATS_NFS_DIRECT_READ_BYTES_TOTAL "node_mountstats_nfs_direct_read_bytes_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of bytes read using the read() syscall in O_DIRECT mode.";
    NODE_MOUNTSTATS_NFS_DIRECT_WRITE_BYTES_TOTAL "node_mountstats_nfs_direct_write_bytes_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of bytes written using the write() syscall in O_DIRECT mode.";
    NODE_MOUNTSTATS_NFS_TOTAL_READ_BYTES_TOTAL "node_mountstats_nfs_total_read_bytes_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of bytes read from the NFS server, in total.";
    NODE_MOUNTSTATS_NFS_TOTAL_WRITE_BYTES_TOTAL "node_mountstats_nfs_total_write_bytes_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of bytes written to the NFS server, in total.";
    NODE_MOUNTSTATS_NFS_READ_PAGES_TOTAL "node_mountstats_nfs_read_pages_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of pages read directly via mmap()'d files.";
    NODE_MOUNTSTATS_NFS_WRITE_PAGES_TOTAL "node_mountstats_nfs_write_pages_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of pages written directly via mmap()'d files.";
    NODE_MOUNTSTATS_NFS_TRANSPORT_BIND_TOTAL "node_mountstats_nfs_transport_bind_total" Counter ["export", "protocol", "mountaddr", "transport"] "mountstats" "Number of times the client has had to establish a connection from scratch to the NFS server.";
    NODE_MOUNTSTATS_NFS_TRANSPORT_CONNECT_TOTAL "node_mountstats_nfs_transport_connect_total" Counter ["export", "protocol", "mountaddr", "transport"] "mountstats" "Number of times the client has made a TCP connection to the NFS server.";
    NODE_MOUNTSTATS_NFS_TRANSPORT_IDLE_TIME_SECONDS "node_mountstats_nfs_transport_idle_time_seconds" Gauge ["export", "protocol", "mountaddr", "transport"] "mountstats" "Duration since the NFS mount last saw any RPC traffic, in seconds.";
    NODE_MOUNTSTATS_NFS_TRANSPORT_SENDS_TOTAL "node_mountstats_nfs_transport_sends_total" Counter ["export", "protocol", "mountaddr", "transport"] "mountstats" "Number of RPC requests for this mount sent to the NFS server.";
    NODE_MOUNTSTATS_NFS_TRANSPORT_RECEIVES_TOTAL "node_mountstats_nfs_transport_receives_total" Counter ["export", "protocol", "mountaddr", "transport"] "mountstats" "Number of RPC responses for this mount received from the NFS server.";
    NODE_MOUNTSTATS_NFS_TRANSPORT_BAD_TRANSACTION_IDS_TOTAL "node_mountstats_nfs_transport_bad_transaction_ids_total" Counter ["export", "protocol", "mountaddr", "transport"] "mountstats" "Number of times the NFS server sent a response with a transaction ID unknown to this client.";
    NODE_MOUNTSTATS_NFS_TRANSPORT_BACKLOG_QUEUE_TOTAL "node_mountstats_nfs_transport_backlog_queue_total" Counter ["export", "protocol", "mountaddr", "transport"] "mountstats" "Total number of items added to the RPC backlog queue.";
    NODE_MOUNTSTATS_NFS_TRANSPORT_MAXIMUM_RPC_SLOTS "node_mountstats_nfs_transport_maximum_rpc_slots" Gauge ["export", "protocol", "mountaddr", "transport"] "mountstats" "Maximum number of simultaneously active RPC requests ever used.";
    NODE_MOUNTSTATS_NFS_TRANSPORT_SENDING_QUEUE_TOTAL "node_mountstats_nfs_transport_sending_queue_total" Counter ["export", "protocol", "mountaddr", "transport"] "mountstats" "Total number of items added to the RPC transmission sending queue.";
    NODE_MOUNTSTATS_NFS_TRANSPORT_PENDING_QUEUE_TOTAL "node_mountstats_nfs_transport_pending_queue_total" Counter ["export", "protocol", "mountaddr", "transport"] "mountstats" "Total number of items added to the RPC transmission pending queue.";
    NODE_MOUNTSTATS_NFS_OPERATIONS_REQUESTS_TOTAL "node_mountstats_nfs_operations_requests_total" Counter ["export", "protocol", "mountaddr", "operation"] "mountstats" "Number of requests performed for a given operation.";
    NODE_MOUNTSTATS_NFS_OPERATIONS_TRANSMISSIONS_TOTAL "node_mountstats_nfs_operations_transmissions_total" Counter ["export", "protocol", "mountaddr", "operation"] "mountstats" "Number of times an actual RPC request has been transmitted for a given operation.";
    NODE_MOUNTSTATS_NFS_OPERATIONS_MAJOR_TIMEOUTS_TOTAL "node_mountstats_nfs_operations_major_timeouts_total" Counter ["export", "protocol", "mountaddr", "operation"] "mountstats" "Number of times a request has had a major timeout for a given operation.";
    NODE_MOUNTSTATS_NFS_OPERATIONS_SENT_BYTES_TOTAL "node_mountstats_nfs_operations_sent_bytes_total" Counter ["export", "protocol", "mountaddr", "operation"] "mountstats" "Number of bytes sent for a given operation, including RPC headers and payload.";
    NODE_MOUNTSTATS_NFS_OPERATIONS_RECEIVED_BYTES_TOTAL "node_mountstats_nfs_operations_received_bytes_total" Counter ["export", "protocol", "mountaddr", "operation"] "mountstats" "Number of bytes received for a given operation, including RPC headers and payload.";
    NODE_MOUNTSTATS_NFS_OPERATIONS_QUEUE_TIME_SECONDS_TOTAL "node_mountstats_nfs_operations_queue_time_seconds_total" Counter ["export", "protocol", "mountaddr", "operation"] "mountstats" "Duration all requests spent queued for transmission for a given operation before they were sent, in seconds.";
    NODE_MOUNTSTATS_NFS_OPERATIONS_RESPONSE_TIME_SECONDS_TOTAL "node_mountstats_nfs_operations_response_time_seconds_total" Counter ["export", "protocol", "mountaddr", "operation"] "mountstats" "Duration all requests took to get a reply back after a request for a given operation was transmitted, in seconds.";
    NODE_MOUNTSTATS_NFS_OPERATIONS_REQUEST_TIME_SECONDS_TOTAL "node_mountstats_nfs_operations_request_time_seconds_total" Counter ["export", "protocol", "mountaddr", "operation"] "mountstats" "Duration all requests took from when a request was enqueued to when it was completely handled for a given operation, in seconds.";
    NODE_MOUNTSTATS_NFS_EVENT_INODE_REVALIDATE_TOTAL "node_mountstats_nfs_event_inode_revalidate_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times cached inode attributes are re-validated from the server.";
    NODE_MOUNTSTATS_NFS_EVENT_DNODE_REVALIDATE_TOTAL "node_mountstats_nfs_event_dnode_revalidate_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times cached dentry nodes are re-validated from the server.";
    NODE_MOUNTSTATS_NFS_EVENT_DATA_INVALIDATE_TOTAL "node_mountstats_nfs_event_data_invalidate_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times an inode cache is cleared.";
    NODE_MOUNTSTATS_NFS_EVENT_ATTRIBUTE_INVALIDATE_TOTAL "node_mountstats_nfs_event_attribute_invalidate_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times cached inode attributes are invalidated.";
    NODE_MOUNTSTATS_NFS_EVENT_VFS_OPEN_TOTAL "node_mountstats_nfs_event_vfs_open_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times cached inode attributes are invalidated.";
    NODE_MOUNTSTATS_NFS_EVENT_VFS_LOOKUP_TOTAL "node_mountstats_nfs_event_vfs_lookup_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times a directory lookup has occurred.";
    NODE_MOUNTSTATS_NFS_EVENT_VFS_ACCESS_TOTAL "node_mountstats_nfs_event_vfs_access_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times permissions have been checked.";
    NODE_MOUNTSTATS_NFS_EVENT_VFS_UPDATE_PAGE_TOTAL "node_mountstats_nfs_event_vfs_update_page_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of updates (and potential writes) to pages.";
    NODE_MOUNTSTATS_NFS_EVENT_VFS_READ_PAGE_TOTAL "node_mountstats_nfs_event_vfs_read_page_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of pages read directly via mmap()'d files.";
    NODE_MOUNTSTATS_NFS_EVENT_VFS_READ_PAGES_TOTAL "node_mountstats_nfs_event_vfs_read_pages_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times a group of pages have been read.";
    NODE_MOUNTSTATS_NFS_EVENT_VFS_WRITE_PAGE_TOTAL "node_mountstats_nfs_event_vfs_write_page_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of pages written directly via mmap()'d files.";
    NODE_MOUNTSTATS_NFS_EVENT_VFS_WRITE_PAGES_TOTAL "node_mountstats_nfs_event_vfs_write_pages_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times a group of pages have been written.";
    NODE_MOUNTSTATS_NFS_EVENT_VFS_GETDENTS_TOTAL "node_mountstats_nfs_event_vfs_getdents_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times directory entries have been read with getdents().";
    NODE_MOUNTSTATS_NFS_EVENT_VFS_SETATTR_TOTAL "node_mountstats_nfs_event_vfs_setattr_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times directory entries have been read with getdents().";
    NODE_MOUNTSTATS_NFS_EVENT_VFS_FLUSH_TOTAL "node_mountstats_nfs_event_vfs_flush_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of pending writes that have been forcefully flushed to the server.";
    NODE_MOUNTSTATS_NFS_EVENT_VFS_FSYNC_TOTAL "node_mountstats_nfs_event_vfs_fsync_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times fsync() has been called on directories and files.";
    NODE_MOUNTSTATS_NFS_EVENT_VFS_LOCK_TOTAL "node_mountstats_nfs_event_vfs_lock_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times locking has been attempted on a file.";
    NODE_MOUNTSTATS_NFS_EVENT_VFS_FILE_RELEASE_TOTAL "node_mountstats_nfs_event_vfs_file_release_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times files have been closed and released.";
    NODE_MOUNTSTATS_NFS_EVENT_TRUNCATION_TOTAL "node_mountstats_nfs_event_truncation_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times files have been truncated.";
    NODE_MOUNTSTATS_NFS_EVENT_WRITE_EXTENSION_TOTAL "node_mountstats_nfs_event_write_extension_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times a file has been grown due to writes beyond its existing end.";
    NODE_MOUNTSTATS_NFS_EVENT_SILLY_RENAME_TOTAL "node_mountstats_nfs_event_silly_rename_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times a file was removed while still open by another process.";
    NODE_MOUNTSTATS_NFS_EVENT_SHORT_READ_TOTAL "node_mountstats_nfs_event_short_read_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times the NFS server gave less data than expected while reading.";
    NODE_MOUNTSTATS_NFS_EVENT_SHORT_WRITE_TOTAL "node_mountstats_nfs_event_short_write_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times the NFS server wrote less data than expected while writing.";
    NODE_MOUNTSTATS_NFS_EVENT_JUKEBOX_DELAY_TOTAL "node_mountstats_nfs_event_jukebox_delay_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of times the NFS server indicated EJUKEBOX; retrieving data from offline storage.";
    NODE_MOUNTSTATS_NFS_EVENT_PNFS_READ_TOTAL "node_mountstats_nfs_event_pnfs_read_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of NFS v4.1+ pNFS reads.";
    NODE_MOUNTSTATS_NFS_EVENT_PNFS_WRITE_TOTAL "node_mountstats_nfs_event_pnfs_write_total" Counter ["export", "protocol", "mountaddr"] "mountstats" "Number of NFS v4.1+ pNFS writes.";
    NODE_PCIDEVICE_INFO "node_pcidevice_info" Gauge ["segment", "bus", "device", "function", "parent_segment", "parent_bus", "parent_device", "parent_function", "class_id", "vendor_id", "device_id", "subsystem_vendor_id", "subsystem_device_id", "revision"] "pcidevice" "Non-numeric data from /sys/bus/pci/devices/<location>, value is always 1.";
    NODE_PCIDEVICE_MAX_LINK_TRANSFERS_PER_SECOND "node_pcidevice_max_link_transfers_per_second" Gauge ["segment", "bus", "device", "function"] "pcidevice" "Value of maximum link's transfers per second (T/s)";
    NODE_PCIDEVICE_MAX_LINK_WIDTH "node_pcidevice_max_link_width" Gauge ["segment", "bus", "device", "function"] "pcidevice" "Value of maximum link's width (number of lanes)";
    NODE_PCIDEVICE_CURRENT_LINK_TRANSFERS_PER_SECOND "node_pcidevice_current_link_transfers_per_second" Gauge ["segment", "bus", "device", "function"] "pcidevice" "Value of current link's transfers per second (T/s)";
    NODE_PCIDEVICE_CURRENT_LINK_WIDTH "node_pcidevice_current_link_width" Gauge ["segment", "bus", "device", "function"] "pcidevice" "Value of current link's width (number of lanes)";
    NODE_PCIDEVICE_D3COLD_ALLOWED "node_pcidevice_d3cold_allowed" Gauge ["segment", "bus", "device", "function"] "pcidevice" "Whether the PCIe device supports D3cold power state (0/1).";
    NODE_PCIDEVICE_SRIOV_DRIVERS_AUTOPROBE "node_pcidevice_sriov_drivers_autoprobe" Gauge ["segment", "bus", "device", "function"] "pcidevice" "Whether SR-IOV drivers autoprobe is enabled for the device (0/1).";
    NODE_PCIDEVICE_SRIOV_NUMVFS "node_pcidevice_sriov_numvfs" Gauge ["segment", "bus", "device", "function"] "pcidevice" "Number of Virtual Functions (VFs) currently enabled for SR-IOV.";
    NODE_PCIDEVICE_SRIOV_TOTALVFS "node_pcidevice_sriov_totalvfs" Gauge ["segment", "bus", "device", "function"] "pcidevice" "Total number of Virtual Functions (VFs) supported by the device.";
    NODE_PCIDEVICE_SRIOV_VF_TOTAL_MSIX "node_pcidevice_sriov_vf_total_msix" Gauge ["segment", "bus", "device", "function"] "pcidevice" "Total number of MSI-X vectors for Virtual Functions.";
    NODE_PCIDEVICE_POWER_STATE "node_pcidevice_power_state" Gauge ["segment", "bus", "device", "function", "state"] "pcidevice" "PCIe device power state, one of: D0, D1, D2, D3hot, D3cold, unknown or error.";
    NODE_PCIDEVICE_NUMA_NODE "node_pcidevice_numa_node" Gauge ["segment", "bus", "device", "function"] "pcidevice" "NUMA node number for the PCI device. -1 indicates unknown or not available.";
    NODE_CPU_VULNERABILITIES_INFO "node_cpu_vulnerabilities_info" Gauge ["codename", "state", "mitigation"] "cpu_vulnerabilities" "Details of each CPU vulnerability reported by sysfs. The value of the series is an int encoded state of the vulnerability. The same state is stored as a string in the label";
    NODE_SYSCTL "node_sysctl_*" Unknown [] "sysctl" "sysctl NAME: a configured sysctl's number (a family each: node_sysctl_kernel_threads_max; `index` labels a sysctl of several numbers, and a family a field where the configuration names the fields: node_sysctl_fs_file_nr_total).";
    NODE_SYSCTL_INFO "node_sysctl_info" Gauge ["name", "value", "index"] "sysctl" "sysctl info";
    NODE_DRBD_NETWORK_SENT_BYTES_TOTAL "node_drbd_network_sent_bytes_total" Counter ["device"] "drbd" "Total number of bytes sent via the network.";
    NODE_DRBD_NETWORK_RECEIVED_BYTES_TOTAL "node_drbd_network_received_bytes_total" Counter ["device"] "drbd" "Total number of bytes received via the network.";
    NODE_DRBD_DISK_WRITTEN_BYTES_TOTAL "node_drbd_disk_written_bytes_total" Counter ["device"] "drbd" "Net data written on local hard disk; in bytes.";
    NODE_DRBD_DISK_READ_BYTES_TOTAL "node_drbd_disk_read_bytes_total" Counter ["device"] "drbd" "Net data read from local hard disk; in bytes.";
    NODE_DRBD_ACTIVITYLOG_WRITES_TOTAL "node_drbd_activitylog_writes_total" Counter ["device"] "drbd" "Number of updates of the activity log area of the meta data.";
    NODE_DRBD_BITMAP_WRITES_TOTAL "node_drbd_bitmap_writes_total" Counter ["device"] "drbd" "Number of updates of the bitmap area of the meta data.";
    NODE_DRBD_LOCAL_PENDING "node_drbd_local_pending" Gauge ["device"] "drbd" "Number of open requests to the local I/O sub-system.";
    NODE_DRBD_REMOTE_PENDING "node_drbd_remote_pending" Gauge ["device"] "drbd" "Number of requests sent to the peer, but that have not yet been answered by the latter.";
    NODE_DRBD_REMOTE_UNACKNOWLEDGED "node_drbd_remote_unacknowledged" Gauge ["device"] "drbd" "Number of requests received by the peer via the network connection, but that have not yet been answered.";
    NODE_DRBD_APPLICATION_PENDING "node_drbd_application_pending" Gauge ["device"] "drbd" "Number of block I/O requests forwarded to DRBD, but not yet answered by DRBD.";
    NODE_DRBD_EPOCHS "node_drbd_epochs" Gauge ["device"] "drbd" "Number of Epochs currently on the fly.";
    NODE_DRBD_OUT_OF_SYNC_BYTES "node_drbd_out_of_sync_bytes" Gauge ["device"] "drbd" "Amount of data known to be out of sync; in bytes.";
    NODE_DRBD_NODE_ROLE_IS_PRIMARY "node_drbd_node_role_is_primary" Gauge ["device", "node"] "drbd" "Whether the role of the node is in the primary state.";
    NODE_DRBD_DISK_STATE_IS_UP_TO_DATE "node_drbd_disk_state_is_up_to_date" Gauge ["device", "node"] "drbd" "Whether the disk of the node is up to date.";
    NODE_DRBD_CONNECTED "node_drbd_connected" Gauge ["device"] "drbd" "Whether DRBD is connected to the peer.";
    NODE_DMMULTIPATH_DEVICE_INFO "node_dmmultipath_device_info" Gauge ["device", "sysfs_name", "uuid"] "dmmultipath" "Non-numeric information about a DM-multipath device.";
    NODE_DMMULTIPATH_DEVICE_ACTIVE "node_dmmultipath_device_active" Gauge ["device", "sysfs_name"] "dmmultipath" "Whether the multipath device-mapper device is active (1) or suspended (0).";
    NODE_DMMULTIPATH_DEVICE_SIZE_BYTES "node_dmmultipath_device_size_bytes" Gauge ["device", "sysfs_name"] "dmmultipath" "Size of the multipath device in bytes, read from /sys/block/<dm>/size.";
    NODE_DMMULTIPATH_DEVICE_PATHS "node_dmmultipath_device_paths" Gauge ["device", "sysfs_name"] "dmmultipath" "Number of paths for a multipath device.";
    NODE_DMMULTIPATH_DEVICE_PATHS_ACTIVE "node_dmmultipath_device_paths_active" Gauge ["device", "sysfs_name"] "dmmultipath" "Number of paths in active state (SCSI running or NVMe live) for a multipath device.";
    NODE_DMMULTIPATH_DEVICE_PATHS_FAILED "node_dmmultipath_device_paths_failed" Gauge ["device", "sysfs_name"] "dmmultipath" "Number of paths not in active state for a multipath device.";
    NODE_DMMULTIPATH_PATH_STATE "node_dmmultipath_path_state" Gauge ["device", "path", "state"] "dmmultipath" "Reports the underlying device state for a multipath path, as read from /sys/block/<dev>/device/state.";
    NODE_SYSTEMD_UNIT_STATE "node_systemd_unit_state" Gauge ["name", "state", "type"] "systemd" "Systemd unit";
    NODE_SYSTEMD_UNIT_START_TIME_SECONDS "node_systemd_unit_start_time_seconds" Gauge ["name"] "systemd" "Start time of the unit since unix epoch in seconds.";
    NODE_SYSTEMD_UNIT_TASKS_CURRENT "node_systemd_unit_tasks_current" Gauge ["name"] "systemd" "Current number of tasks per Systemd unit";
    NODE_SYSTEMD_UNIT_TASKS_MAX "node_systemd_unit_tasks_max" Gauge ["name"] "systemd" "Maximum number of tasks per Systemd unit";
    NODE_SYSTEMD_SYSTEM_RUNNING "node_systemd_system_running" Gauge [] "systemd" "Whether the system is operational (see 'systemctl is-system-running')";
    NODE_SYSTEMD_UNITS "node_systemd_units" Gauge ["state"] "systemd" "Summary of systemd unit states";
    NODE_SYSTEMD_SERVICE_RESTART_TOTAL "node_systemd_service_restart_total" Counter ["name"] "systemd" "Service unit count of Restart triggers";
    NODE_SYSTEMD_TIMER_LAST_TRIGGER_SECONDS "node_systemd_timer_last_trigger_seconds" Gauge ["name"] "systemd" "Seconds since epoch of last trigger.";
    NODE_SYSTEMD_SOCKET_ACCEPTED_CONNECTIONS_TOTAL "node_systemd_socket_accepted_connections_total" Counter ["name"] "systemd" "Total number of accepted socket connections";
    NODE_SYSTEMD_SOCKET_CURRENT_CONNECTIONS "node_systemd_socket_current_connections" Gauge ["name"] "systemd" "Current number of socket connections";
    NODE_SYSTEMD_SOCKET_REFUSED_CONNECTIONS_TOTAL "node_systemd_socket_refused_connections_total" Counter ["name"] "systemd" "Total number of refused socket connections";
    NODE_SYSTEMD_VERSION "node_systemd_version" Gauge ["version"] "systemd" "Detected systemd version";
    NODE_SYSTEMD_VIRTUALIZATION_INFO "node_systemd_virtualization_info" Gauge ["virtualization_type"] "systemd" "Detected virtualization technology";
    NODE_SWAP_SIZE_BYTES "node_swap_size_bytes" Gauge ["device", "swap_type"] "swap" "Swap device size in bytes.";
    NODE_SWAP_USED_BYTES "node_swap_used_bytes" Gauge ["device", "swap_type"] "swap" "Swap device used in bytes.";
    NODE_SWAP_PRIORITY "node_swap_priority" Gauge ["device", "swap_type"] "swap" "Swap device priority.";
    NODE_QDISC_BYTES_TOTAL "node_qdisc_bytes_total" Counter ["device", "kind"] "qdisc" "Number of bytes sent.";
    NODE_QDISC_PACKETS_TOTAL "node_qdisc_packets_total" Counter ["device", "kind"] "qdisc" "Number of packets sent.";
    NODE_QDISC_DROPS_TOTAL "node_qdisc_drops_total" Counter ["device", "kind"] "qdisc" "Number of packets dropped.";
    NODE_QDISC_REQUEUES_TOTAL "node_qdisc_requeues_total" Counter ["device", "kind"] "qdisc" "Number of packets dequeued, not transmitted, and requeued.";
    NODE_QDISC_OVERLIMITS_TOTAL "node_qdisc_overlimits_total" Counter ["device", "kind"] "qdisc" "Number of overlimit packets.";
    NODE_QDISC_CURRENT_QUEUE_LENGTH "node_qdisc_current_queue_length" Gauge ["device", "kind"] "qdisc" "Number of packets currently in queue to be sent.";
    NODE_QDISC_BACKLOG "node_qdisc_backlog" Gauge ["device", "kind"] "qdisc" "Number of bytes currently in queue to be sent.";
    NODE_ETHTOOL_INFO "node_ethtool_info" Gauge ["bus_info", "device", "driver", "expansion_rom_version", "firmware_version", "version"] "ethtool" "A metric with a constant '1' value labeled by bus_info, device, driver, expansion_rom_version, firmware_version, version.";
    NODE_ETHTOOL_RECEIVED_BYTES_TOTAL "node_ethtool_received_bytes_total" Counter ["device"] "ethtool" "Network interface bytes received";
    NODE_ETHTOOL_RECEIVED_DROPPED_TOTAL "node_ethtool_received_dropped_total" Counter ["device"] "ethtool" "Number of received frames dropped";
    NODE_ETHTOOL_RECEIVED_ERRORS_TOTAL "node_ethtool_received_errors_total" Counter ["device"] "ethtool" "Number of received frames with errors";
    NODE_ETHTOOL_RECEIVED_PACKETS_TOTAL "node_ethtool_received_packets_total" Counter ["device"] "ethtool" "Network interface packets received";
    NODE_ETHTOOL_TRANSMITTED_BYTES_TOTAL "node_ethtool_transmitted_bytes_total" Counter ["device"] "ethtool" "Network interface bytes sent";
    NODE_ETHTOOL_TRANSMITTED_ERRORS_TOTAL "node_ethtool_transmitted_errors_total" Counter ["device"] "ethtool" "Number of sent frames with errors";
    NODE_ETHTOOL_TRANSMITTED_PACKETS_TOTAL "node_ethtool_transmitted_packets_total" Counter ["device"] "ethtool" "Network interface packets sent";
    NODE_ETHTOOL "node_ethtool_*" Unknown ["device"] "ethtool" "A driver statistic (ethtool -S), named as node_exporter names it: sanitized, lower case, rx and tx spelled received and transmitted (help: Network interface <statistic>).";
    NODE_NETWORK_SUPPORTED_PORT_INFO "node_network_supported_port_info" Gauge ["device", "type"] "ethtool" "Type of ports or PHYs supported by network device";
    NODE_NETWORK_SUPPORTED_SPEED_BYTES "node_network_supported_speed_bytes" Gauge ["device", "duplex", "mode"] "ethtool" "Combination of speeds and features supported by network device";
    NODE_NETWORK_AUTONEGOTIATE_SUPPORTED "node_network_autonegotiate_supported" Gauge ["device"] "ethtool" "If this port device supports autonegotiate";
    NODE_NETWORK_PAUSE_SUPPORTED "node_network_pause_supported" Gauge ["device"] "ethtool" "If this port device supports pause frames";
    NODE_NETWORK_ASYMMETRICPAUSE_SUPPORTED "node_network_asymmetricpause_supported" Gauge ["device"] "ethtool" "If this port device supports asymmetric pause frames";
    NODE_NETWORK_ADVERTISED_SPEED_BYTES "node_network_advertised_speed_bytes" Gauge ["device", "duplex", "mode"] "ethtool" "Combination of speeds and features offered by network device";
    NODE_NETWORK_AUTONEGOTIATE_ADVERTISED "node_network_autonegotiate_advertised" Gauge ["device"] "ethtool" "If this port device offers autonegotiate";
    NODE_NETWORK_PAUSE_ADVERTISED "node_network_pause_advertised" Gauge ["device"] "ethtool" "If this port device offers pause capability";
    NODE_NETWORK_ASYMMETRICPAUSE_ADVERTISED "node_network_asymmetricpause_advertised" Gauge ["device"] "ethtool" "If this port device offers asymmetric pause capability";
    NODE_NETWORK_AUTONEGOTIATE "node_network_autonegotiate" Gauge ["device"] "ethtool" "If this port is using autonegotiate";
    NODE_WIFI_INTERFACE_FREQUENCY_HERTZ "node_wifi_interface_frequency_hertz" Gauge ["device"] "wifi" "The current frequency a WiFi interface is operating at, in hertz.";
    NODE_WIFI_STATION_INFO "node_wifi_station_info" Gauge ["device", "bssid", "ssid", "mode"] "wifi" "Labeled WiFi interface station information as provided by the operating system.";
    NODE_WIFI_STATION_CONNECTED_SECONDS_TOTAL "node_wifi_station_connected_seconds_total" Counter ["device", "mac_address"] "wifi" "The total number of seconds a station has been connected to an access point.";
    NODE_WIFI_STATION_INACTIVE_SECONDS "node_wifi_station_inactive_seconds" Gauge ["device", "mac_address"] "wifi" "The number of seconds since any wireless activity has occurred on a station.";
    NODE_WIFI_STATION_RECEIVE_BITS_PER_SECOND "node_wifi_station_receive_bits_per_second" Gauge ["device", "mac_address"] "wifi" "The current WiFi receive bitrate of a station, in bits per second.";
    NODE_WIFI_STATION_TRANSMIT_BITS_PER_SECOND "node_wifi_station_transmit_bits_per_second" Gauge ["device", "mac_address"] "wifi" "The current WiFi transmit bitrate of a station, in bits per second.";
    NODE_WIFI_STATION_RECEIVE_BYTES_TOTAL "node_wifi_station_receive_bytes_total" Counter ["device", "mac_address"] "wifi" "The total number of bytes received by a WiFi station.";
    NODE_WIFI_STATION_TRANSMIT_BYTES_TOTAL "node_wifi_station_transmit_bytes_total" Counter ["device", "mac_address"] "wifi" "The total number of bytes transmitted by a WiFi station.";
    NODE_WIFI_STATION_SIGNAL_DBM "node_wifi_station_signal_dbm" Gauge ["device", "mac_address"] "wifi" "The current WiFi signal strength, in decibel-milliwatts (dBm).";
    NODE_WIFI_STATION_TRANSMIT_RETRIES_TOTAL "node_wifi_station_transmit_retries_total" Counter ["device", "mac_address"] "wifi" "The total number of times a station has had to retry while sending a packet.";
    NODE_WIFI_STATION_TRANSMIT_FAILED_TOTAL "node_wifi_station_transmit_failed_total" Counter ["device", "mac_address"] "wifi" "The total number of times a station has failed to send a packet.";
    NODE_WIFI_STATION_BEACON_LOSS_TOTAL "node_wifi_station_beacon_loss_total" Counter ["device", "mac_address"] "wifi" "The total number of times a station has detected a beacon loss.";
    NODE_WIFI_STATION_TRANSMITTED_PACKETS_TOTAL "node_wifi_station_transmitted_packets_total" Counter ["device", "mac_address"] "wifi" "The total number of packets transmitted by a station.";
    NODE_WIFI_STATION_RECEIVED_PACKETS_TOTAL "node_wifi_station_received_packets_total" Counter ["device", "mac_address"] "wifi" "The total number of packets received by a station.";
    QUIETSTAT_SYSTEMD_UNITS_AGE_SECONDS "quietstat_systemd_units_age_seconds" Gauge [] "systemd" "How old the systemd units served are: a read that fails (no answer within the read's deadline) leaves the last ones served, and this grows.";
    NODE_CGROUPS_CGROUPS "node_cgroups_cgroups" Gauge ["subsys_name"] "cgroups" "Current cgroup number of the subsystem.";
    NODE_CGROUPS_ENABLED "node_cgroups_enabled" Gauge ["subsys_name"] "cgroups" "Current cgroup number of the subsystem.";
    NODE_XFRM_IN_ERROR_PACKETS_TOTAL "node_xfrm_in_error_packets_total" Counter [] "xfrm" "All errors not matched by other";
    NODE_XFRM_IN_BUFFER_ERROR_PACKETS_TOTAL "node_xfrm_in_buffer_error_packets_total" Counter [] "xfrm" "No buffer is left";
    NODE_XFRM_IN_HDR_ERROR_PACKETS_TOTAL "node_xfrm_in_hdr_error_packets_total" Counter [] "xfrm" "Header error";
    NODE_XFRM_IN_NO_STATES_PACKETS_TOTAL "node_xfrm_in_no_states_packets_total" Counter [] "xfrm" "No state is found i.e. Either inbound SPI, address, or IPsec protocol at SA is wrong";
    NODE_XFRM_IN_STATE_PROTO_ERROR_PACKETS_TOTAL "node_xfrm_in_state_proto_error_packets_total" Counter [] "xfrm" "Transformation protocol specific error e.g. SA key is wrong";
    NODE_XFRM_IN_STATE_MODE_ERROR_PACKETS_TOTAL "node_xfrm_in_state_mode_error_packets_total" Counter [] "xfrm" "Transformation mode specific error";
    NODE_XFRM_IN_STATE_SEQ_ERROR_PACKETS_TOTAL "node_xfrm_in_state_seq_error_packets_total" Counter [] "xfrm" "Sequence error i.e. Sequence number is out of window";
    NODE_XFRM_IN_STATE_EXPIRED_PACKETS_TOTAL "node_xfrm_in_state_expired_packets_total" Counter [] "xfrm" "State is expired";
    NODE_XFRM_IN_STATE_MISMATCH_PACKETS_TOTAL "node_xfrm_in_state_mismatch_packets_total" Counter [] "xfrm" "State has mismatch option e.g. UDP encapsulation type is mismatch";
    NODE_XFRM_IN_STATE_INVALID_PACKETS_TOTAL "node_xfrm_in_state_invalid_packets_total" Counter [] "xfrm" "State is invalid";
    NODE_XFRM_IN_TMPL_MISMATCH_PACKETS_TOTAL "node_xfrm_in_tmpl_mismatch_packets_total" Counter [] "xfrm" "No matching template for states e.g. Inbound SAs are correct but SP rule is wrong";
    NODE_XFRM_IN_NO_POLS_PACKETS_TOTAL "node_xfrm_in_no_pols_packets_total" Counter [] "xfrm" "No policy is found for states e.g. Inbound SAs are correct but no SP is found";
    NODE_XFRM_IN_POL_BLOCK_PACKETS_TOTAL "node_xfrm_in_pol_block_packets_total" Counter [] "xfrm" "Policy discards";
    NODE_XFRM_IN_POL_ERROR_PACKETS_TOTAL "node_xfrm_in_pol_error_packets_total" Counter [] "xfrm" "Policy error";
    NODE_XFRM_OUT_ERROR_PACKETS_TOTAL "node_xfrm_out_error_packets_total" Counter [] "xfrm" "All errors which is not matched others";
    NODE_XFRM_OUT_BUNDLE_GEN_ERROR_PACKETS_TOTAL "node_xfrm_out_bundle_gen_error_packets_total" Counter [] "xfrm" "Bundle generation error";
    NODE_XFRM_OUT_BUNDLE_CHECK_ERROR_PACKETS_TOTAL "node_xfrm_out_bundle_check_error_packets_total" Counter [] "xfrm" "Bundle check error";
    NODE_XFRM_OUT_NO_STATES_PACKETS_TOTAL "node_xfrm_out_no_states_packets_total" Counter [] "xfrm" "No state is found";
    NODE_XFRM_OUT_STATE_PROTO_ERROR_PACKETS_TOTAL "node_xfrm_out_state_proto_error_packets_total" Counter [] "xfrm" "Transformation protocol specific error";
    NODE_XFRM_OUT_STATE_MODE_ERROR_PACKETS_TOTAL "node_xfrm_out_state_mode_error_packets_total" Counter [] "xfrm" "Transformation mode specific error";
    NODE_XFRM_OUT_STATE_SEQ_ERROR_PACKETS_TOTAL "node_xfrm_out_state_seq_error_packets_total" Counter [] "xfrm" "Sequence error i.e. Sequence number overflow";
    NODE_XFRM_OUT_STATE_EXPIRED_PACKETS_TOTAL "node_xfrm_out_state_expired_packets_total" Counter [] "xfrm" "State is expired";
    NODE_XFRM_OUT_POL_BLOCK_PACKETS_TOTAL "node_xfrm_out_pol_block_packets_total" Counter [] "xfrm" "Policy discards";
    NODE_XFRM_OUT_POL_DEAD_PACKETS_TOTAL "node_xfrm_out_pol_dead_packets_total" Counter [] "xfrm" "Policy is dead";
    NODE_XFRM_OUT_POL_ERROR_PACKETS_TOTAL "node_xfrm_out_pol_error_packets_total" Counter [] "xfrm" "Policy error";
    NODE_XFRM_FWD_HDR_ERROR_PACKETS_TOTAL "node_xfrm_fwd_hdr_error_packets_total" Counter [] "xfrm" "Forward routing of a packet is not allowed";
    NODE_XFRM_OUT_STATE_INVALID_PACKETS_TOTAL "node_xfrm_out_state_invalid_packets_total" Counter [] "xfrm" "State is invalid, perhaps expired";
    NODE_XFRM_ACQUIRE_ERROR_PACKETS_TOTAL "node_xfrm_acquire_error_packets_total" Counter [] "xfrm" "State hasn’t been fully acquired before use";
    QUIETSTAT_INTERRUPTS_UNSPLIT_TOTAL "quietstat_interrupts_unsplit_total" Counter ["type"] "interrupts" "Interrupt counters /proc/interrupts prints without a per-CPU split (ERR, MIS).";
    QUIETSTAT_IRQ_TOTAL "quietstat_irq_total" Counter ["devices", "info", "type"] "interrupts" "Interrupts per IRQ since boot, summed over CPUs: node_interrupts_total without its cpu label, a series per IRQ on any machine.";
    CONTAINER_CPU_USAGE_SECONDS_TOTAL "container_cpu_usage_seconds_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Cumulative cpu time consumed in seconds.";
    CONTAINER_CPU_USER_SECONDS_TOTAL "container_cpu_user_seconds_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Cumulative user cpu time consumed in seconds.";
    CONTAINER_CPU_SYSTEM_SECONDS_TOTAL "container_cpu_system_seconds_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Cumulative system cpu time consumed in seconds.";
    CONTAINER_CPU_CFS_PERIODS_TOTAL "container_cpu_cfs_periods_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Number of elapsed enforcement period intervals.";
    CONTAINER_CPU_CFS_THROTTLED_PERIODS_TOTAL "container_cpu_cfs_throttled_periods_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Number of throttled period intervals.";
    CONTAINER_CPU_CFS_THROTTLED_SECONDS_TOTAL "container_cpu_cfs_throttled_seconds_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Total time duration the container has been throttled.";
    CONTAINER_SPEC_CPU_QUOTA "container_spec_cpu_quota" Gauge ["id", "container_id", "pod_uid"] "cgroups" "CPU quota of the container.";
    CONTAINER_SPEC_CPU_PERIOD "container_spec_cpu_period" Gauge ["id", "container_id", "pod_uid"] "cgroups" "CPU period of the container.";
    CONTAINER_MEMORY_USAGE_BYTES "container_memory_usage_bytes" Gauge ["id", "container_id", "pod_uid"] "cgroups" "Current memory usage in bytes, including all memory regardless of when it was accessed";
    CONTAINER_MEMORY_WORKING_SET_BYTES "container_memory_working_set_bytes" Gauge ["id", "container_id", "pod_uid"] "cgroups" "Current working set in bytes.";
    CONTAINER_MEMORY_RSS "container_memory_rss" Gauge ["id", "container_id", "pod_uid"] "cgroups" "Size of RSS in bytes.";
    CONTAINER_MEMORY_CACHE "container_memory_cache" Gauge ["id", "container_id", "pod_uid"] "cgroups" "Number of bytes of page cache memory.";
    CONTAINER_MEMORY_MAPPED_FILE "container_memory_mapped_file" Gauge ["id", "container_id", "pod_uid"] "cgroups" "Size of memory mapped files in bytes.";
    CONTAINER_MEMORY_KERNEL_USAGE "container_memory_kernel_usage" Gauge ["id", "container_id", "pod_uid"] "cgroups" "Size of kernel memory allocated in bytes.";
    CONTAINER_MEMORY_TOTAL_ACTIVE_FILE_BYTES "container_memory_total_active_file_bytes" Gauge ["id", "container_id", "pod_uid"] "cgroups" "Current total active file in bytes.";
    CONTAINER_MEMORY_TOTAL_INACTIVE_FILE_BYTES "container_memory_total_inactive_file_bytes" Gauge ["id", "container_id", "pod_uid"] "cgroups" "Current total inactive file in bytes.";
    CONTAINER_MEMORY_FAILCNT "container_memory_failcnt" Gauge ["id", "container_id", "pod_uid"] "cgroups" "Number of memory usage hits limits";
    CONTAINER_MEMORY_FAILURES_TOTAL "container_memory_failures_total" Counter ["id", "container_id", "pod_uid", "failure_type", "scope"] "cgroups" "Cumulative count of memory allocation failures.";
    CONTAINER_SPEC_MEMORY_LIMIT_BYTES "container_spec_memory_limit_bytes" Gauge ["id", "container_id", "pod_uid"] "cgroups" "Memory limit for the container.";
    CONTAINER_OOM_EVENTS_TOTAL "container_oom_events_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Count of out of memory events observed for the container";
    CONTAINER_FS_READS_BYTES_TOTAL "container_fs_reads_bytes_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Cumulative count of bytes read";
    CONTAINER_FS_WRITES_BYTES_TOTAL "container_fs_writes_bytes_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Cumulative count of bytes written";
    CONTAINER_FS_READS_TOTAL "container_fs_reads_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Cumulative count of reads completed";
    CONTAINER_FS_WRITES_TOTAL "container_fs_writes_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Cumulative count of writes completed";
    CONTAINER_PRESSURE_CPU_WAITING_SECONDS_TOTAL "container_pressure_cpu_waiting_seconds_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Total time duration tasks in the container have waited due to CPU congestion.";
    CONTAINER_PRESSURE_CPU_STALLED_SECONDS_TOTAL "container_pressure_cpu_stalled_seconds_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Total time duration no tasks in the container could make progress due to CPU congestion.";
    CONTAINER_PRESSURE_MEMORY_WAITING_SECONDS_TOTAL "container_pressure_memory_waiting_seconds_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Total time duration tasks in the container have waited due to memory congestion.";
    CONTAINER_PRESSURE_MEMORY_STALLED_SECONDS_TOTAL "container_pressure_memory_stalled_seconds_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Total time duration no tasks in the container could make progress due to memory congestion.";
    CONTAINER_PRESSURE_IO_WAITING_SECONDS_TOTAL "container_pressure_io_waiting_seconds_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Total time duration tasks in the container have waited due to IO congestion.";
    CONTAINER_PRESSURE_IO_STALLED_SECONDS_TOTAL "container_pressure_io_stalled_seconds_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Total time duration no tasks in the container could make progress due to IO congestion.";
    CONTAINER_NETWORK_RECEIVE_BYTES_TOTAL "container_network_receive_bytes_total" Counter ["id", "container_id", "pod_uid", "interface"] "cgroups" "Cumulative count of bytes received; of the network namespace the cgroup's processes are in, where it is not the agent's (its /proc/PID/net/dev; lo, veth*, docker* and nerdctl* left out, as cAdvisor does).";
    CONTAINER_NETWORK_RECEIVE_PACKETS_TOTAL "container_network_receive_packets_total" Counter ["id", "container_id", "pod_uid", "interface"] "cgroups" "Cumulative count of packets received; of the network namespace the cgroup's processes are in, where it is not the agent's (its /proc/PID/net/dev; lo, veth*, docker* and nerdctl* left out, as cAdvisor does).";
    CONTAINER_NETWORK_RECEIVE_ERRORS_TOTAL "container_network_receive_errors_total" Counter ["id", "container_id", "pod_uid", "interface"] "cgroups" "Cumulative count of errors encountered while receiving; of the network namespace the cgroup's processes are in, where it is not the agent's (its /proc/PID/net/dev; lo, veth*, docker* and nerdctl* left out, as cAdvisor does).";
    CONTAINER_NETWORK_RECEIVE_PACKETS_DROPPED_TOTAL "container_network_receive_packets_dropped_total" Counter ["id", "container_id", "pod_uid", "interface"] "cgroups" "Cumulative count of packets dropped while receiving; of the network namespace the cgroup's processes are in, where it is not the agent's (its /proc/PID/net/dev; lo, veth*, docker* and nerdctl* left out, as cAdvisor does).";
    CONTAINER_NETWORK_TRANSMIT_BYTES_TOTAL "container_network_transmit_bytes_total" Counter ["id", "container_id", "pod_uid", "interface"] "cgroups" "Cumulative count of bytes transmitted; of the network namespace the cgroup's processes are in, where it is not the agent's (its /proc/PID/net/dev; lo, veth*, docker* and nerdctl* left out, as cAdvisor does).";
    CONTAINER_NETWORK_TRANSMIT_PACKETS_TOTAL "container_network_transmit_packets_total" Counter ["id", "container_id", "pod_uid", "interface"] "cgroups" "Cumulative count of packets transmitted; of the network namespace the cgroup's processes are in, where it is not the agent's (its /proc/PID/net/dev; lo, veth*, docker* and nerdctl* left out, as cAdvisor does).";
    CONTAINER_NETWORK_TRANSMIT_ERRORS_TOTAL "container_network_transmit_errors_total" Counter ["id", "container_id", "pod_uid", "interface"] "cgroups" "Cumulative count of errors encountered while transmitting; of the network namespace the cgroup's processes are in, where it is not the agent's (its /proc/PID/net/dev; lo, veth*, docker* and nerdctl* left out, as cAdvisor does).";
    CONTAINER_NETWORK_TRANSMIT_PACKETS_DROPPED_TOTAL "container_network_transmit_packets_dropped_total" Counter ["id", "container_id", "pod_uid", "interface"] "cgroups" "Cumulative count of packets dropped while transmitting; of the network namespace the cgroup's processes are in, where it is not the agent's (its /proc/PID/net/dev; lo, veth*, docker* and nerdctl* left out, as cAdvisor does).";
    QUIETSTAT_CGROUP_TASKS "quietstat_cgroup_tasks" Gauge ["id", "container_id", "pod_uid"] "cgroups" "Tasks (processes and threads) in the cgroup, from pids.current.";
    QUIETSTAT_CGROUP_GPU_BUSY_SECONDS_TOTAL "quietstat_cgroup_gpu_busy_seconds_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Time GPU engines were busy with the clients of the cgroup's processes and its descendants', summed over engines, each client once: the growth of its processes' busy time seen from process table to process table, those that ended kept (where the process table reads GPU use: process_gpu).";
    QUIETSTAT_CGROUP_GPU_MEMORY_BYTES "quietstat_cgroup_gpu_memory_bytes" Gauge ["id", "container_id", "pod_uid"] "cgroups" "GPU memory the clients of the cgroup's processes and its descendants' hold resident, every region, each client once (where the process table reads GPU use: process_gpu).";
    QUIETSTAT_CGROUP_NETWORK_RECEIVE_BYTES_TOTAL "quietstat_cgroup_network_receive_bytes_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Payload bytes the TCP sockets of the cgroup's processes and its descendants' received: the growth of its processes' counts seen from process table to process table, those that ended kept (where the process table reads them: the BPF backend, process_network).";
    QUIETSTAT_CGROUP_NETWORK_TRANSMIT_BYTES_TOTAL "quietstat_cgroup_network_transmit_bytes_total" Counter ["id", "container_id", "pod_uid"] "cgroups" "Payload bytes the TCP sockets of the cgroup's processes and its descendants' sent and had acknowledged: the growth of its processes' counts seen from process table to process table, those that ended kept (where the process table reads them: the BPF backend, process_network).";
    QUIETSTAT_CGROUPS "quietstat_cgroups" Gauge [] "cgroups" "Cgroups in the latest read.";
    QUIETSTAT_CGROUPS_EXPORTED "quietstat_cgroups_exported" Gauge [] "cgroups" "Cgroups whose container_* series are served: at most 2 levels below the root, at most 1,000.";
    QUIETSTAT_PROCESSES "quietstat_processes" Gauge [] "processes" "Processes in the latest process table.";
    QUIETSTAT_PROCESS_THREADS_ALL "quietstat_process_threads_all" Gauge [] "processes" "Threads of all processes in the latest process table.";
    QUIETSTAT_PROCESS_UNREADABLE_TOTAL "quietstat_process_unreadable_total" Counter [] "processes" "Processes left out of process tables because a file of theirs could not be parsed (procfs backend).";
    QUIETSTAT_PROCESS_EXITS_TOTAL "quietstat_process_exits_total" Counter [] "processes" "Processes whose exit was captured with final counters.";
    QUIETSTAT_PROCESS_EXITS_LOST_TOTAL "quietstat_process_exits_lost_total" Counter [] "processes" "Exit records dropped: BPF ring buffer full, or taskstats receive-buffer overflows (each at least one record).";
    QUIETSTAT_PROCESS_CPU_SECONDS_TOTAL "quietstat_process_cpu_seconds_total" Counter ["pid", "comm", "mode"] "processes" "CPU time of a selected process, user or system.";
    QUIETSTAT_PROCESS_RESIDENT_MEMORY_BYTES "quietstat_process_resident_memory_bytes" Gauge ["pid", "comm"] "processes" "Resident set size of a selected process.";
    QUIETSTAT_PROCESS_VIRTUAL_MEMORY_BYTES "quietstat_process_virtual_memory_bytes" Gauge ["pid", "comm"] "processes" "Virtual memory size of a selected process.";
    QUIETSTAT_PROCESS_MAJOR_FAULTS_TOTAL "quietstat_process_major_faults_total" Counter ["pid", "comm"] "processes" "Major page faults of a selected process.";
    QUIETSTAT_PROCESS_MINOR_FAULTS_TOTAL "quietstat_process_minor_faults_total" Counter ["pid", "comm"] "processes" "Minor page faults of a selected process.";
    QUIETSTAT_PROCESS_THREADS "quietstat_process_threads" Gauge ["pid", "comm"] "processes" "Threads of a selected process.";
    QUIETSTAT_PROCESS_RUN_DELAY_SECONDS_TOTAL "quietstat_process_run_delay_seconds_total" Counter ["pid", "comm"] "processes" "Time a selected process's leader thread waited on a run queue for a CPU (where the process table reads it: the BPF backend).";
    QUIETSTAT_PROCESS_DELAY_SECONDS_TOTAL "quietstat_process_delay_seconds_total" Counter ["pid", "comm", "cause"] "processes" "Time a selected process's leader thread waited, by cause (blkio, swapin, reclaim, thrashing, compact, wpcopy, irq), by the kernel's delay accounting (where the process table reads it: the BPF backend with kernel.task_delayacct = 1).";
    QUIETSTAT_PROCESS_GPU_BUSY_SECONDS_TOTAL "quietstat_process_gpu_busy_seconds_total" Counter ["pid", "comm"] "processes" "Time GPU engines were busy with a selected process's clients, summed over engines, from DRM fdinfo and NVIDIA's library (where the process table reads GPU use: process_gpu).";
    QUIETSTAT_PROCESS_GPU_MEMORY_BYTES "quietstat_process_gpu_memory_bytes" Gauge ["pid", "comm"] "processes" "GPU memory a selected process's clients hold resident, every region (where the process table reads GPU use: process_gpu).";
    QUIETSTAT_PROCESS_NETWORK_RECEIVE_BYTES_TOTAL "quietstat_process_network_receive_bytes_total" Counter ["pid", "comm"] "processes" "Payload bytes a selected process's TCP sockets received, those that ended included (where the process table reads them: the BPF backend).";
    QUIETSTAT_PROCESS_NETWORK_TRANSMIT_BYTES_TOTAL "quietstat_process_network_transmit_bytes_total" Counter ["pid", "comm"] "processes" "Payload bytes a selected process's TCP sockets sent and had acknowledged, those that ended included (where the process table reads them: the BPF backend).";
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
    QUIETSTAT_SOURCE_CPU_SECONDS_TOTAL "quietstat_source_cpu_seconds_total" Counter ["source"] "agent" "CPU time of the sampler thread reading and parsing a source (the snapshot for processes; for the cgroups the walk's thread's and the history's writer's time recording the walks): what the overhead budget counts.";
    QUIETSTAT_SOURCE_READ_BYTES_TOTAL "quietstat_source_read_bytes_total" Counter ["source"] "agent" "Bytes read from a source.";
    QUIETSTAT_SOURCE_LAST_COST_SECONDS "quietstat_source_last_cost_seconds" Gauge ["source"] "agent" "Read plus parse time of the last read of a source.";
    QUIETSTAT_SOURCE_INTERVAL_SECONDS "quietstat_source_interval_seconds" Gauge ["source"] "agent" "Interval in force (longer than configured while over the overhead budget).";
    QUIETSTAT_SOURCE_CONFIGURED_INTERVAL_SECONDS "quietstat_source_configured_interval_seconds" Gauge ["source"] "agent" "Interval configured.";
    QUIETSTAT_SOURCE_AGE_SECONDS "quietstat_source_age_seconds" Gauge ["source"] "agent" "Age of the data served for a source.";
    QUIETSTAT_SOURCE_UP "quietstat_source_up" Gauge ["source"] "agent" "1 when the last read of a source succeeded.";
    QUIETSTAT_SOURCE_ERRORS_TOTAL "quietstat_source_errors_total" Counter ["source"] "agent" "Lines of a source left out of its reads because they could not be read; the rest of each file was used.";
    QUIETSTAT_AGENT_CPU_SECONDS_TOTAL "quietstat_agent_cpu_seconds_total" Counter ["mode"] "agent" "CPU time of the agent, all threads, user or system.";
    QUIETSTAT_AGENT_CONTEXT_SWITCHES_TOTAL "quietstat_agent_context_switches_total" Counter ["kind"] "agent" "Context switches of all agent threads (each one a wakeup or preemption).";
    QUIETSTAT_AGENT_SAMPLING_WAKEUPS_TOTAL "quietstat_agent_sampling_wakeups_total" Counter [] "agent" "Wakeups of the sampler that read the kernel.";
    QUIETSTAT_AGENT_RESIDENT_MEMORY_BYTES "quietstat_agent_resident_memory_bytes" Gauge [] "agent" "Resident set size of the agent.";
    QUIETSTAT_AGENT_THREADS "quietstat_agent_threads" Gauge [] "agent" "Threads of the agent.";
    QUIETSTAT_AGENT_HEAP_BYTES "quietstat_agent_heap_bytes" Gauge [] "agent" "Heap the agent's allocator has handed out and not had back (glibc's mallinfo2: allocated chunks and mapped blocks).";
    QUIETSTAT_AGENT_MEMORY_CEILING_BYTES "quietstat_agent_memory_ceiling_bytes" Gauge [] "agent" "The agent's memory ceiling (max_rss, set or chosen from the machine).";
    QUIETSTAT_AGENT_MEMORY_CHARGED_BYTES "quietstat_agent_memory_charged_bytes" Gauge [] "agent" "The figure held against the memory ceiling at the last process-table read: the agent's anonymous and shared resident memory, or, when it is its cgroup's one process, the cgroup's charge beyond droppable page cache (kernel memory included), whichever is more.";
    QUIETSTAT_AGENT_SHEDDING "quietstat_agent_shedding" Gauge [] "agent" "1 while the agent sheds process rows, deep cgroups and textfile files to stay under its memory ceiling.";
    QUIETSTAT_AGENT_SHED_EPISODES_TOTAL "quietstat_agent_shed_episodes_total" Counter [] "agent" "Times the agent began shedding to stay under its memory ceiling (the first two are logged).";
    QUIETSTAT_AGENT_SHED_TOTAL "quietstat_agent_shed_total" Counter ["what"] "agent" "What the agent left out to stay under its memory ceiling, summed over reads: process_rows, cgroups (below the depth kept), textfile_files.";
    QUIETSTAT_AGENT_START_TIME_SECONDS "quietstat_agent_start_time_seconds" Gauge [] "agent" "When the agent started, in unixtime.";
    PROCESS_CPU_SECONDS_TOTAL "process_cpu_seconds_total" Counter [] "agent" "Total user and system CPU time spent in seconds (the agent's, as every Prometheus exporter serves its own).";
    PROCESS_RESIDENT_MEMORY_BYTES "process_resident_memory_bytes" Gauge [] "agent" "Resident memory size in bytes (the agent's).";
    PROCESS_VIRTUAL_MEMORY_BYTES "process_virtual_memory_bytes" Gauge [] "agent" "Virtual memory size in bytes (the agent's).";
    PROCESS_OPEN_FDS "process_open_fds" Gauge [] "agent" "Number of open file descriptors (the agent's).";
    PROCESS_MAX_FDS "process_max_fds" Gauge [] "agent" "Maximum number of open file descriptors (the agent's soft limit).";
    PROCESS_START_TIME_SECONDS "process_start_time_seconds" Gauge [] "agent" "Start time of the process since unix epoch in seconds (the agent's).";
    QUIETSTAT_AGENT_INFO "quietstat_agent_info" Gauge ["version", "backend"] "agent" "Always 1: the agent's version and process-table backend.";
    NODE_SCRAPE_COLLECTOR_DURATION_SECONDS "node_scrape_collector_duration_seconds" Gauge ["collector"] "agent" "node_exporter: Duration of a collector scrape.";
    NODE_SCRAPE_COLLECTOR_SUCCESS "node_scrape_collector_success" Gauge ["collector"] "agent" "node_exporter: Whether a collector succeeded.";
    QUIETSTAT_BUILD_INFO "quietstat_build_info" Gauge ["version", "revision", "rustc", "arch", "os"] "agent" "Always 1: the version, commit and compiler quietstat was built from, and its target.";
    QUIETSTAT_HTTP_CONNECTIONS "quietstat_http_connections" Gauge [] "agent" "HTTP connections open now.";
    QUIETSTAT_HTTP_CONNECTIONS_MAX "quietstat_http_connections_max" Gauge [] "agent" "The cap on HTTP connections (lowered to fit the descriptor limit).";
    QUIETSTAT_HTTP_CONNECTIONS_EVICTED_TOTAL "quietstat_http_connections_evicted_total" Counter [] "agent" "Idle HTTP connections closed to make room for new ones at the cap.";
    QUIETSTAT_HTTP_CONNECTIONS_REFUSED_TOTAL "quietstat_http_connections_refused_total" Counter [] "agent" "HTTP connections refused (503) at the cap, every open one being mid-request.";
    QUIETSTAT_HTTP_ACCEPT_ERRORS_TOTAL "quietstat_http_accept_errors_total" Counter [] "agent" "Failed accepts of HTTP connections (out of descriptors, ...), each retried after a backoff.";
    QUIETSTAT_STORE_BYTES "quietstat_store_bytes" Gauge [] "agent" "Bytes the history takes on disk (day files and their write-ahead logs).";
    QUIETSTAT_STORE_RECORDING "quietstat_store_recording" Gauge [] "agent" "1 while the last write to the history succeeded, 0 while it fails (the log says why).";
    QUIETSTAT_STORE_WRITTEN_BYTES_TOTAL "quietstat_store_written_bytes_total" Counter ["source"] "agent" "Bytes written to the history per source, compressed, since the agent started.";
    QUIETSTAT_STORE_ROWS_TOTAL "quietstat_store_rows_total" Counter [] "agent" "Rows written to the history (blocks, process identities, gaps).";
    QUIETSTAT_STORE_DROPPED_SAMPLES_TOTAL "quietstat_store_dropped_samples_total" Counter [] "agent" "Samples dropped before they were written: the journal was full while the writer was behind.";
    QUIETSTAT_STORE_FLUSHES_TOTAL "quietstat_store_flushes_total" Counter [] "agent" "Times the writer moved the journal into the history.";
    QUIETSTAT_STORE_FAILED_FLUSHES_TOTAL "quietstat_store_failed_flushes_total" Counter [] "agent" "Flushes that could not write (disk full, read-only, damaged file); their samples wait in the journal.";
    QUIETSTAT_STORE_WRITE_SECONDS_TOTAL "quietstat_store_write_seconds_total" Counter [] "agent" "Time the writer spent encoding and writing the history.";
    QUIETSTAT_REMOTE_WRITE_SENT_SAMPLES_TOTAL "quietstat_remote_write_sent_samples_total" Counter ["receiver"] "agent" "Samples a remote-write receiver acknowledged (2xx).";
    QUIETSTAT_REMOTE_WRITE_SENT_BYTES_TOTAL "quietstat_remote_write_sent_bytes_total" Counter ["receiver"] "agent" "Bytes of the requests a remote-write receiver acknowledged, compressed, as on the wire.";
    QUIETSTAT_REMOTE_WRITE_FAILED_REQUESTS_TOTAL "quietstat_remote_write_failed_requests_total" Counter ["receiver", "why"] "agent" "Requests to a remote-write receiver that failed and are sent again later: http_5xx, http_429, timeout, connect, dns, tls, io.";
    QUIETSTAT_REMOTE_WRITE_DROPPED_SAMPLES_TOTAL "quietstat_remote_write_dropped_samples_total" Counter ["receiver", "reason"] "agent" "Samples never to be sent to a remote-write receiver: refused by it (out_of_bounds, too_old, out_of_order, duplicate, rejected), removed by the store's retention before they were sent (retention), or not recorded and the receiver down (not_recorded).";
    QUIETSTAT_REMOTE_WRITE_PENDING_SAMPLES "quietstat_remote_write_pending_samples" Gauge ["receiver"] "agent" "Samples recorded and not yet acknowledged by a remote-write receiver (estimated by whole blocks of the history).";
    QUIETSTAT_REMOTE_WRITE_POSITION_AGE_SECONDS "quietstat_remote_write_position_age_seconds" Gauge ["receiver"] "agent" "Age of a remote-write receiver's send position: everything recorded before it is the receiver's.";
    QUIETSTAT_REMOTE_WRITE_UP "quietstat_remote_write_up" Gauge ["receiver"] "agent" "1 while a remote-write receiver answers, 0 while its requests fail.";
    QUIETSTAT_HTTP_REQUESTS_TOTAL "quietstat_http_requests_total" Counter ["code"] "agent" "HTTP requests answered, by status code (a scrape counts those answered before it).";
    QUIETSTAT_HTTP_REQUESTS_ABANDONED_TOTAL "quietstat_http_requests_abandoned_total" Counter [] "agent" "HTTP requests not answered because their client had reset or closed the connection before the answer was made.";
}

/// The catalog entry for `name` (a concrete name matches its `*` pattern).
impl Family {
    /// One family of a per-key family: its pattern with `key` for the
    /// `*`, written into `buf` (cleared first). Encoders name such
    /// families only this way.
    pub fn instance_into(&self, key: &str, buf: &mut String) {
        let (pre, post) = self.name.split_once('*').unwrap_or((self.name, ""));
        buf.clear();
        buf.push_str(pre);
        buf.push_str(key);
        buf.push_str(post);
    }
}

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
            // node_exporter's, cAdvisor's, ours, and the standard process
            // collector's that every Prometheus exporter serves about itself.
            assert!(
                f.name.starts_with("node_")
                    || f.name.starts_with("container_")
                    || f.name.starts_with("quietstat_")
                    || f.name.starts_with("process_"),
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
