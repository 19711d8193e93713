//! Every metric family and every process field is named in one definition
//! (`exporter::metrics::FAMILIES`, `model::columns::ALL`); code elsewhere
//! refers to the definition, never to the name. This test reads the
//! sources of every crate (tests and `#[cfg(test)]` modules aside: they
//! check the output, which must carry the names) and fails on a string
//! literal that spells a defined name outside its definition, and on a
//! definition without help.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The non-test code of a file: up to its first `#[cfg(test)]`.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The lines of `text` outside the invocation of `macro_name! { ... }`.
fn outside(text: &str, macro_name: &str) -> String {
    let Some(start) = text.find(&format!("\n{macro_name}! {{")) else {
        return text.to_string();
    };
    let end = text[start..]
        .find("\n}\n")
        .map_or(text.len(), |e| start + e);
    format!("{}{}", &text[..start], &text[end..])
}

#[test]
fn no_metric_or_field_name_is_written_outside_its_definition() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for c in std::fs::read_dir(&crates).unwrap().flatten() {
        let src = c.path().join("src");
        if src.is_dir() {
            sources(&src, &mut files);
        }
    }
    assert!(files.len() > 50, "found only {} source files", files.len());
    let mut names: Vec<&str> = exporter::metrics::FAMILIES
        .iter()
        .map(|f| f.name)
        .filter(|n| !n.contains('*'))
        .collect();
    let families = names.len();
    // Field names that carry a unit or a qualifier are distinctive enough to
    // look for; bare words (`pid`, `comm`, `cpu`) are also label names.
    names.extend(
        model::columns::ALL
            .iter()
            .map(|c| c.name)
            .filter(|n| n.contains('_')),
    );
    let fields = names.len() - families;
    // A per-key family (`node_zfs_zpool_*`) is named through its definition
    // (`Family::instance_into`): no literal starts with its prefix.
    let prefixes: Vec<&str> = exporter::metrics::FAMILIES
        .iter()
        .filter_map(|f| Some(f.name.split_once('*')?.0))
        .collect();
    let mut found = Vec::new();
    for f in &files {
        let text = outside(&outside(&code(f), "families"), "columns");
        // procfs parses the kernel's files, whose own keys (`read_bytes:`
        // in /proc/PID/io) some field names repeat: it names those keys.
        // The walk's table of kernel members (`rt_priority` of task_struct)
        // names the kernel's structures the same way.
        let kernel_vocabulary = f.components().any(|c| c.as_os_str() == "procfs")
            || f.ends_with("proctable/src/bpf/reads.rs");
        let names = if kernel_vocabulary {
            &names[..families]
        } else {
            &names[..]
        };
        for n in names {
            if text.contains(&format!("\"{n}\"")) {
                found.push(format!("{}: \"{n}\"", f.display()));
            }
        }
        for p in &prefixes {
            if text.contains(&format!("\"{p}")) {
                found.push(format!("{}: \"{p}...", f.display()));
            }
        }
    }
    assert!(fields > 10, "{fields} field names looked for");
    assert!(
        found.is_empty(),
        "names written outside their definition (refer to the definition instead):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_definition_says_what_it_is() {
    for f in exporter::metrics::FAMILIES {
        assert!(f.help.len() > 10, "{}: help {:?}", f.name, f.help);
    }
    for c in model::columns::ALL {
        assert!(c.help.len() > 3, "{}: help {:?}", c.name, c.help);
    }
}
