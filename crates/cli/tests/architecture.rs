//! The docs that are made from the code, checked against it:
//! docs/architecture.md's crate table against the crates' manifests (a row
//! for every crate, and its "depends on" naming exactly the workspace
//! crates its manifest's `[dependencies]` list; other crates, build and
//! dev dependencies are free text), and docs/agent.md's configuration
//! sample against the key table.

use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn the_crate_table_names_each_crates_workspace_dependencies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut manifests = Vec::new();
    for e in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = e.unwrap().path();
        let manifest = dir.join("Cargo.toml");
        if manifest.is_file() {
            let name = dir.file_name().unwrap().to_str().unwrap().to_string();
            let text = std::fs::read_to_string(&manifest).unwrap();
            manifests.push((name, text.parse::<toml::Table>().unwrap()));
        }
    }
    let crates: BTreeSet<&str> = manifests.iter().map(|(n, _)| n.as_str()).collect();
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    // `| `name` | one job | depends on |`
    let rows: Vec<(&str, &str)> = doc
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let name = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            (cells.len() == 5 && crates.contains(name)).then(|| (name, cells[3]))
        })
        .collect();
    let mut wrong = Vec::new();
    for (name, manifest) in &manifests {
        let Some((_, cell)) = rows.iter().find(|(n, _)| n == name) else {
            wrong.push(format!("{name}: no row"));
            continue;
        };
        let named: BTreeSet<&str> = cell
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .filter(|w| crates.contains(w))
            .collect();
        let deps: BTreeSet<&str> = manifest
            .get("dependencies")
            .and_then(|d| d.as_table())
            .map(|d| {
                d.keys()
                    .map(String::as_str)
                    .filter(|k| crates.contains(k))
                    .collect()
            })
            .unwrap_or_default();
        if named != deps {
            wrong.push(format!(
                "{name}: the table says {named:?}, the manifest {deps:?}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/architecture.md:\n{}",
        wrong.join("\n")
    );
}

/// docs/agent.md's sample is the key table's: every key with its default
/// and its line ([`agent::config::sample`]).
#[test]
fn the_configuration_sample_is_the_key_tables() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/agent.md")).unwrap();
    let start = doc
        .find("\n```toml\n")
        .expect("docs/agent.md has a ```toml sample")
        + "\n```toml\n".len();
    let len = doc[start..].find("```\n").unwrap();
    let want = agent::config::sample();
    assert!(
        doc[start..start + len] == want,
        "docs/agent.md's configuration sample is not the key table's; it is now:\n{want}"
    );
}
