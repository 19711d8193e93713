//! Housekeeping placement: every agent thread runs only on CPUs that no
//! latency-sensitive work was promised. The set is `--housekeeping-cpus`, or
//! else every online CPU that is neither isolated (isolcpus=, the isolated
//! cpuset) nor nohz_full.
//!
//! The main thread is pinned before any other thread starts; threads inherit
//! the mask, so every thread the agent or its libraries create stays there.

use std::io;
use sys::Error;

use procfs::cpu::{CpuList, Topology};

/// The CPUs the agent runs on: `configured` if given (only its online
/// CPUs), else the topology's housekeeping set; never empty.
pub fn housekeeping(configured: Option<&CpuList>, topo: &Topology) -> Result<CpuList, Error> {
    let set = match configured {
        Some(c) => {
            let online: Vec<u32> = c
                .cpus()
                .iter()
                .copied()
                .filter(|&cpu| topo.online.contains(cpu))
                .collect();
            if online.is_empty() {
                return Err(Error::invalid(format!(
                    "housekeeping CPUs {c} are not online (online: {})",
                    topo.online
                )));
            }
            CpuList::new(online)
        }
        None => topo.housekeeping(),
    };
    if set.is_empty() {
        // Every CPU isolated: run anywhere online rather than nowhere.
        return Ok(topo.online.clone());
    }
    Ok(set)
}

/// Pins the calling thread (and so every thread it creates later) to `cpus`.
pub fn pin_current_thread(cpus: &CpuList) -> io::Result<()> {
    sys::pin_current_thread(cpus.cpus())
}

/// Each thread of this process with the CPUs it may run on, from
/// /proc/self/task/*/status (`Cpus_allowed_list`).
pub fn thread_affinities() -> io::Result<Vec<(u32, String)>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc/self/task")? {
        let e = e?;
        let Ok(tid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else {
            continue; // the thread ended
        };
        if let Some(l) = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        {
            out.push((tid, l.trim().to_string()));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_cpus_that_are_offline_are_refused_by_name() {
        let topo = Topology {
            online: CpuList::parse("0-1").unwrap(),
            ..Default::default()
        };
        let e = housekeeping(Some(&CpuList::parse("4-5").unwrap()), &topo)
            .unwrap_err()
            .to_string();
        assert!(e.contains("4-5") && e.contains("online: 0-1"), "{e}");
        let ok = housekeeping(Some(&CpuList::parse("1,7").unwrap()), &topo).unwrap();
        assert_eq!(ok.cpus(), &[1]);
    }

    #[test]
    fn detected_set_excludes_isolated_cpus() {
        let topo = Topology {
            online: CpuList::parse("0-3").unwrap(),
            isolated: Some(CpuList::parse("2-3").unwrap()),
            ..Default::default()
        };
        assert_eq!(housekeeping(None, &topo).unwrap().cpus(), &[0, 1]);
    }

    #[test]
    fn a_pinned_thread_and_its_children_stay_on_the_set() {
        std::thread::spawn(|| {
            pin_current_thread(&CpuList::parse("0").unwrap()).unwrap();
            let child = std::thread::spawn(|| {
                // SAFETY: gettid has no preconditions.
                let tid = unsafe { libc::gettid() } as u32;
                let all = thread_affinities().unwrap();
                all.into_iter().find(|(t, _)| *t == tid).unwrap().1
            });
            assert_eq!(child.join().unwrap(), "0");
        })
        .join()
        .unwrap();
    }
}
