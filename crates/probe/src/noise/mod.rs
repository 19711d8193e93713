//! `noise`: every interruption that lands on a set of CPUs during a window,
//! by cause, counted in the kernel by BPF programs on tracepoints
//! ([`bpf`], bpf/noise.bpf.c) and read once at the end from a housekeeping
//! CPU; where BPF is not allowed, recorded by the kernel's trace events into
//! a private tracefs instance and counted at the end ([`tracefs`]). Both
//! produce the same (key, value) counts, which `names.rs` turns into causes.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use procfs::cpu::CpuList;
use serde::Serialize;

pub mod bpf;
mod helper;
mod names;
pub mod tracefs;

pub use helper::{noisy_helper, read_loop};
use names::{Names, pid_report, start_ticks_of};

#[allow(dead_code)]
mod layout {
    include!(concat!(env!("OUT_DIR"), "/noise.rs"));
}
pub use layout::*;

// SAFETY: plain-old-data structs of integers with no padding (bpfgen
// asserts each size).
unsafe impl aya::Pod for QnKey {}
// SAFETY: as above.
unsafe impl aya::Pod for QnValue {}

/// How the events are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// BPF when it loads, else tracefs (saying why).
    Auto,
    Bpf,
    Tracefs,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Bpf => "bpf",
            Backend::Tracefs => "tracefs",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Options {
    pub cpus: CpuList,
    pub duration: Duration,
    pub pid: Option<u32>,
    pub backend: Backend,
}

/// Why `noise` could not measure. The variant says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An option names something that cannot be measured: nothing was tried.
    #[error("{0}")]
    Invalid(String),
    /// The BPF programs could not be loaded or attached here (no BTF, no
    /// privilege, a verifier that refuses them): tracefs may still work,
    /// and `--backend auto` falls back to it.
    #[error("BPF unavailable: {0}")]
    BpfUnavailable(String),
    /// The tracefs instance could not be set up or read.
    #[error("tracefs: {0}")]
    Tracefs(String),
    /// Something failed during or after the window.
    #[error("{0}")]
    Failed(String),
}

impl From<sys::Error> for Error {
    fn from(e: sys::Error) -> Error {
        match e.kind {
            sys::ErrorKind::Invalid => Error::Invalid(e.to_string()),
            _ => Error::Failed(e.to_string()),
        }
    }
}

/// One cause on one CPU.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Cause {
    /// ipi, irq, vector, softirq, timer, switch, wakeup.
    pub kind: &'static str,
    /// How `what` is keyed: from_cpu, site, function, process, irq, vector,
    /// softirq, function, task.
    pub by: &'static str,
    pub cpu: u32,
    pub what: String,
    pub count: u64,
    /// Time stolen, where measured (IRQs, vectors, softirqs, task runtime).
    pub total_us: Option<f64>,
    pub max_us: Option<f64>,
}

/// What `--pid` caused on the measured CPUs.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct PidReport {
    pub pid: u32,
    pub comm: String,
    /// IPIs sent to the measured CPUs by its threads.
    pub ipis_sent: u64,
    /// Wakeups of tasks on the measured CPUs that its threads made.
    pub wakeups_caused: u64,
    /// Times its threads were switched in on the measured CPUs, and how long
    /// they ran there.
    pub switches_in: u64,
    pub runtime_us: f64,
    /// Where its IPIs to those CPUs came from, and whom it woke there.
    pub ipi_sites: Vec<(String, u64)>,
    pub woke: Vec<(String, u64)>,
    /// True when the same process (PID and start time) was there at the
    /// start and at the end of the window. False: it exited (or its PID was
    /// reused) during the window, and the counts above cover only part of it.
    pub alive_whole_window: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub cpus: String,
    pub duration_s: f64,
    /// `bpf` or `tracefs`.
    pub backend: &'static str,
    /// Why BPF was not used, when `auto` fell back to tracefs.
    pub fallback: Option<String>,
    /// Events the trace buffers dropped (tracefs only): counts are short by
    /// at most this many.
    pub lost_events: u64,
    pub causes: Vec<Cause>,
    pub pid: Option<PidReport>,
    /// Tracepoints this kernel lacks (their causes are not counted).
    pub unavailable: Vec<String>,
}

impl Report {
    /// Total count of a kind (`by` picks one of its keyings, as each event
    /// is counted once per keying).
    pub fn total(&self, kind: &str, by: &str) -> u64 {
        self.causes
            .iter()
            .filter(|c| c.kind == kind && c.by == by)
            .map(|c| c.count)
            .sum()
    }
}

/// Mounts tracefs at /sys/kernel/tracing if nothing is mounted there
/// (tracepoint names are read from it when a program does not attach).
pub fn mount_tracefs() -> std::io::Result<()> {
    let root = Path::new("/sys/kernel/tracing");
    if root.join("events").exists() {
        return Ok(());
    }
    let r = unsafe {
        // SAFETY: constant C strings; mount has no memory preconditions.
        libc::mount(
            c"nodev".as_ptr(),
            c"/sys/kernel/tracing".as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Pins this thread off the measured CPUs, so reading and sleeping here
/// lands nowhere near them.
fn pin_away(measured: &CpuList) -> Result<(), Error> {
    let online = crate::online_cpus()?;
    let rest = online.minus(measured);
    if rest.is_empty() {
        return Err(Error::Invalid(format!(
            "--cpus {measured} leaves no other online CPU (online: {online}) to measure from"
        )));
    }
    sys::pin_current_thread(rest.cpus())
        .map_err(|e| Error::Failed(format!("pinning to {rest}: {e}")))
}

/// Counts for `o.duration`; the calling thread is moved off the measured
/// CPUs for the rest of its life.
pub fn measure(o: &Options) -> Result<Report, Error> {
    if o.cpus.is_empty() {
        return Err(Error::Invalid("--cpus is empty".into()));
    }
    if let Some(&c) = o.cpus.cpus().iter().find(|&&c| c >= QN_MAX_CPUS as u32) {
        return Err(Error::Invalid(format!(
            "CPU {c}: CPUs 0 to {} can be watched",
            QN_MAX_CPUS - 1
        )));
    }
    if o.cpus.len() > QN_MAX_LIST as usize {
        return Err(Error::Invalid(format!(
            "--cpus names {} CPUs; at most {QN_MAX_LIST} at once",
            o.cpus.len()
        )));
    }
    pin_away(&o.cpus)?;
    // Tracepoint names are read from tracefs when a program does not
    // attach; the tracefs backend needs it mounted.
    let mounted = mount_tracefs();
    let pid_start = o.pid.map(start_ticks_of);
    let tracefs = || -> Result<Counted, Error> {
        if let Err(e) = &mounted {
            return Err(Error::Tracefs(format!(
                "mounting at /sys/kernel/tracing: {e}"
            )));
        }
        tracefs::count(&o.cpus, o.duration, o.pid)
    };
    // Only BPF being unavailable sends `auto` to tracefs; any other error
    // is reported as it is.
    let (counted, fallback) = match o.backend {
        Backend::Bpf => (bpf::count(o)?, None),
        Backend::Tracefs => (tracefs()?, None),
        Backend::Auto => match bpf::count(o) {
            Ok(c) => (c, None),
            Err(Error::BpfUnavailable(why)) => (tracefs()?, Some(why)),
            Err(e) => return Err(e),
        },
    };
    let Counted {
        raw,
        interned,
        lost,
        unavailable,
        seconds,
        backend,
    } = counted;
    let names = Names::load(interned);
    let mut causes: Vec<Cause> = raw
        .iter()
        .filter(|(k, _)| !matches!(k.kind as u64, QN_PID_IPI_SITE | QN_PID_WAKEE))
        .map(|(k, v)| names.cause(k, v))
        .collect();
    causes.sort_by(|a, b| {
        (a.kind, a.by, a.cpu)
            .cmp(&(b.kind, b.by, b.cpu))
            .then(b.count.cmp(&a.count))
            .then(a.what.cmp(&b.what))
    });
    let pid = o.pid.map(|pid| {
        let mut r = pid_report(pid, &raw, &names);
        r.alive_whole_window =
            pid_start.flatten().is_some() && start_ticks_of(pid) == pid_start.flatten();
        r
    });
    Ok(Report {
        cpus: o.cpus.to_string(),
        duration_s: seconds,
        backend: backend.name(),
        fallback,
        lost_events: lost,
        causes,
        pid,
        unavailable,
    })
}

/// What either backend counted in its window.
pub struct Counted {
    pub raw: Vec<(QnKey, QnValue)>,
    /// Names the trace gave as text (tracefs), by their small ids.
    pub interned: Interned,
    /// Events the buffers dropped (full) or overwrote (tracefs).
    pub lost: u64,
    /// Tracepoints this kernel lacks.
    pub unavailable: Vec<String>,
    pub seconds: f64,
    pub backend: Backend,
}

/// Strings standing for addresses: id `n` is `names[n - 1]`.
#[derive(Default)]
pub struct Interned {
    ids: HashMap<String, u64>,
    pub names: Vec<String>,
}

impl Interned {
    pub fn id(&mut self, s: &str) -> u64 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        self.names.push(s.to_string());
        let id = self.names.len() as u64;
        self.ids.insert(s.to_string(), id);
        id
    }

    /// The name of an interned id (ids are small; addresses are not).
    pub fn name(&self, id: u64) -> Option<&str> {
        let i = usize::try_from(id).ok()?.checked_sub(1)?;
        self.names.get(i).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bad option is reported as such under `auto`, never taken for BPF
    /// being unavailable (which would quietly count with tracefs instead).
    #[test]
    fn bad_options_are_invalid_whatever_the_backend() {
        let online = crate::online_cpus().unwrap();
        for cpus in [
            CpuList::new(vec![]),
            CpuList::new(vec![QN_MAX_CPUS as u32 + 1]),
            online,
        ] {
            for backend in [Backend::Auto, Backend::Bpf, Backend::Tracefs] {
                let o = Options {
                    cpus: cpus.clone(),
                    duration: Duration::from_millis(10),
                    pid: None,
                    backend,
                };
                let e = measure(&o).err();
                assert!(
                    matches!(e, Some(Error::Invalid(_))),
                    "--cpus {cpus} with {backend:?}: {e:?}"
                );
            }
        }
    }
    use sha2::{Digest, Sha256};

    /// The committed object is built from the committed sources
    /// (bpf/build.sh writes their hashes next to it).
    #[test]
    fn bpf_object_is_built_from_the_current_sources() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bpf");
        let recorded = std::fs::read_to_string(dir.join("noise.bpf.o.sources")).unwrap();
        for line in recorded.lines() {
            let (hash, name) = line.split_once("  ").unwrap();
            let now = format!(
                "{:x}",
                Sha256::digest(std::fs::read(dir.join(name)).unwrap())
            );
            assert_eq!(
                now, hash,
                "bpf/{name} changed since noise.bpf.o was built: run bpf/build.sh"
            );
        }
    }
}
