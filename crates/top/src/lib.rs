//! `quietstat top`: a terminal view of the machine.
//!
//! - Live from a running agent: its view files beside the shared-memory
//!   snapshot (`shm::view`) give the system sources and the process table
//!   the agent already read, so a view adds no reads of its own (but the
//!   command lines of the rows on screen, once per process). The view sleeps
//!   on the snapshot's publish counter: no timer runs while nothing changes.
//! - Sampling on its own (BPF when it loads, else /proc) when no agent runs,
//!   or when the agent dies mid-session (with a notice).
//! - Replaying the history (`store::History`) sample by sample.
//!
//! `app` holds the state and handles keys, `draw` presents it, `feed` says
//! where samples come from; [`run`] is the loop around them.

pub mod app;
pub mod cgview;
pub mod draw;
pub mod feed;
pub mod names;
pub mod tree;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use sys::Error;

use ratatui::crossterm::event::{self, Event, KeyEventKind};

pub use app::App;
use app::{Action, Mark, Seek};
use feed::{AgentFeed, Origin, OwnFeed, ReplayFeed, Tick};

/// What `quietstat top` was asked for.
pub struct Options {
    pub proc_root: PathBuf,
    pub sys_root: PathBuf,
    /// The agent's snapshot; its view files are beside it.
    pub snapshot: PathBuf,
    /// The refresh: at most one redraw per this, for new data.
    pub delay: Duration,
    pub color: bool,
    /// Sample here even when an agent runs.
    pub no_agent: bool,
    /// Replay the history in this directory, from this time (as
    /// `store::when::parse` takes it; default: the last sample).
    pub replay: Option<(PathBuf, Option<String>)>,
    /// Quit once the first full screen (with a process table, or in the
    /// cgroup view the cgroups) is drawn: what `bench viewers` times.
    pub first_screen: bool,
    /// Start in the cgroup view.
    pub cgroups: bool,
}

enum Msg {
    Key(event::KeyEvent),
    Resize,
    Tick(Box<Tick>, Origin),
    Notice(String),
    TerminalGone,
}

/// Runs the view until `q`. Errors that stop it before the first screen
/// (a replay time outside the store) are returned, the terminal untouched.
pub fn run(opts: Options) -> Result<(), Error> {
    if let Some((dir, at)) = &opts.replay {
        let feed = ReplayFeed::open(dir)?;
        let now = sys::unix_ns() / 1_000_000;
        let at = match at {
            Some(t) => feed.check(store::when::parse(t, now)?)?,
            None => feed.range.1,
        };
        let mut app = App::new(Origin::Replay, &opts.sys_root, opts.color);
        app.cg.shown = opts.cgroups;
        seek_to(&mut app, &feed, at)?;
        return with_terminal(|term| replay_loop(term, &mut app, &feed));
    }
    let shared = Arc::new(Flags::default());
    shared.cgroups.store(opts.cgroups, Ordering::Relaxed);
    let (tx, rx) = mpsc::channel();
    // The first screen: the agent's data as it is, or a first sample.
    let (mut app, first) = start_live(&opts, &shared, tx.clone())?;
    app.refresh = opts.delay;
    app.cg.shown = opts.cgroups;
    if let Some(t) = first {
        app.push(t);
    }
    let input = tx.clone();
    std::thread::Builder::new()
        .name("top-input".into())
        .spawn(move || input_loop(input))
        .map_err(|e| Error::io("starting top's input thread", e))?;
    with_terminal(|term| live_loop(term, &mut app, &rx, &shared, &opts))
}

#[derive(Default)]
struct Flags {
    threads: AtomicBool,
    cgroups: AtomicBool,
    paused: AtomicBool,
    quit: AtomicBool,
}

fn with_terminal(
    f: impl FnOnce(&mut ratatui::DefaultTerminal) -> Result<(), Error>,
) -> Result<(), Error> {
    use std::io::IsTerminal;
    for (name, is) in [
        ("input", std::io::stdin().is_terminal()),
        ("output", std::io::stdout().is_terminal()),
    ] {
        if !is {
            return Err(Error::invalid(format!(
                "top needs a terminal, and its standard {name} is not one; for a pipe or a file use `quietstat ps` or `quietstat stat`"
            )));
        }
    }
    let mut term = ratatui::try_init().map_err(|e| Error::io("terminal", e))?;
    let r = f(&mut term);
    ratatui::restore();
    r
}

/// Opens the live feed (the agent's when it runs) and starts the thread
/// that follows it; returns the first sample when there is one at once.
fn start_live(
    opts: &Options,
    flags: &Arc<Flags>,
    tx: mpsc::Sender<Msg>,
) -> Result<(App, Option<Tick>), Error> {
    let host_proc = opts.proc_root == Path::new("/proc");
    let why_not = if opts.no_agent {
        Some("--no-agent".to_string())
    } else if !host_proc {
        Some(format!(
            "{} is not the host's /proc",
            opts.proc_root.display()
        ))
    } else {
        None
    };
    let agent = match why_not {
        Some(w) => Err(Error::invalid(w)),
        None => AgentFeed::open(&opts.snapshot, &opts.proc_root, &opts.sys_root),
    };
    match agent {
        Ok(mut feed) => {
            feed.set_cgroups(flags.cgroups.load(Ordering::Relaxed));
            let first = feed.poll().ok().flatten();
            let mut app = App::new(feed.origin(), &opts.sys_root, opts.color);
            if first.is_none() {
                app.notice = Some("waiting for the agent's first sample".into());
            }
            let (f2, delay) = (flags.clone(), opts.delay);
            let (proc_root, sys_root) = (opts.proc_root.clone(), opts.sys_root.clone());
            std::thread::Builder::new()
                .name("top-agent".into())
                .spawn(move || agent_loop(feed, &tx, &f2, delay, &proc_root, &sys_root))
                .map_err(|e| Error::io("starting top's sampling thread", e))?;
            Ok((app, first))
        }
        Err(why) => {
            let mut feed = OwnFeed::open(&opts.proc_root, &opts.sys_root, false)?;
            feed.set_cgroups(flags.cgroups.load(Ordering::Relaxed));
            let mut app = App::new(feed.origin(), &opts.sys_root, opts.color);
            let first = feed.sample()?;
            app.notice = Some(match feed.note() {
                Some(n) => format!("no agent ({why}); sampling here with procfs: {n}"),
                None => format!(
                    "no agent ({why}); sampling here with {}",
                    feed.origin_name()
                ),
            });
            let (f2, delay) = (flags.clone(), opts.delay);
            std::thread::Builder::new()
                .name("top-sample".into())
                .spawn(move || own_loop(feed, &tx, &f2, delay))
                .map_err(|e| Error::io("starting top's sampling thread", e))?;
            Ok((app, Some(first)))
        }
    }
}

/// Sends keys and resizes; when the terminal is gone (closed, hung up),
/// says so, and the view quits.
fn input_loop(tx: mpsc::Sender<Msg>) {
    while let Ok(ev) = event::read() {
        let msg = match ev {
            Event::Key(k) if k.kind != KeyEventKind::Release => Msg::Key(k),
            Event::Resize(..) => Msg::Resize,
            _ => continue,
        };
        if tx.send(msg).is_err() {
            return;
        }
    }
    let _ = tx.send(Msg::TerminalGone);
}

/// Follows the agent: sleeps on its publish counter, sends what changed
/// at most once per `delay`; samples on its own if the agent goes.
fn agent_loop(
    mut feed: AgentFeed,
    tx: &mpsc::Sender<Msg>,
    flags: &Flags,
    delay: Duration,
    proc_root: &Path,
    sys_root: &Path,
) {
    let mut last = Instant::now();
    // How often, with no publish, the agent is checked for life (a
    // slowed agent only costs a check that finds nothing new).
    let patience = (delay * 3).clamp(Duration::from_secs(2), Duration::from_secs(10));
    loop {
        feed.wait(patience);
        if flags.quit.load(Ordering::Relaxed) {
            return;
        }
        let since = last.elapsed();
        if since < delay {
            std::thread::sleep(delay - since);
        }
        if flags.paused.load(Ordering::Relaxed) {
            continue;
        }
        feed.set_cgroups(flags.cgroups.load(Ordering::Relaxed));
        match feed.poll() {
            Ok(Some(t)) => {
                last = Instant::now();
                if tx.send(Msg::Tick(Box::new(t), feed.origin())).is_err() {
                    return;
                }
            }
            Ok(None) => {}
            Err(why) => {
                let own = OwnFeed::open(proc_root, sys_root, flags.threads.load(Ordering::Relaxed));
                let note = match &own {
                    Ok(f) => format!(
                        "the agent is gone ({why}); sampling here with {} every {}s",
                        f.origin_name(),
                        delay.as_secs_f64()
                    ),
                    Err(e) => format!("the agent is gone ({why}); cannot sample here: {e}"),
                };
                if tx.send(Msg::Notice(note)).is_err() {
                    return;
                }
                if let Ok(mut f) = own {
                    f.set_cgroups(flags.cgroups.load(Ordering::Relaxed));
                    own_loop(f, tx, flags, delay);
                }
                return;
            }
        }
    }
}

/// Samples here every `delay`.
fn own_loop(mut feed: OwnFeed, tx: &mpsc::Sender<Msg>, flags: &Flags, delay: Duration) {
    let mut threads = flags.threads.load(Ordering::Relaxed);
    loop {
        std::thread::sleep(delay);
        if flags.quit.load(Ordering::Relaxed) {
            return;
        }
        if flags.paused.load(Ordering::Relaxed) {
            continue;
        }
        let want = flags.threads.load(Ordering::Relaxed);
        if want != threads {
            threads = want;
            feed.set_threads(want);
        }
        feed.set_cgroups(flags.cgroups.load(Ordering::Relaxed));
        let msg = match feed.sample() {
            Ok(t) => Msg::Tick(Box::new(t), feed.origin()),
            Err(e) => Msg::Notice(format!("sampling failed: {e}")),
        };
        if tx.send(msg).is_err() {
            return;
        }
    }
}

/// Reads the command lines of the processes on screen that the view does
/// not know (the agent's table has none): once per process.
fn fill_cmdlines(app: &mut App, proc_root: &Path, height: u16) {
    if !matches!(app.origin, Origin::Agent { .. }) {
        return;
    }
    let want: Vec<u32> = app.items[app.around_selection(height)]
        .iter()
        .filter(|it| !matches!(it.mark, Mark::Exited(_)))
        .map(|it| app.proc_of(it).pid)
        .filter(|&pid| !app.has_cmdline(pid))
        .collect();
    for pid in want {
        // Unreadable or empty (kernel threads) is remembered too: the name
        // is shown, and the file is not read again.
        let c = proctable::read_cmdline(proc_root, pid).unwrap_or_default();
        app.add_cmdline(pid, c);
    }
}

fn live_loop(
    term: &mut ratatui::DefaultTerminal,
    app: &mut App,
    rx: &mpsc::Receiver<Msg>,
    flags: &Flags,
    opts: &Options,
) -> Result<(), Error> {
    let draw = |term: &mut ratatui::DefaultTerminal, app: &mut App| -> Result<(), Error> {
        let h = term.size().map(|s| s.height).unwrap_or(24);
        fill_cmdlines(app, &opts.proc_root, h);
        app.learn_names(h);
        term.draw(|f| draw::draw(f, app))
            .map_err(|e| Error::io("drawing", e))?;
        Ok(())
    };
    // The first full screen: the process list, or the cgroups.
    let full = |app: &App| {
        if app.cg.shown {
            !app.cg.rows.is_empty()
        } else {
            !app.items.is_empty()
        }
    };
    draw(term, app)?;
    if opts.first_screen && full(app) {
        return Ok(());
    }
    while let Ok(first) = rx.recv() {
        // Everything waiting is applied before one redraw.
        let mut pending = vec![first];
        pending.extend(rx.try_iter());
        let mut redraw = false;
        for m in pending {
            match m {
                Msg::Key(k) => match app.key(k) {
                    Action::Quit => {
                        flags.quit.store(true, Ordering::Relaxed);
                        return Ok(());
                    }
                    Action::Threads(on) => {
                        flags.threads.store(on, Ordering::Relaxed);
                        app.notice = Some(format!(
                            "threads {} from the next sample",
                            if on { "shown" } else { "hidden" }
                        ));
                        redraw = true;
                    }
                    Action::Cgroups(on) => {
                        flags.cgroups.store(on, Ordering::Relaxed);
                        redraw = true;
                    }
                    Action::None => {}
                    _ => redraw = true,
                },
                Msg::Resize => redraw = true,
                Msg::TerminalGone => {
                    flags.quit.store(true, Ordering::Relaxed);
                    return Ok(());
                }
                Msg::Tick(t, origin) => {
                    if app.origin != origin {
                        app.origin = origin;
                    }
                    app.push(*t);
                    redraw = true;
                }
                Msg::Notice(n) => {
                    app.notice = Some(n);
                    redraw = true;
                }
            }
        }
        flags.paused.store(app.paused, Ordering::Relaxed);
        if redraw {
            draw(term, app)?;
            if opts.first_screen && full(app) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Shows the recorded sample at or before `at`.
fn seek_to(app: &mut App, feed: &ReplayFeed, at: u64) -> Result<(), Error> {
    let (at, cur, prev) = feed.load(at)?;
    app.reset();
    if let Some(p) = prev {
        app.push(p);
    }
    app.push(cur);
    app.replay = Some((at, feed.range));
    Ok(())
}

fn replay_loop(
    term: &mut ratatui::DefaultTerminal,
    app: &mut App,
    feed: &ReplayFeed,
) -> Result<(), Error> {
    loop {
        app.learn_names(term.size().map(|s| s.height).unwrap_or(24));
        term.draw(|f| draw::draw(f, app))
            .map_err(|e| Error::io("drawing", e))?;
        let k = loop {
            match event::read().map_err(|e| Error::io("reading a key", e))? {
                Event::Key(k) if k.kind != KeyEventKind::Release => break Some(k),
                Event::Resize(..) => break None,
                _ => {}
            }
        };
        let Some(k) = k else { continue };
        let at = app.replay.map_or(feed.range.1, |r| r.0);
        let target = match app.key(k) {
            Action::Quit => return Ok(()),
            Action::Seek(Seek::Step(fwd)) => match feed.step(at, fwd) {
                Some(t) => Some(t),
                None => {
                    app.notice = Some(if fwd {
                        "this is the last sample recorded".into()
                    } else {
                        "this is the first sample recorded".into()
                    });
                    None
                }
            },
            Action::Seek(Seek::By(d)) => {
                let t = at
                    .saturating_add_signed(d)
                    .clamp(feed.range.0, feed.range.1);
                Some(t)
            }
            Action::Seek(Seek::First) => Some(feed.range.0),
            Action::Seek(Seek::Last) => Some(feed.range.1),
            Action::Seek(Seek::To(t)) => match feed.check(t) {
                Ok(t) => Some(t),
                Err(e) => {
                    app.notice = Some(e.to_string());
                    None
                }
            },
            _ => None,
        };
        if let Some(t) = target
            && let Err(e) = seek_to(app, feed, t)
        {
            app.notice = Some(e.to_string());
        }
    }
}
