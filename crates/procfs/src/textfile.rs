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
//! [`parse_into`] parses each file with openmetrics-parser's Prometheus
//! text parser (a maintained grammar: label quoting and escapes, types,
//! duplicate series, families split across a file are all checked). A file
//! that fails, or that carries client-side timestamps (which node_exporter
//! refuses too), is reported with its error and contributes nothing; the
//! other files are kept. A family named in several files is merged when
//! the type and help agree, otherwise the later file fails.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::err;

/// Bytes of one file read at most (a larger file is reported, not read).
pub const MAX_FILE_BYTES: usize = 16 << 20;
/// Files read at most per directory.
pub const MAX_FILES: usize = 4096;

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
}

impl Textfile {
    /// node_textfile_scrape_error: any file or the directory failed.
    pub fn error(&self) -> bool {
        self.dir_error.is_some() || self.files.iter().any(|f| f.error.is_some())
    }
}

/// The parser's message on one line (it prints a multi-line picture with
/// ` --> line:column` and `= expected ...`).
fn one_line(e: &str) -> String {
    let mut at = None;
    let mut expected = None;
    for l in e.lines() {
        let l = l.trim();
        if let Some(p) = l.strip_prefix("--> ") {
            at = Some(p.to_string());
        } else if let Some(x) = l.strip_prefix("= ") {
            expected = Some(x.to_string());
        }
    }
    match (at, expected) {
        (Some(at), Some(x)) => {
            let line = at.split(':').next().unwrap_or(&at);
            format!("line {line}: {x}")
        }
        _ => e.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

/// The families of one file's text, or why it is refused.
fn families_of(text: &str) -> Result<Vec<TextFamily>, String> {
    use openmetrics_parser::{PrometheusType as T, PrometheusValue as V};
    let exposition = openmetrics_parser::prometheus::parse_prometheus(text)
        .map_err(|e| one_line(&e.to_string()))?;
    let mut out = Vec::with_capacity(exposition.families.len());
    for (name, f) in &exposition.families {
        let kind = match f.family_type {
            T::Counter => TextKind::Counter,
            T::Gauge => TextKind::Gauge,
            T::Histogram => TextKind::Histogram,
            T::Summary => TextKind::Summary,
            T::Unknown => TextKind::Untyped,
        };
        let mut series = Vec::new();
        for s in f.iter_samples() {
            if s.timestamp.is_some() {
                return Err(format!(
                    "{name}: client-side timestamps are not accepted (as node_exporter)"
                ));
            }
            let labels: Vec<(String, String)> = s
                .get_labelset()
                .map_err(|e| e.to_string())?
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let with = |k: &str, v: String| {
                let mut l = labels.clone();
                l.push((k.to_string(), v));
                l
            };
            let mut push = |suffix, labels, value| {
                series.push(TextSeries {
                    suffix,
                    labels,
                    value,
                })
            };
            match &s.value {
                V::Unknown(n) | V::Gauge(n) => push("", labels.clone(), n.as_f64()),
                V::Counter(c) => push("", labels.clone(), c.value.as_f64()),
                V::Histogram(h) => {
                    for b in &h.buckets {
                        push(
                            "_bucket",
                            with("le", bound(b.upper_bound)),
                            b.count.as_f64(),
                        );
                    }
                    if let Some(sum) = &h.sum {
                        push("_sum", labels.clone(), sum.as_f64());
                    }
                    if let Some(c) = h.count {
                        push("_count", labels.clone(), c as f64);
                    }
                }
                V::Summary(q) => {
                    for x in &q.quantiles {
                        push("", with("quantile", bound(x.quantile)), x.value.as_f64());
                    }
                    if let Some(sum) = &q.sum {
                        push("_sum", labels.clone(), sum.as_f64());
                    }
                    if let Some(c) = q.count {
                        push("_count", labels.clone(), c as f64);
                    }
                }
            }
        }
        out.push(TextFamily {
            name: name.clone(),
            help: f.help.clone(),
            kind,
            series,
        });
    }
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

/// Adds `families` of `file` to `out`, merging families already there;
/// on a conflict nothing of the file is kept.
fn merge(out: &mut Vec<TextFamily>, families: Vec<TextFamily>) -> Result<(), String> {
    for f in &families {
        if let Some(have) = out.iter().find(|h| h.name == f.name)
            && (have.kind != f.kind || (have.help != f.help && !f.help.is_empty()))
        {
            return Err(format!(
                "{}: already defined by another file with a different type or help",
                f.name
            ));
        }
    }
    for f in families {
        match out.iter_mut().find(|h| h.name == f.name) {
            Some(have) => {
                for s in f.series {
                    if have
                        .series
                        .iter()
                        .any(|h| h.suffix == s.suffix && h.labels == s.labels)
                    {
                        continue;
                    }
                    have.series.push(s);
                }
            }
            None => out.push(f),
        }
    }
    Ok(())
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
        } else if let Some(rest) = header.strip_prefix("@error ") {
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
                .map_err(|_| "not UTF-8 text".to_string())
                .and_then(families_of)
                .and_then(|f| merge(&mut out.families, f));
            out.files.push(TextFile {
                path: path.to_string(),
                mtime_secs: mtime_ns as f64 / 1e9,
                error: result.err(),
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
}
