//! The textfile source on real files: good files re-exported, a bad one
//! reported (scrape error, a log line naming file and line) without
//! stopping the others, and picked up once fixed.

use std::time::{Duration, Instant};

mod common;

use common::agent::*;
use common::store::reads;
use common::wait_for;

fn value(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn a_bad_textfile_is_reported_and_the_others_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(
        p.join("a.prom"),
        "# HELP queue_depth Items waiting.\n# TYPE queue_depth gauge\nqueue_depth{queue=\"mail\"} 7\n",
    )
    .unwrap();
    std::fs::write(p.join("b.prom"), "fine 1\nthis is not a sample\n").unwrap();
    std::fs::write(
        p.join("c.prom"),
        "# TYPE rpc_seconds histogram\nrpc_seconds_bucket{le=\"0.5\"} 3\nrpc_seconds_bucket{le=\"+Inf\"} 4\nrpc_seconds_sum 1.25\nrpc_seconds_count 4\n",
    )
    .unwrap();
    // Not *.prom: ignored, as node_exporter does.
    std::fs::write(p.join("notes.txt"), "garbage").unwrap();
    let a = agent(
        "[sources.textfile]\ninterval = \"200ms\"\n",
        &["--collector.textfile.directory", p.to_str().unwrap()],
    );
    let body = get(a.addr, "/metrics", None).body;
    assert_eq!(value(&body, "node_textfile_scrape_error"), Some(1.0));
    assert_eq!(value(&body, "queue_depth{queue=\"mail\"}"), Some(7.0));
    assert_eq!(value(&body, "rpc_seconds_bucket{le=\"+Inf\"}"), Some(4.0));
    assert_eq!(value(&body, "rpc_seconds_sum"), Some(1.25));
    assert!(body.contains("# TYPE queue_depth gauge"), "types kept");
    let b = p.join("b.prom").display().to_string();
    assert!(!body.contains("fine"), "nothing of the bad file is served");
    let mtime = |f: &str| {
        value(
            &body,
            &format!("node_textfile_mtime_seconds{{file=\"{f}\"}}"),
        )
    };
    assert!(mtime(&p.join("a.prom").display().to_string()).is_some_and(|t| t > 1e9));
    assert_eq!(mtime(&b), None);
    assert_eq!(
        value(
            &body,
            "node_scrape_collector_success{collector=\"textfile\"}"
        ),
        Some(1.0)
    );
    // One log line, naming the file and the line.
    let end = Instant::now() + Duration::from_secs(5);
    let want = format!("textfile: {b}: line 2:");
    let mut logged = a.early.clone();
    while !logged.iter().any(|l| l.contains(&want)) {
        assert!(Instant::now() < end, "{want} not logged: {logged:#?}");
        if let Ok(l) = a.log.recv_timeout(Duration::from_millis(100)) {
            logged.push(l);
        }
    }
    // Fixed, it is read at the next interval.
    std::fs::write(p.join("b.prom"), "fine 1\n").unwrap();
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        let body = get(a.addr, "/metrics", None).body;
        if value(&body, "node_textfile_scrape_error") == Some(0.0) {
            assert_eq!(value(&body, "fine"), Some(1.0));
            break;
        }
        assert!(Instant::now() < end, "the fixed file was not picked up");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Logged once while it lasted.
    let repeats = logged.iter().filter(|l| l.contains(&want)).count()
        + a.log.try_iter().filter(|l| l.contains(&want)).count();
    assert_eq!(repeats, 1);
}

#[test]
fn a_missing_directory_is_a_scrape_error_and_no_directory_is_none() {
    let a = agent("", &["--collector.textfile.directory", "/nonexistent/dir"]);
    let body = get(a.addr, "/metrics", None).body;
    assert_eq!(value(&body, "node_textfile_scrape_error"), Some(1.0));
    let a = agent("", &[]);
    let body = get(a.addr, "/metrics", None).body;
    assert_eq!(value(&body, "node_textfile_scrape_error"), Some(0.0));
}

/// A directory that takes long to parse (about 90,000 series, a second in
/// a debug build) is parsed on a thread of its own: stat, read every 100 ms,
/// keeps its rate; the whole directory is served even when the answer takes
/// longer to encode than the server's idle timeout; an oversized file is
/// refused by name and the others are served.
#[test]
fn a_large_directory_delays_no_other_source_and_an_oversized_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let mut big = String::from("# TYPE big gauge\n");
    let mut i = 0u64;
    while big.len() < 2 << 20 {
        big += &format!("big{{i=\"{i}\"}} {i}\n");
        i += 1;
    }
    std::fs::write(p.join("a.prom"), &big).unwrap();
    std::fs::write(p.join("b.prom"), vec![b'#'; 17 << 20]).unwrap();
    std::fs::write(p.join("c.prom"), "small 1\n").unwrap();
    let a = agent(
        "[sources.textfile]\ninterval = \"1s\"\n[sources.stat]\ninterval = \"100ms\"\n",
        &["--collector.textfile.directory", p.to_str().unwrap()],
    );
    let before = reads(&a, "stat");
    std::thread::sleep(Duration::from_secs(4));
    let during = reads(&a, "stat") - before;
    assert!(
        during >= 32.0,
        "{during} reads of stat in 4 s, every 100 ms"
    );
    // Served once a parse has finished (seconds, in a debug build on a
    // loaded machine: the first read waits one second at most).
    let mut body = String::new();
    assert!(
        wait_for(Duration::from_secs(120), || {
            body = get(a.addr, "/metrics", None).body;
            value(&body, "small").is_some()
        }),
        "the directory was never served"
    );
    assert_eq!(value(&body, "small"), Some(1.0));
    assert_eq!(value(&body, "big{i=\"0\"}"), Some(0.0));
    let last = format!("big{{i=\"{}\"}}", i - 1);
    assert_eq!(value(&body, &last), Some((i - 1) as f64), "{last} served");
    assert_eq!(value(&body, "node_textfile_scrape_error"), Some(1.0));
    let b = p.join("b.prom").display().to_string();
    let end = Instant::now() + Duration::from_secs(5);
    let mut logged = a.early.clone();
    while !logged
        .iter()
        .any(|l| l.contains(&b) && l.contains("larger than 16 MiB"))
    {
        assert!(Instant::now() < end, "{b} not named: {logged:#?}");
        if let Ok(l) = a.log.recv_timeout(Duration::from_millis(100)) {
            logged.push(l);
        }
    }
}

/// Files as scripts write them, each with node_exporter's verdict: served
/// (its `node_textfile_mtime_seconds` present) or refused. Debian's
/// node_exporter reads the same directory beside the agent, and both must
/// give the verdict the table holds.
#[test]
fn the_agent_accepts_and_refuses_the_textfiles_node_exporter_does() {
    let cases: &[(&str, &str, bool)] = &[
        (
            "bare",
            "testmetric1_1{foo=\"bar\"} 10\ntestmetric1_2{foo=\"baz\"} 20\n",
            true,
        ),
        (
            "typed",
            "# HELP jobs Jobs.\n# TYPE jobs counter\njobs{q=\"a\"} 1\njobs{q=\"b\"} 2\n",
            true,
        ),
        ("help_only", "# HELP temp A temperature.\ntemp 21.5\n", true),
        ("comments", "# a comment\n\n# another\nlonely 1\n\n", true),
        ("empty", "", true),
        (
            "special",
            "nan_value NaN\ninf_value +Inf\nneg_value -3e-2\n",
            true,
        ),
        ("escaped", "esc{l=\"a\\\"b\\\\c\\nd\"} 1\n", true),
        ("no_newline", "last_line 4", false),
        ("timestamp", "stamped 1 1700000000000\n", false),
        ("bad_name", "1abc 3\n", false),
        ("no_value", "novalue{a=\"b\"}\n", false),
        (
            "type_twice",
            "# TYPE twice gauge\n# TYPE twice gauge\ntwice 1\n",
            false,
        ),
        ("type_after", "late 1\n# TYPE late gauge\n", false),
        ("bad_type", "# TYPE odd meter\nodd 1\n", false),
        ("bad_value", "word one\n", false),
        ("unclosed", "open{a=\"b\" 1\n", false),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, text, _) in cases {
        std::fs::write(dir.path().join(format!("{name}.prom")), text).unwrap();
    }
    let flag = format!("--collector.textfile.directory={}", dir.path().display());
    let (_ne, naddr) = common::exposition::node_exporter(&[
        "--collector.disable-defaults",
        "--collector.textfile",
        &flag,
    ]);
    let theirs = get(naddr, "/metrics", None).body;
    let a = agent("", &[&flag]);
    let ours = get(a.addr, "/metrics", None).body;
    let served = |body: &str, name: &str| {
        let f = dir
            .path()
            .join(format!("{name}.prom"))
            .display()
            .to_string();
        value(
            body,
            &format!("node_textfile_mtime_seconds{{file=\"{f}\"}}"),
        )
        .is_some()
    };
    let mut wrong = Vec::new();
    for (name, _, verdict) in cases {
        let (t, o) = (served(&theirs, name), served(&ours, name));
        if t != *verdict || o != *verdict {
            wrong.push(format!(
                "{name}: table {verdict}, node_exporter {t}, agent {o}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // What both serve of the files both accept.
    for series in [
        "testmetric1_2{foo=\"baz\"}",
        "jobs{q=\"b\"}",
        "temp",
        "lonely",
    ] {
        assert_eq!(value(&ours, series), value(&theirs, series), "{series}");
        assert!(value(&ours, series).is_some(), "{series}");
    }
    assert_eq!(value(&ours, "node_textfile_scrape_error"), Some(1.0));
    assert_eq!(value(&theirs, "node_textfile_scrape_error"), Some(1.0));
}
