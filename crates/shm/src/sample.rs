//! The snapshot and the sample it is published from: the agent turns its
//! latest [`SystemSample`] into a [`Snapshot`]; a consumer turns a snapshot
//! back into a (partial) sample, so that `model` derives the same figures,
//! under the same names, from either.

use std::time::{Duration, Instant};

use procfs::meminfo::{MemKey, Meminfo};
use procfs::stat::{CpuMode, CpuTimes, PerCpuTimes};
use procfs::{Source, SourceStatus, SystemSample};

use crate::{ABSENT, CPU_MODES, CpuSlot, Snapshot};
use sys::mono_ns;

/// The meminfo keys a snapshot carries, with their slots.
const MEM_KEYS: [MemKey; 7] = [
    MemKey::MemTotal,
    MemKey::MemFree,
    MemKey::MemAvailable,
    MemKey::Buffers,
    MemKey::Cached,
    MemKey::SwapTotal,
    MemKey::SwapFree,
];

impl Snapshot {
    /// The values of [`MEM_KEYS`], in order.
    fn mem_values(&self) -> [u64; 7] {
        [
            self.mem_total_bytes,
            self.mem_free_bytes,
            self.mem_available_bytes,
            self.buffers_bytes,
            self.cached_bytes,
            self.swap_total_bytes,
            self.swap_free_bytes,
        ]
    }
}

fn ticks(t: &CpuTimes) -> [u64; CPU_MODES] {
    CpuMode::ALL.map(|m| t.ticks(m).unwrap_or(ABSENT))
}

fn times(ticks: &[u64; CPU_MODES]) -> CpuTimes {
    let n = ticks.iter().take_while(|&&t| t != ABSENT).count();
    CpuTimes::from_ticks(&ticks[..n])
}

fn present(v: u64) -> Option<u64> {
    (v != ABSENT).then_some(v)
}

impl Snapshot {
    /// What the agent publishes of `s`; `mono` is when /proc/stat was read.
    pub fn from_sample(s: &SystemSample, mono: u64) -> Snapshot {
        let [
            total,
            free,
            available,
            buffers,
            cached,
            swap_total,
            swap_free,
        ] = MEM_KEYS.map(|k| s.meminfo.get(k).unwrap_or(ABSENT));
        Snapshot {
            unix_ns: s.unix_ns,
            mono_ns: mono,
            cpu_ticks: ticks(&s.stat.total),
            intr_total: s.stat.intr_total,
            ctxt: s.stat.ctxt,
            forks: s.stat.processes,
            procs_running: s.stat.procs_running.unwrap_or(ABSENT),
            procs_blocked: s.stat.procs_blocked.unwrap_or(ABSENT),
            btime_secs: s.stat.btime_secs,
            softirq_total: s.stat.softirq_total.unwrap_or(ABSENT),
            load: [s.loadavg.load1, s.loadavg.load5, s.loadavg.load15],
            cpus: s
                .stat
                .cpus
                .iter()
                .map(|c| CpuSlot {
                    cpu: c.cpu,
                    ticks: ticks(&c.times),
                })
                .collect(),
            mem_total_bytes: total,
            mem_free_bytes: free,
            mem_available_bytes: available,
            buffers_bytes: buffers,
            cached_bytes: cached,
            swap_total_bytes: swap_total,
            swap_free_bytes: swap_free,
        }
    }

    /// The sample this snapshot was published from, as far as it carries
    /// one: /proc/stat's totals and per-CPU times, seven meminfo keys and
    /// the load averages; every other source is `NotRead`. `taken` is placed
    /// on this process's monotonic clock, which is the agent's.
    pub fn to_sample(&self) -> SystemSample {
        let age = Duration::from_nanos(mono_ns().saturating_sub(self.mono_ns));
        let now = Instant::now();
        let mut s = SystemSample {
            taken: now.checked_sub(age).unwrap_or(now),
            unix_ns: self.unix_ns,
            ..SystemSample::default()
        };
        let st = &mut s.stat;
        st.total = times(&self.cpu_ticks);
        st.cpus = self
            .cpus
            .iter()
            .map(|c| PerCpuTimes {
                cpu: c.cpu,
                times: times(&c.ticks),
            })
            .collect();
        st.intr_total = self.intr_total;
        st.ctxt = self.ctxt;
        st.processes = self.forks;
        st.btime_secs = self.btime_secs;
        st.procs_running = present(self.procs_running);
        st.procs_blocked = present(self.procs_blocked);
        st.softirq_total = present(self.softirq_total);
        s.meminfo = Meminfo::from_values(
            MEM_KEYS
                .into_iter()
                .zip(self.mem_values())
                .filter_map(|(k, v)| Some((k, present(v)?))),
        );
        s.loadavg.load1 = self.load[0];
        s.loadavg.load5 = self.load[1];
        s.loadavg.load15 = self.load[2];
        for src in [Source::Stat, Source::Meminfo, Source::Loadavg] {
            s.status[src as usize] = SourceStatus::Ok;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_survives_the_round_trip_through_a_snapshot() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/this-machine");
        let mut r = procfs::Reader::new(format!("{root}/proc"), format!("{root}/sys"));
        let mut a = SystemSample::default();
        r.read_sample(&[Source::Stat, Source::Meminfo, Source::Loadavg], &mut a);
        assert!(a.ok(Source::Stat) && a.ok(Source::Meminfo) && a.ok(Source::Loadavg));
        let snap = Snapshot::from_sample(&a, mono_ns());
        let b = snap.to_sample();
        assert_eq!(b.stat.total, a.stat.total);
        assert_eq!(b.stat.cpus, a.stat.cpus);
        assert_eq!(
            (b.stat.intr_total, b.stat.ctxt, b.stat.processes),
            (a.stat.intr_total, a.stat.ctxt, a.stat.processes)
        );
        assert_eq!(b.stat.procs_running, a.stat.procs_running);
        for k in MEM_KEYS {
            assert_eq!(b.meminfo.get(k), a.meminfo.get(k), "{k:?}");
        }
        assert_eq!(b.meminfo.get(MemKey::Dirty), None, "not carried");
        assert_eq!(b.loadavg.load15, a.loadavg.load15);
        assert!(b.ok(Source::Stat) && !b.ok(Source::Diskstats));
        assert_eq!(Snapshot::from_sample(&b, snap.mono_ns), snap);
    }
}
