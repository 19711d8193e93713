//! Memory per NUMA node (node_exporter's meminfo_numa):
//! `/sys/devices/system/node/nodeN/meminfo` (`Node 0 MemTotal:  11102412 kB`)
//! and `numastat` (`numa_hit 684014454`).
//!
//! The reader gathers one record per node: `@<node>`, then the node's
//! meminfo lines as printed, then `numastat` lines prefixed with `=`.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::{self, err};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NumaNode {
    pub node: u32,
    /// `(key, bytes)` from meminfo, keys as node_exporter writes them
    /// (`Active(anon)` as `Active_anon`); counts without a unit (HugePages)
    /// as they are.
    pub meminfo: Vec<(String, u64)>,
    /// `(key, count)` from numastat (page allocation events).
    pub numastat: Vec<(String, u64)>,
}

/// `Active(anon)` as `Active_anon`, as node_exporter renames meminfo keys.
fn key(k: &str) -> String {
    let mut s = k.replace('(', "_");
    s.retain(|c| c != ')');
    s
}

pub fn parse_into(buf: &[u8], out: &mut Vec<NumaNode>) -> Result<(), ParseError> {
    out.clear();
    for l in records::lines(buf) {
        let (n, text) = l?;
        if let Some(id) = text.strip_prefix('@') {
            records::open(n, id, out.len(), "node")?;
            let node = id
                .parse()
                .map_err(|_| err(n, "node", ParseErrorKind::Invalid, "`@<node number>`"))?;
            out.push(NumaNode {
                node,
                ..NumaNode::default()
            });
            continue;
        }
        let node = records::current(out, n, "node")?;
        let num = |v: &str| -> Result<u64, ParseError> {
            v.parse()
                .map_err(|_| err(n, "value", ParseErrorKind::Invalid, "a whole number"))
        };
        if node.meminfo.len() + node.numastat.len() >= 4096 {
            return Err(err(
                n,
                "key",
                ParseErrorKind::TooMany,
                "at most 4096 keys a node",
            ));
        }
        if let Some(stat) = text.strip_prefix('=') {
            let (k, v) = stat
                .split_once(' ')
                .ok_or_else(|| err(n, "value", ParseErrorKind::Missing, "`<key> <count>`"))?;
            node.numastat.push((k.to_string(), num(v.trim())?));
            continue;
        }
        // `Node 0 MemTotal:       11102412 kB`
        let mut w = text.split_whitespace();
        let (Some("Node"), Some(_), Some(k), Some(v)) = (w.next(), w.next(), w.next(), w.next())
        else {
            return Err(err(
                n,
                "key",
                ParseErrorKind::Invalid,
                "`Node <n> <Key>: <value> [kB]`",
            ));
        };
        let k = k
            .strip_suffix(':')
            .ok_or_else(|| err(n, "key", ParseErrorKind::Invalid, "`<Key>:`"))?;
        let v = num(v)?;
        let bytes = match w.next() {
            Some("kB") => v.saturating_mul(1024),
            Some(_) => return Err(err(n, "unit", ParseErrorKind::Invalid, "kB or none")),
            None => v,
        };
        node.meminfo.push((key(k), bytes));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let mut v = crate::parsed(parse_into, b"@0\nNode 0 MemTotal:       11102412 kB\nNode 0 Active(anon):     1024 kB\nNode 0 HugePages_Total:     0\n=numa_hit 684014454\n=other_node 0\n@1\nNode 1 MemFree: 4 kB\n");
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].meminfo[0], ("MemTotal".to_string(), 11102412 * 1024));
        assert_eq!(v[0].meminfo[1], ("Active_anon".to_string(), 1024 * 1024));
        assert_eq!(v[0].meminfo[2], ("HugePages_Total".to_string(), 0));
        assert_eq!(v[0].numastat[0], ("numa_hit".to_string(), 684014454));
        assert_eq!((v[1].node, v[1].meminfo[0].1), (1, 4096));
        assert_eq!(
            parse_into(b"@0\nNode 0 MemTotal 5 kB\n", &mut v)
                .unwrap_err()
                .field,
            "key"
        );
        assert_eq!(
            parse_into(b"@0\n=numa_hit x\n", &mut v).unwrap_err().field,
            "value"
        );
        assert_eq!(
            parse_into(b"Node 0 MemTotal: 1 kB\n", &mut v)
                .unwrap_err()
                .field,
            "node"
        );
    }
}
