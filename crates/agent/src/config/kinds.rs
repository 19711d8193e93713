//! The kinds of value a configuration key holds: how each is written in
//! the file and on the command line, what it resolves to, how it is
//! checked and printed. A row of the key table (`config/keys.rs`) names
//! one kind and its default; everything else about the key follows.

use std::fmt::Debug;
use std::marker::PhantomData;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use procfs::cpu::CpuList;
use proctable::BackendChoice;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{ConfigError, Listen, bad, checked_regex, in_range, parse_bytes, parse_duration};

/// One kind of value.
pub trait Kind {
    /// As written in the file (every key is optional there).
    type File: Clone + PartialEq + Debug + Serialize + DeserializeOwned;
    /// As the agent uses it.
    type Out: Clone + PartialEq + Debug;
    /// The value of `key`, or its default when the file leaves it out;
    /// errors name `key`, the value and what is accepted.
    fn resolve(&self, key: &str, v: Option<&Self::File>) -> Result<Self::Out, ConfigError>;
    /// As `--print-config` writes it (`None`: left out).
    fn print(&self, v: &Self::Out) -> Option<Self::File>;
    /// The default as `--print-config` writes it, for `--help`: built for
    /// every run of the CLI, so a kind whose check is costly says it
    /// without the check.
    fn default_file(&self) -> Option<Self::File> {
        self.resolve("", None).ok().and_then(|d| self.print(&d))
    }
    /// A later layer (the command line over the file): replaces.
    fn merge(&self, into: &mut Option<Self::File>, over: &Option<Self::File>) {
        if over.is_some() {
            into.clone_from(over);
        }
    }
    /// The keys below this one, for a table (`[store]`).
    fn keys(&self, _path: &str) -> Vec<KeyDoc> {
        Vec::new()
    }
}

/// A key and its one-line description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyDoc {
    /// As written in the file, tables joined with dots (`store.retention`;
    /// `sources.<source>.interval` for every source).
    pub path: String,
    pub doc: &'static str,
}

/// How a flag takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `--flag VALUE`, the last one given wins.
    One,
    /// `--flag VALUE`, repeated for several.
    Many,
    /// `--flag` alone: on.
    Switch,
}

/// A file value a command-line flag can set.
pub trait FlagValue: Sized {
    const SHAPE: Shape;
    /// The value of the flag given as `args` (each time it was given).
    fn from_args(key: &str, args: &[String]) -> Result<Self, ConfigError>;
}

fn last(args: &[String]) -> &str {
    args.last().map_or("", String::as_str)
}

impl FlagValue for String {
    const SHAPE: Shape = Shape::One;
    fn from_args(_: &str, args: &[String]) -> Result<Self, ConfigError> {
        Ok(last(args).to_string())
    }
}

impl FlagValue for PathBuf {
    const SHAPE: Shape = Shape::One;
    fn from_args(_: &str, args: &[String]) -> Result<Self, ConfigError> {
        Ok(PathBuf::from(last(args)))
    }
}

impl FlagValue for bool {
    const SHAPE: Shape = Shape::Switch;
    fn from_args(_: &str, _: &[String]) -> Result<Self, ConfigError> {
        Ok(true)
    }
}

impl FlagValue for Listen {
    const SHAPE: Shape = Shape::Many;
    fn from_args(_: &str, args: &[String]) -> Result<Self, ConfigError> {
        Ok(Listen::Many(args.to_vec()))
    }
}

macro_rules! number_flag {
    ($($t:ty),*) => {$(
        impl FlagValue for $t {
            const SHAPE: Shape = Shape::One;
            fn from_args(key: &str, args: &[String]) -> Result<Self, ConfigError> {
                let v = last(args);
                v.trim()
                    .parse()
                    .map_err(|_| bad(key, format!("{v:?} is not a number")))
            }
        }
    )*};
}
number_flag!(f64, usize, u16);

/// Addresses to listen on: IP:PORT, `:PORT` for every address of the
/// machine, a list, `""` for none.
pub struct Addrs(pub &'static str);

impl Kind for Addrs {
    type File = Listen;
    type Out = Vec<SocketAddr>;
    fn resolve(&self, key: &str, v: Option<&Listen>) -> Result<Vec<SocketAddr>, ConfigError> {
        let Some(l) = v else {
            return Ok(vec![self.0.parse().expect("a valid default address")]);
        };
        l.addrs()
            .into_iter()
            .map(|v| {
                // node_exporter's `:PORT`: every address of this machine.
                match v.strip_prefix(':') {
                    Some(port) => port
                        .parse::<u16>()
                        .map(|p| SocketAddr::from(([0, 0, 0, 0], p)))
                        .ok(),
                    None => v.parse::<SocketAddr>().ok(),
                }
                .ok_or_else(|| {
                    bad(
                        key,
                        format!("{v:?} is not an address; write IP:PORT, e.g. \"127.0.0.1:9479\" or \"[::1]:9479\", :PORT for every address, a list of them, or \"\" for no HTTP server"),
                    )
                })
            })
            .collect()
    }
    fn print(&self, v: &Vec<SocketAddr>) -> Option<Listen> {
        Some(match v.as_slice() {
            [] => Listen::One(String::new()),
            [one] => Listen::One(one.to_string()),
            many => Listen::Many(many.iter().map(|a| a.to_string()).collect()),
        })
    }
}

/// A directory that is always set: empty means the default.
pub struct Dir(pub &'static str);

impl Kind for Dir {
    type File = PathBuf;
    type Out = PathBuf;
    fn resolve(&self, _: &str, v: Option<&PathBuf>) -> Result<PathBuf, ConfigError> {
        Ok(v.filter(|p| !p.as_os_str().is_empty())
            .cloned()
            .unwrap_or_else(|| self.0.into()))
    }
    fn print(&self, v: &PathBuf) -> Option<PathBuf> {
        Some(v.clone())
    }
}

/// A path that may be unset: `""` for none; `None` when left out, or the
/// default.
pub struct MaybePath(pub Option<&'static str>);

impl Kind for MaybePath {
    type File = PathBuf;
    type Out = Option<PathBuf>;
    fn resolve(&self, _: &str, v: Option<&PathBuf>) -> Result<Option<PathBuf>, ConfigError> {
        Ok(match v {
            None => self.0.map(PathBuf::from),
            Some(p) if p.as_os_str().is_empty() => None,
            Some(p) => Some(p.clone()),
        })
    }
    fn print(&self, v: &Option<PathBuf>) -> Option<PathBuf> {
        Some(v.clone().unwrap_or_default())
    }
}

/// A CPU list, or `"auto"` (`None`).
pub struct Cpus;

impl Kind for Cpus {
    type File = String;
    type Out = Option<CpuList>;
    fn resolve(&self, key: &str, v: Option<&String>) -> Result<Option<CpuList>, ConfigError> {
        match v.map(|v| v.trim()) {
            None | Some("auto") => Ok(None),
            Some(v) => {
                let l = CpuList::parse(v).map_err(|e| {
                    bad(
                        key,
                        format!("{v:?}: {e}; write a CPU list like \"0\", \"0-3,8\" or \"auto\""),
                    )
                })?;
                if l.is_empty() {
                    return Err(bad(
                        key,
                        "the list is empty; name at least one CPU or write \"auto\"",
                    ));
                }
                Ok(Some(l))
            }
        }
    }
    fn print(&self, v: &Option<CpuList>) -> Option<String> {
        Some(v.as_ref().map_or_else(|| "auto".into(), |c| c.to_string()))
    }
}

/// A number, with the values it may take.
pub struct Number<T> {
    pub default: T,
    pub ok: fn(T) -> bool,
    /// What is accepted, as the error says it.
    pub accepted: String,
}

impl<T> Number<T> {
    /// Any value of the type.
    pub fn any(default: T) -> Number<T> {
        Number {
            default,
            ok: |_| true,
            accepted: String::new(),
        }
    }
}

impl<T> Kind for Number<T>
where
    T: Copy + PartialEq + Debug + std::fmt::Display + Serialize + DeserializeOwned,
{
    type File = T;
    type Out = T;
    fn resolve(&self, key: &str, v: Option<&T>) -> Result<T, ConfigError> {
        let v = v.copied().unwrap_or(self.default);
        if !(self.ok)(v) {
            return Err(bad(
                key,
                format!("{v} is out of range; accepted: {}", self.accepted),
            ));
        }
        Ok(v)
    }
    fn print(&self, v: &T) -> Option<T> {
        Some(*v)
    }
}

/// A regular expression, kept as written ("": none).
pub struct Regex(pub &'static str);

impl Kind for Regex {
    type File = String;
    type Out = String;
    fn resolve(&self, key: &str, v: Option<&String>) -> Result<String, ConfigError> {
        checked_regex(key, &v.cloned(), self.0)
    }
    fn print(&self, v: &String) -> Option<String> {
        Some(v.clone())
    }
    /// As written, not compiled: the defaults are checked when a
    /// configuration is resolved.
    fn default_file(&self) -> Option<String> {
        Some(self.0.to_string())
    }
}

/// A duration within a range.
pub struct Dur {
    pub default: Duration,
    pub lo: Duration,
    pub hi: Duration,
}

impl Kind for Dur {
    type File = String;
    type Out = Duration;
    fn resolve(&self, key: &str, v: Option<&String>) -> Result<Duration, ConfigError> {
        match v {
            None => Ok(self.default),
            Some(v) => in_range(key, parse_duration(key, v)?, self.lo, self.hi),
        }
    }
    fn print(&self, v: &Duration) -> Option<String> {
        Some(humantime::format_duration(*v).to_string())
    }
}

/// A duration within a range, or `"auto"` (`None`).
pub struct AutoDur {
    pub lo: Duration,
    pub hi: Duration,
}

impl Kind for AutoDur {
    type File = String;
    type Out = Option<Duration>;
    fn resolve(&self, key: &str, v: Option<&String>) -> Result<Option<Duration>, ConfigError> {
        match v.map(|v| v.trim()) {
            None | Some("auto") => Ok(None),
            Some(v) => Ok(Some(in_range(
                key,
                parse_duration(key, v)?,
                self.lo,
                self.hi,
            )?)),
        }
    }
    fn print(&self, v: &Option<Duration>) -> Option<String> {
        Some(v.map_or_else(
            || "auto".into(),
            |d| humantime::format_duration(d).to_string(),
        ))
    }
}

/// A size in bytes, at least `min`: a number of bytes, or with a unit
/// ([`parse_bytes`]).
pub struct Bytes {
    pub default: u64,
    pub min: u64,
    /// The least, as the error says it.
    pub min_text: &'static str,
}

impl Kind for Bytes {
    type File = String;
    type Out = u64;
    fn resolve(&self, key: &str, v: Option<&String>) -> Result<u64, ConfigError> {
        match v {
            None => Ok(self.default),
            Some(v) => parse_bytes(v).filter(|b| *b >= self.min).ok_or_else(|| {
                bad(
                    key,
                    format!(
                        "{v:?} is not a size of at least {}; write bytes or e.g. \"500MiB\", \"2GiB\", \"1G\"",
                        self.min_text
                    ),
                )
            }),
        }
    }
    fn print(&self, v: &u64) -> Option<String> {
        Some(v.to_string())
    }
}

/// A size in bytes of at least `min`, or `"auto"` (`None`): the caller
/// chooses it from the machine.
pub struct AutoBytes {
    pub min: u64,
    pub min_text: &'static str,
}

impl Kind for AutoBytes {
    type File = String;
    type Out = Option<u64>;
    fn resolve(&self, key: &str, v: Option<&String>) -> Result<Option<u64>, ConfigError> {
        match v.map(|v| v.trim()) {
            None | Some("auto") => Ok(None),
            Some(v) => parse_bytes(v)
                .filter(|b| *b >= self.min)
                .map(Some)
                .ok_or_else(|| {
                    bad(
                        key,
                        format!(
                            "{v:?} is not \"auto\" or a size of at least {}; write e.g. \"96MiB\", \"1GiB\"",
                            self.min_text
                        ),
                    )
                }),
        }
    }
    fn print(&self, v: &Option<u64>) -> Option<String> {
        Some(v.map_or_else(|| "auto".into(), |b| b.to_string()))
    }
}

/// A text that may be unset (`""`: none); printed as `""` when unset,
/// or left out (`print_unset: false`).
pub struct MaybeText {
    pub print_unset: bool,
}

impl Kind for MaybeText {
    type File = String;
    type Out = Option<String>;
    fn resolve(&self, _: &str, v: Option<&String>) -> Result<Option<String>, ConfigError> {
        Ok(v.filter(|v| !v.is_empty()).cloned())
    }
    fn print(&self, v: &Option<String>) -> Option<String> {
        match v {
            Some(v) => Some(v.clone()),
            None => self.print_unset.then(String::new),
        }
    }
}

/// A list of words, replaced whole by a later layer.
pub struct Words;

impl Kind for Words {
    type File = Vec<String>;
    type Out = Vec<String>;
    fn resolve(&self, _: &str, v: Option<&Vec<String>>) -> Result<Vec<String>, ConfigError> {
        Ok(v.cloned().unwrap_or_default())
    }
    fn print(&self, v: &Vec<String>) -> Option<Vec<String>> {
        Some(v.clone())
    }
}

impl FlagValue for Vec<String> {
    const SHAPE: Shape = Shape::Many;
    fn from_args(_: &str, args: &[String]) -> Result<Self, ConfigError> {
        Ok(args.to_vec())
    }
}

/// A later layer's list added to an earlier one's, each entry once.
fn add_new(into: &mut Option<Vec<String>>, over: &Option<Vec<String>>) {
    if let Some(o) = over {
        let mine = into.get_or_insert_with(Vec::new);
        for c in o {
            if !mine.contains(c) {
                mine.push(c.clone());
            }
        }
    }
}

/// Sysctls by their dotted names (`fs.file-nr`), each perhaps with names
/// for its fields (`fs.file-nr:total,current,max`); a later layer adds to
/// the earlier one's.
pub struct Sysctls;

impl Kind for Sysctls {
    type File = Vec<String>;
    type Out = Vec<String>;
    fn resolve(&self, key: &str, v: Option<&Vec<String>>) -> Result<Vec<String>, ConfigError> {
        let mut out: Vec<String> = Vec::new();
        for s in v.into_iter().flatten() {
            let (name, fields) = s.split_once(':').unwrap_or((s, ""));
            let word = |w: &str| {
                !w.is_empty()
                    && w.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            };
            if !name.split('.').all(word) || !(fields.is_empty() || fields.split(',').all(word)) {
                return Err(bad(
                    key,
                    format!(
                        "{s:?}; accepted: a sysctl's dotted name (fs.file-nr: letters, digits, _ and - between dots), perhaps with names for its fields after a colon (fs.file-nr:total,current,max)"
                    ),
                ));
            }
            if !out.contains(s) {
                out.push(s.clone());
            }
        }
        Ok(out)
    }
    fn print(&self, v: &Vec<String>) -> Option<Vec<String>> {
        Some(v.clone())
    }
    fn merge(&self, into: &mut Option<Vec<String>>, over: &Option<Vec<String>>) {
        add_new(into, over);
    }
}

/// A value taken as written, or its default: a switch, one of a serde
/// enum's names.
pub struct Plain<T>(pub T);

impl<T> Kind for Plain<T>
where
    T: Copy + PartialEq + Debug + Serialize + DeserializeOwned,
{
    type File = T;
    type Out = T;
    fn resolve(&self, _: &str, v: Option<&T>) -> Result<T, ConfigError> {
        Ok(v.copied().unwrap_or(self.0))
    }
    fn print(&self, v: &T) -> Option<T> {
        Some(*v)
    }
}

/// The process-table backend: auto, bpf or procfs.
pub struct Backend;

impl Kind for Backend {
    type File = String;
    type Out = BackendChoice;
    fn resolve(&self, key: &str, v: Option<&String>) -> Result<BackendChoice, ConfigError> {
        match v {
            None => Ok(BackendChoice::Auto),
            Some(v) => BackendChoice::parse(v)
                .ok_or_else(|| bad(key, format!("{v:?}; accepted: auto, bpf, procfs"))),
        }
    }
    fn print(&self, v: &BackendChoice) -> Option<String> {
        Some(
            match v {
                BackendChoice::Auto => "auto",
                BackendChoice::Bpf => "bpf",
                BackendChoice::Procfs => "procfs",
            }
            .into(),
        )
    }
}

/// Names out of a fixed list; a later layer adds to the earlier one's.
pub struct OneOf(pub &'static [&'static str], pub &'static str);

impl Kind for OneOf {
    type File = Vec<String>;
    type Out = Vec<&'static str>;
    fn resolve(
        &self,
        key: &str,
        v: Option<&Vec<String>>,
    ) -> Result<Vec<&'static str>, ConfigError> {
        let mut out = Vec::new();
        for c in v.into_iter().flatten() {
            let Some(name) = self.0.iter().find(|n| *n == c) else {
                return Err(bad(
                    key,
                    format!("{c:?}: {}; accepted: {}", self.1, self.0.join(", ")),
                ));
            };
            if !out.contains(name) {
                out.push(*name);
            }
        }
        Ok(out)
    }
    fn print(&self, v: &Vec<&'static str>) -> Option<Vec<String>> {
        Some(v.iter().map(|c| c.to_string()).collect())
    }
    fn merge(&self, into: &mut Option<Vec<String>>, over: &Option<Vec<String>>) {
        add_new(into, over);
    }
}

/// A table of keys of its own (`[store]`): one `section!` of `config/keys.rs`.
pub struct Table<S>(PhantomData<S>);

impl<S> Table<S> {
    pub const fn new() -> Table<S> {
        Table(PhantomData)
    }
}

impl<S> Default for Table<S> {
    fn default() -> Self {
        Table::new()
    }
}

/// A table of keys, made by `section!`.
pub trait Section: Clone + Default + PartialEq + Debug + Serialize + DeserializeOwned {
    type Out: Clone + PartialEq + Debug;
    /// Sets every key `over` sets.
    fn apply(&mut self, over: &Self);
    /// Each key, or its default, checked; errors name `prefix.key`.
    fn resolve_in(&self, prefix: &str) -> Result<Self::Out, ConfigError>;
    /// Every key, as `--print-config` writes it.
    fn print(out: &Self::Out) -> Self;
    /// Every key below `prefix`.
    fn keys(prefix: &str) -> Vec<KeyDoc>;
}

impl<S: Section> Kind for Table<S> {
    type File = S;
    type Out = S::Out;
    fn resolve(&self, key: &str, v: Option<&S>) -> Result<S::Out, ConfigError> {
        v.cloned().unwrap_or_default().resolve_in(key)
    }
    fn print(&self, v: &S::Out) -> Option<S> {
        Some(S::print(v))
    }
    fn merge(&self, into: &mut Option<S>, over: &Option<S>) {
        if let Some(o) = over {
            into.get_or_insert_with(Default::default).apply(o);
        }
    }
    fn keys(&self, path: &str) -> Vec<KeyDoc> {
        S::keys(path)
    }
}

/// `prefix.name`, or `name` at the top.
pub fn key_path(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// The history's directory: left out or empty, this user's default
/// ([`super::default_store_path`]; empty when there is none, and the
/// agent then says why and does not record).
pub struct StoreDir;

impl Kind for StoreDir {
    type File = PathBuf;
    type Out = PathBuf;
    fn resolve(&self, _: &str, v: Option<&PathBuf>) -> Result<PathBuf, ConfigError> {
        Ok(v.filter(|p| !p.as_os_str().is_empty())
            .cloned()
            .unwrap_or_else(|| super::default_store_path().unwrap_or_default()))
    }
    fn print(&self, v: &PathBuf) -> Option<PathBuf> {
        Some(v.clone())
    }
}

/// An array of tables (`[[remote_write]]`): each one a `section!` of
/// `config/keys.rs`; the command line's are added after the file's.
pub struct Tables<S>(PhantomData<S>);

impl<S> Tables<S> {
    pub const fn new() -> Tables<S> {
        Tables(PhantomData)
    }
}

impl<S> Default for Tables<S> {
    fn default() -> Self {
        Tables::new()
    }
}

impl<S: Section> Kind for Tables<S> {
    type File = Vec<S>;
    type Out = Vec<S::Out>;
    fn resolve(&self, key: &str, v: Option<&Vec<S>>) -> Result<Vec<S::Out>, ConfigError> {
        v.map_or(&[][..], Vec::as_slice)
            .iter()
            .enumerate()
            .map(|(i, t)| t.resolve_in(&format!("{key}[{i}]")))
            .collect()
    }
    fn print(&self, v: &Vec<S::Out>) -> Option<Vec<S>> {
        (!v.is_empty()).then(|| v.iter().map(S::print).collect())
    }
    fn default_file(&self) -> Option<Vec<S>> {
        None
    }
    fn merge(&self, into: &mut Option<Vec<S>>, over: &Option<Vec<S>>) {
        if let Some(o) = over {
            into.get_or_insert_with(Vec::new).extend(o.iter().cloned());
        }
    }
    fn keys(&self, path: &str) -> Vec<KeyDoc> {
        S::keys(path)
    }
}

/// An http:// or https:// URL, which a table of [`Tables`] must have.
pub struct Url;

impl Kind for Url {
    type File = String;
    type Out = String;
    fn resolve(&self, key: &str, v: Option<&String>) -> Result<String, ConfigError> {
        let v = v.map_or("", String::as_str);
        let rest = v
            .strip_prefix("http://")
            .or_else(|| v.strip_prefix("https://"));
        match rest {
            Some(r) if !r.is_empty() && !r.starts_with('/') && !v.contains(char::is_whitespace) => {
                Ok(v.to_string())
            }
            _ if v.is_empty() => Err(bad(
                key,
                "is required: the receiver's URL, e.g. \"http://127.0.0.1:9090/api/v1/write\"",
            )),
            _ => Err(bad(
                key,
                format!(
                    "{v:?} is not a URL; accepted: http://HOST[:PORT]/PATH or https://HOST[:PORT]/PATH"
                ),
            )),
        }
    }
    fn print(&self, v: &String) -> Option<String> {
        Some(v.clone())
    }
    fn default_file(&self) -> Option<String> {
        None
    }
}

/// A table of names to texts (`external_labels`, `headers`), each name
/// checked by `check` (an error says what is accepted).
pub struct Map {
    pub check: fn(&str) -> Result<(), String>,
}

impl Kind for Map {
    type File = std::collections::BTreeMap<String, String>;
    type Out = Vec<(String, String)>;
    fn resolve(&self, key: &str, v: Option<&Self::File>) -> Result<Self::Out, ConfigError> {
        let mut out = Vec::new();
        for (k, val) in v.into_iter().flatten() {
            (self.check)(k).map_err(|why| bad(key, format!("{k:?}: {why}")))?;
            out.push((k.clone(), val.clone()));
        }
        Ok(out)
    }
    fn print(&self, v: &Self::Out) -> Option<Self::File> {
        Some(v.iter().cloned().collect())
    }
}

/// A Prometheus label name: `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with
/// `__` (reserved).
pub fn label_name(n: &str) -> Result<(), String> {
    let ok = n
        .chars()
        .enumerate()
        .all(|(i, c)| c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()));
    if n.is_empty() || !ok {
        return Err("not a label name; accepted: [a-zA-Z_][a-zA-Z0-9_]*".into());
    }
    if n.starts_with("__") {
        return Err("names starting with __ are reserved".into());
    }
    Ok(())
}

/// An HTTP header a receiver may be sent: a token, and not one of those
/// the protocol sets.
pub fn header_name(n: &str) -> Result<(), String> {
    const OWN: [&str; 5] = [
        "content-encoding",
        "content-type",
        "content-length",
        "x-prometheus-remote-write-version",
        "user-agent",
    ];
    let token = !n.is_empty()
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !token {
        return Err("not a header name; accepted: letters, digits and !#$%&'*+-.^_`|~".into());
    }
    if OWN.contains(&n.to_ascii_lowercase().as_str()) {
        return Err("set by the remote-write protocol itself".into());
    }
    Ok(())
}
