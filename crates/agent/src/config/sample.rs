//! The configuration sample docs/agent.md shows: every key with its
//! default, as `--print-config` writes it, and its line from the key
//! table; one source's table stands for all of them.

use std::collections::BTreeMap;

use super::{AgentSource, Config, FileConfig};

/// Where a key's line starts, when the key and value leave room.
const COMMENT_AT: usize = 36;

/// The sample, with root's default store directory.
pub fn sample() -> String {
    let mut c = Config::default();
    c.store.path = "/var/lib/quietstat".into();
    let docs: BTreeMap<String, &str> = FileConfig::keys()
        .into_iter()
        .map(|k| (k.path, k.doc))
        .collect();
    let mut out = String::new();
    let mut table = String::new();
    let mut skipping = false;
    let mut seen: Vec<String> = Vec::new();
    let first_table = format!("sources.{}", AgentSource::ALL[0].key());
    for line in c.to_toml().lines() {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            out.truncate(out.trim_end().len());
            out.push('\n');
            close_table(&mut out, &table, &seen, &docs);
            seen.clear();
            if table == first_table {
                out.push_str(&source_defaults(&c));
            }
            table = name.to_string();
            let key = normal(&table);
            skipping = key.starts_with("sources.") && table != first_table;
            if !skipping {
                let doc = match table.strip_prefix("sources.") {
                    Some(_) => "one table per source, by its name; the defaults of each below",
                    None => docs.get(&key).copied().unwrap_or_default(),
                };
                out.push('\n');
                out.push_str(&annotated(line, doc));
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        if skipping {
            continue;
        }
        match line.split_once(" = ") {
            Some((k, _)) => {
                let key = normal(&if table.is_empty() {
                    k.to_string()
                } else {
                    format!("{table}.{k}")
                });
                out.push_str(&annotated(
                    line,
                    docs.get(&key).copied().unwrap_or_default(),
                ));
                seen.push(key);
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    close_table(&mut out, &table, &seen, &docs);
    out.push_str(&remote_write_example(&docs));
    out
}

/// A `[[remote_write]]` table with its defaults, commented out: there is
/// none by default.
fn remote_write_example(docs: &BTreeMap<String, &str>) -> String {
    use super::Section;
    let mut c = Config::default();
    let file = super::FileRemoteWrite {
        url: Some("http://127.0.0.1:9090/api/v1/write".into()),
        ..Default::default()
    };
    c.remote_write = vec![
        file.resolve_in("remote_write")
            .expect("the example is valid"),
    ];
    let toml = c.to_toml();
    let Some(at) = toml.find("[[remote_write]]") else {
        return String::new();
    };
    let mut out =
        String::from("\n# Receivers the history is pushed to: none by default, one table each\n");
    let mut table = String::new();
    for line in toml[at..].lines().filter(|l| !l.is_empty()) {
        let name = line.trim_start_matches('[').trim_end_matches(']');
        if name.len() < line.len() {
            table = name.to_string();
            out.push_str(&format!("# {line}\n"));
            continue;
        }
        let doc = line
            .split_once(" = ")
            .and_then(|(k, _)| docs.get(&format!("{table}.{k}")))
            .copied()
            .unwrap_or_default();
        out.push_str(&annotated(&format!("# {line}"), doc));
    }
    out
}

/// The keys of `table` that `--print-config` leaves out when unset
/// (`store.group`), commented out.
fn close_table(out: &mut String, table: &str, seen: &[String], docs: &BTreeMap<String, &str>) {
    if table.is_empty() || table.starts_with("sources.") {
        return;
    }
    let prefix = format!("{table}.");
    for (path, doc) in docs.range(prefix.clone()..) {
        let Some(k) = path.strip_prefix(&prefix) else {
            break;
        };
        if !k.contains('.') && !seen.contains(path) {
            out.push_str(&annotated(&format!("# {k} = \"\""), doc));
        }
    }
}

/// A key's path with any source's name as `<source>`.
fn normal(path: &str) -> String {
    match path.strip_prefix("sources.") {
        Some(rest) => match rest.split_once('.') {
            Some((_, k)) => format!("sources.<source>.{k}"),
            None => "sources.<source>".into(),
        },
        None => path.to_string(),
    }
}

fn annotated(line: &str, doc: &str) -> String {
    if doc.is_empty() {
        return format!("{line}\n");
    }
    let pad = COMMENT_AT.saturating_sub(line.len()).max(1);
    format!("{line}{:pad$}# {doc}\n", "")
}

/// Each source's interval and whether it is read by default, as comment
/// lines: the defaults the sample's one source table stands for.
fn source_defaults(c: &Config) -> String {
    let mut by: BTreeMap<(bool, std::time::Duration), Vec<&str>> = BTreeMap::new();
    for s in AgentSource::ALL {
        let sc = c.source(s);
        by.entry((!sc.enabled, sc.interval))
            .or_default()
            .push(s.key());
    }
    let mut out = String::new();
    for ((off, every), names) in by {
        let head = format!(
            "# {}every {}: ",
            if off { "off until enabled, " } else { "" },
            humantime::format_duration(every)
        );
        let mut line = head.clone();
        for (i, n) in names.iter().enumerate() {
            let word = if i + 1 < names.len() {
                format!("{n}, ")
            } else {
                n.to_string()
            };
            if line.len() + word.len() > 78 {
                out.push_str(line.trim_end());
                out.push('\n');
                line = format!("#{:w$}", "", w = head.len() - 1);
            }
            line.push_str(&word);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}
