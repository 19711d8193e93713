//! Draws the view: a header (time and source, CPU, memory, load,
//! pressure, disks and network), the process list, and a key bar. At
//! 80x24 every line fits; a smaller terminal shows what fits and says so.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use model::columns::{NoExtra, Value};

use crate::app::{App, Col, Mark, Prompt};
use crate::feed::Origin;

/// The smallest size the layout is made for.
pub const MIN_W: u16 = 80;
pub const MIN_H: u16 = 24;
/// Per-CPU bars, six to a line, on at most two lines; past that a strip
/// of one character per CPU, 64 to a line.
const BARS_PER_LINE: usize = 6;
const MAX_BAR_LINES: usize = 2;
const STRIP_PER_LINE: usize = 64;
const STRIP: &[u8] = b" .:-=+*#%@";

pub use model::units::human_bytes as bytes;

fn opt_rate(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{}/s", bytes(v)))
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.1}"))
}

/// `name` for the well-known signals, else `SIG<n>`.
pub fn signal_name(sig: i32) -> String {
    const NAMES: [&str; 32] = [
        "", "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV",
        "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU",
        "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS",
    ];
    match NAMES.get(sig as usize) {
        Some(n) if !n.is_empty() => format!("SIG{n}"),
        _ => format!("SIG{sig}"),
    }
}

/// How an exited row ends: `[exit 3]`, `[SIGKILL]`, `[ended]`.
pub fn exit_note(status: Option<i32>) -> String {
    match status {
        None => "[ended]".into(),
        Some(s) if s & 0x7f == 0 => format!("[exit {}]", (s >> 8) & 0xff),
        Some(s) => format!(
            "[{}{}]",
            signal_name(s & 0x7f),
            if s & 0x80 != 0 { " core" } else { "" }
        ),
    }
}

struct Styles {
    label: Style,
    head: Style,
    new: Style,
    exited: Style,
    selected: Style,
    bar_user: Style,
    bar_sys: Style,
    warn: Style,
}

impl Styles {
    fn new(color: bool) -> Styles {
        if color {
            Styles {
                label: Style::new().fg(Color::Cyan),
                head: Style::new().fg(Color::Black).bg(Color::Green),
                new: Style::new().fg(Color::Green),
                exited: Style::new().fg(Color::DarkGray),
                selected: Style::new().fg(Color::Black).bg(Color::Cyan),
                bar_user: Style::new().fg(Color::Green),
                bar_sys: Style::new().fg(Color::Red),
                warn: Style::new().fg(Color::Yellow),
            }
        } else {
            // NO_COLOR: bold, dim and reverse only.
            Styles {
                label: Style::new().add_modifier(Modifier::BOLD),
                head: Style::new().add_modifier(Modifier::REVERSED),
                new: Style::new().add_modifier(Modifier::BOLD),
                exited: Style::new().add_modifier(Modifier::DIM),
                selected: Style::new().add_modifier(Modifier::REVERSED),
                bar_user: Style::new(),
                bar_sys: Style::new(),
                warn: Style::new().add_modifier(Modifier::BOLD),
            }
        }
    }
}

/// A bar `[|||||    23%]` of `width` characters for a percentage split
/// into user-like and system-like parts.
fn bar<'a>(user: f64, system: f64, width: usize, label: String, s: &Styles) -> Vec<Span<'a>> {
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

fn header_lines(app: &App, width: u16, s: &Styles) -> Vec<Line<'static>> {
    let mut out = Vec::new();
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
    out.push(Line::from(vec![
        Span::styled(format!("quietstat {}", app.host), s.label),
        Span::raw(format!("  {mode}{paused}{up}{load}  tasks {}", c.procs)),
    ]));
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
    out.push(Line::from(l));
    // Disks, network, forks and exits.
    let (dr, dw, util) = rates.map_or((None, None, None), |r| r.disk_totals());
    let (rx, tx) = rates.map_or((None, None), |r| r.net_totals());
    let forks = rates
        .and_then(|r| r.forks_per_sec)
        .map_or_else(|| "-".into(), |f| format!("{f:.0}/s"));
    out.push(Line::from(vec![
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
    ]));
    out
}

fn cpu_split(c: &model::system::CpuPercent) -> (f64, f64) {
    let v = |x: Option<f64>| x.unwrap_or(0.0);
    (
        v(c.user) + v(c.nice),
        v(c.system) + v(c.irq) + v(c.softirq) + v(c.steal),
    )
}

/// The columns that fit in `width`, in order.
pub fn visible_columns(app: &App, width: u16) -> Vec<Col> {
    let mut cols: Vec<Col> = Col::ALL
        .iter()
        .copied()
        .filter(|&c| c != Col::Cgroup || app.cgroup_col)
        .collect();
    let need = |cols: &[Col]| -> u16 {
        // A mark column, one space between columns, and 12 for the command.
        1 + cols.iter().map(|c| c.width() + 1).sum::<u16>() + 12
    };
    while need(&cols) > width {
        let Some((i, _)) = cols
            .iter()
            .enumerate()
            .filter(|(_, c)| c.drop_order() > 0)
            .max_by_key(|(_, c)| c.drop_order())
        else {
            break;
        };
        cols.remove(i);
    }
    cols
}

/// A cell: the column's process field as `model` gives it, or a figure
/// computed here (`ColSpec::field` says which).
fn cell(app: &App, it: &crate::app::Item, c: Col) -> String {
    let p = app.proc_of(it);
    let absent = || "-".to_string();
    if c.spec().live_only && matches!(it.mark, Mark::Exited(_)) {
        return absent();
    }
    match c {
        Col::User => p.uid.map_or_else(absent, |u| {
            app.users
                .known(u)
                .map_or_else(|| u.to_string(), str::to_string)
        }),
        Col::Pri if p.priority < 0 && p.policy != 0 => "RT".into(),
        Col::Cpu => it.cpu.map_or_else(absent, |v| format!("{v:.1}")),
        Col::Mem => app
            .mem_pct(p.rss_bytes)
            .map_or_else(absent, |v| format!("{v:.1}")),
        Col::Rss => bytes(p.rss_bytes as f64),
        Col::Read => it.read.map_or_else(absent, bytes),
        Col::Write => it.write.map_or_else(absent, bytes),
        Col::Start => start_time(app, p.start_ticks),
        Col::Time => {
            let cs = (p.utime_ns + p.stime_ns) / 10_000_000;
            let (m, rest) = (cs / 6000, cs % 6000);
            if m >= 600 {
                format!("{}h{:02}", m / 60, m % 60)
            } else {
                format!("{m}:{:02}.{:02}", rest / 100, rest % 100)
            }
        }
        Col::Cgroup => p
            .cgroup_id
            .map_or_else(absent, |id| match app.cgroups.known(id) {
                Some(path) => model::text::printable(path).into_owned(),
                None => id.to_string(),
            }),
        Col::Command => {
            // How it ended comes first, where a narrow screen keeps it.
            let ended = match it.mark {
                Mark::Exited(st) => format!("{} ", exit_note(st)),
                _ => String::new(),
            };
            let mut s = format!(
                "{}{ended}{}",
                it.branch,
                model::text::printable(&app.command(p))
            );
            if it.folded > 0 {
                s.push_str(&format!(" [+{}]", it.folded));
            }
            s
        }
        c => match c.spec().field.map(|f| f.value(p, &NoExtra)) {
            Some(v) if v != Value::Absent => v.to_string(),
            _ => absent(),
        },
    }
}

/// When a process started: `HH:MM` today, else the month and day.
fn start_time(app: &App, start_ticks: u64) -> String {
    let Some(sys) = app.system().filter(|s| s.stat.btime_secs > 0) else {
        return "-".into();
    };
    if start_ticks == 0 {
        return "-".into();
    }
    let secs = model::units::boot_ticks_to_unix_secs(sys.stat.btime_secs, start_ticks);
    let ms = (secs * 1000.0) as u64;
    let now = sys.unix_ns / 1_000_000;
    let full = store::when::format(ms, true);
    if now.saturating_sub(ms) < 86_400_000 {
        full[11..16].to_string()
    } else {
        full[5..10].to_string()
    }
}

fn fit(s: &str, w: usize, right: bool) -> String {
    let n = s.chars().count();
    if n > w {
        // Too wide: the end of a number is kept, the start of text.
        if right {
            s.chars().skip(n - w).collect()
        } else {
            s.chars().take(w).collect()
        }
    } else if right {
        format!("{s:>w$}")
    } else {
        format!("{s:<w$}")
    }
}

/// Draws the whole view.
pub fn draw(f: &mut Frame, app: &App) {
    let area = f.area();
    let s = Styles::new(app.color);
    let small = area.width < MIN_W || area.height < MIN_H;
    let mut header = header_lines(app, area.width, &s);
    // Keep at least three process rows: drop header lines from the end
    // (network, memory, per-CPU) when the terminal is short.
    let max_header = (area.height as usize).saturating_sub(5).max(1);
    header.truncate(max_header);
    let hh = header.len() as u16;
    if area.height == 0 {
        return;
    }
    f.render_widget(
        Paragraph::new(header),
        Rect {
            height: hh.min(area.height),
            ..area
        },
    );
    let list_top = hh + 1;
    let bar_y = area.height.saturating_sub(1);
    let rows = bar_y.saturating_sub(list_top) as usize;
    if app.cg.shown {
        draw_cgroups(f, app, hh, rows, &s);
    } else {
        draw_procs(f, app, hh, rows, &s);
    }
    draw_key_bar(f, app, bar_y, small, &s);
    if app.help {
        draw_help(f, app, &s);
    }
}

/// The cgroup view's columns: title, width.
const CG_COLS: [(&str, usize); 8] = [
    ("CPU%", 6),
    ("MEM", 7),
    ("RD/s", 7),
    ("WR/s", 7),
    ("PSIc", 5),
    ("PSIm", 5),
    ("PSIi", 5),
    ("TASKS", 6),
];

/// How a sort column's title is marked: `v` descending, `^` ascending.
fn sort_mark(desc: bool) -> &'static str {
    if desc { "v" } else { "^" }
}

/// A column's title, marked when the list is sorted by it.
fn titled(title: &str, sorted: bool, desc: bool) -> String {
    if sorted {
        format!("{title}{}", sort_mark(desc))
    } else {
        title.to_string()
    }
}

/// A list's column header at row `y`, padded to the terminal's width.
fn draw_head(f: &mut Frame, y: u16, text: &str, s: &Styles) {
    let area = f.area();
    f.render_widget(
        Paragraph::new(Line::styled(
            format!("{text:<w$}", w = area.width as usize),
            s.head,
        )),
        Rect {
            y,
            height: 1,
            ..area
        },
    );
}

/// The selected row of a list of `n` (within it) and the first of the
/// `rows` shown, scrolled to keep the selected one in view.
fn scrolled(selected: usize, n: usize, rows: usize) -> (usize, usize) {
    let sel = selected.min(n.saturating_sub(1));
    let offset = if rows == 0 || sel < rows {
        0
    } else {
        sel + 1 - rows
    };
    (sel, offset)
}

/// The cgroup tree from row `hh` on, `rows` of it.
fn draw_cgroups(f: &mut Frame, app: &App, hh: u16, rows: usize, s: &Styles) {
    let area = f.area();
    let cg = &app.cg;
    let mut h = String::from(" ");
    for (t, w) in CG_COLS {
        h.push_str(&fit(
            &titled(t, t == crate::cgview::title(cg.sort), cg.desc),
            w,
            true,
        ));
        h.push(' ');
    }
    let path = crate::cgview::CgSort::Path;
    h.push_str(&titled(
        crate::cgview::title(path),
        cg.sort == path,
        cg.desc,
    ));
    if hh < area.height {
        draw_head(f, hh, &h, s);
    }
    let n = cg.rows.len();
    let (sel, offset) = scrolled(cg.selected, n, rows);
    let name_w =
        (area.width as usize).saturating_sub(1 + CG_COLS.iter().map(|(_, w)| w + 1).sum::<usize>());
    let rate = |v: Option<f64>| v.map_or_else(|| "-".into(), bytes);
    let mut lines = Vec::with_capacity(rows);
    for i in offset..(offset + rows).min(n) {
        let row = &cg.rows[i];
        let r = &cg.rates[row.node];
        let cells = [
            pct(r.cpu_pct),
            r.memory_bytes
                .map_or_else(|| "-".into(), |b| bytes(b as f64)),
            rate(r.io_read_bytes_per_sec),
            rate(r.io_write_bytes_per_sec),
            pct(r.cpu_some_pct),
            pct(r.memory_some_pct),
            pct(r.io_some_pct),
            r.pids.map_or_else(|| "-".into(), |p| p.to_string()),
        ];
        let mut text = String::from(" ");
        for (c, (_, w)) in cells.iter().zip(CG_COLS) {
            text.push_str(&fit(c, w, true));
            text.push(' ');
        }
        let folded = if row.folded > 0 {
            format!(" [+{}]", row.folded)
        } else {
            String::new()
        };
        // Other users name cgroups (delegated subtrees): never raw bytes
        // to the terminal.
        let name = model::text::printable(crate::cgview::name(&r.path));
        let name = format!("{}{name}{folded}", row.branch);
        text.push_str(&fit(&name, name_w, false));
        let style = if i == sel { s.selected } else { Style::new() };
        lines.push(Line::styled(text, style));
    }
    if n == 0 && rows > 0 {
        let why = cg.absent.clone().unwrap_or_else(|| {
            if app.replay.is_some() {
                "cgroups are not recorded in the history".into()
            } else {
                "no read of the cgroups yet".into()
            }
        });
        lines.push(Line::raw(format!(" {why}")));
    } else if !cg.has_rates() && rows > 1 {
        lines.truncate(rows - 1);
        lines.push(Line::styled(
            " rates from the next read of the cgroups",
            s.warn,
        ));
    }
    f.render_widget(
        Paragraph::new(lines),
        Rect {
            y: (hh + 1).min(area.height),
            height: rows as u16,
            ..area
        },
    );
}

/// The process list from row `hh` on, `rows` of it.
fn draw_procs(f: &mut Frame, app: &App, hh: u16, rows: usize, s: &Styles) {
    let area = f.area();
    let list_top = hh + 1;
    let bar_y = area.height.saturating_sub(1);
    let cols = visible_columns(app, area.width);
    // Column header.
    if list_top <= bar_y {
        let mut h = String::from(" ");
        for c in &cols {
            if *c == Col::Command {
                h.push_str(c.title());
            } else {
                let t = titled(c.title(), *c == app.sort, app.desc);
                let right = !matches!(c, Col::User | Col::Cgroup | Col::State);
                h.push_str(&fit(&t, c.width() as usize, right));
                h.push(' ');
            }
        }
        draw_head(f, hh, &h, s);
    }
    // Rows, scrolled to keep the selection in view.
    let n = app.items.len();
    let (sel, offset) = scrolled(app.selected, n, rows);
    let cmd_w = (area.width as usize).saturating_sub(
        1 + cols
            .iter()
            .filter(|c| **c != Col::Command)
            .map(|c| c.width() as usize + 1)
            .sum::<usize>(),
    );
    let mut lines = Vec::with_capacity(rows);
    for i in offset..(offset + rows).min(n) {
        let it = &app.items[i];
        let mut text = String::with_capacity(area.width as usize);
        text.push(match it.mark {
            Mark::New => '+',
            Mark::Exited(_) => 'x',
            Mark::None => ' ',
        });
        for &c in &cols {
            let v = cell(app, it, c);
            if c == Col::Command {
                text.push_str(&fit(&v, cmd_w, false));
            } else {
                let right = !matches!(c, Col::User | Col::Cgroup | Col::State);
                text.push_str(&fit(&v, c.width() as usize, right));
                text.push(' ');
            }
        }
        let style = if i == sel {
            s.selected
        } else {
            match it.mark {
                Mark::New => s.new,
                Mark::Exited(_) => s.exited,
                Mark::None => Style::new(),
            }
        };
        lines.push(Line::styled(text, style));
    }
    if n == 0 && rows > 0 {
        let why = if let Some(c) = &app.cg.filter {
            format!(
                "no process in {} (or the table carries no cgroup: the agent's procfs backend)",
                model::text::printable(&c.path)
            )
        } else if app.filter.is_empty() && app.user.is_none() {
            "no process table yet".into()
        } else {
            "no process matches the filter".into()
        };
        lines.push(Line::raw(format!(" {why}")));
    }
    f.render_widget(
        Paragraph::new(lines),
        Rect {
            y: list_top.min(bar_y),
            height: rows as u16,
            ..area
        },
    );
}

/// The key bar: a prompt, a notice, or the keys.
fn draw_key_bar(f: &mut Frame, app: &App, bar_y: u16, small: bool, s: &Styles) {
    let area = f.area();
    let bar_line = if let Some((what, text)) = &app.prompt {
        let label = match what {
            Prompt::Filter => "filter: ",
            Prompt::User => "user (empty: all): ",
            Prompt::Goto => "go to (HH:MM, -1h, YYYY-MM-DD HH:MM): ",
        };
        Line::from(vec![
            Span::styled(label, s.label),
            Span::raw(format!("{text}_")),
        ])
    } else if let Some(note) = &app.notice {
        Line::styled(note.clone(), s.warn)
    } else if small {
        Line::styled(
            format!(
                "terminal {}x{} is smaller than {MIN_W}x{MIN_H}: showing what fits",
                area.width, area.height
            ),
            s.warn,
        )
    } else {
        let mut keys = if app.cg.shown {
            "?help C processes P M O T N sort + - fold Enter its processes q quit".to_string()
        } else if app.replay.is_some() {
            "?help <-/-> step [ ] min { } hour g goto Home/End e exited / filter q quit".to_string()
        } else {
            "?help /filter u user t tree e exited P M T sort <> col C cgroups q quit".to_string()
        };
        let mut state = Vec::new();
        if let Some(c) = &app.cg.filter {
            state.push(format!(
                "cg:{}",
                model::text::printable(crate::cgview::name(&c.path))
            ));
        }
        if !app.filter.is_empty() {
            state.push(format!("/{}", app.filter));
        }
        if let Some((u, _)) = &app.user {
            state.push(format!("u:{u}"));
        }
        if app.tree {
            state.push("tree".into());
        }
        if app.threads {
            state.push("threads".into());
        }
        if app.exited_first {
            state.push("exited".into());
        }
        let (title, desc) = if app.cg.shown {
            (crate::cgview::title(app.cg.sort), app.cg.desc)
        } else {
            (app.sort.title(), app.desc)
        };
        let st = format!(
            "[{}{}{}]",
            title,
            sort_mark(desc),
            if state.is_empty() {
                String::new()
            } else {
                format!(" {}", state.join(" "))
            }
        );
        let room = (area.width as usize).saturating_sub(st.len() + 1);
        if keys.chars().count() > room {
            keys = keys.chars().take(room).collect();
        }
        Line::from(vec![
            Span::raw(format!("{keys:<room$} ")),
            Span::styled(st, s.label),
        ])
    };
    f.render_widget(
        Paragraph::new(bar_line),
        Rect {
            y: bar_y,
            height: 1,
            ..area
        },
    );
}

const HELP: &[(&str, &str)] = &[
    (
        "P M T N",
        "sort by CPU%, memory, CPU time, PID (again: reverse)",
    ),
    ("< >  I", "sort by the previous / next column; invert"),
    ("/ \\", "filter by text (command or PID); Esc clears"),
    ("u", "only one user's processes (empty: all)"),
    ("t  + -", "tree view; unfold / fold the selected process"),
    ("H", "threads shown or hidden (own sampling)"),
    ("c", "cgroup column shown or hidden"),
    (
        "C Tab",
        "cgroup view: tree, P M O T N sort, + - fold, Enter its processes",
    ),
    (
        "e",
        "processes that ended since the last table listed first",
    ),
    ("Up Down PgUp PgDn", "move the selection"),
    ("space", "pause (live)"),
    ("<- ->", "replay: one sample back / forward"),
    ("[ ]  { }", "replay: a minute / an hour back / forward"),
    ("g  Home End", "replay: go to a time; first / last sample"),
    ("+ row  x row", "started / ended since the previous table"),
    ("q F10", "quit"),
];

fn draw_help(f: &mut Frame, app: &App, s: &Styles) {
    let area = f.area();
    let w = area.width.min(76);
    let h = (HELP.len() as u16 + 4).min(area.height);
    let r = Rect {
        x: (area.width - w) / 2,
        y: (area.height - h) / 2,
        width: w,
        height: h,
    };
    let mut lines: Vec<Line> = HELP
        .iter()
        .map(|(k, v)| {
            Line::from(vec![
                Span::styled(format!("{k:>18} "), s.label),
                Span::raw(*v),
            ])
        })
        .collect();
    let source = match &app.origin {
        Origin::Agent { pid, .. } => {
            format!("data: agent pid {pid}; command lines on screen read once")
        }
        Origin::Own { backend } => format!("data: sampled here ({backend})"),
        Origin::Replay => "data: the recorded history".into(),
    };
    lines.push(Line::raw(""));
    lines.push(Line::raw(format!("  {source}. Any key closes.")));
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(" keys ")),
        r,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(spans: &[Span]) -> String {
        spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn a_bar_always_shows_its_figure_and_keeps_its_width() {
        let s = Styles::new(false);
        for (u, sy) in [
            (0.0, 0.0),
            (12.0, 3.0),
            (60.0, 39.0),
            (100.0, 0.0),
            (150.0, 20.0),
        ] {
            let b = text(&bar(u, sy, 14, "0".into(), &s));
            assert_eq!(b.chars().count(), 15, "{b}");
            let pct = format!("{:.0}%]", f64::min(u + sy, 100.0));
            assert!(b.ends_with(&pct), "{u}+{sy}: {b}");
        }
        assert_eq!(
            text(&bar(100.0, 0.0, 14, "0".into(), &s)),
            "0[||||||||100%]"
        );
        assert_eq!(text(&bar(0.0, 0.0, 14, "0".into(), &s)), "0[          0%]");
    }

    #[test]
    fn exit_notes_name_the_code_or_the_signal() {
        assert_eq!(exit_note(Some(3 << 8)), "[exit 3]");
        assert_eq!(exit_note(Some(9)), "[SIGKILL]");
        assert_eq!(exit_note(Some(0x80 | 11)), "[SIGSEGV core]");
        assert_eq!(exit_note(None), "[ended]");
        assert_eq!(signal_name(40), "SIG40");
    }
}
