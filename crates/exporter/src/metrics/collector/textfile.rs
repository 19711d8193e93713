//! node_exporter's textfile collector: the directory's families, encoded
//! after the state's lock is let go.

use super::*;

/// The textfile families, re-exported as written, and
/// `node_textfile_scrape_error` / `_mtime_seconds`. Counters named
/// `*_total`, gauges and untyped families keep their type; a counter
/// without `_total` (which the OpenMetrics encoder would rename) and the
/// series of histograms and summaries (`_bucket`, `_sum`, `_count`,
/// quantiles) are exported untyped under their own names, so queries
/// (`rate`, `histogram_quantile`) work unchanged. A family whose name is
/// one of the agent's fails its file.
pub(crate) fn textfile(out: &mut Out<'_>, t: &procfs::textfile::Textfile) -> Fmt {
    use procfs::textfile::TextKind;
    use prometheus_client::metrics::MetricType;
    let collides = |name: &str| family(name).is_some();
    let clash: Vec<&str> = t
        .families
        .iter()
        .filter(|f| {
            f.series
                .iter()
                .any(|s| collides(&format!("{}{}", f.name, s.suffix)))
        })
        .map(|f| f.name.as_str())
        .collect();
    let error = t.error() || !clash.is_empty();
    one(out, &NODE_TEXTFILE_SCRAPE_ERROR, f64::from(u8::from(error)))?;
    {
        let mut m = out.family(&NODE_TEXTFILE_MTIME_SECONDS)?;
        for f in t.files.iter().filter(|f| f.error.is_none()) {
            gauge_l(&mut m, &[("file", f.path.as_str())], f.mtime_secs)?;
        }
    }
    let mut name = String::new();
    for f in t
        .families
        .iter()
        .filter(|f| !clash.contains(&f.name.as_str()))
    {
        for suffix in ["", "_bucket", "_sum", "_count"] {
            let series: Vec<_> = f.series.iter().filter(|s| s.suffix == suffix).collect();
            if series.is_empty() {
                continue;
            }
            name.clear();
            name.push_str(&f.name);
            name.push_str(suffix);
            let (n, t) = match (f.kind, suffix) {
                (TextKind::Counter, "") if name.ends_with("_total") => {
                    (&name[..name.len() - "_total".len()], MetricType::Counter)
                }
                (TextKind::Gauge, "") => (name.as_str(), MetricType::Gauge),
                _ => (name.as_str(), MetricType::Unknown),
            };
            let mut m = out.enc.encode_descriptor(n, &f.help, None, t)?;
            for s in series {
                let labels: Vec<(&str, &str)> = s
                    .labels
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                match (t, labels.is_empty()) {
                    (MetricType::Counter, true) => counter(&mut m, s.value)?,
                    (MetricType::Counter, false) => counter_l(&mut m, &labels, s.value)?,
                    (_, true) => gauge(&mut m, s.value)?,
                    (_, false) => gauge_l(&mut m, &labels, s.value)?,
                }
            }
        }
    }
    Ok(())
}
