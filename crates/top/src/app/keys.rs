//! What each key does: moving, sorting, filtering, folding, the prompts
//! and the cgroup view's own keys.

use super::*;

impl App {
    /// Handles one key.
    pub fn key(&mut self, k: KeyEvent) -> Action {
        if let Some((what, mut text)) = self.prompt.take() {
            return self.prompt_key(what, &mut text, k);
        }
        if self.help {
            self.help = false;
            return Action::Redraw;
        }
        self.notice = None;
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        let replay = self.replay.is_some();
        if matches!(k.code, KeyCode::Char('C') | KeyCode::Tab) {
            self.cg.shown = !self.cg.shown;
            return Action::Cgroups(self.cg.shown);
        }
        if self.cg.shown
            && let Some(a) = self.cgroup_key(k)
        {
            return a;
        }
        match k.code {
            KeyCode::Char('c') if ctrl => return Action::Quit,
            KeyCode::Char('q') | KeyCode::F(10) => return Action::Quit,
            KeyCode::Char('?') | KeyCode::F(1) | KeyCode::Char('h') => self.help = true,
            KeyCode::Char('P') => self.sort_on(Col::Cpu),
            KeyCode::Char('M') => self.sort_on(Col::Mem),
            KeyCode::Char('T') => self.sort_on(Col::Time),
            KeyCode::Char('W') => self.sort_on(Col::Wait),
            KeyCode::Char('R') => self.sort_on(Col::NetRx),
            KeyCode::Char('D') => self.sort_on(Col::IoDelay),
            KeyCode::Char('G') => self.sort_on(Col::Gpu),
            KeyCode::Char('N') => self.sort_on(Col::Pid),
            KeyCode::Char('I') => {
                self.desc = !self.desc;
                self.rebuild();
            }
            KeyCode::Char('<') | KeyCode::Char(',') => self.sort_step(false),
            KeyCode::Char('>') | KeyCode::Char('.') | KeyCode::F(6) => self.sort_step(true),
            KeyCode::Char('/') | KeyCode::Char('\\') | KeyCode::F(4) => {
                self.prompt = Some((Prompt::Filter, self.filter.clone()));
            }
            KeyCode::Char('u') => {
                let cur = self.user.as_ref().map(|u| u.0.clone()).unwrap_or_default();
                self.prompt = Some((Prompt::User, cur));
            }
            KeyCode::Char('t') | KeyCode::F(5) => {
                self.tree = !self.tree;
                self.rebuild();
            }
            KeyCode::Char('+') | KeyCode::Char('=') | KeyCode::Char('-') if self.tree => {
                if let Some(id) = self.selected_item().map(|i| self.proc_of(i).identity()) {
                    if k.code == KeyCode::Char('-') {
                        self.folded.insert(id);
                    } else {
                        self.folded.remove(&id);
                    }
                    self.rebuild();
                }
            }
            KeyCode::Char('H') => {
                if matches!(self.origin, Origin::Own { .. }) {
                    self.threads = !self.threads;
                    return Action::Threads(self.threads);
                }
                self.notice = Some(match self.origin {
                    Origin::Replay => "threads are not recorded in the history".into(),
                    _ => "threads: the agent's table lists processes; run top --no-agent to list threads".into(),
                });
            }
            KeyCode::Char('c') => self.cgroup_col = !self.cgroup_col,
            KeyCode::Char('e') => {
                self.exited_first = !self.exited_first;
                self.selected = 0;
                self.rebuild();
            }
            KeyCode::Char(' ') if !replay => {
                self.paused = !self.paused;
            }
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => {
                self.selected = (self.selected + 1).min(self.items.len().saturating_sub(1));
            }
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(PAGE),
            KeyCode::PageDown => {
                self.selected = (self.selected + PAGE).min(self.items.len().saturating_sub(1));
            }
            KeyCode::Right if replay => return Action::Seek(Seek::Step(true)),
            KeyCode::Left if replay => return Action::Seek(Seek::Step(false)),
            KeyCode::Char(']') if replay => return Action::Seek(Seek::By(60_000)),
            KeyCode::Char('[') if replay => return Action::Seek(Seek::By(-60_000)),
            KeyCode::Char('}') if replay => return Action::Seek(Seek::By(3_600_000)),
            KeyCode::Char('{') if replay => return Action::Seek(Seek::By(-3_600_000)),
            KeyCode::Home | KeyCode::Char('r') if replay => return Action::Seek(Seek::First),
            KeyCode::End | KeyCode::Char('Z') if replay => return Action::Seek(Seek::Last),
            KeyCode::Char('g') if replay => self.prompt = Some((Prompt::Goto, String::new())),
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = self.items.len().saturating_sub(1),
            _ => return Action::None,
        }
        Action::Redraw
    }

    /// A key of the cgroup view; `None`: one both views take.
    pub(super) fn cgroup_key(&mut self, k: KeyEvent) -> Option<Action> {
        let last = self.cg.rows.len().saturating_sub(1);
        let sel = &mut self.cg.selected;
        match k.code {
            KeyCode::Char('P') => self.cg.sort_on(CgSort::Cpu),
            KeyCode::Char('M') => self.cg.sort_on(CgSort::Memory),
            KeyCode::Char('O') => self.cg.sort_on(CgSort::Io),
            KeyCode::Char('N') => self.cg.sort_on(CgSort::Path),
            KeyCode::Char('T') => self.cg.sort_on(CgSort::Pids),
            KeyCode::Char('+') | KeyCode::Char('=') => self.cg.fold(false),
            KeyCode::Char('-') => self.cg.fold(true),
            KeyCode::Up | KeyCode::Char('k') => *sel = sel.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => *sel = (*sel + 1).min(last),
            KeyCode::PageUp => *sel = sel.saturating_sub(PAGE),
            KeyCode::PageDown => *sel = (*sel + PAGE).min(last),
            KeyCode::Home if self.replay.is_none() => *sel = 0,
            KeyCode::End if self.replay.is_none() => *sel = last,
            KeyCode::Enter => {
                // The selected cgroup's processes (the root's: all).
                self.cg.filter_selected();
                self.cg.shown = false;
                self.selected = 0;
                self.rebuild();
                return Some(Action::Cgroups(false));
            }
            _ => return None,
        }
        Some(Action::Redraw)
    }

    pub(super) fn prompt_key(&mut self, what: Prompt, text: &mut String, k: KeyEvent) -> Action {
        match k.code {
            KeyCode::Esc => {
                if what == Prompt::Filter {
                    self.filter.clear();
                    self.rebuild();
                }
                return Action::Redraw;
            }
            KeyCode::Enter => return self.prompt_done(what, text.trim()),
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => text.push(c),
            _ => {}
        }
        // The filter applies as it is typed.
        if what == Prompt::Filter {
            self.filter.clone_from(text);
            self.selected = 0;
            self.rebuild();
        }
        self.prompt = Some((what, std::mem::take(text)));
        Action::Redraw
    }

    pub(super) fn prompt_done(&mut self, what: Prompt, text: &str) -> Action {
        match what {
            Prompt::Filter => {
                self.filter = text.to_string();
            }
            Prompt::User if text.is_empty() => self.user = None,
            Prompt::User => match self.users.uid_of(text) {
                Some(uid) => self.user = Some((text.to_string(), uid)),
                None => self.notice = Some(format!("no user named {text:?}")),
            },
            Prompt::Goto => {
                let now = sys::unix_ns() / 1_000_000;
                match store::when::parse(text, now) {
                    Ok(ms) => return Action::Seek(Seek::To(ms)),
                    Err(e) => self.notice = Some(e.to_string()),
                }
            }
        }
        self.selected = 0;
        self.rebuild();
        Action::Redraw
    }

    pub(super) fn sort_on(&mut self, c: Col) {
        if self.sort == c {
            self.desc = !self.desc;
        } else {
            self.sort = c;
            self.desc = c.desc_by_default();
        }
        self.rebuild();
    }

    pub(super) fn sort_step(&mut self, forward: bool) {
        let i = Col::ALL.iter().position(|&c| c == self.sort).unwrap_or(0);
        let n = Col::ALL.len();
        let next = if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        };
        self.sort = Col::ALL[next];
        self.desc = self.sort.desc_by_default();
        self.rebuild();
    }
}

pub(super) const PAGE: usize = 10;
