//! /proc/PID/stat (and /proc/PID/task/TID/stat).

use serde::Serialize;

use super::{COMM_CAPACITY, Comm};
use crate::cursor::Cursor;
use crate::error::{ParseError, ParseErrorKind};

/// The fields of /proc/PID/stat this crate reads (field numbers as in proc(5)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PidStat {
    /// (1) The task's id: the PID for /proc/PID/stat, the TID under task/.
    pub pid: u32,
    /// (2) Name, without the parentheses.
    pub comm: Comm,
    /// (3) One of `RSDTtXZPI` (older kernels also `xKWP`).
    pub state: u8,
    /// (4) Parent's PID (0 for the kernel's own first tasks).
    pub ppid: u32,
    /// (10) Minor faults (process-wide in /proc/PID/stat: all threads, dead ones
    /// included).
    pub minflt: u64,
    /// (12) Major faults.
    pub majflt: u64,
    /// (14) User time in clock ticks (USER_HZ, 100 on every Linux
    /// architecture userspace sees).
    pub utime_ticks: u64,
    /// (15) System time in clock ticks.
    pub stime_ticks: u64,
    /// (18) `prio - 100`: -2..-100 for real-time tasks, 0..39 otherwise.
    pub priority: i64,
    /// (19) -20..19.
    pub nice: i64,
    /// (20)
    pub num_threads: u64,
    /// (22) Start time in clock ticks since boot.
    pub start_ticks: u64,
    /// (23) Virtual memory size in bytes.
    pub vsize_bytes: u64,
    /// (24) Resident set in pages.
    pub rss_pages: u64,
    /// (28) Address of the start of the main stack: shown to whoever may
    /// ptrace-read the process (0 to others). Randomised at every exec where
    /// address-space randomisation is on, so with the name it tells an exec
    /// apart from the same process carrying on.
    pub start_stack: u64,
    /// (39) CPU last run on (since 2.2.8).
    pub processor: u32,
    /// (40) Real-time priority, 0 for other policies (since 2.5.19).
    pub rt_priority: u32,
    /// (41) SCHED_* policy (since 2.5.19).
    pub policy: u32,
}

fn to_u32(c: &Cursor<'_>, v: u64, field: &'static str) -> Result<u32, ParseError> {
    u32::try_from(v).map_err(|_| c.err(field, ParseErrorKind::Overflow, "a value below 2^32"))
}

/// Parses /proc/PID/stat. The name may hold any byte but NUL, including `)`
/// and spaces, so it ends at the *last* `)` of the line.
///
/// A process table parses one of these per process: lines in the kernel's
/// exact format take [`parse_stat_fast`]; anything else (and every error)
/// the general parser below, which names what was wrong.
pub fn parse_stat(buf: &[u8]) -> Result<PidStat, ParseError> {
    match parse_stat_fast(buf) {
        Some(s) => Ok(s),
        None => parse_stat_general(buf),
    }
}

/// Fields of /proc/PID/stat after the name, up to (41) policy.
const STAT_FIELDS_AFTER_NAME: usize = 39;

/// High bit set in exactly the bytes of `v` that are zero (no false
/// positives from borrows, unlike the shorter has-zero-byte test).
#[inline(always)]
fn zero_bytes(v: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((v & LOW7).wrapping_add(LOW7)) | v | LOW7)
}

/// An unsigned decimal of 1 to 19 digits and nothing else.
#[inline(always)]
fn digits(f: &[u8]) -> Option<u64> {
    if f.is_empty() || f.len() > 19 {
        return None;
    }
    let mut v = 0u64;
    for &b in f {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + d as u64;
    }
    Some(v)
}

#[inline(always)]
fn signed(f: &[u8]) -> Option<i64> {
    match f.split_first() {
        Some((b'-', d)) => digits(d).and_then(|v| i64::try_from(v).ok()).map(|v| -v),
        _ => digits(f).and_then(|v| i64::try_from(v).ok()),
    }
}

/// The kernel's own format only: `PID (NAME) ` then fields separated by
/// single spaces, ending in a newline. The spaces are found eight bytes at
/// a time; only the fields kept are converted. `None` for any other shape,
/// left to the general parser (which accepts or rejects it with a reason):
/// this one never accepts a line that one would reject, nor reads one
/// differently (a property test checks both on arbitrary lines).
pub fn parse_stat_fast(buf: &[u8]) -> Option<PidStat> {
    let (&b'\n', line) = buf.split_last()? else {
        return None;
    };
    let open = line.iter().position(|&b| b == b' ')?;
    if line.get(open + 1) != Some(&b'(') {
        return None;
    }
    let pid = u32::try_from(digits(&line[..open])?).ok()?;
    let close = memchr::memrchr(b')', line)?;
    let name = line.get(open + 2..close)?;
    if name.len() > COMM_CAPACITY {
        return None;
    }
    let rest = line[close + 1..].strip_prefix(b" ")?;
    // ends[i]: where field i of `rest` ends (a space, or the line's end);
    // room for the last eight bytes' four.
    let mut ends = [0u16; STAT_FIELDS_AFTER_NAME + 4];
    let mut n = 0;
    let mut base = 0;
    while n < STAT_FIELDS_AFTER_NAME && base < rest.len() {
        let x = match rest.get(base..base + 8) {
            Some(w) => u64::from_le_bytes(w.try_into().unwrap_or_default()),
            None => {
                // The last few bytes, padded with a byte that is no separator.
                let mut word = [b'0'; 8];
                word[..rest.len() - base].copy_from_slice(&rest[base..]);
                u64::from_le_bytes(word)
            }
        };
        const ONES: u64 = 0x0101_0101_0101_0101;
        if zero_bytes(x ^ (ONES * b'\t' as u64)) | zero_bytes(x ^ (ONES * b'\n' as u64)) != 0 {
            return None;
        }
        // Non-empty fields put at most four single spaces in eight bytes:
        // take four positions without branching (a branch per space
        // mispredicts), then leave a fifth to the general parser.
        let mut spaces = zero_bytes(x ^ (ONES * b' ' as u64));
        let found = spaces.count_ones() as usize;
        for k in 0..4 {
            ends[n + k] = (base + (spaces.trailing_zeros() / 8) as usize) as u16;
            spaces &= spaces.wrapping_sub(1);
        }
        if spaces != 0 {
            return None;
        }
        n += found;
        base += 8;
    }
    let n = n.min(STAT_FIELDS_AFTER_NAME);
    let mut n = n;
    if n < STAT_FIELDS_AFTER_NAME && rest.len() <= u16::MAX as usize {
        // The last field ends at the line's end.
        ends[n] = rest.len() as u16;
        n += 1;
    }
    // Fields 3..38 are required; 39..41 may be absent (before 2.5.19).
    if n < 36 || rest.len() > u16::MAX as usize {
        return None;
    }
    let field = |i: usize| -> &[u8] {
        let start = if i == 0 { 0 } else { ends[i - 1] as usize + 1 };
        &rest[start.min(ends[i] as usize)..ends[i] as usize]
    };
    // Empty fields (two spaces) are the general parser's to judge.
    if (0..n).any(|i| field(i).is_empty()) {
        return None;
    }
    let state = match field(0) {
        [b] if b.is_ascii_alphabetic() => *b,
        _ => return None,
    };
    let opt_u32 = |i: usize| -> Option<u32> {
        if i < n {
            u32::try_from(digits(field(i))?).ok()
        } else {
            Some(0)
        }
    };
    Some(PidStat {
        pid,
        comm: Comm::new(name),
        state,
        ppid: u32::try_from(digits(field(1))?).ok()?,
        minflt: digits(field(7))?,
        majflt: digits(field(9))?,
        utime_ticks: digits(field(11))?,
        stime_ticks: digits(field(12))?,
        priority: signed(field(15))?,
        nice: signed(field(16))?,
        num_threads: digits(field(17))?,
        start_ticks: digits(field(19))?,
        vsize_bytes: digits(field(20))?,
        rss_pages: digits(field(21))?,
        start_stack: digits(field(25))?,
        processor: opt_u32(36)?,
        rt_priority: opt_u32(37)?,
        policy: opt_u32(38)?,
    })
}

/// The general parser: any spacing, every error named. [`parse_stat`] uses
/// it for whatever [`parse_stat_fast`] leaves; public as the reference the
/// fast path is checked against.
pub fn parse_stat_general(buf: &[u8]) -> Result<PidStat, ParseError> {
    let mut c = Cursor::new(buf)?;
    let mut s = PidStat {
        pid: 0,
        ..PidStat::default()
    };
    let pid = c.u64("pid")?;
    s.pid = to_u32(&c, pid, "pid")?;
    let open = buf.iter().position(|&b| b == b'(');
    let close = buf.iter().rposition(|&b| b == b')');
    let (open, close) = match (open, close) {
        (Some(o), Some(e)) if o < e => (o, e),
        _ => {
            return Err(c.err("comm", ParseErrorKind::Invalid, "a name in parentheses"));
        }
    };
    let name = &buf[open + 1..close];
    if name.len() > COMM_CAPACITY {
        return Err(c.err("comm", ParseErrorKind::TooLong, "at most 64 bytes"));
    }
    s.comm = Comm::new(name);
    let mut c = Cursor::new(&buf[close + 1..])?;
    let state = c.word();
    s.state = match state {
        [b] if b.is_ascii_alphabetic() => *b,
        [] => return Err(c.err("state", ParseErrorKind::Missing, "one state letter")),
        _ => return Err(c.err("state", ParseErrorKind::Invalid, "one state letter")),
    };
    let ppid = c.u64("ppid")?;
    s.ppid = to_u32(&c, ppid, "ppid")?;
    for f in ["pgrp", "session", "tty_nr", "tpgid", "flags"] {
        c.skip_word(f)?;
    }
    s.minflt = c.u64("minflt")?;
    c.skip_word("cminflt")?;
    s.majflt = c.u64("majflt")?;
    c.skip_word("cmajflt")?;
    s.utime_ticks = c.u64("utime")?;
    s.stime_ticks = c.u64("stime")?;
    c.skip_word("cutime")?;
    c.skip_word("cstime")?;
    s.priority = c.i64("priority")?;
    s.nice = c.i64("nice")?;
    s.num_threads = c.u64("num_threads")?;
    c.skip_word("itrealvalue")?;
    s.start_ticks = c.u64("starttime")?;
    s.vsize_bytes = c.u64("vsize")?;
    s.rss_pages = c.u64("rss")?;
    // Fields 25..38; 39..41 are absent before 2.5.19 and read as 0.
    for f in ["rsslim", "startcode", "endcode"] {
        c.skip_word(f)?;
    }
    s.start_stack = c.u64("startstack")?;
    for f in [
        "kstkesp",
        "kstkeip",
        "signal",
        "blocked",
        "sigignore",
        "sigcatch",
        "wchan",
        "nswap",
        "cnswap",
        "exit_signal",
    ] {
        c.skip_word(f)?;
    }
    if let Some(v) = c.opt_u64("processor")? {
        s.processor = to_u32(&c, v, "processor")?;
    }
    if let Some(v) = c.opt_u64("rt_priority")? {
        s.rt_priority = to_u32(&c, v, "rt_priority")?;
    }
    if let Some(v) = c.opt_u64("policy")? {
        s.policy = to_u32(&c, v, "policy")?;
    }
    Ok(s)
}

/// Reads only field 22 (start time in ticks): the identity check of a
/// vectored lookup.
pub fn parse_start_ticks(buf: &[u8]) -> Result<u64, ParseError> {
    let close = buf.iter().rposition(|&b| b == b')').ok_or(ParseError::new(
        1,
        "comm",
        ParseErrorKind::Invalid,
        "a name in parentheses",
    ))?;
    let mut c = Cursor::new(&buf[close + 1..])?;
    for f in [
        "state",
        "ppid",
        "pgrp",
        "session",
        "tty_nr",
        "tpgid",
        "flags",
        "minflt",
        "cminflt",
        "majflt",
        "cmajflt",
        "utime",
        "stime",
        "cutime",
        "cstime",
        "priority",
        "nice",
        "num_threads",
        "itrealvalue",
    ] {
        c.skip_word(f)?;
    }
    c.u64("starttime")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A /proc/PID/stat-like line: a PID, a name of any bytes, and fields
    /// joined by separators, most of them the kernel's single space.
    fn stat_line() -> impl Strategy<Value = Vec<u8>> {
        let field = prop_oneof![
            40 => any::<u32>().prop_map(|v| v.to_string()),
            2 => any::<u64>().prop_map(|v| v.to_string()),
            1 => any::<i64>().prop_map(|v| v.to_string()),
            1 => "[0-9]{19,21}",
            1 => "[-a-zA-Z0-9()]{0,3}",
        ];
        let sep = prop_oneof![
            150 => Just(" "),
            1 => Just("  "),
            1 => Just("\t"),
            1 => Just("\n")
        ];
        (
            prop_oneof![4 => any::<u32>().prop_map(|v| v.to_string()), 1 => "[ 0-9a]{0,12}"],
            proptest::collection::vec(any::<u8>(), 0..70),
            "[A-Za-z]|[a-z ]{0,2}",
            proptest::collection::vec((field, sep), 30..52),
            proptest::bool::weighted(0.9),
        )
            .prop_map(|(pid, name, state, fields, newline)| {
                let mut b = format!("{pid} (").into_bytes();
                b.extend(name);
                b.extend(format!(") {state}").bytes());
                for (f, sep) in fields {
                    b.extend(sep.bytes());
                    b.extend(f.bytes());
                }
                if newline {
                    b.push(b'\n');
                }
                b
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// The fast path accepts only what the general parser accepts, and
        /// reads it the same.
        #[test]
        fn fast_stat_parser_agrees_with_the_general_one(line in stat_line()) {
            if let Some(fast) = parse_stat_fast(&line) {
                prop_assert_eq!(Ok(fast), parse_stat_general(&line));
            }
        }

        /// And it takes every line in the kernel's format.
        #[test]
        fn fast_stat_parser_takes_kernel_lines(
            pid in any::<u32>(),
            name in "[^\u{0}]{0,15}",
            nums in proptest::collection::vec(any::<u32>(), 49),
            nice in -20i64..20,
        ) {
            let mut fields: Vec<String> = nums.iter().map(u32::to_string).collect();
            // (19) nice: the 16th field after the state.
            fields[15] = nice.to_string();
            let line = format!("{pid} ({name}) S {}\n", fields.join(" "));
            let fast = parse_stat_fast(line.as_bytes());
            prop_assert!(fast.is_some(), "{line}");
            prop_assert_eq!(fast.unwrap().nice, nice);
            prop_assert_eq!(Ok(fast.unwrap()), parse_stat_general(line.as_bytes()));
        }
    }

    const STAT: &[u8] = b"1234 (a) (b) R 1 1234 1234 0 -1 4194560 157 0 2 0 37 12 0 0 -51 -20 3 0 \
5821 9551872 1162 18446744073709551615 1 1 140727514499808 0 0 0 0 0 0 0 0 0 17 1 50 1 0 0 0 0 0 0 0 0 0 \
0 0\n";

    #[test]
    fn stat_fields_and_a_name_with_parentheses() {
        let s = parse_stat(STAT).unwrap();
        assert_eq!(s.pid, 1234);
        assert_eq!(s.comm.as_bytes(), b"a) (b");
        assert_eq!(s.state, b'R');
        assert_eq!((s.ppid, s.minflt, s.majflt), (1, 157, 2));
        assert_eq!((s.utime_ticks, s.stime_ticks), (37, 12));
        assert_eq!((s.priority, s.nice, s.num_threads), (-51, -20, 3));
        assert_eq!(
            (s.start_ticks, s.vsize_bytes, s.rss_pages),
            (5821, 9551872, 1162)
        );
        assert_eq!(s.start_stack, 140727514499808);
        assert_eq!((s.processor, s.rt_priority, s.policy), (1, 50, 1));
        assert_eq!(parse_start_ticks(STAT).unwrap(), 5821);
    }

    #[test]
    fn old_kernels_without_scheduling_fields() {
        let old = b"7 (init) S 0 0 0 0 -1 256 1 2 3 4 5 6 7 8 15 0 1 0 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25\n";
        let s = parse_stat(old).unwrap();
        assert_eq!((s.start_ticks, s.processor, s.policy), (9, 0, 0));
    }

    #[test]
    fn bad_stat_names_the_field() {
        let e = parse_stat(b"12 (x) R 1 2\n").unwrap_err();
        assert_eq!((e.field, e.kind), ("session", ParseErrorKind::Missing));
        let e = parse_stat(b"12 x R\n").unwrap_err();
        assert_eq!(e.field, "comm");
        let e = parse_stat(b"12 (x) R 1 1 1 0 -1 0 z").unwrap_err();
        assert_eq!(e.kind, ParseErrorKind::Invalid);
        // A whole line without its final newline (a copied tree) is read.
        let old = b"7 (init) S 0 0 0 0 -1 256 1 2 3 4 5 6 7 8 15 0 1 0 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25";
        assert_eq!(parse_stat(old).unwrap().start_ticks, 9);
    }
}
