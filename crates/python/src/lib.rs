//! `quietstat._quietstat`: the process table for Python. The package
//! around it (`python/quietstat/__init__.py`) turns the packed columns
//! into lists or NumPy arrays and gives psutil's shapes.
//!
//! Numeric columns cross as `bytes` of native-endian 64-bit integers (one
//! copy, no Python object per value): `array('q', b)` or
//! `numpy.frombuffer(b, 'int64')` on the other side. Names and states are
//! lists of `str`.

use proctable::{Backend, BackendChoice, Field, Fields, Proc, ProcTable, Query};
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

pyo3::create_exception!(
    _quietstat,
    Error,
    PyException,
    "A read of the process table failed."
);

type Get = fn(&Proc) -> i64;

/// The numeric columns: name, the field that reads it, its value (units in
/// the name; docs/library.md).
const NUMBERS: &[(&str, Field, Get)] = &[
    ("pid", Field::Pid, |p| p.pid.into()),
    ("ppid", Field::Ppid, |p| p.ppid.into()),
    ("start_ticks", Field::Start, |p| p.start_ticks as i64),
    ("start_ns", Field::Start, |p| p.start_ns as i64),
    ("utime_ns", Field::Utime, |p| p.utime_ns as i64),
    ("stime_ns", Field::Stime, |p| p.stime_ns as i64),
    ("minflt", Field::Minflt, |p| p.minflt as i64),
    ("majflt", Field::Majflt, |p| p.majflt as i64),
    ("num_threads", Field::Threads, |p| p.num_threads.into()),
    ("rss_bytes", Field::Rss, |p| p.rss_bytes as i64),
    ("vsize_bytes", Field::Vsize, |p| p.vsize_bytes as i64),
    ("nice", Field::Nice, |p| p.nice.into()),
    ("priority", Field::Priority, |p| p.priority.into()),
    ("cpu", Field::Cpu, |p| p.cpu.into()),
    ("uid", Field::Uid, |p| p.uid.map_or(-1, i64::from)),
    ("rchar", Field::Io, |p| p.io.map_or(-1, |i| i.rchar as i64)),
    ("wchar", Field::Io, |p| p.io.map_or(-1, |i| i.wchar as i64)),
    ("syscr", Field::Io, |p| p.io.map_or(-1, |i| i.syscr as i64)),
    ("syscw", Field::Io, |p| p.io.map_or(-1, |i| i.syscw as i64)),
    ("read_bytes", Field::Io, |p| {
        p.io.map_or(-1, |i| i.read_bytes as i64)
    }),
    ("write_bytes", Field::Io, |p| {
        p.io.map_or(-1, |i| i.write_bytes as i64)
    }),
    ("voluntary_ctxsw", Field::Ctxsw, |p| {
        p.ctxsw.map_or(-1, |c| c.voluntary as i64)
    }),
    ("involuntary_ctxsw", Field::Ctxsw, |p| {
        p.ctxsw.map_or(-1, |c| c.involuntary as i64)
    }),
    ("oom_score_adj", Field::OomScoreAdj, |p| {
        p.oom_score_adj.map_or(0, i64::from)
    }),
];

/// The text columns.
const TEXTS: &[(&str, Field)] = &[("comm", Field::Comm), ("state", Field::State)];

/// Every column's name, for errors and `COLUMNS`.
fn column_names() -> Vec<&'static str> {
    NUMBERS
        .iter()
        .map(|(n, _, _)| *n)
        .chain(TEXTS.iter().map(|(n, _)| *n))
        .collect()
}

/// An open process table: the BPF walk loaded once, or /proc.
#[pyclass(unsendable, module = "quietstat._quietstat")]
struct Table {
    table: ProcTable,
    rows: Vec<Proc>,
}

/// PIDs as the table takes them: sorted, distinct, positive.
fn pid_set(pids: &[i64]) -> Vec<u32> {
    let mut v: Vec<u32> = pids
        .iter()
        .filter_map(|&p| u32::try_from(p).ok().filter(|&p| p > 0))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn packed<'py>(
    py: Python<'py>,
    values: impl Iterator<Item = i64>,
    n: usize,
) -> Bound<'py, PyBytes> {
    let mut buf = Vec::with_capacity(n * 8);
    for v in values {
        buf.extend_from_slice(&v.to_ne_bytes());
    }
    PyBytes::new(py, &buf)
}

#[pymethods]
impl Table {
    #[new]
    #[pyo3(signature = (backend = "auto", proc_root = "/proc", sys_root = "/sys", threads = 0))]
    fn new(backend: &str, proc_root: &str, sys_root: &str, threads: usize) -> PyResult<Self> {
        if threads > proctable::MAX_THREADS {
            return Err(PyValueError::new_err(format!(
                "threads {threads}: accepted are 0 to {}",
                proctable::MAX_THREADS
            )));
        }
        let choice = BackendChoice::parse(backend).ok_or_else(|| {
            PyValueError::new_err(format!(
                "backend {backend:?}: accepted are \"auto\", \"bpf\" and \"procfs\""
            ))
        })?;
        let mut table = ProcTable::open(choice, proc_root, sys_root)
            .map_err(|e| Error::new_err(format!("opening the process table: {e}")))?;
        // 0 or 1: the calling thread alone; more: helpers on other CPUs.
        table.set_threads(proctable::Threads::Fixed(threads.max(1)));
        Ok(Table {
            table,
            rows: Vec::new(),
        })
    }

    /// "bpf" or "procfs".
    #[getter]
    fn backend(&self) -> &'static str {
        match self.table.backend() {
            Backend::Bpf => "bpf",
            Backend::Procfs => "procfs",
        }
    }

    /// Why "auto" did not take BPF ("" when it did, or was not asked).
    #[getter]
    fn backend_note(&self) -> String {
        self.table.fallback_reason().unwrap_or_default().to_string()
    }

    /// Start times in clock ticks since boot (/proc/PID/stat field 22) of
    /// each PID, 0 for a PID that is no process: packed int64.
    fn start_times<'py>(
        &mut self,
        py: Python<'py>,
        pids: Vec<i64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let asked = pid_set(&pids);
        let ticks = if asked.is_empty() {
            Vec::new()
        } else {
            self.table
                .start_ticks(&asked)
                .map_err(|e| Error::new_err(format!("reading the process table: {e}")))?
        };
        let value = |pid: &i64| -> i64 {
            u32::try_from(*pid)
                .ok()
                .and_then(|p| asked.binary_search(&p).ok())
                .and_then(|i| ticks[i])
                .map_or(0, |t| t as i64)
        };
        Ok(packed(py, pids.iter().map(value), pids.len()))
    }

    /// The columns named in `fields` for every process (or the PIDs in
    /// `pids` that are processes), one row per process in PID order:
    /// numeric columns as packed int64 bytes, text columns as lists.
    #[pyo3(signature = (fields, pids = None))]
    fn snapshot<'py>(
        &mut self,
        py: Python<'py>,
        fields: Vec<String>,
        pids: Option<Vec<i64>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut read = Fields::NONE.with(Field::Pid).with(Field::Start);
        for f in &fields {
            let field = NUMBERS
                .iter()
                .find(|(n, _, _)| n == f)
                .map(|(_, field, _)| *field)
                .or_else(|| TEXTS.iter().find(|(n, _)| n == f).map(|(_, field)| *field))
                .ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "no column {f:?}; accepted: {}",
                        column_names().join(", ")
                    ))
                })?;
            read = read.with(field);
        }
        let query = Query {
            fields: read,
            threads: false,
            pids: pids.as_deref().map(pid_set),
        };
        self.table
            .snapshot(&query, &mut self.rows)
            .map_err(|e| Error::new_err(format!("reading the process table: {e}")))?;
        let out = PyDict::new(py);
        let n = self.rows.len();
        for f in &fields {
            if let Some((name, _, get)) = NUMBERS.iter().find(|(n, _, _)| n == f) {
                out.set_item(name, packed(py, self.rows.iter().map(get), n))?;
            } else if f == "comm" {
                let names: Vec<String> = self
                    .rows
                    .iter()
                    .map(|p| String::from_utf8_lossy(p.comm.as_bytes()).into_owned())
                    .collect();
                out.set_item("comm", PyList::new(py, names)?)?;
            } else if f == "state" {
                let states: Vec<String> = self.rows.iter().map(|p| p.state.to_string()).collect();
                out.set_item("state", PyList::new(py, states)?)?;
            }
        }
        Ok(out)
    }
}

#[pymodule]
fn _quietstat(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Table>()?;
    m.add("Error", m.py().get_type::<Error>())?;
    m.add("COLUMNS", column_names())?;
    m.add(
        "NUMERIC_COLUMNS",
        NUMBERS.iter().map(|(n, _, _)| *n).collect::<Vec<_>>(),
    )?;
    Ok(())
}
