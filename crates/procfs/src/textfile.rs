//! node_exporter's textfile collector: metrics other programs write as
//! `*.prom` files (Prometheus text format) in a directory, re-exported.
//!
//! The reader gathers the directory into framed records, one per file:
//!
//! ```text
//! @file <mtime ns> <length> <path>
//! <length bytes of the file>
//! @error <path> <why it could not be read>
//! @dir <why the directory could not be read>
//! ```
//!
//! [`parse_into`] parses each file as node_exporter's parser reads the
//! Prometheus text format (0.0.4): label quoting and escapes, HELP and TYPE
//! (at most one each, TYPE before the samples), a histogram's `_bucket`
//! (with `le`), `_sum` and `_count`, a summary's quantiles; the same series
//! twice refuses the file. It runs in time linear in the series (a hash of
//! every series, not a scan): 40,000 series in one family parse in a few
//! tens of ms. A file that fails, or that carries client-side timestamps
//! (which node_exporter refuses too), is reported with its error and
//! contributes nothing; the other files are kept. A family named in several
//! files is merged when the type and help agree, otherwise the later file
//! fails.

use serde::Serialize;
use sys::Error;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::err;

/// Bytes of one file read at most (a larger file is reported, not read).
pub const MAX_FILE_BYTES: usize = 16 << 20;
/// Files read at most per directory.
pub const MAX_FILES: usize = 4096;
/// Bytes of one directory read at most (files past it are refused by name,
/// those before it served): below the reader's limit for one source.
pub const MAX_DIR_BYTES: usize = 128 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TextKind {
    Counter,
    Gauge,
    Untyped,
    Histogram,
    Summary,
}

/// One series of a family: `suffix` is `""`, or `_bucket`, `_sum`,
/// `_count` for histograms and summaries (`le` and `quantile` are labels).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextSeries {
    pub suffix: &'static str,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextFamily {
    pub name: String,
    pub help: String,
    pub kind: TextKind,
    pub series: Vec<TextSeries>,
}

/// One file of the directory and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextFile {
    pub path: String,
    /// Modification time, seconds since the Unix epoch (0 when unread).
    pub mtime_secs: f64,
    /// Why the file contributed nothing: `None` when it was read and parsed.
    pub error: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Textfile {
    pub files: Vec<TextFile>,
    pub families: Vec<TextFamily>,
    /// Why the directory could not be listed.
    pub dir_error: Option<String>,
    /// Files refused because the directory's bytes came to more than the
    /// cap with them (each also in `files`, with why).
    pub refused: usize,
}

impl Textfile {
    /// node_textfile_scrape_error: any file or the directory failed.
    pub fn error(&self) -> bool {
        self.dir_error.is_some() || self.files.iter().any(|f| f.error.is_some())
    }
}

/// A family as one file is parsed.
struct Building {
    name: String,
    help: Option<String>,
    kind: Option<TextKind>,
    series: Vec<TextSeries>,
}

/// The series of one family by the hash of their identity (suffix and
/// labels, sorted by name): indices into the family's series, compared in
/// full on a hash match. No copy of any label is kept.
#[derive(Default)]
struct SeriesIndex(std::collections::HashMap<u64, Vec<u32>>);

fn hash_of(s: &TextSeries) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    // Fixed keys: the same series hash alike in every file of a read.
    let mut h =
        std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
            .build_hasher();
    s.suffix.hash(&mut h);
    s.labels.hash(&mut h);
    h.finish()
}

impl SeriesIndex {
    /// Adds `series[i]` unless an equal series is there; false if it is.
    fn insert(&mut self, series: &[TextSeries], i: usize) -> bool {
        let s = &series[i];
        let same = self.0.entry(hash_of(s)).or_default();
        if same.iter().any(|&j| {
            let o = &series[j as usize];
            o.suffix == s.suffix && o.labels == s.labels
        }) {
            return false;
        }
        same.push(i as u32);
        true
    }
}

fn is_name(s: &str, colon: bool) -> bool {
    let mut b = s.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_' || (colon && c == b':'))
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_' || (colon && c == b':'))
}

/// The leading metric or label name of `s` and the rest.
fn take_name(s: &str, colon: bool) -> (&str, &str) {
    let end = s
        .bytes()
        .position(|c| !(c.is_ascii_alphanumeric() || c == b'_' || (colon && c == b':')))
        .unwrap_or(s.len());
    s.split_at(end)
}

/// A sample value as the text format writes it: a float, `NaN`, `+Inf`,
/// `-Inf`.
fn value(v: &str) -> Option<f64> {
    match v {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ if v
            .bytes()
            .all(|c| c.is_ascii_digit() || b"+-.eE".contains(&c)) =>
        {
            v.parse().ok()
        }
        _ => None,
    }
}

/// What is wrong with a file's text, before the line is known.
fn bad(detail: impl Into<String>) -> Error {
    Error::malformed("", None, detail)
}

/// A series' labels, as written.
type Labels = Vec<(String, String)>;

/// The labels of `{...}` at the start of `s` (after the `{`), and the rest.
fn labels(mut s: &str) -> Result<(Labels, &str), Error> {
    let mut out: Labels = Vec::new();
    loop {
        s = s.trim_start_matches([' ', '\t']);
        if let Some(rest) = s.strip_prefix('}') {
            return Ok((out, rest));
        }
        let (name, rest) = take_name(s, false);
        if !is_name(name, false) {
            return Err(bad("expected a label name or `}`"));
        }
        let rest = rest.trim_start_matches([' ', '\t']);
        let rest = rest
            .strip_prefix('=')
            .ok_or_else(|| bad(format!("label {name}: expected `=`")))?
            .trim_start_matches([' ', '\t']);
        let mut chars = rest
            .strip_prefix('"')
            .ok_or_else(|| bad(format!("label {name}: expected a quoted value")))?
            .char_indices();
        let mut v = String::new();
        let end = loop {
            match chars.next() {
                None => return Err(bad(format!("label {name}: unterminated value"))),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, '\\')) => v.push('\\'),
                    Some((_, '"')) => v.push('"'),
                    Some((_, 'n')) => v.push('\n'),
                    _ => return Err(bad(format!("label {name}: bad escape (\\\\, \\\" or \\n)"))),
                },
                Some((_, c)) => v.push(c),
            }
        };
        if out.iter().any(|(n, _)| n == name) {
            return Err(bad(format!("label {name} given twice")));
        }
        out.push((name.to_string(), v));
        s = rest[1 + end + 1..].trim_start_matches([' ', '\t']);
        if let Some(r) = s.strip_prefix(',') {
            s = r;
        } else if !s.starts_with('}') {
            return Err(bad("expected `,` or `}` after a label"));
        }
    }
}

/// HELP text with its escapes (`\\`, `\n`) undone.
fn unescape_help(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut c = t.chars();
    while let Some(x) = c.next() {
        match (x, c.clone().next()) {
            ('\\', Some('\\')) => {
                out.push('\\');
                c.next();
            }
            ('\\', Some('n')) => {
                out.push('\n');
                c.next();
            }
            _ => out.push(x),
        }
    }
    out
}

/// The family named `name`'s place in `fams`, made when new.
fn family(
    by_name: &mut std::collections::HashMap<String, usize>,
    fams: &mut Vec<Building>,
    seen: &mut Vec<SeriesIndex>,
    name: &str,
) -> usize {
    *by_name.entry(name.to_string()).or_insert_with(|| {
        fams.push(Building {
            name: name.to_string(),
            help: None,
            kind: None,
            series: Vec::new(),
        });
        seen.push(SeriesIndex::default());
        fams.len() - 1
    })
}

/// A `#` line (`c` after the `#`): a family's HELP or TYPE; any other
/// comment is let be.
fn meta_line(
    c: &str,
    by_name: &mut std::collections::HashMap<String, usize>,
    fams: &mut Vec<Building>,
    seen: &mut Vec<SeriesIndex>,
) -> Result<(), Error> {
    let c = c.trim_start_matches([' ', '\t']);
    let (word, rest) = c.split_once([' ', '\t']).unwrap_or((c, ""));
    if word != "HELP" && word != "TYPE" {
        return Ok(());
    }
    let rest = rest.trim_start_matches([' ', '\t']);
    let (name, arg) = rest.split_once([' ', '\t']).unwrap_or((rest, ""));
    if !is_name(name, true) {
        return Err(bad(format!("{word}: {name:?} is not a metric name")));
    }
    let i = family(by_name, fams, seen, name);
    let f = &mut fams[i];
    if word == "HELP" {
        if f.help.is_some() {
            return Err(bad(format!("second HELP line for {name}")));
        }
        f.help = Some(unescape_help(arg.trim_start_matches([' ', '\t'])));
    } else {
        if f.kind.is_some() {
            return Err(bad(format!("second TYPE line for {name}")));
        }
        if !f.series.is_empty() {
            return Err(bad(format!("TYPE line for {name} after its samples")));
        }
        f.kind = Some(match arg.trim() {
            "counter" => TextKind::Counter,
            "gauge" => TextKind::Gauge,
            "histogram" => TextKind::Histogram,
            "summary" => TextKind::Summary,
            "untyped" => TextKind::Untyped,
            t => {
                return Err(bad(format!(
                    "type {t:?} of {name}: counter, gauge, histogram, summary or untyped"
                )));
            }
        });
    }
    Ok(())
}

/// The families of one file's text (Prometheus text format 0.0.4, as
/// node_exporter's parser reads it), or why it is refused: in time linear
/// in the file, whatever its number of series.
fn families_of(text: &str) -> Result<Vec<TextFamily>, Error> {
    use std::collections::HashMap;
    let mut fams: Vec<Building> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut seen: Vec<SeriesIndex> = Vec::new();
    // The text format ends every line with a newline; node_exporter's
    // parser refuses a file whose last line has none (a write cut short).
    if !text.is_empty() && !text.ends_with('\n') {
        return Err(Error::malformed(
            "",
            Some(text.len() as u64),
            format!(
                "line {}: no newline at the end of the file (cut short?)",
                text.lines().count()
            ),
        ));
    }
    for (n, raw) in text.lines().enumerate() {
        let start = raw.as_ptr() as usize - text.as_ptr() as usize;
        let at =
            |e: String| Error::malformed("", Some(start as u64), format!("line {}: {e}", n + 1));
        let line = raw.trim_matches([' ', '\t']);
        if line.is_empty() {
            continue;
        }
        if let Some(c) = line.strip_prefix('#') {
            meta_line(c, &mut by_name, &mut fams, &mut seen).map_err(|e| at(e.detail))?;
            continue;
        }
        let (name, rest) = take_name(line, true);
        if !is_name(name, true) {
            return Err(at("expected a metric name, `#` or an empty line".into()));
        }
        let rest = rest.trim_start_matches([' ', '\t']);
        let (mut labels, rest) = match rest.strip_prefix('{') {
            Some(r) => labels(r).map_err(|e| at(format!("{name}: {}", e.detail)))?,
            None => (Vec::new(), rest),
        };
        let mut words = rest.split([' ', '\t']).filter(|w| !w.is_empty());
        let v = words.next().and_then(value).ok_or_else(|| {
            at(format!(
                "{name}: expected a value (a float, NaN, +Inf or -Inf)"
            ))
        })?;
        if words.next().is_some() {
            return Err(at(format!(
                "{name}: client-side timestamps are not accepted (as node_exporter)"
            )));
        }
        // A histogram's or summary's own series name their family.
        let typed = |base: &str, kinds: &[TextKind]| {
            by_name
                .get(base)
                .is_some_and(|&i| fams[i].kind.is_some_and(|k| kinds.contains(&k)))
        };
        use TextKind::{Histogram, Summary};
        let (base, suffix) = match ["_bucket", "_sum", "_count"]
            .into_iter()
            .find_map(|sfx| Some((name.strip_suffix(sfx)?, sfx)))
        {
            Some((b, "_bucket")) if typed(b, &[Histogram]) => (b, "_bucket"),
            Some((b, sfx)) if sfx != "_bucket" && typed(b, &[Histogram, Summary]) => (b, sfx),
            _ => (name, ""),
        };
        let i = family(&mut by_name, &mut fams, &mut seen, base);
        let f = &mut fams[i];
        let bound_label = match (f.kind, suffix) {
            (Some(Histogram), "_bucket") => Some("le"),
            (Some(Histogram), "") => {
                return Err(at(format!(
                    "{name}: a histogram's samples end in _bucket, _sum or _count"
                )));
            }
            (Some(Summary), "") => Some("quantile"),
            _ => None,
        };
        if let Some(l) = bound_label {
            let b = labels
                .iter_mut()
                .find(|(k, _)| k == l)
                .ok_or_else(|| at(format!("{name}: no {l} label")))?;
            let x =
                value(&b.1).ok_or_else(|| at(format!("{name}: {l}={:?} is not a number", b.1)))?;
            b.1 = bound(x);
        }
        // Sorted by name, as node_exporter prints them.
        labels.sort();
        let s = TextSeries {
            suffix,
            labels,
            value: v,
        };
        f.series.push(s);
        if !seen[i].insert(&f.series, f.series.len() - 1) {
            return Err(at(format!("{name}: the same series twice")));
        }
    }
    let mut out: Vec<TextFamily> = fams
        .into_iter()
        .filter(|f| !f.series.is_empty())
        .map(|f| TextFamily {
            name: f.name,
            help: f.help.unwrap_or_default(),
            kind: f.kind.unwrap_or(TextKind::Untyped),
            series: f.series,
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// A bucket bound or quantile as Prometheus prints it (`+Inf`, `0.5`).
fn bound(v: f64) -> String {
    if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        v.to_string()
    }
}

/// The families of the files parsed so far, indexed for merging in time
/// linear in their series.
#[derive(Default)]
struct Merger {
    index: std::collections::HashMap<String, (usize, SeriesIndex)>,
}

impl Merger {
    /// Adds one file's `families` to `out`, merging families already there
    /// (a series already served by an earlier file is kept from that
    /// file); on a conflict of type or help nothing of the file is kept.
    fn merge(&mut self, out: &mut Vec<TextFamily>, families: Vec<TextFamily>) -> Result<(), Error> {
        for f in &families {
            if let Some((i, _)) = self.index.get(&f.name) {
                let have = &out[*i];
                if have.kind != f.kind || (have.help != f.help && !f.help.is_empty()) {
                    return Err(bad(format!(
                        "{}: already defined by another file with a different type or help",
                        f.name
                    )));
                }
            }
        }
        for f in families {
            match self.index.get_mut(&f.name) {
                Some((i, keys)) => {
                    let have = &mut out[*i].series;
                    for s in f.series {
                        have.push(s);
                        if !keys.insert(have, have.len() - 1) {
                            have.pop();
                        }
                    }
                }
                None => {
                    let mut keys = SeriesIndex::default();
                    for i in 0..f.series.len() {
                        keys.insert(&f.series, i);
                    }
                    self.index.insert(f.name.clone(), (out.len(), keys));
                    out.push(f);
                }
            }
        }
        Ok(())
    }
}

fn field<'a>(
    w: &mut impl Iterator<Item = &'a str>,
    n: usize,
    what: &'static str,
) -> Result<&'a str, ParseError> {
    w.next()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| err(n, what, ParseErrorKind::Missing, "a framed record"))
}

/// Parses the gathered records (see the module doc) into `out`.
pub fn parse_into(buf: &[u8], out: &mut Textfile) -> Result<(), ParseError> {
    out.files.clear();
    out.families.clear();
    out.dir_error = None;
    out.refused = 0;
    let mut merger = Merger::default();
    let mut at = 0;
    let mut line = 1;
    while at < buf.len() {
        let end = buf[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(buf.len(), |p| at + p);
        let header = std::str::from_utf8(&buf[at..end])
            .map_err(|_| err(line, "record", ParseErrorKind::Invalid, "UTF-8 text"))?;
        at = end + 1;
        line += 1;
        if header.is_empty() {
            continue;
        }
        if out.files.len() >= MAX_FILES {
            return Err(err(
                line - 1,
                "record",
                ParseErrorKind::TooMany,
                "at most 4096 files",
            ));
        }
        if let Some(why) = header.strip_prefix("@dir ") {
            out.dir_error = Some(why.to_string());
        } else if let Some(rest) = header
            .strip_prefix("@error ")
            .or_else(|| header.strip_prefix("@refused "))
        {
            out.refused += usize::from(header.starts_with("@refused "));
            let (path, why) = rest.split_once(' ').unwrap_or((rest, "unreadable"));
            out.files.push(TextFile {
                path: path.to_string(),
                mtime_secs: 0.0,
                error: Some(why.to_string()),
            });
        } else if let Some(rest) = header.strip_prefix("@file ") {
            let n = line - 1;
            let mut w = rest.splitn(3, ' ');
            let mtime_ns: u64 = field(&mut w, n, "mtime")?
                .parse()
                .map_err(|_| err(n, "mtime", ParseErrorKind::Invalid, "nanoseconds"))?;
            let len: usize = field(&mut w, n, "length")?
                .parse()
                .map_err(|_| err(n, "length", ParseErrorKind::Invalid, "a byte count"))?;
            let path = field(&mut w, n, "path")?;
            if len > MAX_FILE_BYTES || at + len > buf.len() {
                return Err(err(
                    n,
                    "length",
                    ParseErrorKind::Truncated,
                    "the file's bytes after the header",
                ));
            }
            let body = &buf[at..at + len];
            line += body.iter().filter(|&&b| b == b'\n').count();
            at += len;
            let result = std::str::from_utf8(body)
                .map_err(|e| Error::malformed("", Some(e.valid_up_to() as u64), "not UTF-8 text"))
                .and_then(families_of)
                .and_then(|f| merger.merge(&mut out.families, f));
            out.files.push(TextFile {
                path: path.to_string(),
                mtime_secs: mtime_ns as f64 / 1e9,
                error: result.err().map(|e| e.to_string()),
            });
        } else {
            return Err(err(
                line - 1,
                "record",
                ParseErrorKind::Invalid,
                "`@file`, `@error` or `@dir`",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(path: &str, text: &str) -> String {
        format!("@file 1700000000500000000 {} {path}\n{text}", text.len())
    }

    #[test]
    fn files_are_parsed_merged_and_failures_kept_apart() {
        let a =
            "# HELP jobs_total Jobs run.\n# TYPE jobs_total counter\njobs_total{kind=\"a\"} 3\n";
        let b = "good 1\nbad line\n";
        let c = "# TYPE jobs_total counter\njobs_total{kind=\"b\"} 5\n# TYPE lat histogram\nlat_bucket{le=\"0.1\"} 1\nlat_bucket{le=\"+Inf\"} 2\nlat_sum 0.3\nlat_count 2\n";
        let d = "stamped 1 1700000000000\n";
        let text = format!(
            "{}\n{}\n{}\n{}\n@error /t/e.prom permission denied\n",
            record("/t/a.prom", a),
            record("/t/b.prom", b),
            record("/t/c.prom", c),
            record("/t/d.prom", d)
        );
        let mut t = Textfile::default();
        parse_into(text.as_bytes(), &mut t).unwrap();
        let errors: Vec<_> = t.files.iter().map(|f| f.error.is_some()).collect();
        assert_eq!(errors, [false, true, false, true, true]);
        assert!(
            t.files[1].error.as_deref().unwrap().starts_with("line 2:"),
            "{:?}",
            t.files[1].error
        );
        assert!(t.files[3].error.as_deref().unwrap().contains("timestamps"));
        assert_eq!(t.files[0].mtime_secs, 1_700_000_000.5);
        assert!(t.error());
        let jobs = t.families.iter().find(|f| f.name == "jobs_total").unwrap();
        assert_eq!(
            (jobs.kind, jobs.help.as_str()),
            (TextKind::Counter, "Jobs run.")
        );
        assert_eq!(jobs.series.len(), 2);
        let lat = t.families.iter().find(|f| f.name == "lat").unwrap();
        assert_eq!(lat.kind, TextKind::Histogram);
        let suffixes: Vec<_> = lat.series.iter().map(|s| s.suffix).collect();
        assert_eq!(suffixes, ["_bucket", "_bucket", "_sum", "_count"]);
        assert_eq!(
            lat.series[1].labels,
            [("le".to_string(), "+Inf".to_string())]
        );
        // Nothing of a failed file is kept.
        assert!(
            t.families
                .iter()
                .all(|f| f.name != "good" && f.name != "stamped")
        );
    }

    #[test]
    fn conflicts_and_bad_frames() {
        let text = format!(
            "{}\n{}\n",
            record("/t/a.prom", "# TYPE x gauge\nx 1\n"),
            record("/t/b.prom", "# TYPE x counter\nx 2\n")
        );
        let mut t = Textfile::default();
        parse_into(text.as_bytes(), &mut t).unwrap();
        assert!(
            t.files[1]
                .error
                .as_deref()
                .unwrap()
                .contains("different type")
        );
        let e = parse_into(b"@file 1 999 /t/a.prom\nshort\n", &mut t).unwrap_err();
        assert_eq!((e.line, e.field), (1, "length"));
        let e = parse_into(b"garbage\n", &mut t).unwrap_err();
        assert_eq!(e.field, "record");
        parse_into(b"@dir /nope: not found\n", &mut t).unwrap();
        assert!(t.error() && t.files.is_empty());
        parse_into(b"", &mut t).unwrap();
        assert!(!t.error());
    }

    fn one(text: &str) -> Result<Vec<TextFamily>, String> {
        families_of(text).map_err(|e| e.to_string())
    }

    #[test]
    fn node_exporters_rules_accept_and_refuse_by_line() {
        // Escapes, spacing, a trailing comma, comments, NaN and infinities.
        let f = one(concat!(
            "# a comment\n",
            "# HELP m A \\\\ help\\nline.\n",
            "m{a=\"x\\\"y\\\\z\\n\",b=\"\",} NaN\n",
            "  m {a=\"2\"}\t+Inf\n",
            "m{a=\"3\"} -1.5e3\n",
        ))
        .unwrap();
        assert_eq!(f[0].help, "A \\ help\nline.");
        assert_eq!(f[0].series.len(), 3);
        assert_eq!(f[0].series[0].labels[0].1, "x\"y\\z\n");
        assert!(f[0].series[0].value.is_nan());
        assert_eq!(f[0].series[1].value, f64::INFINITY);
        let f = one("m{z=\"1\",a=\"2\"} 1\n").unwrap();
        let names: Vec<&str> = f[0].series[0].labels.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(names, ["a", "z"], "sorted, as node_exporter prints them");
        // A summary's quantiles, normalised as Prometheus prints them.
        let f = one("# TYPE s summary\ns{quantile=\"0.50\"} 1\ns_sum 2\ns_count 3\n").unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].series[0].labels, [("quantile".into(), "0.5".into())]);
        // Bare samples, as cron scripts write them: untyped families.
        let f = one("testmetric1_1{foo=\"bar\"} 10\ntestmetric1_2{foo=\"baz\"} 20\n").unwrap();
        let names: Vec<_> = f.iter().map(|f| (f.name.as_str(), f.kind)).collect();
        assert_eq!(
            names,
            [
                ("testmetric1_1", TextKind::Untyped),
                ("testmetric1_2", TextKind::Untyped)
            ]
        );
        // Split samples of one family are one family.
        let f = one("a 1\nb 2\na{x=\"1\"} 3\n").unwrap();
        assert_eq!(f[0].series.len(), 2);
        for (text, says) in [
            ("# HELP a x\n# HELP a y\na 1\n", "line 2: second HELP"),
            ("# TYPE a gauge\n# TYPE a gauge\n", "line 2: second TYPE"),
            ("a 1\n# TYPE a gauge\n", "line 2: TYPE line for a after"),
            ("# TYPE a meter\n", "line 1: type \"meter\""),
            (
                "a{x=\"1\",y=\"2\"} 1\na{y=\"2\",x=\"1\"} 2\n",
                "line 2: a: the same series twice",
            ),
            ("a{x=\"1\",x=\"2\"} 1\n", "label x given twice"),
            ("a{x=\"1} 1\n", "unterminated"),
            ("a{x=\"\\q\"} 1\n", "bad escape"),
            ("a{1x=\"1\"} 1\n", "label name"),
            ("a one\n", "expected a value"),
            ("a\n", "expected a value"),
            ("a 1 1700000000000\n", "timestamps"),
            ("1a 1\n", "metric name"),
            ("# TYPE h histogram\nh 1\n", "end in _bucket"),
            ("# TYPE h histogram\nh_bucket 1\n", "no le label"),
            (
                "# TYPE h histogram\nh_bucket{le=\"x\"} 1\n",
                "is not a number",
            ),
        ] {
            let e = one(text).unwrap_err();
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }

    /// One family of 40,000 series and two files of 20,000 each (with one
    /// family in common): every series kept, duplicates across files once.
    /// (How fast: `quietstat bench textfile`.)
    #[test]
    fn many_series_in_one_family_are_all_kept() {
        let body = |from: usize, to: usize| {
            let mut t = String::from("# TYPE big gauge\n");
            for i in from..to {
                t += &format!("big{{i=\"{i}\"}} {i}\n");
            }
            t
        };
        let text = format!(
            "{}\n{}\n",
            record("/t/a.prom", &body(0, 40_000)),
            record("/t/b.prom", &body(30_000, 50_000))
        );
        let mut t = Textfile::default();
        parse_into(text.as_bytes(), &mut t).unwrap();
        assert!(!t.error(), "{:?}", t.files);
        assert_eq!(t.families.len(), 1);
        assert_eq!(t.families[0].series.len(), 50_000);
    }
}
