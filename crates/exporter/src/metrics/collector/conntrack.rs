//! node_exporter's conntrack collector: nf_conntrack's counts and stats.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Conntrack) {
        let c = &s.conntrack;
        one(out, &NODE_NF_CONNTRACK_ENTRIES, c.entries as f64)?;
        one(out, &NODE_NF_CONNTRACK_ENTRIES_LIMIT, c.limit as f64)?;
        if let Some(st) = &c.stats {
            for (f, v) in [
                (&NODE_NF_CONNTRACK_STAT_FOUND, st.found),
                (&NODE_NF_CONNTRACK_STAT_INVALID, st.invalid),
                (&NODE_NF_CONNTRACK_STAT_IGNORE, st.ignore),
                (&NODE_NF_CONNTRACK_STAT_INSERT, st.insert),
                (&NODE_NF_CONNTRACK_STAT_INSERT_FAILED, st.insert_failed),
                (&NODE_NF_CONNTRACK_STAT_DROP, st.drop),
                (&NODE_NF_CONNTRACK_STAT_EARLY_DROP, st.early_drop),
                (&NODE_NF_CONNTRACK_STAT_SEARCH_RESTART, st.search_restart),
            ] {
                one(out, f, v as f64)?;
            }
        }
    }
    Ok(())
}
