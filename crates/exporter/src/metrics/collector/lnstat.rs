//! node_exporter's lnstat collector: /proc/net/stat/*, each network
//! cache's counters per CPU, a family per column.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if !s.ok(Source::Lnstat) {
        return Ok(());
    }
    // A family per column name, over every file that has the column.
    let mut columns: Vec<&str> = s
        .lnstat
        .iter()
        .flat_map(|f| f.columns.iter().map(String::as_str))
        .collect();
    columns.sort_unstable();
    columns.dedup();
    let cpus: Vec<String> = (0..s.lnstat.iter().map(|f| f.rows.len()).max().unwrap_or(0))
        .map(|i| i.to_string())
        .collect();
    let (pre, post) = NODE_LNSTAT_TOTAL.name.split_once('*').unwrap_or_default();
    let mut name = String::new();
    for col in columns {
        name.clear();
        name.push_str(pre);
        name.push_str(col);
        name.push_str(post);
        let mut m = out.family_named(&NODE_LNSTAT_TOTAL, &name, "linux network cache stats")?;
        for f in &s.lnstat {
            let Some(at) = f.columns.iter().position(|c| c == col) else {
                continue;
            };
            for (row, cpu) in f.rows.iter().zip(&cpus) {
                counter_l(
                    &mut m,
                    &[("cpu", cpu.as_str()), ("subsystem", f.name.as_str())],
                    row[at] as f64,
                )?;
            }
        }
    }
    Ok(())
}
