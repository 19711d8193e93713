//! /proc/loadavg: `0.44 0.11 0.04 1/78 1618`.

use serde::Serialize;

use crate::cursor::{Cursor, parse_u64_word};
use crate::error::{ParseError, ParseErrorKind};

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Loadavg {
    /// Exponentially-damped run-queue length over 1, 5 and 15 minutes.
    pub load1: f64,
    pub load5: f64,
    pub load15: f64,
    /// Runnable scheduling entities now.
    pub runnable: u64,
    /// Scheduling entities (processes and threads) that exist now.
    pub threads: u64,
    /// The PID most recently assigned.
    pub last_pid: u64,
}

pub fn parse(buf: &[u8]) -> Result<Loadavg, ParseError> {
    let mut c = Cursor::new(buf)?;
    let load1 = c.decimal("load1")?;
    let load5 = c.decimal("load5")?;
    let load15 = c.decimal("load15")?;
    let word = c.word();
    let (runnable, threads) = word
        .iter()
        .position(|&b| b == b'/')
        .and_then(|i| Some((parse_u64_word(&word[..i])?, parse_u64_word(&word[i + 1..])?)))
        .ok_or_else(|| {
            let kind = if word.is_empty() {
                ParseErrorKind::Missing
            } else {
                ParseErrorKind::Invalid
            };
            c.err("runnable/threads", kind, "RUNNABLE/TOTAL such as 1/78")
        })?;
    let last_pid = c.u64("last_pid")?;
    Ok(Loadavg {
        load1,
        load5,
        load15,
        runnable,
        threads,
        last_pid,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let l = parse(b"0.44 0.11 12.04 1/78 1618\n").unwrap();
        assert_eq!((l.load1, l.load5, l.load15), (0.44, 0.11, 12.04));
        assert_eq!((l.runnable, l.threads, l.last_pid), (1, 78, 1618));
    }

    #[test]
    fn bad_runnable() {
        let e = parse(b"0.44 0.11 0.04 1-78 1618\n").unwrap_err();
        assert_eq!(
            (e.field, e.kind),
            ("runnable/threads", ParseErrorKind::Invalid)
        );
        let e = parse(b"0.44 0.11\n").unwrap_err();
        assert_eq!((e.field, e.kind), ("load15", ParseErrorKind::Missing));
    }
}
