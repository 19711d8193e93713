//! `exits`: every process that ended, with its status, lifetime, CPU time,
//! peak memory and command line, from the recorded exits.

use store::when;
use sys::Error;

use super::*;

pub(super) struct Exits;

/// `exit 0`, `exit 3`, `SIGKILL`, `SIGSEGV (core)`.
fn exit_text(status: i32) -> String {
    let sig = status & 0x7f;
    if sig == 0 {
        return format!("exit {}", (status >> 8) & 0xff);
    }
    let core = if status & 0x80 != 0 { " (core)" } else { "" };
    let name = match sig {
        1 => "SIGHUP".into(),
        2 => "SIGINT".into(),
        3 => "SIGQUIT".into(),
        4 => "SIGILL".into(),
        6 => "SIGABRT".into(),
        7 => "SIGBUS".into(),
        8 => "SIGFPE".into(),
        9 => "SIGKILL".into(),
        11 => "SIGSEGV".into(),
        13 => "SIGPIPE".into(),
        14 => "SIGALRM".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    };
    format!("{name}{core}")
}

impl Section for Exits {
    fn name(&self) -> &'static str {
        "exits"
    }
    fn sources(&self) -> &'static [Source] {
        &[]
    }
    fn columns(&self) -> &'static [&'static str] {
        &[
            "pid",
            "ppid",
            "comm",
            "status",
            "lifetime",
            "cpu_s",
            "maxrss_mib",
            "cmdline",
        ]
    }
    fn report(&self, h: &History, w: &Window, o: &Options) -> Result<Report, Error> {
        let mut r = empty(self);
        for e in h.exits(w.from, w.to)? {
            if o.pid.is_some_and(|p| p != e.pid) || o.comm.as_deref().is_some_and(|c| c != e.comm) {
                continue;
            }
            let life = e.start_ms.map(|s| when::span(e.exit_ms.saturating_sub(s)));
            r.table.rows.push(vec![
                w.time(e.exit_ms),
                num(Some(f64::from(e.pid))),
                num(e.ppid.map(f64::from)),
                text(e.comm),
                text(exit_text(e.status)),
                text(life.unwrap_or_else(|| "-".into())),
                num(Some((e.utime_ns + e.stime_ns) as f64 / 1e9)),
                mib(Some(e.maxrss_bytes)),
                text(e.cmdline.unwrap_or_default()),
            ]);
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::exit_text;

    #[test]
    fn statuses_read_as_the_shell_says_them() {
        assert_eq!(exit_text(0), "exit 0");
        assert_eq!(exit_text(3 << 8), "exit 3");
        assert_eq!(exit_text(9), "SIGKILL");
        assert_eq!(exit_text(11 | 0x80), "SIGSEGV (core)");
        assert_eq!(exit_text(40), "signal 40");
    }
}
