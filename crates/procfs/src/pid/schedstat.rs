//! /proc/PID/schedstat: the scheduler's accounting of one task.

use serde::Serialize;

use crate::cursor::Cursor;
use crate::error::ParseError;

/// The file, under /proc/PID or /proc/PID/task/TID.
pub const SCHEDSTAT_FILE: &str = "schedstat";

/// What /proc/PID/schedstat gives of one task (for /proc/PID, the leader
/// thread's own): its time on a run queue waiting for a CPU, and how many
/// times it was given one. The kernel keeps them where it has
/// CONFIG_SCHED_INFO (schedstats or delay accounting built in); a wait in
/// progress is added when the task next runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SchedInfo {
    /// Nanoseconds spent runnable, waiting for a CPU (`sched_info.run_delay`).
    pub run_delay_ns: u64,
    /// Times the task was given a CPU (`sched_info.pcount`).
    pub timeslices: u64,
}

/// One line, three numbers: time on a CPU (ns), run delay (ns), timeslices.
pub fn parse_schedstat(buf: &[u8]) -> Result<SchedInfo, ParseError> {
    let mut c = Cursor::new(buf)?;
    c.u64("sum_exec_runtime")?;
    let run_delay_ns = c.u64("run_delay")?;
    let timeslices = c.u64("pcount")?;
    Ok(SchedInfo {
        run_delay_ns,
        timeslices,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ParseErrorKind;

    #[test]
    fn three_numbers() {
        assert_eq!(
            parse_schedstat(b"248909225 27762817 1466\n").unwrap(),
            SchedInfo {
                run_delay_ns: 27_762_817,
                timeslices: 1466
            }
        );
    }

    #[test]
    fn a_short_or_bad_line_says_which_number() {
        let e = parse_schedstat(b"1 2\n").unwrap_err();
        assert_eq!(e.field, "pcount");
        assert!(e.to_string().contains("pcount"), "{e}");
        let e = parse_schedstat(b"1 x 3\n").unwrap_err();
        assert_eq!(e.field, "run_delay");
        assert!(parse_schedstat(b"").is_err());
        assert!(matches!(
            parse_schedstat(b"1 99999999999999999999999 3")
                .unwrap_err()
                .kind,
            ParseErrorKind::Overflow
        ));
    }
}
