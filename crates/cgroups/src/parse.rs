//! The text of a cgroup file into figures: pure, no allocation, fuzzed.
//! A file's figures are set only when its text is what its format says; a
//! line of a keyed file that cannot be read is left out and counted, the
//! rest of the file used.

use crate::files::{Figure, File, Format};

/// A cgroup's figures; each absent until a file gives it.
#[derive(Clone, PartialEq, Eq)]
pub struct Figures([u64; Figure::COUNT]);

/// Absent, in [`Figures`]' storage: no kernel counter reaches it.
const NONE: u64 = u64::MAX;

/// From here up, a limit printed as a number is the kernel's "no limit"
/// (v1 prints PAGE_COUNTER_MAX pages in bytes: 2^63 less a page).
pub(crate) const NO_LIMIT_FROM: u64 = (1 << 63) - (1 << 16);

impl Default for Figures {
    fn default() -> Figures {
        Figures([NONE; Figure::COUNT])
    }
}

impl std::fmt::Debug for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.iter().map(|(k, v)| (k.name(), v)))
            .finish()
    }
}

impl Figures {
    pub fn get(&self, f: Figure) -> Option<u64> {
        Some(self.0[f.index()]).filter(|v| *v != NONE)
    }

    /// Sets `f` unless a file read before gave it (v2's files are read
    /// before v1's).
    pub fn set(&mut self, f: Figure, v: u64) {
        let slot = &mut self.0[f.index()];
        if *slot == NONE {
            *slot = v.min(NONE - 1);
        }
    }

    /// The figures present.
    pub fn iter(&self) -> impl Iterator<Item = (Figure, u64)> + '_ {
        Figure::ALL.iter().filter_map(|f| Some((*f, self.get(*f)?)))
    }

    pub fn clear(&mut self) {
        self.0 = [NONE; Figure::COUNT];
    }

    /// Clears every figure but the settings ([`Figure::is_setting`]).
    pub fn clear_counts(&mut self) {
        for f in Figure::ALL.iter().filter(|f| !f.is_setting()) {
            self.0[f.index()] = NONE;
        }
    }

    /// Every figure's slot in [`Figure::ALL`]'s order, an absent one
    /// `u64::MAX`: what [`Figures::from_words`] takes back.
    pub fn words(&self) -> &[u64; Figure::COUNT] {
        &self.0
    }

    pub fn from_words(words: [u64; Figure::COUNT]) -> Figures {
        Figures(words)
    }
}

/// Why a file's text was not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {what}")]
pub struct ParseError {
    pub file: &'static str,
    pub what: &'static str,
}

/// Parses `text` as `file` into `out`; returns the lines left out.
pub fn parse(file: &File, text: &[u8], out: &mut Figures) -> Result<usize, ParseError> {
    let err = |what| ParseError {
        file: file.name,
        what,
    };
    match file.format {
        Format::Single => {
            let t = text.trim_ascii();
            let Some((_, f, m)) = file.keys.first() else {
                return Ok(0);
            };
            if t == b"max" || t.first() == Some(&b'-') && number(&t[1..]).is_some() {
                return Ok(0);
            }
            let v = number(t).ok_or_else(|| err("expected one number, or max"))?;
            if v < NO_LIMIT_FROM {
                out.set(*f, v.saturating_mul(*m));
            }
            Ok(0)
        }
        Format::CpuMax => {
            let mut w = text.trim_ascii().split(|b| *b == b' ');
            let (Some(q), Some(p), None) = (w.next(), w.next(), w.next()) else {
                return Err(err("expected `quota period`, quota a number or max"));
            };
            let p = number(p).ok_or_else(|| err("expected a number for the period"))?;
            let q = match q {
                b"max" => None,
                q => Some(number(q).ok_or_else(|| err("expected a number or max for the quota"))?),
            };
            for (k, f, m) in file.keys {
                match (*k, q) {
                    ("quota", Some(q)) => out.set(*f, q.saturating_mul(*m)),
                    ("period", _) => out.set(*f, p.saturating_mul(*m)),
                    _ => {}
                }
            }
            Ok(0)
        }
        Format::Keyed => {
            let mut skipped = 0;
            for line in lines(text) {
                let Some((k, v)) = split_once(line, b' ') else {
                    skipped += 1;
                    continue;
                };
                let Some((_, f, m)) = file.keys.iter().find(|(key, ..)| key.as_bytes() == k) else {
                    continue;
                };
                match number(v) {
                    Some(v) => out.set(*f, v.saturating_mul(*m)),
                    None => skipped += 1,
                }
            }
            Ok(skipped)
        }
        Format::IoStat => sum_devices(file, text, out, |line, each| {
            let (dev, rest) = split_once(line, b' ').unwrap_or((line, b""));
            if !is_device(dev) {
                return false;
            }
            rest.split(|b| *b == b' ')
                .filter(|t| !t.is_empty())
                .all(|t| split_once(t, b'=').is_some_and(|(k, v)| each(k, v)))
        }),
        Format::Blkio => sum_devices(file, text, out, |line, each| {
            let mut w = line.split(|b| *b == b' ');
            match (w.next(), w.next(), w.next(), w.next()) {
                // The machine-wide total, or a cgroup with no I/O yet.
                (Some(b"Total"), Some(v), None, None) => number(v).is_some(),
                (Some(dev), Some(op), Some(v), None) if is_device(dev) => each(op, v),
                _ => false,
            }
        }),
        Format::Pressure => {
            let mut skipped = 0;
            for line in lines(text) {
                let (kind, rest) = split_once(line, b' ').unwrap_or((line, b""));
                let total = rest
                    .split(|b| *b == b' ')
                    .find_map(|t| t.strip_prefix(b"total="))
                    .and_then(number);
                let Some(total) = total else {
                    skipped += 1;
                    continue;
                };
                if let Some((_, f, m)) = file.keys.iter().find(|(k, ..)| k.as_bytes() == kind) {
                    out.set(*f, total.saturating_mul(*m));
                }
            }
            Ok(skipped)
        }
    }
}

/// The per-device formats: `line` calls `each(key, value)` for each pair
/// and says whether the line was well formed; the file's keys are summed
/// over its devices (0 with none), a line that was not is left out.
fn sum_devices(
    file: &File,
    text: &[u8],
    out: &mut Figures,
    line: impl Fn(&[u8], &mut dyn FnMut(&[u8], &[u8]) -> bool) -> bool,
) -> Result<usize, ParseError> {
    let mut sums = [0u64; 8];
    let keys = &file.keys[..file.keys.len().min(sums.len())];
    let mut skipped = 0;
    for l in lines(text) {
        let mut add = [0u64; 8];
        let ok = line(l, &mut |k, v| {
            let Some(v) = number(v) else { return false };
            if let Some(i) = keys.iter().position(|(key, ..)| key.as_bytes() == k) {
                add[i] = add[i].saturating_add(v);
            }
            true
        });
        if ok {
            for (s, a) in sums.iter_mut().zip(add) {
                *s = s.saturating_add(a);
            }
        } else {
            skipped += 1;
        }
    }
    for ((_, f, m), s) in keys.iter().zip(sums) {
        out.set(*f, s.saturating_mul(*m));
    }
    Ok(skipped)
}

/// `MAJ:MIN`.
fn is_device(t: &[u8]) -> bool {
    split_once(t, b':').is_some_and(|(a, b)| number(a).is_some() && number(b).is_some())
}

fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|b| *b == b'\n').filter(|l| !l.is_empty())
}

fn split_once(t: &[u8], sep: u8) -> Option<(&[u8], &[u8])> {
    let i = t.iter().position(|b| *b == sep)?;
    Some((&t[..i], &t[i + 1..]))
}

/// A decimal u64 (no sign, no spaces); `None` when it is not one or
/// overflows.
fn number(t: &[u8]) -> Option<u64> {
    if t.is_empty() || t.len() > 20 {
        return None;
    }
    t.iter().try_fold(0u64, |v, b| {
        let d = b.checked_sub(b'0').filter(|d| *d < 10)?;
        v.checked_mul(10)?.checked_add(u64::from(d))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::{FILES, Version};
    use Figure::*;

    fn file(name: &str, v2: bool) -> &'static File {
        FILES
            .iter()
            .find(|f| f.name == name && (f.version == Version::V2) == v2)
            .unwrap()
    }

    fn figures(name: &str, v2: bool, text: &str) -> (Figures, usize) {
        let mut out = Figures::default();
        let n = parse(file(name, v2), text.as_bytes(), &mut out).unwrap();
        (out, n)
    }

    #[test]
    fn v2_files_as_the_kernel_documents_them() {
        let (f, n) = figures(
            "cpu.stat",
            true,
            "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\ncore_sched.force_idle_usec 0\nnr_periods 10\nnr_throttled 2\nthrottled_usec 30\nnr_bursts 0\nburst_usec 0\n",
        );
        assert_eq!(n, 0);
        assert_eq!(f.get(CpuUsageNs), Some(1_500_000));
        assert_eq!(f.get(CpuSystemNs), Some(500_000));
        assert_eq!(f.get(CpuThrottledPeriods), Some(2));
        assert_eq!(f.get(CpuThrottledNs), Some(30_000));
        assert_eq!(f.get(MemoryBytes), None);

        let (f, _) = figures("cpu.max", true, "max 100000\n");
        assert_eq!(
            (f.get(CpuQuotaUs), f.get(CpuPeriodUs)),
            (None, Some(100_000))
        );
        let (f, _) = figures("cpu.max", true, "50000 100000\n");
        assert_eq!(f.get(CpuQuotaUs), Some(50_000));

        assert_eq!(
            figures("memory.max", true, "max\n").0.get(MemoryMaxBytes),
            None
        );
        assert_eq!(
            figures("memory.max", true, "1073741824\n")
                .0
                .get(MemoryMaxBytes),
            Some(1 << 30)
        );

        let (f, _) = figures(
            "io.stat",
            true,
            "8:16 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=0 dios=0\n8:0 rbytes=100 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n",
        );
        assert_eq!(f.get(IoReadBytes), Some(1_459_300));
        assert_eq!(f.get(IoWrites), Some(353));
        // No I/O yet: an empty file, zeros.
        assert_eq!(figures("io.stat", true, "").0.get(IoReadBytes), Some(0));

        let (f, _) = figures(
            "memory.pressure",
            true,
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=4321\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=12\n",
        );
        assert_eq!(
            (f.get(MemorySomeUs), f.get(MemoryFullUs)),
            (Some(4321), Some(12))
        );

        let (f, _) = figures(
            "memory.events",
            true,
            "low 0\nhigh 3\nmax 7\noom 2\noom_kill 1\noom_group_kill 0\n",
        );
        assert_eq!((f.get(OomEvents), f.get(OomKills)), (Some(2), Some(1)));
    }

    #[test]
    fn v1_files_as_the_kernel_prints_them() {
        assert_eq!(
            figures("cpuacct.usage", false, "123456789\n")
                .0
                .get(CpuUsageNs),
            Some(123_456_789)
        );
        assert_eq!(
            figures("cpu.cfs_quota_us", false, "-1\n").0.get(CpuQuotaUs),
            None
        );
        // v1's "no limit" on 4 KiB and 64 KiB pages.
        for t in ["9223372036854771712\n", "9223372036854710272\n"] {
            assert_eq!(
                figures("memory.limit_in_bytes", false, t)
                    .0
                    .get(MemoryMaxBytes),
                None
            );
        }
        let (f, _) = figures(
            "blkio.throttle.io_service_bytes_recursive",
            false,
            "8:0 Read 4096\n8:0 Write 8192\n8:0 Sync 0\n8:0 Async 12288\n8:0 Discard 0\n8:0 Total 12288\n8:16 Read 1\n8:16 Write 0\nTotal 12289\n",
        );
        assert_eq!(
            (f.get(IoReadBytes), f.get(IoWriteBytes)),
            (Some(4097), Some(8192))
        );
        assert_eq!(
            figures("blkio.throttle.io_serviced_recursive", false, "Total 0\n")
                .0
                .get(IoReads),
            Some(0)
        );
        let (f, _) = figures(
            "memory.stat",
            false,
            "cache 10\nrss 20\ntotal_cache 100\ntotal_rss 200\ntotal_pgfault 7\n",
        );
        assert_eq!(
            (f.get(MemoryFileBytes), f.get(MemoryAnonBytes)),
            (Some(100), Some(200))
        );
        assert_eq!(f.get(PageFaults), Some(7));
        let (f, _) = figures(
            "memory.oom_control",
            false,
            "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n",
        );
        assert_eq!(f.get(OomKills), Some(3));
    }

    #[test]
    fn bad_text_is_refused_or_its_lines_left_out() {
        let mut out = Figures::default();
        let e = parse(file("memory.current", true), b"12ab\n", &mut out).unwrap_err();
        assert_eq!(e.to_string(), "memory.current: expected one number, or max");
        assert!(parse(file("cpu.max", true), b"max\n", &mut out).is_err());
        assert!(parse(file("memory.current", true), b"", &mut out).is_err());
        // A keyed file cut short, or with a bad line: the rest used.
        let (f, n) = figures("cpu.stat", true, "usage_usec 15\nuser_usec x\nsystem_u");
        assert_eq!(
            (f.get(CpuUsageNs), f.get(CpuUserNs), n),
            (Some(15_000), None, 2)
        );
        let (f, n) = figures(
            "io.stat",
            true,
            "8:0 rbytes=1 wbytes=2\n8:16 rbytes=x\nbad\n",
        );
        assert_eq!((f.get(IoReadBytes), n), (Some(1), 2));
        assert_eq!(out, Figures::default());
    }

    #[test]
    fn the_first_file_to_give_a_figure_keeps_it() {
        let mut out = Figures::default();
        parse(file("cpu.stat", true), b"usage_usec 2\n", &mut out).unwrap();
        parse(file("cpuacct.usage", false), b"999\n", &mut out).unwrap();
        assert_eq!(out.get(CpuUsageNs), Some(2000));
    }
}
