//! Backend choice: `auto` takes BPF when it loads and otherwise procfs,
//! keeping the reason BPF was not used so the caller can log it once.

use std::path::Path;

use crate::bpf::Bpf;
use crate::dir::ProcDir;
use crate::error::Result;
use crate::proc::Proc;
use crate::query::Query;

/// Which backend to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendChoice {
    Auto,
    Bpf,
    Procfs,
}

impl BackendChoice {
    pub fn parse(s: &str) -> Option<BackendChoice> {
        Some(match s {
            "auto" => BackendChoice::Auto,
            "bpf" => BackendChoice::Bpf,
            "procfs" => BackendChoice::Procfs,
            _ => return None,
        })
    }
}

/// The backend in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Bpf,
    Procfs,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Bpf => "bpf",
            Backend::Procfs => "procfs",
        }
    }
}

enum Inner {
    Bpf(Box<Bpf>),
    Procfs(Box<ProcDir>),
}

/// A process table on one backend.
pub struct ProcTable {
    inner: Inner,
    fallback: Option<String>,
}

impl ProcTable {
    /// Opens a backend. BPF reads the live kernel, so it is only tried when
    /// `proc_root` is `/proc`; `auto` on another root is procfs.
    pub fn open(
        choice: BackendChoice,
        proc_root: impl AsRef<Path>,
        sys_root: impl AsRef<Path>,
    ) -> Result<ProcTable> {
        let live = proc_root.as_ref() == Path::new("/proc");
        let procfs = |fallback| -> Result<ProcTable> {
            Ok(ProcTable {
                inner: Inner::Procfs(Box::new(ProcDir::open(&proc_root, &sys_root)?)),
                fallback,
            })
        };
        match choice {
            BackendChoice::Procfs => procfs(None),
            BackendChoice::Bpf => Ok(ProcTable {
                inner: Inner::Bpf(Box::new(Bpf::open()?)),
                fallback: None,
            }),
            BackendChoice::Auto if !live => procfs(Some(format!(
                "proc root is {}, not the live /proc",
                proc_root.as_ref().display()
            ))),
            BackendChoice::Auto => match Bpf::open() {
                Ok(b) => Ok(ProcTable {
                    inner: Inner::Bpf(Box::new(b)),
                    fallback: None,
                }),
                Err(e) => procfs(Some(e.to_string())),
            },
        }
    }

    pub fn backend(&self) -> Backend {
        match self.inner {
            Inner::Bpf(_) => Backend::Bpf,
            Inner::Procfs(_) => Backend::Procfs,
        }
    }

    /// Why `auto` did not take BPF, if it did not.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// The BPF backend, if in use.
    pub fn bpf(&self) -> Option<&Bpf> {
        match &self.inner {
            Inner::Bpf(b) => Some(b),
            Inner::Procfs(_) => None,
        }
    }

    /// The backend in words, for a log line: `bpf (walk)`, `bpf (iterator:
    /// WHY)` or `procfs`.
    pub fn describe(&self) -> String {
        match self.bpf() {
            Some(b) => match b.walk_unavailable() {
                None => "bpf (walk)".to_string(),
                Some(why) => format!("bpf (iterator; the walk is unavailable: {why})"),
            },
            None => "procfs".to_string(),
        }
    }

    /// The BPF backend, for exit capture.
    pub fn bpf_mut(&mut self) -> Option<&mut Bpf> {
        match &mut self.inner {
            Inner::Bpf(b) => Some(b),
            Inner::Procfs(_) => None,
        }
    }

    /// Fills `out` (cleared first) with one row per selected process or
    /// thread, sorted by PID.
    pub fn snapshot(&mut self, query: &Query, out: &mut Vec<Proc>) -> Result<()> {
        match &mut self.inner {
            Inner::Bpf(b) => b.snapshot(query, out),
            Inner::Procfs(d) => d.snapshot(query, out),
        }?;
        if !out.is_sorted_by_key(|p| p.pid) {
            out.sort_unstable_by_key(|p| p.pid);
        }
        Ok(())
    }

    /// Start time in clock ticks of each PID (`None`: no such process).
    pub fn start_ticks(&mut self, pids: &[u32]) -> Result<Vec<Option<u64>>> {
        match &mut self.inner {
            Inner::Bpf(b) => b.start_ticks(pids),
            Inner::Procfs(d) => d.start_ticks(pids),
        }
    }
}
