//! The agent's log lines: one level and one format for the process, set
//! once at start (node_exporter's `--log.level` and `--log.format`), on
//! standard error.
//!
//! - `plain` (the default): `quietstat agent: MESSAGE`, warnings as
//!   `quietstat agent: warning: MESSAGE`.
//! - `logfmt`: `ts=2026-11-26T21:15:00.123Z level=info msg="MESSAGE"`, as
//!   node_exporter writes.
//! - `json`: `{"ts":"...","level":"info","msg":"MESSAGE"}`, one object a line.

use std::sync::atomic::{AtomicU8, Ordering};
use sys::Error;

/// How much is said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

/// How a line is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Plain,
    Logfmt,
    Json,
}

static LEVEL: AtomicU8 = AtomicU8::new(Level::Info as u8);
static FORMAT: AtomicU8 = AtomicU8::new(Format::Plain as u8);

impl Level {
    pub const NAMES: &'static str = "debug, info, warn or error";

    pub fn parse(s: &str) -> Result<Level, Error> {
        Ok(match s {
            "debug" => Level::Debug,
            "info" => Level::Info,
            "warn" => Level::Warn,
            "error" => Level::Error,
            _ => {
                return Err(Error::invalid(format!(
                    "log level {s:?}: use {}",
                    Level::NAMES
                )));
            }
        })
    }

    fn name(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

impl Format {
    pub fn parse(s: &str) -> Result<Format, Error> {
        Ok(match s {
            "plain" => Format::Plain,
            "logfmt" => Format::Logfmt,
            "json" => Format::Json,
            _ => {
                return Err(Error::invalid(format!(
                    "log format {s:?}: use plain, logfmt or json"
                )));
            }
        })
    }
}

/// Sets the level and format of every line after.
pub fn set(level: Level, format: Format) {
    LEVEL.store(level as u8, Ordering::Relaxed);
    FORMAT.store(format as u8, Ordering::Relaxed);
}

/// Writes `msg` at `level`, when the level set lets it through.
pub fn log(level: Level, msg: &str) {
    if (level as u8) < LEVEL.load(Ordering::Relaxed) {
        return;
    }
    eprintln!("{}", line(level, msg, std::time::SystemTime::now()));
}

/// [`log`] at [`Level::Info`].
pub fn info(msg: &str) {
    log(Level::Info, msg);
}

/// [`log`] at [`Level::Warn`].
pub fn warn(msg: &str) {
    log(Level::Warn, msg);
}

/// One line as the format set writes it.
fn line(level: Level, msg: &str, at: std::time::SystemTime) -> String {
    let ts = || humantime::format_rfc3339_millis(at);
    match FORMAT.load(Ordering::Relaxed) {
        f if f == Format::Logfmt as u8 => {
            let quoted = serde_json::to_string(msg).unwrap_or_default();
            format!("ts={} level={} msg={quoted}", ts(), level.name())
        }
        f if f == Format::Json as u8 => serde_json::json!({
            "ts": ts().to_string(),
            "level": level.name(),
            "msg": msg,
        })
        .to_string(),
        _ if level >= Level::Warn => format!("quietstat agent: warning: {msg}"),
        _ => format!("quietstat agent: {msg}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_writes_one_line_a_reader_can_parse() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_700_000_000_123);
        let msg = "read \"stat\"\nagain";
        set(Level::Info, Format::Json);
        let j: serde_json::Value = serde_json::from_str(&line(Level::Warn, msg, at)).unwrap();
        assert_eq!(j["level"], "warn");
        assert_eq!(j["msg"], msg);
        assert_eq!(j["ts"], "2023-11-14T22:13:20.123Z");
        set(Level::Info, Format::Logfmt);
        let l = line(Level::Info, msg, at);
        assert_eq!(
            l,
            r#"ts=2023-11-14T22:13:20.123Z level=info msg="read \"stat\"\nagain""#
        );
        assert!(!l.contains('\n'));
        set(Level::Info, Format::Plain);
        assert_eq!(line(Level::Info, "x", at), "quietstat agent: x");
        assert_eq!(line(Level::Warn, "x", at), "quietstat agent: warning: x");
        assert!(
            Level::parse("loud")
                .unwrap_err()
                .to_string()
                .contains("debug, info, warn or error")
        );
        assert!(
            Format::parse("xml")
                .unwrap_err()
                .to_string()
                .contains("logfmt")
        );
    }
}
