//! The cgroup view: every cgroup as a tree (a child under its parent,
//! siblings in sort order), with its CPU, memory, I/O and pressure over the
//! interval between the last two reads (`model::cgroup`), foldable; the
//! selected cgroup can filter the process list to the processes in it
//! and below it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use cgroups::Sample;
use model::cgroup::CgroupRates;

use crate::tree::Placed;

pub use model::cgroup::Sort as CgSort;

/// The title of the column a sort marks.
pub fn title(s: CgSort) -> &'static str {
    match s {
        CgSort::Cpu => "CPU%",
        CgSort::Memory => "MEM",
        CgSort::Io => "IO/s",
        CgSort::Pids => "TASKS",
        CgSort::Path => "CGROUP",
    }
}

/// The processes shown: those in this cgroup and below it.
#[derive(Debug, Clone)]
pub struct CgFilter {
    pub path: Arc<str>,
    /// The ids (v2 inodes) of the cgroup and its descendants.
    pub ids: HashSet<u64>,
}

/// The view's state, kept across reads.
pub struct CgView {
    pub shown: bool,
    prev: Option<Sample>,
    cur: Option<Sample>,
    /// The last read's cgroups, in its order (parents first), with rates.
    pub rates: Vec<CgroupRates>,
    /// The list: each row's node is its index in `rates`.
    pub rows: Vec<Placed>,
    pub selected: usize,
    pub sort: CgSort,
    pub desc: bool,
    folded: HashSet<Arc<str>>,
    pub filter: Option<CgFilter>,
    /// Why there is nothing to show, when there is not.
    pub absent: Option<String>,
}

impl Default for CgView {
    fn default() -> Self {
        CgView {
            shown: false,
            prev: None,
            cur: None,
            rates: Vec::new(),
            rows: Vec::new(),
            selected: 0,
            sort: CgSort::Cpu,
            desc: true,
            folded: HashSet::new(),
            filter: None,
            absent: None,
        }
    }
}

/// The parent of a cgroup's path (`None` for the root).
fn parent(path: &str) -> Option<&str> {
    if path == "/" {
        return None;
    }
    match path.rfind('/') {
        Some(0) => Some("/"),
        Some(i) => Some(&path[..i]),
        None => None,
    }
}

/// The last part of a path (`/` for the root).
pub fn name(path: &str) -> &str {
    path.rsplit('/').find(|s| !s.is_empty()).unwrap_or("/")
}

impl CgView {
    /// Forgets the reads (a new feed, or a replay jump).
    pub fn reset(&mut self) {
        self.prev = None;
        self.cur = None;
        self.rates.clear();
        self.rows.clear();
    }

    /// Takes a new read: rates since the one before, the list rebuilt,
    /// the filter's ids those of its cgroups now (they come and go).
    pub fn push(&mut self, s: Sample) {
        self.absent = None;
        self.prev = self.cur.take();
        self.rates = model::cgroup::between(self.prev.as_ref(), &s);
        self.cur = Some(s);
        if let Some(f) = &self.filter {
            let path = f.path.clone();
            self.filter = Some(self.filter_for(&path));
        }
        self.rebuild();
    }

    /// Whether rates (two reads) are known.
    pub fn has_rates(&self) -> bool {
        self.prev.is_some()
    }

    /// Rebuilds the rows: each cgroup under its parent, siblings in sort
    /// order, folded ones hiding their descendants.
    pub fn rebuild(&mut self) {
        let n = self.rates.len();
        let index: HashMap<&str, usize> = self
            .rates
            .iter()
            .enumerate()
            .map(|(i, r)| (&*r.path, i))
            .collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, r) in self.rates.iter().enumerate() {
            match parent(&r.path).and_then(|p| index.get(p)) {
                Some(&p) if p != i => children[p].push(i),
                _ => roots.push(i),
            }
        }
        let order = |a: &usize, b: &usize| {
            let (ra, rb) = (&self.rates[*a], &self.rates[*b]);
            let by = if self.sort == CgSort::Path {
                ra.path.cmp(&rb.path)
            } else {
                self.sort.key(ra).total_cmp(&self.sort.key(rb))
            };
            let by = if self.desc { by.reverse() } else { by };
            by.then_with(|| ra.path.cmp(&rb.path))
        };
        for c in &mut children {
            c.sort_by(order);
        }
        roots.sort_by(order);
        self.rows = crate::tree::order(&children, &roots, |i| {
            self.folded.contains(&self.rates[i].path)
        });
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
    }

    /// The selected cgroup.
    pub fn selected_rates(&self) -> Option<&CgroupRates> {
        self.rows.get(self.selected).map(|r| &self.rates[r.node])
    }

    /// Sorts by `s` (again: the other way).
    pub fn sort_on(&mut self, s: CgSort) {
        if self.sort == s {
            self.desc = !self.desc;
        } else {
            self.sort = s;
            self.desc = s != CgSort::Path;
        }
        self.rebuild();
    }

    /// Folds (`fold`) or unfolds the selected cgroup.
    pub fn fold(&mut self, fold: bool) {
        let Some(path) = self.selected_rates().map(|r| r.path.clone()) else {
            return;
        };
        if fold {
            self.folded.insert(path);
        } else {
            self.folded.remove(&path);
        }
        self.rebuild();
    }

    /// The filter for the cgroup at `path`: its id and its descendants'.
    fn filter_for(&self, path: &str) -> CgFilter {
        let prefix = if path == "/" {
            "/".to_string()
        } else {
            format!("{path}/")
        };
        let ids = self
            .rates
            .iter()
            .filter(|r| &*r.path == path || r.path.starts_with(&prefix))
            .map(|r| r.id)
            .collect();
        CgFilter {
            path: Arc::from(path),
            ids,
        }
    }

    /// Shows only the processes of the selected cgroup (the root: all).
    pub fn filter_selected(&mut self) {
        self.filter = match self.selected_rates().map(|r| r.path.clone()) {
            Some(p) if &*p != "/" => Some(self.filter_for(&p)),
            _ => None,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cgroups::{Cgroup, Figure, Figures};

    fn sample(mono_s: u64, rows: &[(&str, u64, u64, u64)]) -> Sample {
        Sample {
            mono_ns: mono_s * 1_000_000_000,
            cgroups: rows
                .iter()
                .map(|&(path, id, cpu_ns, mem)| {
                    let mut figures = Figures::default();
                    figures.set(Figure::CpuUsageNs, cpu_ns);
                    figures.set(Figure::MemoryBytes, mem);
                    Cgroup {
                        path: path.into(),
                        id,
                        depth: path.matches('/').count() as u16 - u16::from(path == "/"),
                        figures,
                    }
                })
                .collect(),
            ..Sample::default()
        }
    }

    fn paths(v: &CgView) -> Vec<String> {
        v.rows
            .iter()
            .map(|r| format!("{}{}", r.branch, name(&v.rates[r.node].path)))
            .collect()
    }

    #[test]
    fn a_tree_sorted_by_cpu_folded_and_filtered() {
        let mut v = CgView::default();
        let first = [
            ("/", 1, 0, 0),
            ("/a.slice", 2, 0, 10),
            ("/a.slice/x.service", 3, 0, 5),
            ("/a.slice/y.service", 4, 0, 5),
            ("/b.slice", 5, 0, 1),
        ];
        v.push(sample(1, &first));
        assert!(!v.has_rates());
        // One second later: b used half a CPU, y a quarter, x nothing.
        v.push(sample(
            2,
            &[
                ("/", 1, 750_000_000, 0),
                ("/a.slice", 2, 250_000_000, 10),
                ("/a.slice/x.service", 3, 0, 5),
                ("/a.slice/y.service", 4, 250_000_000, 5),
                ("/b.slice", 5, 500_000_000, 1),
            ],
        ));
        assert!(v.has_rates());
        assert_eq!(
            paths(&v),
            [
                "/",
                "├─ b.slice",
                "└─ a.slice",
                "   ├─ y.service",
                "   └─ x.service"
            ]
        );
        let cpu: Vec<f64> = v
            .rows
            .iter()
            .map(|r| v.rates[r.node].cpu_pct.unwrap())
            .collect();
        assert_eq!(cpu, [75.0, 50.0, 25.0, 25.0, 0.0]);
        // By memory; by path.
        v.sort_on(CgSort::Memory);
        assert_eq!(paths(&v)[1], "├─ a.slice");
        v.sort_on(CgSort::Path);
        assert_eq!(paths(&v)[1..3], ["├─ a.slice", "│  ├─ x.service"]);
        // Folding a.slice hides its two services.
        v.selected = 1;
        v.fold(true);
        assert_eq!(paths(&v), ["/", "├─ a.slice", "└─ b.slice"]);
        assert_eq!(v.rows[1].folded, 2);
        // Its processes: a.slice's own and its services'.
        v.filter_selected();
        let f = v.filter.as_ref().unwrap();
        assert_eq!(&*f.path, "/a.slice");
        assert_eq!(f.ids, [2, 3, 4].into_iter().collect());
        v.fold(false);
        assert_eq!(v.rows.len(), 5);
        // The root shows every process.
        v.selected = 0;
        v.filter_selected();
        assert!(v.filter.is_none());
    }

    #[test]
    fn a_cgroup_made_again_has_no_rate_and_the_filter_follows_it() {
        let mut v = CgView::default();
        v.push(sample(1, &[("/", 1, 0, 0), ("/s", 2, 100, 0)]));
        v.selected = 1;
        v.filter_selected();
        v.push(sample(2, &[("/", 1, 0, 0), ("/s", 9, 200, 0)]));
        let s = v.rates.iter().find(|r| &*r.path == "/s").unwrap();
        assert_eq!(s.cpu_pct, None);
        assert_eq!(
            v.filter.as_ref().unwrap().ids,
            [9].into_iter().collect::<HashSet<u64>>()
        );
    }

    #[test]
    fn parents_and_names_of_paths() {
        assert_eq!(parent("/"), None);
        assert_eq!(parent("/a"), Some("/"));
        assert_eq!(parent("/a/b"), Some("/a"));
        assert_eq!(name("/"), "/");
        assert_eq!(name("/a/b.scope"), "b.scope");
    }
}
