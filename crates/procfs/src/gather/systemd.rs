//! systemd's units over D-Bus, written as `crate::systemd` documents: one
//! call lists every unit with its states, then the selected units'
//! properties are read in calls sent together (at most [`WINDOW`]
//! unanswered, under a bus's limit of pending replies), all before one
//! deadline. The connection is kept between reads, so a read costs no
//! authentication; it is dropped after a failure and made anew, but for
//! a read that timed out: that connection is kept as stuck, and the bus
//! is not asked again until something arrives on it, so a hung bus costs
//! the sampler one deadline, not one a read.
//!
//! A service's or a mount's Type changes only when the manager loads its
//! units again: a start or re-exec sets the manager's
//! `UnitsLoadStartTimestamp`, a `daemon-reload` its `UnitsLoadTimestamp`
//! (systemd 246 and later; before, nothing is kept). The types read are
//! kept while both stay the same, so a read asks only for what can change (a socket's counts, a
//! timer's last trigger) and, for the units it has not seen, their type.

use std::collections::HashMap;
use std::io::Write;
use std::time::{Duration, Instant};

use regex::Regex;
use sys::dbus::{Call, Connection, Reply, Value};

use super::Gatherer;

/// Calls sent and not yet answered, at most (a bus keeps 128 pending
/// replies a connection by default).
const WINDOW: usize = 64;

const SYSTEMD: &str = "org.freedesktop.systemd1";
const MANAGER_PATH: &str = "/org/freedesktop/systemd1";
const MANAGER: &str = "org.freedesktop.systemd1.Manager";
const PROPERTIES: &str = "org.freedesktop.DBus.Properties";

/// node_exporter's default `--collector.systemd.unit-exclude`.
pub const DEFAULT_UNIT_EXCLUDE: &str = r".+\.(automount|device|mount|scope|slice)";

/// How the systemd source reaches the manager and what it reads.
#[derive(Clone, Debug)]
pub struct SystemdOptions {
    /// A D-Bus address (`unix:path=...`): the system bus, or systemd's
    /// private socket.
    pub address: String,
    /// Whether the address is a message bus (which wants a Hello) rather
    /// than systemd's own socket.
    pub bus: bool,
    /// Units whose properties are read and served: matching `include`
    /// and not `exclude` (both anchored), and loaded.
    pub include: Regex,
    pub exclude: Regex,
    /// Read services' TasksCurrent and TasksMax.
    pub tasks: bool,
    /// Read services' NRestarts.
    pub restarts: bool,
    /// Read active units' ActiveEnterTimestamp.
    pub start_time: bool,
    /// A read ends, failed, at this long.
    pub deadline: Duration,
}

/// How long a read of systemd's units may take by default.
pub const DEFAULT_SYSTEMD_DEADLINE: Duration = Duration::from_secs(1);

impl Default for SystemdOptions {
    fn default() -> Self {
        SystemdOptions {
            address: std::env::var("DBUS_SYSTEM_BUS_ADDRESS")
                .unwrap_or_else(|_| sys::dbus::SYSTEM_BUS.to_string()),
            bus: true,
            include: anchored(".+").expect("a valid expression"),
            exclude: anchored(DEFAULT_UNIT_EXCLUDE).expect("a valid expression"),
            tasks: false,
            restarts: false,
            start_time: false,
            deadline: DEFAULT_SYSTEMD_DEADLINE,
        }
    }
}

/// `p` matched against a whole unit name, as node_exporter matches it.
pub fn anchored(p: &str) -> Result<Regex, regex::Error> {
    Regex::new(&format!("^(?:{p})$"))
}

/// A property read for a unit: the text's key, and where D-Bus has it.
struct Prop {
    key: &'static str,
    interface: &'static str,
    name: &'static str,
}

const fn prop(key: &'static str, interface: &'static str, name: &'static str) -> Prop {
    Prop {
        key,
        interface,
        name,
    }
}

const SERVICE: &str = "org.freedesktop.systemd1.Service";
const TYPE: Prop = prop("type", SERVICE, "Type");
const MOUNT_TYPE: Prop = prop("type", "org.freedesktop.systemd1.Mount", "Type");
const RESTARTS: Prop = prop("restarts", SERVICE, "NRestarts");
const TASKS: Prop = prop("tasks", SERVICE, "TasksCurrent");
const TASKS_MAX: Prop = prop("tasks_max", SERVICE, "TasksMax");
const START: Prop = prop(
    "start_us",
    "org.freedesktop.systemd1.Unit",
    "ActiveEnterTimestamp",
);
const SOCKET: &str = "org.freedesktop.systemd1.Socket";
const SOCKET_PROPS: [Prop; 3] = [
    prop("accepted", SOCKET, "NAccepted"),
    prop("connections", SOCKET, "NConnections"),
    prop("refused", SOCKET, "NRefused"),
];
const LAST_TRIGGER: Prop = prop(
    "last_trigger_us",
    "org.freedesktop.systemd1.Timer",
    "LastTriggerUSec",
);

/// A unit from the manager's list.
struct Listed {
    name: String,
    load: String,
    active: String,
    sub: String,
    path: String,
}

fn word(v: &Value) -> Option<&str> {
    v.as_str()
        .filter(|s| !s.is_empty() && !s.bytes().any(|b| b.is_ascii_whitespace() || b == b'='))
}

impl Gatherer {
    pub(super) fn systemd(&mut self) -> std::io::Result<()> {
        // A bus that let a read time out is not asked again until it has
        // answered (or closed): the sampler waits one deadline for a hung
        // bus, not one a read.
        if let Some((c, since)) = &self.systemd_stuck {
            if !c.readable_now() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "D-Bus: no answer since a read timed out {:.0} s ago; asked again once the bus answers",
                        since.elapsed().as_secs_f64()
                    ),
                ));
            }
            self.systemd_stuck = None;
        }
        let deadline = Instant::now() + self.options.systemd.deadline;
        let kept = self.systemd_conn.is_some();
        let mut conn = match self.systemd_conn.take() {
            Some(c) => c,
            None => self.systemd_open(deadline)?,
        };
        let mut r = self.systemd_read(&mut conn, deadline);
        // A kept connection the bus has since closed: once more, anew.
        if matches!(&r, Err(e) if e.kind() != std::io::ErrorKind::TimedOut) && kept {
            self.scratch.clear();
            conn = self.systemd_open(deadline)?;
            r = self.systemd_read(&mut conn, deadline);
        }
        match &r {
            Ok(()) => self.systemd_conn = Some(conn),
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                self.systemd_stuck = Some((conn, Instant::now()));
            }
            Err(_) => {}
        }
        r
    }

    /// A new connection, authenticated; one that times out doing so is
    /// kept as stuck.
    fn systemd_open(&mut self, deadline: Instant) -> std::io::Result<Connection> {
        let o = &self.options.systemd;
        let mut c = Connection::connect(&o.address)?;
        match c.handshake(&o.address, o.bus, deadline) {
            Ok(()) => Ok(c),
            Err(e) => {
                if e.kind() == std::io::ErrorKind::TimedOut {
                    self.systemd_stuck = Some((c, Instant::now()));
                }
                Err(e)
            }
        }
    }

    fn systemd_read(&mut self, conn: &mut Connection, deadline: Instant) -> std::io::Result<()> {
        let o = &self.options.systemd;
        let manager = [
            Getter::new(MANAGER_PATH, MANAGER, "Version"),
            Getter::new(MANAGER_PATH, MANAGER, "Virtualization"),
            Getter::new(MANAGER_PATH, MANAGER, "SystemState"),
            Getter::new(MANAGER_PATH, MANAGER, "UnitsLoadStartTimestamp"),
            Getter::new(MANAGER_PATH, MANAGER, "UnitsLoadTimestamp"),
        ];
        let mut first: Vec<Call> = manager.iter().map(|c| c.call()).collect();
        first.push(Call {
            destination: SYSTEMD,
            path: MANAGER_PATH,
            interface: MANAGER,
            member: "ListUnits",
            args: &[],
        });
        let replies = conn.call_all(&first, WINDOW, deadline)?;
        let units = match &replies[5] {
            Reply::Values(v) => listed(v),
            Reply::Error { name, message } => {
                return Err(std::io::Error::other(format!(
                    "systemd's ListUnits: {name}: {message}"
                )));
            }
        };
        let _ = writeln!(self.scratch, "at {}", sys::unix_ns());
        for (key, r) in ["version", "virtualization", "system_state"]
            .iter()
            .zip(&replies[..3])
        {
            let v = match r {
                Reply::Values(v) => v.first().and_then(Value::as_str).unwrap_or_default(),
                Reply::Error { .. } => "",
            };
            let v: String = v.chars().filter(|c| !c.is_control()).collect();
            let _ = writeln!(self.scratch, "{key} {v}");
        }
        // The types read before hold while the units were not loaded again.
        let stamp = |r: &Reply| match r {
            Reply::Values(v) => v.first().and_then(Value::as_u64),
            Reply::Error { .. } => None,
        };
        let loaded_at = stamp(&replies[3]).zip(stamp(&replies[4]));
        let mut types = std::mem::take(&mut self.systemd_types);
        if loaded_at.is_none() || loaded_at != self.systemd_loaded_at {
            types.clear();
        }
        self.systemd_loaded_at = loaded_at;
        // The selected units' property calls, and which unit each is for.
        let mut calls: Vec<(usize, &Prop)> = Vec::new();
        let mut selected = vec![false; units.len()];
        for (i, u) in units.iter().enumerate() {
            if u.load != "loaded" || !o.include.is_match(&u.name) || o.exclude.is_match(&u.name) {
                continue;
            }
            selected[i] = true;
            let kind = u.name.rsplit_once('.').map_or("", |(_, t)| t);
            let known = types.contains_key(&u.name);
            match kind {
                "service" => {
                    if !known {
                        calls.push((i, &TYPE));
                    }
                    if o.restarts {
                        calls.push((i, &RESTARTS));
                    }
                    if o.tasks {
                        calls.push((i, &TASKS));
                        calls.push((i, &TASKS_MAX));
                    }
                }
                "mount" if !known => calls.push((i, &MOUNT_TYPE)),
                "socket" => calls.extend(SOCKET_PROPS.iter().map(|p| (i, p))),
                "timer" => calls.push((i, &LAST_TRIGGER)),
                _ => {}
            }
            if o.start_time && u.active == "active" {
                calls.push((i, &START));
            }
        }
        let wire: Vec<Getter> = calls
            .iter()
            .map(|(i, p)| Getter::new(&units[*i].path, p.interface, p.name))
            .collect();
        let wire_calls: Vec<Call> = wire.iter().map(Getter::call).collect();
        let answers = conn.call_all(&wire_calls, WINDOW, deadline)?;
        let mut next = 0;
        // The types kept for the next read: this list's, no others.
        let mut kept = HashMap::with_capacity(types.len());
        for (i, u) in units.iter().enumerate() {
            let mark = if selected[i] { "unit+" } else { "unit" };
            let _ = write!(
                self.scratch,
                "{mark} {} {} {} {}",
                u.name, u.load, u.active, u.sub
            );
            if selected[i] && o.start_time && u.active != "active" {
                self.scratch.extend_from_slice(b" start_us=0");
            }
            if let Some((name, t)) = types.remove_entry(&u.name) {
                if !t.is_empty() {
                    let _ = write!(self.scratch, " type={t}");
                }
                kept.insert(name, t);
            }
            while next < calls.len() && calls[next].0 == i {
                let (_, p) = calls[next];
                // A property the manager does not have is left out.
                let v = match &answers[next] {
                    Reply::Values(v) => v.first(),
                    Reply::Error { .. } => None,
                };
                match (p.key, v) {
                    ("type", Some(v)) => {
                        let w = word(v).unwrap_or_default();
                        if !w.is_empty() {
                            let _ = write!(self.scratch, " type={w}");
                        }
                        kept.insert(u.name.clone(), w.to_string());
                    }
                    (key, Some(v)) => {
                        if let Some(n) = v.as_u64() {
                            let _ = write!(self.scratch, " {key}={n}");
                        }
                    }
                    (_, None) => {}
                }
                next += 1;
            }
            self.scratch.push(b'\n');
        }
        self.systemd_types = kept;
        Ok(())
    }
}

/// A property Get's owned arguments.
struct Getter {
    path: String,
    args: [&'static str; 2],
}

impl Getter {
    fn new(path: &str, interface: &'static str, name: &'static str) -> Getter {
        Getter {
            path: path.to_string(),
            args: [interface, name],
        }
    }

    fn call(&self) -> Call<'_> {
        Call {
            destination: SYSTEMD,
            path: &self.path,
            interface: PROPERTIES,
            member: "Get",
            args: &self.args,
        }
    }
}

/// The units of a ListUnits reply (`a(ssssssouso)`) whose names and
/// states are single words.
fn listed(v: &[Value]) -> Vec<Listed> {
    let Some(Value::Array(items)) = v.first() else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        let Value::Struct(f) = it else { continue };
        let w = |i: usize| f.get(i).and_then(word).map(str::to_owned);
        let (Some(name), Some(load), Some(active), Some(sub), Some(path)) =
            (w(0), w(2), w(3), w(4), w(6))
        else {
            continue;
        };
        out.push(Listed {
            name,
            load,
            active,
            sub,
            path,
        });
    }
    out
}
