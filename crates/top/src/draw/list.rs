//! The list under the header: the processes or the cgroups, their columns,
//! scrolled to keep the selection in view.

use super::*;

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
pub(super) fn cell(app: &App, it: &crate::app::Item, c: Col) -> String {
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
        Col::Wait => it.wait.map_or_else(absent, |v| format!("{v:.1}")),
        Col::NetRx => it.net_rx.map_or_else(absent, bytes),
        Col::NetTx => it.net_tx.map_or_else(absent, bytes),
        Col::IoDelay => it.io_delay.map_or_else(absent, |v| format!("{v:.1}")),
        Col::MemDelay => it.mem_delay.map_or_else(absent, |v| format!("{v:.1}")),
        Col::Gpu => it.gpu.map_or_else(absent, |v| format!("{v:.1}")),
        Col::GpuMem => p.gpu.map_or_else(absent, |g| bytes(g.mem_bytes as f64)),
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
pub(super) fn start_time(app: &App, start_ticks: u64) -> String {
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

pub(super) fn fit(s: &str, w: usize, right: bool) -> String {
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

/// The cgroup view's columns: title, width.
pub(super) const CG_COLS: [(&str, usize); 8] = [
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
pub(super) fn sort_mark(desc: bool) -> &'static str {
    if desc { "v" } else { "^" }
}

/// A column's title, marked when the list is sorted by it.
pub(super) fn titled(title: &str, sorted: bool, desc: bool) -> String {
    if sorted {
        format!("{title}{}", sort_mark(desc))
    } else {
        title.to_string()
    }
}

/// A list's column header at row `y`, padded to the terminal's width.
pub(super) fn draw_head(f: &mut Frame, y: u16, text: &str, s: &Styles) {
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
pub(super) fn scrolled(selected: usize, n: usize, rows: usize) -> (usize, usize) {
    let sel = selected.min(n.saturating_sub(1));
    let offset = if rows == 0 || sel < rows {
        0
    } else {
        sel + 1 - rows
    };
    (sel, offset)
}

/// The cgroup tree from row `hh` on, `rows` of it.
pub(super) fn draw_cgroups(f: &mut Frame, app: &App, hh: u16, rows: usize, s: &Styles) {
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
pub(super) fn draw_procs(f: &mut Frame, app: &App, hh: u16, rows: usize, s: &Styles) {
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
