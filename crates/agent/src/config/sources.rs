//! `[sources.<name>]`: each source's schedule, a table per source named by
//! the source's name or one of its aliases.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::kinds::{KeyDoc, Kind};
use super::{AgentSource, ConfigError, SOURCE_COUNT, SourceConfig, in_range, parse_duration};

/// One source's table as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSource {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_age: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_interval: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub demand_min_interval: Option<String>,
}

/// The keys of a source's table, each with its line.
const SOURCE_KEYS: [(&str, &str); 5] = [
    (
        "enabled",
        "Read this source (the opt-in ones are off until enabled)",
    ),
    ("interval", "How often it is read on schedule (10ms to 1h)"),
    (
        "max_age",
        "The oldest its data may be: the overhead budget may stretch the interval up to this (default: 5 intervals)",
    ),
    (
        "min_interval",
        "The floor: a consumer asking for fresher data never makes the agent read it more often (floor for shared-memory readers)",
    ),
    (
        "demand_min_interval",
        "The floor for HTTP max_age_ms: a source read within it is served as it is, with its age",
    ),
];

/// `[sources.<name>]` tables, one slot per source; a source may be named
/// by its name or an alias, once.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSources([Option<FileSource>; SOURCE_COUNT]);

impl Default for FileSources {
    fn default() -> Self {
        FileSources(std::array::from_fn(|_| None))
    }
}

impl FileSources {
    pub fn get_mut(&mut self, s: AgentSource) -> &mut Option<FileSource> {
        &mut self.0[s.index()]
    }

    pub fn get(&self, s: AgentSource) -> Option<&FileSource> {
        self.0[s.index()].as_ref()
    }
}

impl Serialize for FileSources {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = ser.serialize_map(None)?;
        for s in AgentSource::ALL {
            if let Some(f) = self.get(s) {
                m.serialize_entry(s.key(), f)?;
            }
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for FileSources {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let table = std::collections::BTreeMap::<String, FileSource>::deserialize(de)?;
        let mut out = FileSources::default();
        for (name, f) in table {
            let s = AgentSource::from_key(&name).ok_or_else(|| {
                D::Error::custom(format!(
                    "unknown source `{name}`; accepted: {}",
                    AgentSource::keys()
                ))
            })?;
            let slot = out.get_mut(s);
            if slot.is_some() {
                return Err(D::Error::custom(format!(
                    "source `{}` is named twice (`{name}` is another name of it)",
                    s.key()
                )));
            }
            *slot = Some(f);
        }
        Ok(out)
    }
}

/// Every source's schedule: its defaults ([`SourceConfig::defaults`]) with
/// what its table sets.
pub struct SourceTable;

impl Kind for SourceTable {
    type File = FileSources;
    type Out = [SourceConfig; SOURCE_COUNT];

    fn resolve(
        &self,
        prefix: &str,
        v: Option<&FileSources>,
    ) -> Result<[SourceConfig; SOURCE_COUNT], ConfigError> {
        let mut sources = AgentSource::ALL.map(SourceConfig::defaults);
        for s in AgentSource::ALL {
            let Some(f) = v.and_then(|fs| fs.get(s)) else {
                continue;
            };
            let key = |k: &str| format!("{prefix}.{}.{k}", s.key());
            let c = &mut sources[s.index()];
            if let Some(e) = f.enabled {
                c.enabled = e;
            }
            if let Some(v) = &f.interval {
                let k = key("interval");
                c.interval = in_range(
                    &k,
                    parse_duration(&k, v)?,
                    Duration::from_millis(10),
                    Duration::from_secs(3600),
                )?;
                if f.max_age.is_none() {
                    c.max_age = c.interval * 5;
                }
                c.min_interval = c.min_interval.min(c.interval);
            }
            if let Some(v) = &f.max_age {
                let k = key("max_age");
                c.max_age = in_range(
                    &k,
                    parse_duration(&k, v)?,
                    c.interval,
                    Duration::from_secs(86_400),
                )?;
            }
            if let Some(v) = &f.min_interval {
                let k = key("min_interval");
                c.min_interval = in_range(&k, parse_duration(&k, v)?, Duration::ZERO, c.interval)?;
            }
            if let Some(v) = &f.demand_min_interval {
                let k = key("demand_min_interval");
                c.demand_min_interval = in_range(
                    &k,
                    parse_duration(&k, v)?,
                    Duration::ZERO,
                    Duration::from_secs(3600),
                )?;
            }
        }
        Ok(sources)
    }

    fn print(&self, v: &[SourceConfig; SOURCE_COUNT]) -> Option<FileSources> {
        let d = |d: Duration| Some(humantime::format_duration(d).to_string());
        let mut sources = FileSources::default();
        for s in AgentSource::ALL {
            let c = &v[s.index()];
            *sources.get_mut(s) = Some(FileSource {
                enabled: Some(c.enabled),
                interval: d(c.interval),
                max_age: d(c.max_age),
                min_interval: d(c.min_interval),
                demand_min_interval: d(c.demand_min_interval),
            });
        }
        Some(sources)
    }

    fn merge(&self, into: &mut Option<FileSources>, over: &Option<FileSources>) {
        let Some(o) = over else {
            return;
        };
        let mine = into.get_or_insert_with(Default::default);
        for s in AgentSource::ALL {
            if let Some(os) = o.get(s) {
                let m = mine.get_mut(s).get_or_insert_with(Default::default);
                macro_rules! take {
                    ($($f:ident),*) => { $(if os.$f.is_some() { m.$f.clone_from(&os.$f); })* };
                }
                take!(
                    enabled,
                    interval,
                    max_age,
                    min_interval,
                    demand_min_interval
                );
            }
        }
    }

    fn keys(&self, path: &str) -> Vec<KeyDoc> {
        SOURCE_KEYS
            .iter()
            .map(|(k, doc)| KeyDoc {
                path: format!("{path}.<source>.{k}"),
                doc,
            })
            .collect()
    }
}
