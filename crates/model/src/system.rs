//! System figures from two raw samples, in the style of mpstat, vmstat,
//! iostat, sar -d and sar -n DEV.

use serde::Serialize;

use procfs::diskstats::SECTOR_BYTES;
use procfs::meminfo::MemKey;
use procfs::pressure::Resource;
use procfs::stat::{CpuMode, CpuTimes};
use procfs::vmstat::VmKey;
use procfs::{Source, SystemSample};

use crate::{delta, rate};

fn opt_rate(prev: Option<u64>, cur: Option<u64>, secs: f64) -> Option<f64> {
    rate(prev?, cur?, secs)
}

/// Share of CPU time per mode over the interval, percent. `user` and `nice`
/// exclude guest time, which is shown on its own (as mpstat does).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CpuPercent {
    /// `None` for the all-CPU row.
    pub cpu: Option<u32>,
    pub user: Option<f64>,
    pub nice: Option<f64>,
    pub system: Option<f64>,
    pub idle: Option<f64>,
    pub iowait: Option<f64>,
    pub irq: Option<f64>,
    pub softirq: Option<f64>,
    pub steal: Option<f64>,
    pub guest: Option<f64>,
    pub guest_nice: Option<f64>,
    /// 100 minus idle and iowait.
    pub busy: Option<f64>,
}

impl CpuPercent {
    pub fn between(cpu: Option<u32>, prev: &CpuTimes, cur: &CpuTimes) -> CpuPercent {
        let d = |m: CpuMode| Some(delta(prev.ticks(m)?, cur.ticks(m)?)).flatten();
        let deltas = CpuMode::ALL.map(d);
        // Total over the modes that are not double-counted (guest is in user).
        let total: u64 = deltas[..CpuMode::Guest as usize].iter().flatten().sum();
        let pct = |v: Option<u64>| {
            if total > 0 {
                Some(v? as f64 * 100.0 / total as f64)
            } else {
                None
            }
        };
        let guest = deltas[CpuMode::Guest as usize];
        let guest_nice = deltas[CpuMode::GuestNice as usize];
        let user = deltas[CpuMode::User as usize].map(|u| u.saturating_sub(guest.unwrap_or(0)));
        let nice =
            deltas[CpuMode::Nice as usize].map(|n| n.saturating_sub(guest_nice.unwrap_or(0)));
        let idle = pct(deltas[CpuMode::Idle as usize]);
        let iowait = pct(deltas[CpuMode::Iowait as usize]);
        CpuPercent {
            cpu,
            user: pct(user),
            nice: pct(nice),
            system: pct(deltas[CpuMode::System as usize]),
            idle,
            iowait,
            irq: pct(deltas[CpuMode::Irq as usize]),
            softirq: pct(deltas[CpuMode::Softirq as usize]),
            steal: pct(deltas[CpuMode::Steal as usize]),
            guest: pct(guest),
            guest_nice: pct(guest_nice),
            busy: idle.map(|i| (100.0 - i - iowait.unwrap_or(0.0)).max(0.0)),
        }
    }
}

/// File handles now (gauges from the later sample, /proc/sys/fs/file-nr).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Files {
    pub allocated: u64,
    pub maximum: u64,
    /// Allocated, as a share of the limit.
    pub used_pct: f64,
}

/// Memory now (gauges from the later sample), bytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Memory {
    pub total_bytes: Option<u64>,
    pub free_bytes: Option<u64>,
    /// Since Linux 3.14.
    pub available_bytes: Option<u64>,
    pub buffers_bytes: Option<u64>,
    pub cached_bytes: Option<u64>,
    /// total - free - buffers - cached (as free(1) counts it).
    pub used_bytes: Option<u64>,
    pub swap_total_bytes: Option<u64>,
    pub swap_free_bytes: Option<u64>,
    pub dirty_bytes: Option<u64>,
}

/// Paging and faults per second (sar -B, vmstat si/so).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Paging {
    pub pgpgin_kib_per_sec: Option<f64>,
    pub pgpgout_kib_per_sec: Option<f64>,
    pub pswpin_per_sec: Option<f64>,
    pub pswpout_per_sec: Option<f64>,
    pub pgfault_per_sec: Option<f64>,
    pub pgmajfault_per_sec: Option<f64>,
}

/// Share of the interval in which some (or all) non-idle tasks stalled, percent,
/// from the `total` counters (exact over the interval, unlike the kernel's
/// running averages, which are also given).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PressureRate {
    pub resource: Resource,
    pub some_pct: Option<f64>,
    pub full_pct: Option<f64>,
    pub some_avg10_pct: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiskRate {
    pub name: procfs::Name,
    pub reads_per_sec: Option<f64>,
    pub writes_per_sec: Option<f64>,
    pub read_bytes_per_sec: Option<f64>,
    pub write_bytes_per_sec: Option<f64>,
    /// Average time per completed I/O, milliseconds (iostat's await).
    pub await_ms: Option<f64>,
    /// Share of the interval with I/O in flight, percent (iostat's %util).
    pub util_pct: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NetRate {
    pub name: procfs::Name,
    pub rx_bytes_per_sec: Option<f64>,
    pub tx_bytes_per_sec: Option<f64>,
    pub rx_packets_per_sec: Option<f64>,
    pub tx_packets_per_sec: Option<f64>,
    pub rx_errs_per_sec: Option<f64>,
    pub tx_errs_per_sec: Option<f64>,
    pub rx_drop_per_sec: Option<f64>,
    pub tx_drop_per_sec: Option<f64>,
}

/// One row of /proc/interrupts or /proc/softirqs, per second.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowRate {
    pub label: String,
    pub description: String,
    pub per_sec: Option<f64>,
}

/// Everything derived from two system samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SystemRates {
    pub interval_secs: f64,
    pub cpu_all: Option<CpuPercent>,
    pub cpus: Vec<CpuPercent>,
    pub interrupts_per_sec: Option<f64>,
    pub context_switches_per_sec: Option<f64>,
    pub forks_per_sec: Option<f64>,
    pub softirqs_per_sec: Option<f64>,
    pub procs_running: Option<u64>,
    pub procs_blocked: Option<u64>,
    pub load1: Option<f64>,
    pub load5: Option<f64>,
    pub load15: Option<f64>,
    pub memory: Memory,
    pub files: Option<Files>,
    pub paging: Paging,
    pub pressure: Vec<PressureRate>,
    pub disks: Vec<DiskRate>,
    pub nets: Vec<NetRate>,
    /// Interrupt sources, busiest first.
    pub irqs: Vec<RowRate>,
    pub softirq_vectors: Vec<RowRate>,
}

fn table_rates(prev: &procfs::CpuTable, cur: &procfs::CpuTable, secs: f64) -> Vec<RowRate> {
    let mut out: Vec<RowRate> = cur
        .rows()
        .enumerate()
        .map(|(i, r)| {
            // Rows rarely move between samples: try the same position before a search.
            let p = prev
                .row(i)
                .filter(|p| p.label == r.label)
                .or_else(|| prev.find(r.label));
            RowRate {
                label: r.label.to_string(),
                description: r.description.to_string(),
                per_sec: p.and_then(|p| rate(p.total, r.total, secs)),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.per_sec
            .unwrap_or(-1.0)
            .total_cmp(&a.per_sec.unwrap_or(-1.0))
    });
    out
}

/// Whether a block device is a partition (`sda1`, `vdb2`, `nvme0n1p3`,
/// `mmcblk0p1`) or a virtual device over others (`dm-0`, `md127`): its
/// I/O is counted again on the disks under it.
pub fn stacked_or_partition(name: &str) -> bool {
    let digits = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if digits.len() == name.len() {
        return false;
    }
    if name.starts_with("dm-") || name.starts_with("md") {
        return true;
    }
    if name.starts_with("nvme") || name.starts_with("mmcblk") {
        return digits.ends_with('p');
    }
    ["sd", "vd", "hd", "xvd"]
        .iter()
        .any(|p| digits.starts_with(p) && digits[p.len()..].chars().all(|c| c.is_ascii_lowercase()))
}

impl SystemRates {
    /// Bytes per second read and written by whole disks (partitions and
    /// devices stacked on others left out), and the busiest one's
    /// utilisation (%).
    pub fn disk_totals(&self) -> (Option<f64>, Option<f64>, Option<f64>) {
        let whole = || {
            self.disks
                .iter()
                .filter(|d| !stacked_or_partition(d.name.as_str()))
        };
        let sum = |f: fn(&DiskRate) -> Option<f64>| whole().filter_map(f).reduce(|a, b| a + b);
        (
            sum(|d| d.read_bytes_per_sec),
            sum(|d| d.write_bytes_per_sec),
            whole().filter_map(|d| d.util_pct).reduce(f64::max),
        )
    }

    /// Bytes per second received and sent over every interface but
    /// loopback.
    pub fn net_totals(&self) -> (Option<f64>, Option<f64>) {
        let ext = || self.nets.iter().filter(|n| n.name.as_str() != "lo");
        (
            ext()
                .filter_map(|n| n.rx_bytes_per_sec)
                .reduce(|a, b| a + b),
            ext()
                .filter_map(|n| n.tx_bytes_per_sec)
                .reduce(|a, b| a + b),
        )
    }

    /// Rates over the interval from `prev` to `cur`. A source missing from
    /// either sample leaves its figures `None` or its list empty.
    pub fn between(prev: &SystemSample, cur: &SystemSample) -> SystemRates {
        let secs = cur
            .taken
            .saturating_duration_since(prev.taken)
            .as_secs_f64();
        let both = |s: Source| prev.ok(s) && cur.ok(s);
        let mut r = SystemRates {
            interval_secs: secs,
            ..Default::default()
        };
        if both(Source::Stat) {
            let (p, c) = (&prev.stat, &cur.stat);
            r.cpu_all = Some(CpuPercent::between(None, &p.total, &c.total));
            r.cpus = c
                .cpus
                .iter()
                .filter_map(|cc| {
                    let pc = p.cpus.iter().find(|x| x.cpu == cc.cpu)?;
                    Some(CpuPercent::between(Some(cc.cpu), &pc.times, &cc.times))
                })
                .collect();
            r.interrupts_per_sec = rate(p.intr_total, c.intr_total, secs);
            r.context_switches_per_sec = rate(p.ctxt, c.ctxt, secs);
            r.forks_per_sec = rate(p.processes, c.processes, secs);
            r.softirqs_per_sec = opt_rate(p.softirq_total, c.softirq_total, secs);
        }
        if cur.ok(Source::Stat) {
            r.procs_running = cur.stat.procs_running;
            r.procs_blocked = cur.stat.procs_blocked;
        }
        if cur.ok(Source::Loadavg) {
            r.load1 = Some(cur.loadavg.load1);
            r.load5 = Some(cur.loadavg.load5);
            r.load15 = Some(cur.loadavg.load15);
        }
        if cur.ok(Source::Filefd) {
            let f = &cur.filefd;
            r.files = Some(Files {
                allocated: f.allocated,
                maximum: f.maximum,
                used_pct: f.allocated as f64 * 100.0 / f.maximum.max(1) as f64,
            });
        }
        if cur.ok(Source::Meminfo) {
            let m = |k| cur.meminfo.get(k);
            let used = (|| {
                Some(
                    m(MemKey::MemTotal)?
                        .saturating_sub(m(MemKey::MemFree)?)
                        .saturating_sub(m(MemKey::Buffers)?)
                        .saturating_sub(m(MemKey::Cached)?),
                )
            })();
            r.memory = Memory {
                total_bytes: m(MemKey::MemTotal),
                free_bytes: m(MemKey::MemFree),
                available_bytes: m(MemKey::MemAvailable),
                buffers_bytes: m(MemKey::Buffers),
                cached_bytes: m(MemKey::Cached),
                used_bytes: used,
                swap_total_bytes: m(MemKey::SwapTotal),
                swap_free_bytes: m(MemKey::SwapFree),
                dirty_bytes: m(MemKey::Dirty),
            };
        }
        if both(Source::Vmstat) {
            let v = |k| opt_rate(prev.vmstat.get(k), cur.vmstat.get(k), secs);
            r.paging = Paging {
                pgpgin_kib_per_sec: v(VmKey::Pgpgin),
                pgpgout_kib_per_sec: v(VmKey::Pgpgout),
                pswpin_per_sec: v(VmKey::Pswpin),
                pswpout_per_sec: v(VmKey::Pswpout),
                pgfault_per_sec: v(VmKey::Pgfault),
                pgmajfault_per_sec: v(VmKey::Pgmajfault),
            };
        }
        for res in Resource::ALL {
            let (Some(p), Some(c)) = (prev.pressure(res), cur.pressure(res)) else {
                continue;
            };
            let pct = |p: Option<procfs::pressure::PressureLine>,
                       c: Option<procfs::pressure::PressureLine>| {
                rate(p?.total_usec, c?.total_usec, secs).map(|usec_per_sec| usec_per_sec / 1e4)
            };
            r.pressure.push(PressureRate {
                resource: res,
                some_pct: pct(p.some, c.some),
                full_pct: pct(p.full, c.full),
                some_avg10_pct: c.some.map(|s| s.avg10_pct),
            });
        }
        if both(Source::Diskstats) {
            for d in &cur.diskstats {
                let Some(p) = prev.diskstats.iter().find(|x| x.name == d.name) else {
                    continue;
                };
                let ios = delta(p.reads_completed, d.reads_completed)
                    .zip(delta(p.writes_completed, d.writes_completed))
                    .map(|(a, b)| a + b);
                let wait = delta(p.read_time_ms, d.read_time_ms)
                    .zip(delta(p.write_time_ms, d.write_time_ms))
                    .map(|(a, b)| a + b);
                r.disks.push(DiskRate {
                    name: d.name,
                    reads_per_sec: rate(p.reads_completed, d.reads_completed, secs),
                    writes_per_sec: rate(p.writes_completed, d.writes_completed, secs),
                    read_bytes_per_sec: rate(p.read_sectors, d.read_sectors, secs)
                        .map(|s| s * SECTOR_BYTES as f64),
                    write_bytes_per_sec: rate(p.write_sectors, d.write_sectors, secs)
                        .map(|s| s * SECTOR_BYTES as f64),
                    await_ms: ios
                        .zip(wait)
                        .map(|(n, w)| if n == 0 { 0.0 } else { w as f64 / n as f64 }),
                    util_pct: rate(p.io_time_ms, d.io_time_ms, secs)
                        .map(|ms| (ms / 10.0).min(100.0)),
                });
            }
        }
        if both(Source::NetDev) {
            for n in &cur.net_dev {
                let Some(p) = prev.net_dev.iter().find(|x| x.name == n.name) else {
                    continue;
                };
                r.nets.push(NetRate {
                    name: n.name,
                    rx_bytes_per_sec: rate(p.rx_bytes, n.rx_bytes, secs),
                    tx_bytes_per_sec: rate(p.tx_bytes, n.tx_bytes, secs),
                    rx_packets_per_sec: rate(p.rx_packets, n.rx_packets, secs),
                    tx_packets_per_sec: rate(p.tx_packets, n.tx_packets, secs),
                    rx_errs_per_sec: rate(p.rx_errs, n.rx_errs, secs),
                    tx_errs_per_sec: rate(p.tx_errs, n.tx_errs, secs),
                    rx_drop_per_sec: rate(p.rx_drop, n.rx_drop, secs),
                    tx_drop_per_sec: rate(p.tx_drop, n.tx_drop, secs),
                });
            }
        }
        if both(Source::Interrupts) {
            r.irqs = table_rates(&prev.interrupts, &cur.interrupts, secs);
        }
        if both(Source::Softirqs) {
            r.softirq_vectors = table_rates(&prev.softirqs, &cur.softirqs, secs);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_and_stacked_devices_are_told_from_disks() {
        for d in [
            "sda", "vdb", "nvme0n1", "mmcblk0", "xvda", "loop0", "sr0", "zram0",
        ] {
            assert!(!stacked_or_partition(d), "{d}");
        }
        for p in [
            "sda1",
            "vdb12",
            "nvme0n1p3",
            "mmcblk0p1",
            "xvda2",
            "dm-0",
            "md127",
        ] {
            assert!(stacked_or_partition(p), "{p}");
        }
    }
    use std::time::Duration;

    fn sample(stat: &str, offset: Duration) -> SystemSample {
        static BASE: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        let mut s = SystemSample {
            taken: *BASE.get_or_init(std::time::Instant::now),
            ..SystemSample::default()
        };
        s.parse_source(Source::Stat, stat.as_bytes()).unwrap();
        s.status[Source::Stat as usize] = procfs::SourceStatus::Ok;
        s.taken += offset;
        s
    }

    #[test]
    fn cpu_percent_per_mode_excludes_guest_from_user() {
        let a = sample(
            "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 100 0 100 800 0 0 0 0 0 0\nctxt 10\nbtime 1\nprocesses 5\n",
            Duration::ZERO,
        );
        let b = sample(
            "cpu  160 0 120 1000 0 0 0 0 20 0\ncpu0 160 0 120 1000 0 0 0 0 20 0\nctxt 110\nbtime 1\nprocesses 7\n",
            Duration::from_secs(2),
        );
        let r = SystemRates::between(&a, &b);
        let all = r.cpu_all.unwrap();
        // deltas: user 60 (20 guest), system 20, idle 200: total 280.
        assert!((all.user.unwrap() - 40.0 * 100.0 / 280.0).abs() < 1e-9);
        assert!((all.guest.unwrap() - 20.0 * 100.0 / 280.0).abs() < 1e-9);
        assert!((all.idle.unwrap() - 200.0 * 100.0 / 280.0).abs() < 1e-9);
        assert_eq!(r.cpus.len(), 1);
        assert_eq!(r.context_switches_per_sec, Some(50.0));
        assert_eq!(r.forks_per_sec, Some(1.0));
    }

    #[test]
    fn counter_going_backwards_gives_no_rate() {
        let a = sample(
            "cpu  100 0 100 800 50\nctxt 100\nbtime 1\nprocesses 5\nintr 10\n",
            Duration::ZERO,
        );
        let b = sample(
            "cpu  150 0 150 900 40\nctxt 90\nbtime 1\nprocesses 6\nintr 20\n",
            Duration::from_secs(1),
        );
        let r = SystemRates::between(&a, &b);
        assert_eq!(r.context_switches_per_sec, None);
        assert_eq!(r.interrupts_per_sec, Some(10.0));
        let all = r.cpu_all.unwrap();
        assert_eq!(all.iowait, None, "iowait went backwards");
        assert!(
            (all.user.unwrap() - 25.0).abs() < 1e-9,
            "others still reported: {all:?}"
        );
    }

    #[test]
    fn cpu_that_appears_later_has_no_rate() {
        let a = sample(
            "cpu  1 0 1 8\ncpu0 1 0 1 8\nctxt 1\nbtime 1\nprocesses 5\n",
            Duration::ZERO,
        );
        let b = sample(
            "cpu  2 0 2 16\ncpu0 1 0 1 9\ncpu1 1 0 1 7\nctxt 1\nbtime 1\nprocesses 5\n",
            Duration::from_secs(1),
        );
        let r = SystemRates::between(&a, &b);
        assert_eq!(
            r.cpus.iter().map(|c| c.cpu).collect::<Vec<_>>(),
            vec![Some(0)]
        );
    }

    #[test]
    fn irq_rows_match_by_label_even_when_moved() {
        let prev = procfs::interrupts::parse(b" CPU0\n 1: 10 a\n 2: 20 b\n").unwrap();
        let cur = procfs::interrupts::parse(b" CPU0\n 2: 26 b\n 3: 5 c\n 1: 11 a\n").unwrap();
        let r = table_rates(&prev, &cur, 1.0);
        let per = |l: &str| r.iter().find(|x| x.label == l).unwrap().per_sec;
        assert_eq!((per("1"), per("2"), per("3")), (Some(1.0), Some(6.0), None));
        assert_eq!(r[0].label, "2", "busiest first");
    }

    #[test]
    fn fixture_to_itself_is_all_zero_rates() {
        let (proc_root, sys_root) = (
            "../../fixtures/this-machine/proc",
            "../../fixtures/this-machine/sys",
        );
        let mut r = procfs::Reader::new(proc_root, sys_root);
        let mut a = SystemSample::default();
        r.read_sample(&Source::ALL, &mut a);
        let mut b = a.clone();
        b.taken += Duration::from_secs(1);
        let rates = SystemRates::between(&a, &b);
        assert_eq!(rates.context_switches_per_sec, Some(0.0));
        assert_eq!(
            rates.cpu_all.unwrap().idle,
            None,
            "no ticks elapsed: no percentages"
        );
        assert!(rates.disks.iter().all(|d| d.util_pct == Some(0.0)));
        assert_eq!(rates.memory.total_bytes, Some(24682416 * 1024));
        assert!(rates.pressure.iter().all(|p| p.some_pct == Some(0.0)));
    }
}
