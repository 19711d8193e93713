//! The docs that are made from the code, checked against it:
//! docs/architecture.md's crate table against the crates' manifests (a row
//! for every crate, and its "depends on" naming exactly the workspace
//! crates its manifest's `[dependencies]` list; other crates, build and
//! dev dependencies are free text), docs/agent.md's configuration
//! sample against the key table, and the sections `report` has against
//! the places that name them for its users.

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

/// The words of `text`: runs of letters, digits and `-`.
fn words(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Every section of `report` is named where its users look for it:
/// `report --help`'s `--source` line and docs/store.md's list of sections.
#[test]
fn every_report_section_is_named_in_the_help_and_the_store_doc() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quietstat"))
        .args(["report", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let source = &help[help.find("--source").expect("report --help has --source")..];
    let source = &source[..source.find("\n  -").unwrap_or(source.len())];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/store.md")).unwrap();
    let list = &doc[doc
        .find("\nSections: ")
        .expect("docs/store.md lists the Sections:")..];
    let list = &list[..list.find("`--format").unwrap_or(list.len())];
    let (in_help, in_doc) = (words(source), words(list));
    for name in report::names() {
        assert!(
            in_help.contains(name),
            "report --help's --source does not name the section {name}:\n{source}"
        );
        assert!(
            in_doc.contains(name),
            "docs/store.md's list of sections does not name {name}:\n{list}"
        );
    }
}
