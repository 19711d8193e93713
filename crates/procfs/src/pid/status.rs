//! The context-switch and `Uid:` lines of /proc/PID/status.

use serde::Serialize;

use crate::cursor::Cursor;
use crate::error::{ParseError, ParseErrorKind};

/// Voluntary and involuntary context switches of one task, from
/// /proc/PID/status (since 2.6.23). For /proc/PID/status these are the
/// leader thread's own, not the process's sum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CtxSwitches {
    pub voluntary: u64,
    pub involuntary: u64,
}

/// Finds the two `*_ctxt_switches:` lines of /proc/PID/status.
pub fn parse_status_ctxsw(buf: &[u8]) -> Result<CtxSwitches, ParseError> {
    let mut c = Cursor::new(buf)?;
    let (mut vol, mut invol) = (None, None);
    while !c.at_end() {
        if c.eat(b"voluntary_ctxt_switches:") {
            vol = Some(c.u64("voluntary_ctxt_switches")?);
        } else if c.eat(b"nonvoluntary_ctxt_switches:") {
            invol = Some(c.u64("nonvoluntary_ctxt_switches")?);
        }
        c.next_line();
    }
    match (vol, invol) {
        (Some(voluntary), Some(involuntary)) => Ok(CtxSwitches {
            voluntary,
            involuntary,
        }),
        _ => Err(c.err(
            "voluntary_ctxt_switches",
            ParseErrorKind::Missing,
            "voluntary_ctxt_switches: and nonvoluntary_ctxt_switches: lines",
        )),
    }
}

/// The effective uid: the second number of the `Uid:` line of
/// /proc/PID/status (real, effective, saved, filesystem).
pub fn parse_status_euid(buf: &[u8]) -> Result<u32, ParseError> {
    let mut c = Cursor::new(buf)?;
    while !c.at_end() {
        if c.eat(b"Uid:") {
            c.skip_word("real uid")?;
            let v = c.u64("effective uid")?;
            return u32::try_from(v).map_err(|_| {
                c.err(
                    "effective uid",
                    ParseErrorKind::Overflow,
                    "a uid below 2^32",
                )
            });
        }
        c.next_line();
    }
    Err(c.err("Uid", ParseErrorKind::Missing, "a Uid: line"))
}

/// The file of a process's OOM adjustment, below its /proc directory.
pub const OOM_SCORE_ADJ_FILE: &str = "oom_score_adj";

/// /proc/PID/oom_score_adj: the adjustment, -1000 (never killed) to 1000.
pub fn parse_oom_score_adj(buf: &[u8]) -> Result<i32, ParseError> {
    let mut c = Cursor::new(buf)?;
    let v = c.i64("oom_score_adj")?;
    if !(-1000..=1000).contains(&v) {
        return Err(c.err(
            "oom_score_adj",
            ParseErrorKind::Invalid,
            "an integer from -1000 to 1000",
        ));
    }
    Ok(v as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_context_switches() {
        let st = b"Name:\tx\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(
            parse_status_ctxsw(st).unwrap(),
            CtxSwitches {
                voluntary: 12,
                involuntary: 3
            }
        );
        assert!(parse_status_ctxsw(b"Name:\tx\n").is_err());
    }

    #[test]
    fn status_effective_uid() {
        let st = b"Name:\tx\nUid:\t1000\t0\t0\t0\nGid:\t5\t5\t5\t5\n";
        assert_eq!(parse_status_euid(st).unwrap(), 0);
        let st = b"Uid:\t7\t1001\t7\t7\n";
        assert_eq!(parse_status_euid(st).unwrap(), 1001);
        assert_eq!(parse_status_euid(b"Name:\tx\n").unwrap_err().field, "Uid");
        assert_eq!(
            parse_status_euid(b"Uid:\t1\t4294967296\n")
                .unwrap_err()
                .kind,
            ParseErrorKind::Overflow
        );
        assert!(parse_status_euid(b"Uid:\t1\n").is_err());
    }
}
