//! `store`: what each day file holds, per source (samples, raw and stored
//! bytes), the samples only a journal holds, and the reads each
//! remote-write receiver still lacks.

use super::*;
use sys::Error;

pub(super) struct StoreUsage;

impl Section for StoreUsage {
    fn name(&self) -> &'static str {
        "store"
    }
    fn sources(&self) -> &'static [Source] {
        &[]
    }
    fn first_column(&self) -> &'static str {
        "day"
    }
    fn columns(&self) -> &'static [&'static str] {
        &["source", "samples", "raw_bytes", "stored_bytes", "ratio"]
    }
    fn report(&self, h: &History, _: &Window, _: &Options) -> Result<Report, Error> {
        let mut r = empty(self);
        let rows = &mut r.table.rows;
        for d in h.usage()? {
            for (src, n, raw, stored) in &d.sources {
                rows.push(vec![
                    text(d.day.clone()),
                    text(src.clone()),
                    num(Some(*n as f64)),
                    num(Some(*raw as f64)),
                    num(Some(*stored as f64)),
                    num(Some(*raw as f64 / (*stored).max(1) as f64)),
                ]);
            }
            // Written while the wall clock was ahead: kept out of
            // retention's age rule, the first to go under the size cap.
            let future = if d.day > store::db::day_of(store::writer::now_ms()) {
                "; dated after today: the wall clock was ahead"
            } else {
                ""
            };
            rows.push(vec![
                text(d.day.clone()),
                text(format!("(file, {} processes{future})", d.identities)),
                num(None),
                num(None),
                num(Some(d.file_bytes as f64)),
                num(None),
            ]);
        }
        // Samples only a journal holds: a running agent's next flush, or a
        // killed agent's tail (shown by every section, written at the next
        // start).
        for (path, n, live) in h.journals() {
            let what = if *live {
                "held by the running agent, written at its next flush"
            } else {
                "its agent is gone: shown here, written at the store's next start"
            };
            rows.push(vec![
                text("journal"),
                text(format!("({}: {what})", path.display())),
                num(Some(*n as f64)),
                num(None),
                num(Some(std::fs::metadata(path).map_or(0, |m| m.len()) as f64)),
                num(None),
            ]);
        }
        // Each remote-write receiver, each lane: the records (reads,
        // walks, tables) recorded after its send position, which it still
        // lacks.
        for rw in store::sent::receivers(&h.dir)? {
            let p = rw.position;
            let lacks = h.records_after(rw.lane, p.through);
            let ahead = match p.ahead {
                Some((a, b)) => format!(
                    "; also sent {} to {}",
                    store::when::format(a, true),
                    store::when::format(b, true)
                ),
                None => String::new(),
            };
            r.table.rows.push(vec![
                text("remote write"),
                text(format!(
                    "({} {}: sent through {}{ahead}; lacks the records counted here)",
                    rw.name,
                    rw.lane.name(),
                    store::when::format(p.through, true)
                )),
                num(Some(lacks as f64)),
                num(None),
                num(None),
                num(None),
            ]);
        }
        Ok(r)
    }
}
