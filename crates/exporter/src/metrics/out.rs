//! Writing families through prometheus-client's encoder, each typed as its
//! definition says.

use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;

use super::families::{Family, Kind};

pub(super) type Fmt = Result<(), std::fmt::Error>;

pub(super) struct Out<'a> {
    pub(super) enc: DescriptorEncoder<'a>,
}

/// A family being encoded, with its catalog type (looked up once).
pub(super) struct Fam<'s> {
    m: MetricEncoder<'s>,
    kind: Kind,
}

impl<'s> std::ops::Deref for Fam<'s> {
    type Target = MetricEncoder<'s>;
    fn deref(&self) -> &Self::Target {
        &self.m
    }
}

impl std::ops::DerefMut for Fam<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.m
    }
}

impl Out<'_> {
    /// Starts family `name`; counters are named without `_total` for the
    /// encoder, which appends it.
    pub(super) fn family<'s>(&'s mut self, f: &'static Family) -> Result<Fam<'s>, std::fmt::Error> {
        debug_assert!(!f.name.contains('*'), "{} needs its key", f.name);
        self.start(f, f.name, f.help)
    }

    /// Starts one family of a per-key family `f` (`node_memory_*_bytes`):
    /// its name is `f`'s with `key` for the `*`.
    pub(super) fn family_of<'s>(
        &'s mut self,
        f: &'static Family,
        key: &str,
        name: &'s mut String,
    ) -> Result<Fam<'s>, std::fmt::Error> {
        let (pre, post) = f.name.split_once('*').ok_or(std::fmt::Error)?;
        name.clear();
        name.push_str(pre);
        name.push_str(key);
        name.push_str(post);
        // node_exporter's wording for per-key families.
        let help = match f.source {
            "meminfo" => "Memory information field.",
            "vmstat" => "/proc/vmstat information field.",
            "sockstat" => "Number of sockets of a protocol in a state (/proc/net/sockstat).",
            "netstat" => "Statistic from /proc/net/netstat, snmp or snmp6.",
            _ => "Network device statistic.",
        };
        self.start(f, name, help)
    }

    /// Starts one family of a per-key family `f` under its full `name`
    /// (which `f`'s pattern must match), with its own help.
    pub(super) fn family_named<'s>(
        &'s mut self,
        f: &'static Family,
        name: &'s str,
        help: &'s str,
    ) -> Result<Fam<'s>, std::fmt::Error> {
        let (pre, post) = f.name.split_once('*').ok_or(std::fmt::Error)?;
        if !(name.starts_with(pre) && name.ends_with(post) && name.len() > pre.len() + post.len()) {
            return Err(std::fmt::Error);
        }
        self.start(f, name, help)
    }

    fn start<'s>(
        &'s mut self,
        f: &'static Family,
        name: &'s str,
        help: &'s str,
    ) -> Result<Fam<'s>, std::fmt::Error> {
        let (n, t) = match f.kind {
            Kind::Counter => (
                name.strip_suffix("_total").ok_or(std::fmt::Error)?,
                MetricType::Counter,
            ),
            Kind::Gauge => (name, MetricType::Gauge),
            Kind::Unknown => (name, MetricType::Unknown),
        };
        Ok(Fam {
            m: self.enc.encode_descriptor(n, help, None, t)?,
            kind: f.kind,
        })
    }
}

/// `v` as an integer when it is one that a float holds exactly: written
/// `3`, as node_exporter writes it, not `3.0` (on a 4,096-CPU machine a
/// third of the series are whole numbers: 44 KB a scrape).
fn whole(v: f64) -> Option<i64> {
    (v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0).then_some(v as i64)
}

pub(super) fn counter(m: &mut MetricEncoder<'_>, v: f64) -> Fmt {
    match whole(v).and_then(|i| u64::try_from(i).ok()) {
        Some(u) => m.encode_counter::<NoLabelSet, u64, f64>(&u, None),
        None => m.encode_counter::<NoLabelSet, f64, f64>(&v, None),
    }
}

pub(super) fn counter_l(m: &mut MetricEncoder<'_>, labels: &impl EncodeLabelSet, v: f64) -> Fmt {
    counter(&mut m.encode_family(labels)?, v)
}

pub(super) fn gauge(m: &mut MetricEncoder<'_>, v: f64) -> Fmt {
    match whole(v) {
        Some(i) => m.encode_gauge(&i),
        None => m.encode_gauge(&v),
    }
}

pub(super) fn gauge_l(m: &mut MetricEncoder<'_>, labels: &impl EncodeLabelSet, v: f64) -> Fmt {
    gauge(&mut m.encode_family(labels)?, v)
}

/// A labelled sample, as the family's catalog type says.
pub(super) fn sample_l(m: &mut Fam<'_>, labels: &impl EncodeLabelSet, v: f64) -> Fmt {
    match m.kind {
        Kind::Counter => counter_l(m, labels, v),
        _ => gauge_l(m, labels, v),
    }
}

/// A family with one unlabelled sample.
/// An info family of one series: its labels, value 1.
pub(super) fn info(out: &mut Out<'_>, f: &'static Family, labels: &impl EncodeLabelSet) -> Fmt {
    let mut m = out.family(f)?;
    info_l(&mut m, labels)
}

/// One series of an info family: its labels, value 1.
pub(super) fn info_l(m: &mut MetricEncoder<'_>, labels: &impl EncodeLabelSet) -> Fmt {
    gauge_l(m, labels, 1.0)
}

pub(super) fn one(out: &mut Out<'_>, f: &'static Family, v: f64) -> Fmt {
    let mut m = out.family(f)?;
    match m.kind {
        Kind::Counter => counter(&mut m, v),
        _ => gauge(&mut m, v),
    }
}
