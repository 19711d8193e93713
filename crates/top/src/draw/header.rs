//! The header: the machine's figures above the list, as bars and lines.

use model::system::SystemRates;

use super::*;

/// A bar `[|||||    23%]` of `width` characters for a percentage split
/// into user-like and system-like parts.
pub(super) fn bar<'a>(
    user: f64,
    system: f64,
    width: usize,
    label: String,
    s: &Styles,
) -> Vec<Span<'a>> {
    let inner = width.saturating_sub(2);
    let total = (user + system).clamp(0.0, 100.0);
    let text = format!("{total:.0}%");
    let fill_u = ((user.clamp(0.0, 100.0) / 100.0) * inner as f64).round() as usize;
    let fill_s = ((total / 100.0) * inner as f64).round() as usize;
    let fill_s = fill_s.saturating_sub(fill_u);
    // The figure is always shown: a full bar leaves room for it.
    let room_for_bar = inner.saturating_sub(text.len());
    let used = (fill_u + fill_s).min(room_for_bar);
    let fill_u = fill_u.min(used);
    let free = inner - used;
    // The figure is written over the free end.
    let room = free.saturating_sub(text.len());
    let mut spans = vec![Span::styled(label, s.label), Span::raw("[")];
    spans.push(Span::styled("|".repeat(fill_u.min(inner)), s.bar_user));
    spans.push(Span::styled(
        "|".repeat(used - fill_u.min(inner)),
        s.bar_sys,
    ));
    if free >= text.len() {
        spans.push(Span::raw(" ".repeat(room)));
        spans.push(Span::raw(text));
    } else {
        spans.push(Span::raw(" ".repeat(free)));
    }
    spans.push(Span::raw("]"));
    spans
}

pub(super) fn header_lines(app: &App, width: u16, s: &Styles) -> Vec<Line<'static>> {
    let rates = app.rates.as_ref();
    let mut out = vec![title_line(app, s)];
    cpu_lines(app, width, s, &mut out);
    out.push(memory_line(rates, s));
    out.push(io_line(rates, app.counts, s));
    out
}

/// Where the data comes from and when, the uptime, load and tasks.
fn title_line(app: &App, s: &Styles) -> Line<'static> {
    let rates = app.rates.as_ref();
    let sys = app.system();
    // Line 1: where the data comes from and when.
    let when_ms = sys.map_or(0, |s| s.unix_ns / 1_000_000);
    let mode = match (&app.origin, app.replay) {
        (_, Some((at, _))) => {
            let now = sys::unix_ns() / 1_000_000;
            format!(
                "REPLAY {} (-{})",
                store::when::format(at, true),
                store::when::span(now.saturating_sub(at))
            )
        }
        (Origin::Agent { procs_every, .. }, _) => format!(
            "{} LIVE agent{}",
            store::when::format(when_ms, false),
            if procs_every.is_zero() {
                String::new()
            } else {
                format!(" {}s", procs_every.as_secs_f64().round())
            }
        ),
        (Origin::Own { backend }, _) => format!(
            "{} LIVE own {backend} {}s",
            store::when::format(when_ms, false),
            app.refresh.as_secs_f64()
        ),
        (Origin::Replay, None) => "REPLAY".into(),
    };
    let up = sys
        .filter(|s| s.ok(procfs::Source::Stat) && s.stat.btime_secs > 0)
        .map(|s| {
            let now_s = s.unix_ns / 1_000_000_000;
            format!(
                " up {}",
                store::when::span(now_s.saturating_sub(s.stat.btime_secs) * 1000)
            )
        })
        .unwrap_or_default();
    let load = rates
        .and_then(|r| {
            Some(format!(
                "  load {:.2} {:.2} {:.2}",
                r.load1?, r.load5?, r.load15?
            ))
        })
        .unwrap_or_default();
    let c = app.counts;
    let paused = if app.paused { " PAUSED" } else { "" };
    Line::from(vec![
        Span::styled(format!("quietstat {}", app.host), s.label),
        Span::raw(format!("  {mode}{paused}{up}{load}  tasks {}", c.procs)),
    ])
}

/// All CPUs with pressure and threads, then a bar per CPU, or a strip
/// of them on a machine with many.
fn cpu_lines(app: &App, width: u16, s: &Styles, out: &mut Vec<Line<'static>>) {
    let rates = app.rates.as_ref();
    let c = app.counts;
    // Line 2: all CPUs, pressure.
    let psi: String = rates
        .map(|r| {
            r.pressure
                .iter()
                .filter(|p| p.resource != procfs::pressure::Resource::Irq)
                .map(|p| {
                    let name = match p.resource {
                        procfs::pressure::Resource::Memory => "mem",
                        other => other.name(),
                    };
                    format!(" {name} {}", pct(p.some_pct))
                })
                .collect()
        })
        .unwrap_or_default();
    let all = rates.and_then(|r| r.cpu_all.as_ref());
    let (u, sy) = all.map_or((0.0, 0.0), cpu_split);
    let psi = if psi.is_empty() {
        String::new()
    } else {
        format!(" psi{psi}")
    };
    let psi = format!("{psi}  thr {} run {}", c.threads, c.running);
    let bar_w = (width as usize).saturating_sub(5 + psi.len()).clamp(10, 60);
    let mut l2 = bar(u, sy, bar_w, "cpu ".into(), s);
    l2.push(Span::raw(psi));
    out.push(Line::from(l2));
    // Per-CPU bars, or a strip.
    if let Some(r) = rates {
        let n = r.cpus.len();
        if n <= BARS_PER_LINE * MAX_BAR_LINES {
            let per = BARS_PER_LINE.min(n.max(1));
            let w = ((width as usize) / per).clamp(8, 20);
            for chunk in r.cpus.chunks(per) {
                let mut spans = Vec::new();
                for c in chunk {
                    let (u, sy) = cpu_split(c);
                    let label = format!("{}", c.cpu.unwrap_or(0));
                    let bw = w.saturating_sub(label.len() + 1);
                    spans.extend(bar(u, sy, bw, label, s));
                    spans.push(Span::raw(" "));
                }
                out.push(Line::from(spans));
            }
        } else {
            let per = STRIP_PER_LINE.min((width as usize).saturating_sub(10).max(8));
            for (i, chunk) in r.cpus.chunks(per).enumerate() {
                let strip: String = chunk
                    .iter()
                    .map(|c| {
                        let (u, sy) = cpu_split(c);
                        let lvl = (((u + sy) / 100.0) * (STRIP.len() - 1) as f64).round() as usize;
                        STRIP[lvl.min(STRIP.len() - 1)] as char
                    })
                    .collect();
                let first = chunk.first().and_then(|c| c.cpu).unwrap_or(0);
                out.push(Line::from(vec![
                    Span::styled(format!("{first:>4} "), s.label),
                    Span::raw(strip),
                    Span::raw(if i == 0 {
                        format!("  {n} CPUs")
                    } else {
                        String::new()
                    }),
                ]));
            }
        }
    }
}

/// Memory, swap and dirty pages.
fn memory_line(rates: Option<&SystemRates>, s: &Styles) -> Line<'static> {
    // Memory and swap.
    let mem = rates.map(|r| &r.memory);
    let used = mem.and_then(|m| Some(m.total_bytes?.saturating_sub(m.available_bytes?)));
    let total = mem.and_then(|m| m.total_bytes);
    let mut l = Vec::new();
    if let (Some(used), Some(total)) = (used, total) {
        let p = used as f64 * 100.0 / total.max(1) as f64;
        let mut b = bar(p, 0.0, 22, "mem ".into(), s);
        b.insert(
            1,
            Span::raw(format!("{}/{} ", bytes(used as f64), bytes(total as f64))),
        );
        l.extend(b);
    } else {
        l.push(Span::styled("mem ", s.label));
        l.push(Span::raw("-"));
    }
    if let Some(m) = mem
        && let (Some(t), Some(f)) = (m.swap_total_bytes, m.swap_free_bytes)
    {
        l.push(Span::styled(" swp ", s.label));
        l.push(Span::raw(format!(
            "{}/{}",
            bytes(t.saturating_sub(f) as f64),
            bytes(t as f64)
        )));
    }
    if let Some(d) = mem.and_then(|m| m.dirty_bytes) {
        l.push(Span::styled(" dirty ", s.label));
        l.push(Span::raw(bytes(d as f64)));
    }
    Line::from(l)
}

/// Disks, network, forks and exits.
fn io_line(rates: Option<&SystemRates>, c: crate::app::Counts, s: &Styles) -> Line<'static> {
    // Disks, network, forks and exits.
    let (dr, dw, util) = rates.map_or((None, None, None), |r| r.disk_totals());
    let (rx, tx) = rates.map_or((None, None), |r| r.net_totals());
    let forks = rates
        .and_then(|r| r.forks_per_sec)
        .map_or_else(|| "-".into(), |f| format!("{f:.0}/s"));
    Line::from(vec![
        Span::styled("disk ", s.label),
        Span::raw(format!(
            "r {} w {} util {}",
            opt_rate(dr),
            opt_rate(dw),
            util.map_or_else(|| "-".into(), |u| format!("{u:.0}%"))
        )),
        Span::styled("  net ", s.label),
        Span::raw(format!("rx {} tx {}", opt_rate(rx), opt_rate(tx))),
        Span::styled("  forks ", s.label),
        Span::raw(forks),
        Span::styled(" +", s.new),
        Span::raw(format!("{}", c.new)),
        Span::styled(" x", s.exited),
        Span::raw(format!("{}", c.exited)),
    ])
}

pub(super) fn cpu_split(c: &model::system::CpuPercent) -> (f64, f64) {
    let v = |x: Option<f64>| x.unwrap_or(0.0);
    (
        v(c.user) + v(c.nice),
        v(c.system) + v(c.irq) + v(c.softirq) + v(c.steal),
    )
}
