//! node_exporter's meminfo collector: /proc/meminfo, one family per key.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Meminfo) {
        let (mut part, mut name) = (String::new(), String::new());
        for (k, v) in s.meminfo.all().iter() {
            let f = meminfo_family(k, &mut part);
            let mut m = out.family_of(f, &part, &mut name)?;
            gauge(&mut m, v as f64)?;
        }
    }
    Ok(())
}

/// node_exporter's meminfo family for a key (`HugePages_*` are counts, the
/// rest bytes) and the part of its name that stands for the key:
/// `Active(anon)` -> `Active_anon`.
pub(crate) fn meminfo_family(key: &str, part: &mut String) -> &'static Family {
    part.clear();
    match key.strip_prefix("HugePages_") {
        Some(rest) => {
            part.push_str(rest);
            &NODE_MEMORY_HUGEPAGES
        }
        None => {
            part.extend(key.chars().filter(|&c| c != ')').map(|c| match c {
                '(' => '_',
                c => c,
            }));
            &NODE_MEMORY_BYTES
        }
    }
}
