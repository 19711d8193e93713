//! The view's state: the samples it shows, what `model` derives from them,
//! and what the user chose (sort, filters, tree, folding, threads). Keys
//! change the state; [`crate::draw`] presents it.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use model::columns::{self, Column, NoExtra};
use model::process::{ProcRate, rates_into};
use model::system::SystemRates;
use procfs::SystemSample;
use proctable::{Exit, Identity, Proc};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::cgview::{CgSort, CgView};
use crate::feed::{Origin, Tick};
use crate::names::{Cgroups, Users};

mod keys;

/// What a process-list column is: one row of `cols!`.
pub struct ColSpec {
    pub title: &'static str,
    /// Width on screen (the command takes what is left).
    pub width: u16,
    /// Dropped first when the terminal is narrow: higher goes first (0:
    /// never).
    pub drop_order: u8,
    /// Larger values first when sorted on it.
    pub desc: bool,
    /// The process field it sorts on and, unless its cell is computed
    /// (`draw::cell`), shows; `None`: a figure of `top`'s own (a rate, a
    /// name, a percentage).
    pub field: Option<&'static Column>,
    /// An ended process shows `-` in it (its last value is not current).
    pub live_only: bool,
}

macro_rules! cols {
    ($($col:ident $title:literal $width:literal $drop:literal $desc:literal $field:expr, $live:literal;)*) => {
        /// A process-list column.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Col {
            $($col,)*
        }

        const SPECS: &[ColSpec] = &[$(ColSpec {
            title: $title,
            width: $width,
            drop_order: $drop,
            desc: $desc,
            field: $field,
            live_only: $live,
        }),*];

        impl Col {
            /// In the order shown, left to right.
            pub const ALL: &[Col] = &[$(Col::$col),*];
        }
    };
}

cols! {
    Pid "PID" 7 0 false Some(&columns::PID), false;
    User "USER" 8 0 false Some(&columns::UID), false;
    State "S" 1 0 false Some(&columns::STATE), false;
    Pri "PRI" 3 8 true Some(&columns::PRIORITY), true;
    Nice "NI" 3 3 true Some(&columns::NICE), true;
    Cpu "CPU%" 5 0 true None, false;
    Mem "MEM%" 5 0 true Some(&columns::RSS_BYTES), false;
    Rss "RSS" 6 2 true Some(&columns::RSS_BYTES), false;
    Read "RD/s" 6 5 true None, false;
    Write "WR/s" 6 5 true None, false;
    Wait "WAIT%" 5 6 true None, false;
    IoDelay "IOD%" 5 6 true None, false;
    MemDelay "MEMD%" 5 6 true None, false;
    Gpu "GPU%" 5 6 true None, false;
    GpuMem "GMEM" 6 6 true Some(&columns::GPU_MEM_BYTES), false;
    NetRx "RX/s" 6 6 true None, false;
    NetTx "TX/s" 6 6 true None, false;
    Threads "THR" 4 6 true Some(&columns::THREADS), true;
    Start "START" 5 7 true Some(&columns::START_TICKS), false;
    Time "TIME+" 8 4 true None, false;
    Cgroup "CGROUP" 24 9 false Some(&columns::CGROUP), false;
    Command "COMMAND" 0 0 false None, false;
}

impl Col {
    pub fn spec(self) -> &'static ColSpec {
        &SPECS[self as usize]
    }

    pub fn title(self) -> &'static str {
        self.spec().title
    }

    pub fn width(self) -> u16 {
        self.spec().width
    }

    pub fn drop_order(self) -> u8 {
        self.spec().drop_order
    }

    fn desc_by_default(self) -> bool {
        self.spec().desc
    }
}

/// How a row is marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    None,
    /// Started since the previous table.
    New,
    /// Ended since the previous table: its wait status when known.
    Exited(Option<i32>),
}

/// Where a row of the process list is: the latest table, or the rows of
/// the processes that ended since the one before ([`App::proc_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Row {
    Live(u32),
    Ended(u32),
}

/// One row of the process list (small: lists are sorted and rebuilt with
/// tens of thousands of rows).
#[derive(Debug, Clone)]
pub struct Item {
    row: Row,
    pub cpu: Option<f64>,
    pub read: Option<f64>,
    pub write: Option<f64>,
    /// Time waiting for a CPU, percent of the interval.
    pub wait: Option<f64>,
    /// TCP payload bytes a second, received and sent.
    pub net_rx: Option<f64>,
    pub net_tx: Option<f64>,
    /// Time blocked on block I/O and waiting on memory, percent of the
    /// interval (delay accounting).
    pub io_delay: Option<f64>,
    pub mem_delay: Option<f64>,
    /// Time GPU engines were busy with its clients, percent of the
    /// interval, summed over engines.
    pub gpu: Option<f64>,
    pub mark: Mark,
    /// Tree view: the branch drawn before the command.
    pub branch: String,
    /// Tree view: processes hidden under this one by folding.
    pub folded: usize,
}

/// What a text prompt is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompt {
    Filter,
    User,
    Goto,
}

/// What a key asks of the loop around the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    None,
    Redraw,
    Quit,
    /// Threads shown or hidden: the feed must change its query.
    Threads(bool),
    /// The cgroup view shown or hidden: a feed that reads the cgroups
    /// itself reads them only while it is shown.
    Cgroups(bool),
    /// Replay: show the sample at this instant (ms since the epoch).
    Seek(Seek),
}

/// Replay moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seek {
    Step(bool),
    By(i64),
    First,
    Last,
    To(u64),
}

/// The choices that outlast a sample.
pub struct App {
    pub origin: Origin,
    pub color: bool,
    pub host: String,
    pub refresh: std::time::Duration,
    /// Replay: the instant shown and the recorded range (ms).
    pub replay: Option<(u64, (u64, u64))>,

    cur_sys: SystemSample,
    have_sys: bool,
    pub rates: Option<SystemRates>,
    procs: Vec<Proc>,
    procs_taken: Option<Instant>,
    pub procs_unix_ns: u64,
    /// Rates of the processes in both of the last two tables, by pid.
    proc_rates: Vec<ProcRate>,
    /// Processes in the last table and not the one before, by pid.
    new_pids: Vec<u32>,
    exits: Vec<Exit>,
    /// The ended processes as rows, in the order of `exits`.
    ended: Vec<Proc>,
    /// CPU % of each process that ended, over its last interval (from its
    /// row in the table before and its final times).
    exit_cpu: HashMap<u32, f64>,
    cmdlines: HashMap<u32, String>,
    /// The number of tables seen (rates and marks need two).
    tables: u64,

    pub sort: Col,
    pub desc: bool,
    pub filter: String,
    pub user: Option<(String, u32)>,
    pub tree: bool,
    folded: HashSet<Identity>,
    pub threads: bool,
    /// Processes that ended since the previous table listed first.
    pub exited_first: bool,
    pub cgroup_col: bool,
    pub help: bool,
    pub paused: bool,
    pub prompt: Option<(Prompt, String)>,
    pub notice: Option<String>,
    pub selected: usize,

    pub users: Users,
    pub cgroups: Cgroups,
    /// The cgroup view.
    pub cg: CgView,
    pub items: Vec<Item>,
    pub counts: Counts,
}

/// Process counts for the header.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counts {
    pub procs: usize,
    pub threads: u64,
    pub running: usize,
    pub new: usize,
    pub exited: usize,
}

impl App {
    pub fn new(origin: Origin, sys_root: &std::path::Path, color: bool) -> App {
        App {
            origin,
            color,
            host: hostname(),
            refresh: std::time::Duration::from_secs(2),
            replay: None,
            cur_sys: SystemSample::default(),
            have_sys: false,
            rates: None,
            procs: Vec::new(),
            procs_taken: None,
            procs_unix_ns: 0,
            proc_rates: Vec::new(),
            new_pids: Vec::new(),
            exits: Vec::new(),
            ended: Vec::new(),
            exit_cpu: HashMap::new(),
            cmdlines: HashMap::new(),
            tables: 0,
            sort: Col::Cpu,
            desc: true,
            filter: String::new(),
            user: None,
            tree: false,
            folded: HashSet::new(),
            threads: false,
            exited_first: false,
            cgroup_col: true,
            help: false,
            paused: false,
            prompt: None,
            notice: None,
            selected: 0,
            users: Users::default(),
            cgroups: Cgroups::new(sys_root),
            cg: CgView::default(),
            items: Vec::new(),
            counts: Counts::default(),
        }
    }

    /// The latest system sample shown.
    pub fn system(&self) -> Option<&SystemSample> {
        self.have_sys.then_some(&self.cur_sys)
    }

    /// Forgets the samples (a new feed, or a replay jump): rates start over.
    pub fn reset(&mut self) {
        self.have_sys = false;
        self.rates = None;
        self.procs.clear();
        self.procs_taken = None;
        self.proc_rates.clear();
        self.new_pids.clear();
        self.exits.clear();
        self.ended.clear();
        self.exit_cpu.clear();
        self.tables = 0;
        self.cg.reset();
    }

    /// Takes a sample: what changed since the last one (the system
    /// sources, the table, or both) moves the rates on; a new table
    /// rebuilds the list.
    pub fn push(&mut self, mut t: Tick) {
        let cg_read = t.cgroups.take().map(|s| self.cg.push(s)).is_some();
        if let Some(why) = t.cgroups_note.take() {
            self.cg.absent = Some(why);
        }
        if !self.have_sys || t.system.taken != self.cur_sys.taken {
            if self.have_sys {
                self.rates = Some(SystemRates::between(&self.cur_sys, &t.system));
            }
            self.cur_sys.clone_from(&t.system);
            self.have_sys = true;
        }
        if t.procs_taken.is_some() && t.procs_taken != self.procs_taken {
            let secs = match (self.procs_taken, t.procs_taken) {
                (Some(a), Some(b)) => b.saturating_duration_since(a).as_secs_f64(),
                _ => 0.0,
            };
            // Tables are sorted by pid: rates, births and ends come from
            // merging the two, with no map of tens of thousands of rows.
            let prev = std::mem::take(&mut self.procs);
            let had = self.tables > 0;
            if had {
                rates_into(&prev, &t.procs, secs, &mut self.proc_rates);
            } else {
                self.proc_rates.clear();
            }
            self.new_pids.clear();
            let mut gone: Vec<&Proc> = Vec::new();
            if had {
                let (mut i, mut j) = (0, 0);
                loop {
                    match (prev.get(i), t.procs.get(j)) {
                        (Some(a), Some(b)) if a.pid == b.pid => {
                            if a.identity() != b.identity() {
                                gone.push(a);
                                self.new_pids.push(b.pid);
                            }
                            i += 1;
                            j += 1;
                        }
                        (Some(a), b) if b.is_none_or(|b| a.pid < b.pid) => {
                            gone.push(a);
                            i += 1;
                        }
                        (_, Some(b)) => {
                            self.new_pids.push(b.pid);
                            j += 1;
                        }
                        (_, None) => break,
                    }
                }
            }
            // Ended since the last table: as the exit capture saw them;
            // a process gone without a record (capture off) is shown with
            // its last row.
            self.exits = t.exits;
            self.exit_cpu.clear();
            if had && secs > 0.0 {
                for e in &self.exits {
                    if let Some(pct) =
                        by_pid(&prev, e.pid).and_then(|p| model::process::exit_cpu_pct(p, e, secs))
                    {
                        self.exit_cpu.insert(e.pid, pct);
                    }
                }
            }
            let recorded: HashSet<u32> = self.exits.iter().map(|e| e.pid).collect();
            for p in gone.into_iter().filter(|p| !recorded.contains(&p.pid)) {
                self.exits.push(Exit {
                    pid: p.pid,
                    ppid: p.ppid,
                    comm: p.comm,
                    start_ns: p.start_ns,
                    start_ticks: p.start_ticks,
                    exit_ns: 0,
                    utime_ns: p.utime_ns,
                    stime_ns: p.stime_ns,
                    minflt: p.minflt,
                    majflt: p.majflt,
                    maxrss_bytes: p.rss_bytes,
                    exit_status: -1,
                });
            }
            self.ended = self
                .exits
                .iter()
                .map(|e| Proc {
                    pid: e.pid,
                    tgid: e.pid,
                    ppid: e.ppid,
                    comm: e.comm,
                    state: 'X',
                    start_ns: e.start_ns,
                    start_ticks: e.start_ticks,
                    utime_ns: e.utime_ns,
                    stime_ns: e.stime_ns,
                    minflt: e.minflt,
                    majflt: e.majflt,
                    rss_bytes: e.maxrss_bytes,
                    ..Proc::default()
                })
                .collect();
            self.procs = t.procs;
            self.procs_taken = t.procs_taken;
            self.procs_unix_ns = t.procs_unix_ns;
            // A pid reused by a new process has a new command line.
            for pid in &self.new_pids {
                self.cmdlines.remove(pid);
            }
            for (pid, c) in &t.cmdlines {
                self.cmdlines.insert(*pid, c.clone());
            }
            if self.cmdlines.len() > 4 * self.procs.len() + 1024 {
                let live: HashSet<u32> = self.procs.iter().map(|p| p.pid).collect();
                self.cmdlines.retain(|pid, _| live.contains(pid));
            }
            self.tables += 1;
            // The list changes with the table only (memory % is drawn
            // from the latest system sample).
            self.rebuild();
        } else if cg_read && self.cg.filter.is_some() {
            // The cgroup filter's ids moved with the cgroups.
            self.rebuild();
        }
    }

    /// Memory use of a process, % of the machine's.
    pub fn mem_pct(&self, rss: u64) -> Option<f64> {
        model::process::mem_pct(rss, self.rates.as_ref()?.memory.total_bytes?)
    }

    /// The command shown: the command line when known, else the name.
    pub fn command(&self, p: &Proc) -> String {
        match self.cmdlines.get(&p.pid) {
            Some(c) if !c.is_empty() => c.clone(),
            _ => p.comm.to_string_lossy().into_owned(),
        }
    }

    /// Whether the view knows a command line for `pid`.
    pub fn has_cmdline(&self, pid: u32) -> bool {
        self.cmdlines.contains_key(&pid)
    }

    /// Learns command lines found elsewhere (the rows on screen).
    pub fn add_cmdline(&mut self, pid: u32, c: String) {
        self.cmdlines.insert(pid, c);
    }

    /// The items a screen `height` rows tall can show, wherever the
    /// selection scrolls it: that many either side of the selection.
    pub fn around_selection(&self, height: u16) -> std::ops::Range<usize> {
        let h = height as usize;
        self.selected.saturating_sub(h)..(self.selected + h).min(self.items.len())
    }

    /// Looks up the user names and cgroup paths of the rows a screen
    /// `height` rows tall can show around the selection, so that drawing
    /// only reads them.
    pub fn learn_names(&mut self, height: u16) {
        for i in self.around_selection(height) {
            let p = self.at(self.items[i].row);
            let (uid, cgroup) = (p.uid, p.cgroup_id);
            if let Some(u) = uid {
                self.users.name(u);
            }
            if let Some(id) = cgroup {
                self.cgroups.path(id);
            }
        }
    }

    /// The process `it` shows.
    pub fn proc_of(&self, it: &Item) -> &Proc {
        self.at(it.row)
    }

    fn at(&self, row: Row) -> &Proc {
        match row {
            Row::Live(i) => &self.procs[i as usize],
            Row::Ended(i) => &self.ended[i as usize],
        }
    }

    /// The row at `row`, with its rates `r` when it has them.
    fn item(&self, row: Row, mark: Mark, r: Option<&ProcRate>) -> Item {
        let p = self.at(row);
        // An ended process's CPU is over its last interval, from its final
        // times ([`App::push`]).
        let cpu = match mark {
            Mark::Exited(_) => self.exit_cpu.get(&p.pid).copied(),
            _ => r.and_then(|r| Some(r.user_pct? + r.system_pct?)),
        };
        Item {
            row,
            cpu,
            read: r.and_then(|r| r.read_bytes_per_sec),
            write: r.and_then(|r| r.write_bytes_per_sec),
            wait: r.and_then(|r| r.wait_pct),
            net_rx: r.and_then(|r| r.net_rx_bytes_per_sec),
            net_tx: r.and_then(|r| r.net_tx_bytes_per_sec),
            io_delay: r.and_then(|r| r.blkio_delay_pct),
            mem_delay: r.and_then(|r| r.mem_delay_pct),
            gpu: r.and_then(|r| r.gpu_pct),
            mark,
            branch: String::new(),
            folded: 0,
        }
    }

    fn sort_key(&mut self, a: &Item, b: &Item) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        let f = |x: Option<f64>, y: Option<f64>| x.unwrap_or(-1.0).total_cmp(&y.unwrap_or(-1.0));
        let o = match self.sort {
            // By name, not by id.
            Col::User => {
                let uid = |it| self.proc_of(it).uid.unwrap_or(u32::MAX);
                let (ua, ub) = (uid(a), uid(b));
                if ua == ub {
                    Ordering::Equal
                } else {
                    let na = self.users.name(ua).to_string();
                    na.as_str().cmp(self.users.name(ub))
                }
            }
            Col::Cpu => f(a.cpu, b.cpu),
            Col::Read => f(a.read, b.read),
            Col::Write => f(a.write, b.write),
            Col::Wait => f(a.wait, b.wait),
            Col::NetRx => f(a.net_rx, b.net_rx),
            Col::NetTx => f(a.net_tx, b.net_tx),
            Col::IoDelay => f(a.io_delay, b.io_delay),
            Col::MemDelay => f(a.mem_delay, b.mem_delay),
            Col::Gpu => f(a.gpu, b.gpu),
            c => {
                let (pa, pb) = (self.proc_of(a), self.proc_of(b));
                match c {
                    Col::Time => (pa.utime_ns + pa.stime_ns).cmp(&(pb.utime_ns + pb.stime_ns)),
                    Col::Command => self.command(pa).cmp(&self.command(pb)),
                    c => match c.spec().field {
                        Some(field) => field
                            .value(pa, &NoExtra)
                            .compare(&field.value(pb, &NoExtra)),
                        None => Ordering::Equal,
                    },
                }
            }
        };
        let o = if self.desc { o.reverse() } else { o };
        o.then(self.proc_of(a).pid.cmp(&self.proc_of(b).pid))
    }

    /// Whether `p` passes the text filter, given lowercased (`f`); the
    /// user filter is the caller's.
    fn matches(&self, p: &Proc, f: &str) -> bool {
        let in_cgroup = self
            .cg
            .filter
            .as_ref()
            .is_none_or(|c| p.cgroup_id.is_some_and(|id| c.ids.contains(&id)));
        in_cgroup
            && (f.is_empty()
                || p.pid.to_string() == f
                || self.command(p).to_lowercase().contains(f))
    }

    /// Rebuilds the list from the samples and the choices.
    pub fn rebuild(&mut self) {
        // The last list's buffer, refilled: a new one each table would be
        // megabytes faulted in at tens of thousands of processes.
        let mut items = std::mem::take(&mut self.items);
        items.clear();
        items.reserve(self.procs.len() + self.exits.len());
        let mut counts = Counts::default();
        let f = self.filter.to_lowercase();
        let uid = self.user.as_ref().map(|u| u.1);
        // The table, its rates and its births are sorted by pid: walked
        // side by side.
        let (mut r, mut n) = (0, 0);
        for (i, p) in self.procs.iter().enumerate() {
            while self
                .proc_rates
                .get(r)
                .is_some_and(|x| x.identity.pid < p.pid)
            {
                r += 1;
            }
            let rate = self
                .proc_rates
                .get(r)
                .filter(|x| x.identity == p.identity());
            while self.new_pids.get(n).is_some_and(|&q| q < p.pid) {
                n += 1;
            }
            counts.procs += 1;
            counts.threads += u64::from(p.num_threads);
            if p.state == 'R' {
                counts.running += 1;
            }
            let mark = if self.new_pids.get(n) == Some(&p.pid) {
                counts.new += 1;
                Mark::New
            } else {
                Mark::None
            };
            if uid.is_none_or(|u| p.uid == Some(u)) && self.matches(p, &f) {
                items.push(self.item(Row::Live(i as u32), mark, rate));
            }
        }
        for (i, (e, p)) in self.exits.iter().zip(&self.ended).enumerate() {
            counts.exited += 1;
            // Hidden under a user filter: the exit record has no owner.
            if uid.is_none() && self.matches(p, &f) {
                let status = (e.exit_status >= 0).then_some(e.exit_status);
                items.push(self.item(Row::Ended(i as u32), Mark::Exited(status), None));
            }
        }
        // Stable, merging runs: the list is built in PID order, which is
        // already the order of most rows under most keys (idle processes
        // tie at 0% and go by PID); an unstable sort took 60% more of
        // top's CPU at 20,000 processes.
        items.sort_by(|a, b| self.sort_key(a, b));
        if self.exited_first && !self.tree {
            // Stable: each part keeps the sort order.
            items.sort_by_key(|it| !matches!(it.mark, Mark::Exited(_)));
        }
        if self.tree {
            items = self.treeify(items);
        }
        self.counts = counts;
        self.items = items;
        self.selected = self.selected.min(self.items.len().saturating_sub(1));
    }

    /// Orders `items` (already sorted) as a tree: each process under its
    /// parent, siblings in sort order; folded processes hide their
    /// descendants.
    fn treeify(&self, items: Vec<Item>) -> Vec<Item> {
        let index: HashMap<u32, usize> = items
            .iter()
            .enumerate()
            .filter(|(_, it)| !matches!(it.mark, Mark::Exited(_)))
            .map(|(i, it)| (self.proc_of(it).pid, i))
            .collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); items.len()];
        let mut roots = Vec::new();
        for (i, it) in items.iter().enumerate() {
            match index.get(&self.proc_of(it).ppid) {
                Some(&parent) if parent != i => children[parent].push(i),
                _ => roots.push(i),
            }
        }
        crate::tree::order(&children, &roots, |i| {
            self.folded.contains(&self.proc_of(&items[i]).identity())
        })
        .into_iter()
        .map(|p| Item {
            branch: p.branch,
            folded: p.folded,
            ..items[p.node].clone()
        })
        .collect()
    }

    pub fn selected_item(&self) -> Option<&Item> {
        self.items.get(self.selected)
    }
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: buf is valid for its length; gethostname NUL-terminates
    // within it (or truncates, which the search below tolerates).
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The row for `pid` in a table sorted by pid.
fn by_pid(rows: &[Proc], pid: u32) -> Option<&Proc> {
    rows.binary_search_by_key(&pid, |p| p.pid)
        .ok()
        .map(|i| &rows[i])
}
