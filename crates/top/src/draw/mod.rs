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

mod header;
mod list;

use header::*;
use list::*;

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
        "P M T W R D N",
        "sort by CPU%, memory, CPU time, wait for a CPU, TCP bytes received, I/O delay, PID (again: reverse)",
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
