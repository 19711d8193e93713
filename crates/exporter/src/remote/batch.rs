//! A remote-write request being filled: the exposition's lines (as
//! `/metrics` writes them) turned into series, each series' samples
//! grouped under it, labels sorted as the protocol asks; then the
//! protobuf `WriteRequest`, snappy-compressed.

use std::collections::HashMap;

/// `prometheus.WriteRequest` (remote write 1.0).
#[derive(Clone, PartialEq, prost::Message)]
pub struct WriteRequest {
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TimeSeries {
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<Sample>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Label {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    #[prost(double, tag = "1")]
    pub value: f64,
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// A line of the exposition that is not a sample.
#[derive(Debug, PartialEq, Eq)]
pub struct BadLine(pub String);

/// One sample line: the series as written (`name{labels}`), the labels
/// (`__name__` first, unescaped), and the value.
pub fn parse_line(line: &str) -> Result<(&str, Vec<Label>, f64), BadLine> {
    let bad = |why: &str| BadLine(format!("{why}: {line:?}"));
    let name_end = line.find(['{', ' ']).ok_or_else(|| bad("no value"))?;
    let name = &line[..name_end];
    if name.is_empty() {
        return Err(bad("no metric name"));
    }
    let mut labels = vec![Label {
        name: "__name__".into(),
        value: name.into(),
    }];
    let mut rest = &line[name_end..];
    if let Some(r) = rest.strip_prefix('{') {
        let mut r = r;
        loop {
            r = r.trim_start_matches(',');
            if let Some(after) = r.strip_prefix('}') {
                rest = after;
                break;
            }
            let eq = r
                .find("=\"")
                .ok_or_else(|| bad("a label without a value"))?;
            let lname = &r[..eq];
            r = &r[eq + 2..];
            let mut value = String::new();
            let mut chars = r.char_indices();
            let end = loop {
                match chars.next() {
                    None => return Err(bad("an unterminated label value")),
                    Some((i, '"')) => break i,
                    Some((_, '\\')) => match chars.next() {
                        Some((_, 'n')) => value.push('\n'),
                        Some((_, c)) => value.push(c),
                        None => return Err(bad("an unterminated label value")),
                    },
                    Some((_, c)) => value.push(c),
                }
            };
            labels.push(Label {
                name: lname.into(),
                value,
            });
            r = &r[end + 1..];
        }
    }
    let series = &line[..line.len() - rest.len()];
    let v = rest.trim_start();
    let v = v.split(' ').next().unwrap_or("");
    let value = match v {
        "+Inf" | "Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        v => v.parse().map_err(|_| bad("not a number"))?,
    };
    Ok((series, labels, value))
}

/// A request being filled.
#[derive(Default)]
pub struct Batch {
    series: HashMap<Box<str>, usize>,
    pub req: WriteRequest,
    /// Samples in it.
    pub samples: usize,
    /// Of them, samples not recorded (sent live: lost if it fails).
    pub live: usize,
    /// The time of its last recorded sample (Unix ms).
    pub last_ms: u64,
}

impl Batch {
    /// Adds every sample line of `exposition` at `ms`, with `extra` labels
    /// (sorted by name; a series' own label of the same name wins).
    /// Returns the lines that were not samples (none from our encoder).
    pub fn add(&mut self, exposition: &str, ms: u64, extra: &[(String, String)]) -> usize {
        let mut bad = 0;
        for line in exposition.lines() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Ok((series, labels, value)) = parse_line(line) else {
                bad += 1;
                continue;
            };
            let sample = Sample {
                value,
                timestamp: ms as i64,
            };
            if let Some(&i) = self.series.get(series) {
                self.req.timeseries[i].samples.push(sample);
            } else {
                let mut labels = labels;
                for (k, v) in extra {
                    if !labels.iter().any(|l| l.name == *k) {
                        labels.push(Label {
                            name: k.clone(),
                            value: v.clone(),
                        });
                    }
                }
                labels.sort_by(|a, b| a.name.cmp(&b.name));
                self.series.insert(series.into(), self.req.timeseries.len());
                self.req.timeseries.push(TimeSeries {
                    labels,
                    samples: vec![sample],
                });
            }
            self.samples += 1;
        }
        self.last_ms = self.last_ms.max(ms);
        bad
    }

    /// As [`Batch::add`], for samples not recorded: they do not move
    /// [`Batch::last_ms`].
    pub fn add_live(&mut self, exposition: &str, ms: u64, extra: &[(String, String)]) -> usize {
        let (n0, last) = (self.samples, self.last_ms);
        let bad = self.add(exposition, ms, extra);
        self.live += self.samples - n0;
        self.last_ms = last;
        bad
    }

    pub fn is_empty(&self) -> bool {
        self.samples == 0
    }

    /// The request's body: protobuf, snappy block-compressed.
    pub fn body(&self) -> Vec<u8> {
        use prost::Message;
        let raw = self.req.encode_to_vec();
        snap::raw::Encoder::new()
            .compress_vec(&raw)
            .unwrap_or_default()
    }
}

/// A request's body read back (snappy, then protobuf): what a receiver
/// does with it.
pub fn decode(body: &[u8]) -> Option<WriteRequest> {
    use prost::Message;
    let raw = snap::raw::Decoder::new().decompress_vec(body).ok()?;
    WriteRequest::decode(raw.as_slice()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_gives_its_name_labels_unescaped_and_value() {
        let (series, labels, v) =
            parse_line(r#"node_x_total{a="1",b="q\"u\\o\nte"} 12.5"#).unwrap();
        assert_eq!(series, r#"node_x_total{a="1",b="q\"u\\o\nte"}"#);
        let got: Vec<(&str, &str)> = labels
            .iter()
            .map(|l| (l.name.as_str(), l.value.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("__name__", "node_x_total"),
                ("a", "1"),
                ("b", "q\"u\\o\nte")
            ]
        );
        assert_eq!(v, 12.5);
        let (series, labels, v) = parse_line("up 1").unwrap();
        assert_eq!((series, labels.len(), v), ("up", 1, 1.0));
        assert!(parse_line("x{a=\"1\"} +Inf").unwrap().2.is_infinite());
        assert!(parse_line("x NaN").unwrap().2.is_nan());
    }

    #[test]
    fn malformed_lines_are_errors_naming_the_line() {
        for l in ["x", "x{a=\"1} 2", "x{a} 1", "x{a=\"1\"} one", "{a=\"1\"} 1"] {
            let e = parse_line(l).unwrap_err();
            assert!(e.0.contains(&format!("{l:?}")), "{e:?}");
        }
    }

    #[test]
    fn samples_of_a_series_are_grouped_in_time_order_with_sorted_labels() {
        let mut b = Batch::default();
        let extra = vec![("job".to_string(), "node".to_string())];
        let text = "# TYPE a counter\na_total{cpu=\"0\"} 1\na_total{cpu=\"1\"} 2\n# EOF\n";
        assert_eq!(b.add(text, 1000, &extra), 0);
        let text2 = "a_total{cpu=\"0\"} 3\na_total{cpu=\"1\"} 4\nZ 5\n";
        b.add(text2, 2000, &extra);
        assert_eq!(b.samples, 5);
        assert_eq!(b.last_ms, 2000);
        let ts = &b.req.timeseries;
        assert_eq!(ts.len(), 3);
        let names: Vec<&str> = ts[0].labels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["__name__", "cpu", "job"]);
        // Upper case sorts before "_", as bytes.
        assert_eq!(ts[2].labels[0].name, "__name__");
        let cpu0: Vec<(i64, f64)> = ts[0]
            .samples
            .iter()
            .map(|s| (s.timestamp, s.value))
            .collect();
        assert_eq!(cpu0, [(1000, 1.0), (2000, 3.0)]);
        // The body is snappy of the protobuf, and decodes back.
        assert_eq!(decode(&b.body()).unwrap(), b.req);
    }

    #[test]
    fn a_series_own_label_wins_over_an_external_one() {
        let mut b = Batch::default();
        let extra = vec![("instance".to_string(), "h:1".to_string())];
        b.add("x{instance=\"mine\"} 1\n", 5, &extra);
        let l = &b.req.timeseries[0].labels;
        assert_eq!(l.len(), 2);
        assert_eq!(l[1].value, "mine");
    }
}
