//! `cgroup`: the top cgroups of each interval (`--top`, ranked by `--sort`:
//! cpu, memory, io, pids or path), as the kernel counts them, from the
//! recorded walks; `cgroup-events`: the cgroups made and removed.

use model::cgroup::between;
use sys::Error;

use super::*;

pub(super) struct Cgroup;

/// Whether `path` is `top` or below it (every cgroup without `top`).
fn within(top: Option<&str>, path: &str) -> bool {
    top.is_none_or(|t| {
        let t = t.trim_end_matches('/');
        t.is_empty()
            || path
                .strip_prefix(t)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

impl Section for Cgroup {
    fn name(&self) -> &'static str {
        "cgroup"
    }
    fn sources(&self) -> &'static [Source] {
        &[]
    }
    fn columns(&self) -> &'static [&'static str] {
        &[
            "cgroup",
            "%cpu",
            "%usr",
            "%sys",
            "%throttled",
            "mem_mib",
            "wset_mib",
            "rkB/s",
            "wkB/s",
            "majflt/s",
            "tasks",
            "%cpu_some",
            "%mem_some",
            "%io_some",
        ]
    }
    fn report(&self, h: &History, w: &Window, o: &Options) -> Result<Report, Error> {
        let top = o.cgroup.as_deref();
        let mut start: Option<(u64, cgroups::Sample)> = None;
        // Walks come every 10 s, slowed by the budget up to 50 s.
        let mut steps = Steps::new(60_000);
        let mut rows = Vec::new();
        h.cgroups(w.from, w.to, &mut |ts, walk| {
            if steps.gap(w, ts) {
                start = None;
            }
            if start.as_ref().is_some_and(|(t0, _)| !w.due(*t0, ts)) {
                return;
            }
            let mut now = walk.sample(ts);
            now.cgroups.retain(|c| within(top, &c.path));
            if let Some((_, before)) = &start {
                let mut rates = between(Some(before), &now);
                o.cgroup_sort.order(&mut rates);
                let kb = |v: Option<f64>| num(v.map(|v| v / 1024.0));
                for r in rates.iter().take(o.top) {
                    rows.push(vec![
                        w.time(ts),
                        text(r.path.to_string()),
                        num(r.cpu_pct),
                        num(r.cpu_user_pct),
                        num(r.cpu_system_pct),
                        num(r.throttled_periods_pct),
                        mib(r.memory_bytes),
                        mib(r.working_set_bytes),
                        kb(r.io_read_bytes_per_sec),
                        kb(r.io_write_bytes_per_sec),
                        num(r.major_page_faults_per_sec),
                        num(r.pids.map(|v| v as f64)),
                        num(r.cpu_some_pct),
                        num(r.memory_some_pct),
                        num(r.io_some_pct),
                    ]);
                }
            }
            start = Some((ts, now));
        })?;
        let mut r = empty(self);
        r.table.rows = rows;
        r.gaps = steps.gaps;
        Ok(r)
    }
}

pub(super) struct CgroupEvents;

impl Section for CgroupEvents {
    fn name(&self) -> &'static str {
        "cgroup-events"
    }
    fn sources(&self) -> &'static [Source] {
        &[]
    }
    fn columns(&self) -> &'static [&'static str] {
        &["event", "cgroup", "id"]
    }
    fn report(&self, h: &History, w: &Window, o: &Options) -> Result<Report, Error> {
        let mut r = empty(self);
        for c in h.cgroup_changes(w.from, w.to)? {
            if !within(o.cgroup.as_deref(), &c.path) {
                continue;
            }
            r.table.rows.push(vec![
                w.time(c.ts_ms),
                text(if c.made { "made" } else { "removed" }),
                text(c.path),
                num(Some(c.id as f64)),
            ]);
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::within;

    #[test]
    fn a_cgroup_is_within_itself_and_its_ancestors_only() {
        assert!(within(None, "/a"));
        assert!(within(Some("/"), "/a/b"));
        assert!(within(Some("/a"), "/a"));
        assert!(within(Some("/a/"), "/a/b"));
        assert!(!within(Some("/a"), "/ab"));
        assert!(!within(Some("/a/b"), "/a"));
    }
}
