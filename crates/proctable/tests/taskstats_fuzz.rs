//! The taskstats netlink parser on arbitrary and mutated datagrams: never a
//! panic, and only records that fit in the bytes given.

use proctable::taskstats::{parse_datagram, parse_taskstats};
use proptest::prelude::*;

/// A datagram as the kernel sends it: nlmsghdr, genl header, AGGR_PID
/// holding PID and STATS.
fn datagram(family: u16, stats: &[u8]) -> Vec<u8> {
    let nla = |kind: u16, payload: &[u8]| {
        let mut a = Vec::new();
        a.extend_from_slice(&((4 + payload.len()) as u16).to_ne_bytes());
        a.extend_from_slice(&kind.to_ne_bytes());
        a.extend_from_slice(payload);
        a.resize(a.len().next_multiple_of(4), 0);
        a
    };
    let mut inner = nla(1, &77u32.to_ne_bytes());
    inner.extend(nla(3, stats));
    let body = nla(4, &inner);
    let len = 20 + body.len();
    let mut m = Vec::new();
    m.extend_from_slice(&(len as u32).to_ne_bytes());
    m.extend_from_slice(&family.to_ne_bytes());
    m.extend_from_slice(&[0; 10]);
    m.extend_from_slice(&[2, 1, 0, 0]);
    m.extend(body);
    m
}

fn stats() -> Vec<u8> {
    let mut s = vec![0u8; 432];
    s[0..2].copy_from_slice(&14u16.to_ne_bytes());
    s[4..8].copy_from_slice(&(3u32 << 8).to_ne_bytes());
    s[8] = 0x20;
    s[80..84].copy_from_slice(b"true");
    s[128..132].copy_from_slice(&77u32.to_ne_bytes());
    s[368..372].copy_from_slice(&77u32.to_ne_bytes());
    s
}

#[test]
fn a_well_formed_record() {
    let mut out = Vec::new();
    parse_datagram(&datagram(30, &stats()), 30, &mut out);
    assert_eq!(out.len(), 1);
    let r = out[0];
    assert_eq!(
        (r.pid, r.tgid, r.exit_code, r.last_of_group),
        (77, 77, 3 << 8, true)
    );
    assert_eq!(&r.comm[..5], b"true\0");
    // Another family's messages are not read.
    out.clear();
    parse_datagram(&datagram(31, &stats()), 30, &mut out);
    assert!(out.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..1200)) {
        let mut out = Vec::new();
        parse_datagram(&bytes, 30, &mut out);
        let _ = parse_taskstats(&bytes);
    }

    #[test]
    fn mutated_datagrams_never_panic(flips in prop::collection::vec((0usize..500, any::<u8>()), 1..8), cut in 0usize..520) {
        let mut d = datagram(30, &stats());
        for (i, b) in flips {
            let n = d.len();
            d[i % n] = b;
        }
        d.truncate(cut.min(d.len()));
        let mut out = Vec::new();
        parse_datagram(&d, 30, &mut out);
        prop_assert!(out.len() <= 1);
    }
}
