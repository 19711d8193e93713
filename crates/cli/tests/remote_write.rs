//! Remote write from the history, against real receivers started here
//! (Debian's Prometheus and VictoriaMetrics) and a receiver of our own
//! that answers as told: what is pushed is what `/metrics` served, an
//! outage or a kill -9 loses no recorded read, and a receiver that fails
//! is counted and logged while sampling and scraping go on.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::agent::{Agent, get};
use common::remote::{Fake, Mode, Receiver};
use common::store::{dirs, metric, now_ms, recording_agent, stat_times, stop, tables, walks};
use common::wait_for;

/// A series every agent records (the stat source, read every second).
const CPU0_USER: &str = r#"node_cpu_seconds_total{cpu="0",mode="user"}"#;

/// `[[remote_write]]` tables: (name, url, extra lines).
fn receivers(receivers: &[(&str, &str, &str)]) -> String {
    receivers
        .iter()
        .map(|(name, url, extra)| {
            format!(
                "[[remote_write]]\nname = \"{name}\"\nurl = \"{url}\"\n{extra}\n[remote_write.external_labels]\ninstance = \"test\"\n"
            )
        })
        .collect()
}

/// An agent recording to `store` (flushing each second, a process table
/// each second, a walk of the cgroups every 2 seconds) and pushing to the
/// `[[remote_write]]` tables `tables`,
/// `store_keys` more keys of `[store]`. Its overhead budget is 20% of a
/// core: a receiver's share of it, half, lets a debug build catch up a
/// minute of reads in seconds (the release build's costs are a tenth).
fn pusher(store: &std::path::Path, shm: &std::path::Path, store_keys: &str, tables: &str) -> Agent {
    let cfg = format!(
        "overhead_budget_pct = 20.0\n[store]\nflush_interval = \"1s\"\nprocess_interval = \"1s\"\n{store_keys}\n{tables}\n[sources.processes]\ninterval = \"1s\"\n[sources.cgroups]\ninterval = \"2s\"\n"
    );
    recording_agent(store, shm, &cfg, "procfs", |_| {})
}

fn receiver_metric(a: &Agent, family: &str, receiver: &str, more: &str) -> f64 {
    metric(a, &format!("{family}{{receiver=\"{receiver}\"{more}}}")).unwrap_or(0.0)
}

/// True once the receiver's position is within `secs` of now.
fn caught_up(a: &Agent, receiver: &str, secs: f64) -> bool {
    metric(
        a,
        &format!("quietstat_remote_write_position_age_seconds{{receiver=\"{receiver}\"}}"),
    )
    .is_some_and(|age| age < secs)
        && receiver_metric(a, "quietstat_remote_write_up", receiver, "") == 1.0
}

/// The value `/metrics` serves for `series`.
fn scraped(body: &str, series: &str) -> f64 {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("/metrics has no {series}"))
}

/// `(time, value)` of what `r` holds of `series` in [from, to] (Unix ms).
fn held(r: &Receiver, series: &str, (from, to): (u64, u64)) -> Vec<(i64, f64)> {
    let span = (to - from) / 1000 + 10;
    r.samples(series, span, to / 1000 + 1)
        .into_iter()
        .filter(|p| (from as i64..=to as i64).contains(&p.0))
        .collect()
}

/// The recorded walks of the cgroups and process tables in [from, to]
/// (Unix ms), each a time and a count, against what `r` holds of their
/// count families: those it lacks, or holds with another count.
fn lacking(
    store: &std::path::Path,
    r: &Receiver,
    (from, to): (u64, u64),
) -> Vec<(&'static str, u64, usize)> {
    let mut out = Vec::new();
    for (family, records) in [
        ("quietstat_cgroups", walks(store)),
        ("quietstat_processes", tables(store)),
    ] {
        let got = held(r, &format!("{family}{{instance=\"test\"}}"), (from, to));
        for (t, n) in records.into_iter().filter(|x| (from..=to).contains(&x.0)) {
            if !got.contains(&(t as i64, n as f64)) {
                out.push((family, t, n));
            }
        }
    }
    out
}

/// The recorded reads of the stat source in [from, to] (Unix ms).
fn recorded(store: &std::path::Path, from: u64, to: u64) -> Vec<i64> {
    stat_times(store)
        .into_iter()
        .filter(|t| (from..=to).contains(t))
        .map(|t| t as i64)
        .collect()
}

#[test]
fn prometheus_and_victoria_metrics_get_what_was_scraped_and_every_read_across_a_two_minute_outage()
{
    let (_d, store, shm) = dirs();
    let rd = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(rd.path().join("p")).unwrap();
    std::fs::create_dir_all(rd.path().join("v")).unwrap();
    let mut prom = Receiver::prometheus(&rd.path().join("p"));
    let mut vm = Receiver::victoria(&rd.path().join("v"));
    let fake = Fake::start(Mode::Take);
    let cfg = receivers(&[
        ("prom", &prom.url(), ""),
        ("vm", &vm.url(), ""),
        ("fake", &fake.url(), ""),
    ]);
    let a = pusher(&store, &shm, "", &cfg);
    let started = now_ms();
    assert!(
        wait_for(Duration::from_secs(60), || caught_up(&a, "prom", 5.0)
            && caught_up(&a, "vm", 5.0)
            && receiver_metric(
                &a,
                "quietstat_remote_write_sent_samples_total",
                "vm",
                ""
            ) > 0.0),
        "nothing acknowledged within a minute"
    );

    // What a scrape serves reaches both, with the same value: families of
    // recorded sources from the history, the others live.
    let body = get(a.addr, "/metrics", None).body;
    let series = [
        CPU0_USER,
        "node_load1",
        "node_memory_MemFree_bytes",
        "node_context_switches_total",
        r#"node_network_receive_bytes_total{device="lo"}"#,
        "node_filefd_allocated",
        "node_vmstat_pgfault",
        // From the walks of the cgroups.
        r#"container_cpu_usage_seconds_total{id="/"}"#,
    ];
    for s in series {
        let want = scraped(&body, s);
        let sel = match s.split_once('{') {
            Some((name, rest)) => format!("{name}{{instance=\"test\",{rest}"),
            None => format!("{s}{{instance=\"test\"}}"),
        };
        for r in [&prom, &vm] {
            // VictoriaMetrics keeps 12 significant decimal digits of a
            // value (its storage format); Prometheus keeps the float.
            let same = |v: f64| {
                if r.lossy() {
                    (v - want).abs() <= want.abs() * 1e-12
                } else {
                    v == want
                }
            };
            assert!(
                wait_for(Duration::from_secs(60), || r
                    .samples(&sel, 120, now_ms() / 1000 + 1)
                    .iter()
                    .any(|(_, v)| same(*v))),
                "{sel} = {want} did not reach port {}: it has {:?}",
                r.port,
                r.samples(&sel, 120, now_ms() / 1000 + 1)
            );
        }
    }
    // A family of a source the history does not record: sent live.
    for r in [&prom, &vm] {
        assert!(
            wait_for(Duration::from_secs(60), || !r
                .samples(
                    "node_uname_info{instance=\"test\",job=\"node\"}",
                    120,
                    now_ms() / 1000 + 1
                )
                .is_empty()),
            "node_uname_info did not reach port {}",
            r.port
        );
    }

    // Both down for two minutes, then back on the same data.
    let down = now_ms();
    prom.stop();
    vm.stop();
    assert!(wait_for(Duration::from_secs(60), || receiver_metric(
        &a,
        "quietstat_remote_write_up",
        "prom",
        ""
    ) == 0.0
        && receiver_metric(&a, "quietstat_remote_write_up", "vm", "")
            == 0.0));
    std::thread::sleep(
        Duration::from_secs(120).saturating_sub(Duration::from_millis(now_ms() - down)),
    );
    prom.start();
    vm.start();
    assert!(
        wait_for(Duration::from_secs(120), || caught_up(&a, "prom", 3.0)
            && caught_up(&a, "vm", 3.0)),
        "not caught up within two minutes of the receivers' return: {:?}",
        get(a.addr, "/metrics", None)
            .body
            .lines()
            .filter(|l| l.starts_with("quietstat_remote_write"))
            .collect::<Vec<_>>()
    );
    let end = now_ms() - 4_000;
    let figures: Vec<String> = get(a.addr, "/metrics", None)
        .body
        .lines()
        .filter(|l| l.starts_with("quietstat_remote_write"))
        .map(String::from)
        .collect();
    let lines = stop(a);
    // Every read recorded from before the outage to its end is in each
    // receiver, once.
    let want = recorded(&store, started + 5_000, end);
    assert!(want.len() > 120, "{} reads recorded", want.len());
    let sel = r#"node_cpu_seconds_total{cpu="0",mode="user",instance="test"}"#;
    let span = (end - started) / 1000 + 10;
    let missing = |r: &Receiver| -> Vec<i64> {
        let got: Vec<i64> = r
            .samples(sel, span, end / 1000 + 1)
            .into_iter()
            .map(|p| p.0)
            .collect();
        want.iter().filter(|t| !got.contains(t)).copied().collect()
    };
    for r in [&prom, &vm] {
        // A receiver shows what it took within seconds (VictoriaMetrics
        // makes a request searchable about a second after it answered).
        wait_for(Duration::from_secs(30), || missing(r).is_empty());
        let m = missing(r);
        assert!(
            m.is_empty(),
            "port {}: {} of {} recorded reads missing: {m:?} (outage from {down}); {figures:#?}",
            r.port,
            m.len(),
            want.len(),
        );
        let all = r.samples(sel, span, end / 1000 + 1);
        let inside = all
            .iter()
            .filter(|p| (started as i64 + 5_000..=end as i64).contains(&p.0))
            .count();
        assert_eq!(inside, want.len(), "port {}: reads not recorded", r.port);
        // Every walk of the cgroups and every process table, with the
        // count recorded.
        let window = (started + 5_000, end);
        wait_for(Duration::from_secs(30), || {
            lacking(&store, r, window).is_empty()
        });
        let l = lacking(&store, r, window);
        assert!(
            l.is_empty(),
            "port {}: {} walks and tables missing or wrong: {l:?}",
            r.port,
            l.len()
        );
    }
    let (w, t) = (walks(&store), tables(&store));
    let inside = |x: &&(u64, usize)| (started + 5_000..=end).contains(&x.0);
    assert!(
        w.iter().filter(inside).count() > 60,
        "{} walks recorded",
        w.len()
    );
    assert!(
        t.iter().filter(inside).count() > 120,
        "{} tables recorded",
        t.len()
    );
    // Our own receiver saw each read once, nothing twice.
    let ours =
        fake.times(r#"node_cpu_seconds_total{cpu="0",instance="test",job="node",mode="user"}"#);
    let ours_in: Vec<i64> = ours
        .into_iter()
        .filter(|t| (started as i64 + 5_000..=end as i64).contains(t))
        .collect();
    assert_eq!(ours_in, want, "our own receiver");
    for name in ["prom", "vm"] {
        assert!(
            lines
                .iter()
                .any(|l| l.contains(&format!("remote write {name}: down ("))),
            "no line said {name} was down: {lines:#?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains(&format!("remote write {name}: up again"))),
            "no line said {name} was back: {lines:#?}"
        );
    }
}

#[test]
fn a_kill_during_an_outage_loses_no_recorded_read_and_resends_at_most_one_request() {
    let (_d, store, shm) = dirs();
    let rd = tempfile::tempdir().unwrap();
    let mut prom = Receiver::prometheus(rd.path());
    let fake = Fake::start(Mode::Take);
    let cfg = receivers(&[
        ("fake", &fake.url(), "max_samples_per_send = 1000\n"),
        ("prom", &prom.url(), "max_samples_per_send = 1000\n"),
    ]);
    let a = pusher(&store, &shm, "", &cfg);
    let started = now_ms();
    assert!(wait_for(Duration::from_secs(60), || caught_up(
        &a, "fake", 5.0
    ) && caught_up(
        &a, "prom", 5.0
    )));
    std::thread::sleep(Duration::from_secs(5));
    fake.set(Mode::Status(503, Vec::new(), "down".into()));
    prom.stop();
    assert!(wait_for(Duration::from_secs(60), || receiver_metric(
        &a,
        "quietstat_remote_write_up",
        "fake",
        ""
    ) == 0.0
        && receiver_metric(&a, "quietstat_remote_write_up", "prom", "")
            == 0.0));
    std::thread::sleep(Duration::from_secs(10));
    let mut a = a;
    a.proc.signal(libc::SIGKILL);
    assert!(a.proc.wait(Duration::from_secs(10)).is_some());
    drop(a);
    let b = pusher(&store, &shm, "", &cfg);
    std::thread::sleep(Duration::from_secs(5));
    fake.set(Mode::Take);
    prom.start();
    assert!(
        wait_for(Duration::from_secs(120), || caught_up(&b, "fake", 3.0)
            && caught_up(&b, "prom", 3.0)),
        "not caught up within two minutes: {:?}",
        get(b.addr, "/metrics", None)
            .body
            .lines()
            .filter(|l| l.starts_with("quietstat_remote_write"))
            .collect::<Vec<_>>()
    );
    let end = now_ms() - 4_000;
    stop(b);
    let want = recorded(&store, started + 3_000, end);
    let got =
        fake.times(r#"node_cpu_seconds_total{cpu="0",instance="test",job="node",mode="user"}"#);
    let have: BTreeSet<i64> = got.iter().copied().collect();
    let missing: Vec<&i64> = want.iter().filter(|t| !have.contains(t)).collect();
    assert!(
        missing.is_empty(),
        "{} of {} recorded reads never sent, first {:?}",
        missing.len(),
        want.len(),
        &missing[..missing.len().min(5)]
    );
    // The real receiver, stopped and started again around the kill, holds
    // every read, walk and table.
    let sel = r#"node_cpu_seconds_total{cpu="0",mode="user",instance="test"}"#;
    let window = (started + 3_000, end);
    let gaps = || -> (Vec<i64>, Vec<(&'static str, u64, usize)>) {
        let got: BTreeSet<i64> = held(&prom, sel, window).iter().map(|p| p.0).collect();
        let reads = want.iter().filter(|t| !got.contains(t)).copied().collect();
        (reads, lacking(&store, &prom, window))
    };
    wait_for(Duration::from_secs(30), || {
        let g = gaps();
        g.0.is_empty() && g.1.is_empty()
    });
    let (reads, others) = gaps();
    assert!(
        reads.is_empty() && others.is_empty(),
        "prometheus lacks {} of {} reads ({:?}) and {} walks and tables ({:?})",
        reads.len(),
        want.len(),
        &reads[..reads.len().min(5)],
        others.len(),
        &others[..others.len().min(5)]
    );
    // Sent twice: at most what one request held.
    let kept = fake.kept.lock().unwrap();
    let twice: usize = kept.values().map(|v| v.len().saturating_sub(1)).sum();
    assert!(twice <= 1000, "{twice} samples sent more than once");
}

#[test]
fn receivers_that_fail_are_counted_and_logged_and_sampling_and_scraping_go_on() {
    let (_d, store, shm) = dirs();
    let f500 = Fake::start(Mode::Status(500, Vec::new(), "boom".into()));
    let f429 = Fake::start(Mode::Status(
        429,
        vec![("Retry-After".into(), "1".into())],
        "slow down".into(),
    ));
    let f400 = Fake::start(Mode::Status(400, Vec::new(), "bad labels".into()));
    let hang = Fake::start(Mode::Hang);
    // A receiver whose certificate no CA of this machine signed: an agent
    // of ours serving TLS with the tests' certificate.
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let web = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        web.path(),
        format!(
            "tls_server_config:\n  cert_file: {}\n  key_file: {}\n",
            data.join("server.crt").display(),
            data.join("server.key").display()
        ),
    )
    .unwrap();
    let tls = common::agent::agent("", &["--web.config.file", web.path().to_str().unwrap()]);
    let cfg = receivers(&[
        ("f500", &f500.url(), ""),
        ("f429", &f429.url(), ""),
        ("f400", &f400.url(), ""),
        ("hang", &hang.url(), "timeout = \"2s\"\n"),
        ("dns", "http://no-such-host.invalid:9201/api/v1/write", ""),
        (
            "tls",
            &format!("https://127.0.0.1:{}/api/v1/write", tls.addr.port()),
            "",
        ),
    ]);
    let a = pusher(&store, &shm, "", &cfg);
    let failed = |r: &str, why: &str| {
        receiver_metric(
            &a,
            "quietstat_remote_write_failed_requests_total",
            r,
            &format!(",why=\"{why}\""),
        )
    };
    for (r, why) in [
        ("f500", "http_5xx"),
        ("f429", "http_429"),
        ("hang", "timeout"),
        ("dns", "dns"),
        ("tls", "tls"),
    ] {
        assert!(
            wait_for(Duration::from_secs(60), || failed(r, why) > 0.0),
            "{r}: no failed request counted as {why}"
        );
    }
    assert!(
        wait_for(Duration::from_secs(60), || receiver_metric(
            &a,
            "quietstat_remote_write_dropped_samples_total",
            "f400",
            ",reason=\"rejected\""
        ) > 0.0),
        "f400: no samples counted as rejected"
    );
    // 429 with Retry-After: 1 is tried again at the next flush after it.
    assert!(wait_for(Duration::from_secs(30), || failed(
        "f429", "http_429"
    ) >= 3.0));
    // Sampling and scraping go on: the stat source keeps its schedule and
    // a scrape is answered at once while a receiver hangs.
    let reads = |a: &Agent| metric(a, r#"quietstat_source_reads_total{source="stat"}"#).unwrap();
    let before = reads(&a);
    std::thread::sleep(Duration::from_secs(5));
    let t = std::time::Instant::now();
    let after = reads(&a);
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "a scrape took {:?}",
        t.elapsed()
    );
    assert!(
        after >= before + 3.0,
        "stat read {before} then {after} times in 5 s"
    );
    let lines = stop(a);
    for (r, what) in [
        ("f500", "down (http_5xx"),
        ("f429", "down (http_429"),
        ("hang", "down (timeout"),
        ("dns", "down (dns"),
        ("tls", "down (tls"),
        ("f400", "refused"),
    ] {
        assert!(
            lines
                .iter()
                .any(|l| l.contains(&format!("remote write {r}: {what}"))),
            "no line says {r}: {what}; the log: {lines:#?}"
        );
    }
    // The hanging receiver held no request past its timeout.
    assert!(*hang.requests.lock().unwrap() >= 2);
}

#[test]
fn newest_first_sends_the_present_before_the_gap_and_fills_the_gap_whole() {
    let (_d, store, shm) = dirs();
    let fake = Fake::start(Mode::Take);
    let cfg = receivers(&[("fake", &fake.url(), "send_order = \"newest-first\"\n")]);
    let a = pusher(&store, &shm, "", &cfg);
    let started = now_ms();
    assert!(wait_for(Duration::from_secs(60), || caught_up(
        &a, "fake", 5.0
    )));
    fake.set(Mode::Status(503, Vec::new(), "down".into()));
    let down = now_ms();
    std::thread::sleep(Duration::from_secs(30));
    let up = now_ms();
    let before = fake.spans.lock().unwrap().len();
    fake.set(Mode::Take);
    assert!(
        wait_for(Duration::from_secs(120), || caught_up(&a, "fake", 3.0)),
        "not caught up within two minutes"
    );
    let end = now_ms() - 4_000;
    stop(a);
    // The first request after the outage holding reads recorded during it
    // comes after one holding reads recorded after it.
    let spans = fake.spans.lock().unwrap()[before..].to_vec();
    let first_gap = spans
        .iter()
        .position(|s| s.0 < up as i64 - 2_000)
        .expect("the gap was sent");
    assert!(
        spans[..first_gap].iter().any(|s| s.0 >= up as i64 - 2_000),
        "the gap went first: {spans:?} (down {down}, up {up})"
    );
    let got =
        fake.times(r#"node_cpu_seconds_total{cpu="0",instance="test",job="node",mode="user"}"#);
    let want = recorded(&store, started + 3_000, end);
    let missing: Vec<&i64> = want.iter().filter(|t| !got.contains(t)).collect();
    assert!(
        missing.is_empty(),
        "{} of {} reads never sent: {missing:?}",
        missing.len(),
        want.len()
    );
}

#[test]
fn reads_the_retention_removes_before_they_are_sent_are_counted_as_dropped() {
    let (_d, store, shm) = dirs();
    let fake = Fake::start(Mode::Status(503, Vec::new(), "down".into()));
    let cfg = receivers(&[("fake", &fake.url(), "")]);
    let a = pusher(&store, &shm, "max_size = \"256KiB\"", &cfg);
    let started = now_ms();
    // Down until the size cap has removed the first reads recorded.
    assert!(
        wait_for(Duration::from_secs(240), || stat_times(&store)
            .first()
            .is_some_and(|t| *t > started + 2_000)),
        "the size cap removed nothing in four minutes"
    );
    fake.set(Mode::Take);
    assert!(
        wait_for(Duration::from_secs(120), || caught_up(&a, "fake", 3.0)),
        "not caught up within two minutes"
    );
    let dropped = receiver_metric(
        &a,
        "quietstat_remote_write_dropped_samples_total",
        "fake",
        ",reason=\"retention\"",
    );
    let end = now_ms() - 4_000;
    let lines = stop(a);
    assert!(dropped > 0.0, "nothing counted as dropped by the retention");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("remote write fake:")
                && l.contains("removed by the store's retention")),
        "no line says what the retention removed: {lines:#?}"
    );
    // What the store still holds was sent, all of it.
    let kept = stat_times(&store);
    let first = *kept.first().unwrap();
    let want = recorded(&store, first, end);
    let got =
        fake.times(r#"node_cpu_seconds_total{cpu="0",instance="test",job="node",mode="user"}"#);
    let missing: Vec<&i64> = want.iter().filter(|t| !got.contains(t)).collect();
    assert!(
        missing.is_empty(),
        "{} of {} kept reads never sent: {missing:?}",
        missing.len(),
        want.len()
    );
}
