//! `quietstat._quietstat`: the process table for Python. The package
//! around it (`python/quietstat/__init__.py`) turns the packed columns
//! into lists or NumPy arrays and gives psutil's shapes.
//!
//! The columns are `model::columns`' (each process field's name, unit and
//! value defined once). Numeric columns cross as `bytes` of native-endian
//! 64-bit integers (one copy, no Python object per value), an absent value
//! as -1: `array('q', b)` or `numpy.frombuffer(b, 'int64')` on the other
//! side. Text columns (name, state, policy, command line) are lists of
//! `str`, an absent value as `None`.

use model::columns::{Column, Value};
use proctable::{Backend, BackendChoice, Field, Fields, Proc, ProcTable, Query, pid_list, pid_set};
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

pyo3::create_exception!(
    _quietstat,
    Error,
    PyException,
    "A read of the process table failed."
);

/// The exceptions a failed read raises by its kind: each is a
/// `quietstat.Error` and the built-in exception of that kind, so that
/// `except FileNotFoundError` and `except quietstat.Error` both catch a
/// root that is not there. Made when the module is: `(name, built-in, doc)`.
const KINDS: [(&str, &str, &str); 3] = [
    (
        "NotFoundError",
        "FileNotFoundError",
        "A file or directory of the process table is not there.",
    ),
    (
        "DeniedError",
        "PermissionError",
        "Reading the process table was refused.",
    ),
    (
        "MalformedError",
        "ValueError",
        "A file of the process table could not be parsed.",
    ),
];

/// The exception for `e`, with `what` before its message.
fn table_error(py: Python<'_>, what: &str, e: proctable::Error) -> PyErr {
    let msg = format!("{what}: {e}");
    let name = match e.kind() {
        proctable::ErrorKind::Absent => KINDS[0].0,
        proctable::ErrorKind::Denied => KINDS[1].0,
        proctable::ErrorKind::Malformed => KINDS[2].0,
        proctable::ErrorKind::Kernel
        | proctable::ErrorKind::Invalid
        | proctable::ErrorKind::Busy
        | proctable::ErrorKind::Io => return Error::new_err(msg),
    };
    match py
        .import("quietstat._quietstat")
        .and_then(|m| m.getattr(name))
        .and_then(|t| Ok(t.downcast_into::<pyo3::types::PyType>()?))
    {
        Ok(t) => PyErr::from_type(t, msg),
        Err(_) => Error::new_err(msg),
    }
}

/// Every column's name (`model::columns`, where each process field is
/// defined once).
fn column_names() -> Vec<&'static str> {
    model::columns::ALL.iter().map(|c| c.name).collect()
}

/// An open process table: the BPF walk loaded once, or /proc.
#[pyclass(unsendable, module = "quietstat._quietstat")]
struct Table {
    table: ProcTable,
    rows: Vec<Proc>,
    /// The agent's snapshot and the age its table may have, when asked.
    agent: Option<shm::view::AgentTable>,
    /// Whether the last snapshot came from the agent, and why not.
    served_by_agent: bool,
    agent_note: String,
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
    #[pyo3(signature = (backend = "auto", proc_root = "/proc", sys_root = "/sys", threads = 0, agent = None, agent_max_age_ms = 0))]
    fn new(
        backend: &str,
        proc_root: &str,
        sys_root: &str,
        threads: usize,
        agent: Option<&str>,
        agent_max_age_ms: u64,
    ) -> PyResult<Self> {
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
        let mut table = ProcTable::open_with_lookup(choice, proc_root, sys_root)
            .map_err(|e| Python::with_gil(|py| table_error(py, "opening the process table", e)))?;
        // 0 or 1: the calling thread alone; more: helpers on other CPUs.
        table.set_threads(proctable::Threads::Fixed(threads.max(1)));
        let agent = agent.map(|path| shm::view::AgentTable::new(path, agent_max_age_ms));
        Ok(Table {
            table,
            rows: Vec::new(),
            agent,
            served_by_agent: false,
            agent_note: String::new(),
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

    /// Why "auto" did not take BPF, and why start times walk the table
    /// rather than look each PID up ("" when neither).
    #[getter]
    fn backend_note(&self) -> String {
        self.table.note()
    }

    /// "agent" when the last snapshot came from the running agent's table,
    /// else "self".
    #[getter]
    fn served_by(&self) -> &'static str {
        if self.served_by_agent {
            "agent"
        } else {
            "self"
        }
    }

    /// Why the last snapshot did not come from the agent though asked
    /// ("" when it did, or when not asked).
    #[getter]
    fn agent_note(&self) -> String {
        self.agent_note.clone()
    }

    /// Start times in clock ticks since boot (/proc/PID/stat field 22) of
    /// each PID, 0 for a PID that is no process: packed int64.
    fn start_times<'py>(
        &mut self,
        py: Python<'py>,
        pids: Vec<i64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ticks = self
            .table
            .start_ticks(&pid_list(&pids))
            .map_err(|e| table_error(py, "reading the process table", e))?;
        Ok(packed(
            py,
            ticks.iter().map(|t| t.map_or(0, |t| t as i64)),
            pids.len(),
        ))
    }

    /// The columns named in `fields` (`COLUMNS`) for every process (or the
    /// PIDs in `pids` that are processes), one row per process in PID
    /// order: numeric columns as packed int64 bytes (-1: absent), text
    /// columns as lists (`None`: absent).
    #[pyo3(signature = (fields, pids = None))]
    fn snapshot<'py>(
        &mut self,
        py: Python<'py>,
        fields: Vec<String>,
        pids: Option<Vec<i64>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut read = Fields::NONE.with(Field::Pid).with(Field::Start);
        let mut columns: Vec<&'static Column> = Vec::with_capacity(fields.len());
        for f in &fields {
            let c = Column::find(f).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "no column {f:?}; accepted: {}",
                    column_names().join(", ")
                ))
            })?;
            read = read.with(c.field);
            columns.push(c);
        }
        let pids = pids.as_deref().map(pid_set);
        self.served_by_agent = false;
        if let Some(agent) = &self.agent {
            match agent.rows(read, pids.as_deref()) {
                Ok(rows) => {
                    self.rows = rows;
                    self.served_by_agent = true;
                    self.agent_note.clear();
                }
                Err(why) => self.agent_note = why.to_string(),
            }
        }
        if !self.served_by_agent {
            let query = Query {
                fields: read,
                threads: false,
                pids,
            };
            self.table
                .snapshot(&query, &mut self.rows)
                .map_err(|e| table_error(py, "reading the process table", e))?;
        }
        let out = PyDict::new(py);
        let n = self.rows.len();
        for c in columns {
            let values = self.rows.iter().map(|p| c.value(p, &self.table));
            // A column is text or numbers: its first value present says which.
            let text = self
                .rows
                .iter()
                .map(|p| c.value(p, &self.table))
                .find(|v| !matches!(v, Value::Absent))
                .is_some_and(|v| matches!(v, Value::Text(_)));
            if text {
                let list: Vec<Option<String>> = values
                    .map(|v| match v {
                        Value::Absent => None,
                        v => Some(v.to_string()),
                    })
                    .collect();
                out.set_item(c.name, PyList::new(py, list)?)?;
            } else {
                let number = |v: Value<'_>| match v {
                    Value::Num(v) => v as i64,
                    Value::Signed(v) => v,
                    Value::Text(_) | Value::Absent => -1,
                };
                out.set_item(c.name, packed(py, values.map(number), n))?;
            }
        }
        Ok(out)
    }
}

#[pymodule]
fn _quietstat(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Table>()?;
    m.add("Error", m.py().get_type::<Error>())?;
    let builtins = m.py().import("builtins")?;
    let error = m.py().get_type::<Error>();
    for (name, base, doc) in KINDS {
        let bases = (error.clone(), builtins.getattr(base)?);
        let attrs = PyDict::new(m.py());
        attrs.set_item("__doc__", doc)?;
        attrs.set_item("__module__", "quietstat")?;
        m.add(name, builtins.getattr("type")?.call1((name, bases, attrs))?)?;
    }
    m.add("COLUMNS", column_names())?;
    Ok(())
}
