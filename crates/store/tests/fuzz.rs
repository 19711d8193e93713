//! Property-based fuzzing of every decoder the store reads back with
//! (a damaged file feeds them anything): arbitrary bytes, and valid encodings
//! with bytes flipped or cut, give a result or a refusal, never a panic,
//! and a text round-trips byte for byte.

use proptest::prelude::*;
use store::blocks::{SysDecoder, SysEncoder};
use store::codec::{join_numbers, split_numbers};
use store::procs::Decoder;

fn kept(texts: &[Vec<u8>]) -> Vec<u8> {
    let mut k = Vec::new();
    for (i, t) in texts.iter().enumerate() {
        let src = store::RECORDED[i % store::RECORDED.len()];
        procfs::kept::append(&mut k, src, t);
    }
    k
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn any_text_comes_back_byte_for_byte(text in proptest::collection::vec(any::<u8>(), 0..400)) {
        let (mut t, mut n, mut back) = (Vec::new(), Vec::new(), Vec::new());
        split_numbers(&text, &mut t, &mut n);
        prop_assert!(join_numbers(&t, &n, &mut back).is_some());
        prop_assert_eq!(back, text);
    }

    #[test]
    fn arbitrary_bytes_never_panic_a_decoder(b in proptest::collection::vec(any::<u8>(), 0..600), nums in proptest::collection::vec(any::<u64>(), 0..8)) {
        let _ = SysDecoder::default().decode(&b, u128::MAX);
        let _ = Decoder::default().apply(&b, &mut 0);
        let _ = store::journal::records(&b).count();
        let _ = store::procs::rows(&b).count();
        let _ = store::procs::exits(&b).count();
        let _ = store::cgroups::whole(&b, 0);
        let mut cg = store::cgroups::Decoder::default();
        let (mut p1, mut p2) = (0, b.len() / 2);
        let _ = cg.apply(&b, &mut p1);
        let _ = cg.apply(&b, &mut p2);
        let mut rows = b.clone();
        let _ = store::procs::apply_delta_rows(&mut rows, &b);
        let mut chain = store::procs::Chain::default();
        let _ = chain.feed(store::journal::Kind::Procs, 1, &b);
        let _ = chain.feed(store::journal::Kind::ProcsDelta, 2, &b);
        let mut out = Vec::new();
        let _ = join_numbers(&b, &nums, &mut out);
    }

    #[test]
    fn damaged_system_blocks_decode_or_are_refused(
        texts in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..120), 1..6),
        flip in any::<usize>(),
        cut in any::<usize>(),
    ) {
        let k = kept(&texts);
        let mut body = Vec::new();
        SysEncoder::default().encode(&[(1, &k), (2, &k)], &mut body);
        let whole = SysDecoder::default().decode(&body, u128::MAX).unwrap();
        prop_assert_eq!(whole.times, vec![1, 2]);
        let mut bad = body.clone();
        let i = flip % bad.len();
        bad[i] ^= 0xa5;
        let _ = SysDecoder::default().decode(&bad, u128::MAX);
        let _ = SysDecoder::default().decode(&body[..cut % body.len()], u128::MAX);
    }

    #[test]
    fn a_delta_applied_to_its_old_table_gives_the_new_one(
        old in proptest::collection::btree_map((1u32..60, 0u64..3), any::<u8>(), 0..40),
        new in proptest::collection::btree_map((1u32..60, 0u64..3), any::<u8>(), 0..40),
    ) {
        let rows = |m: &std::collections::BTreeMap<(u32, u64), u8>| {
            let procs: Vec<proctable::Proc> = m
                .iter()
                .map(|(&(pid, start_ticks), &cpu)| proctable::Proc {
                    pid,
                    start_ticks,
                    utime_ns: u64::from(cpu) * 1000,
                    ..Default::default()
                })
                .collect();
            let mut r = Vec::new();
            store::procs::put_rows(&mut r, &procs);
            r
        };
        let (a, b) = (rows(&old), rows(&new));
        let mut delta = Vec::new();
        store::procs::put_delta_rows(&mut delta, 9, &a, &b);
        prop_assert_eq!(store::procs::delta_base(&delta), Some(9));
        let mut back = a.clone();
        prop_assert!(store::procs::apply_delta_rows(&mut back, &delta).is_some());
        prop_assert_eq!(&back, &b);
        // From what the sampler keeps of the old table (identities and
        // hashes), made from processes one row at a time or from rows: the
        // same delta, and the new table kept in its place.
        let procs: Vec<proctable::Proc> = store::procs::rows(&b)
            .map(|(s, v)| store::procs::rebuild(&s, &v))
            .collect();
        let mut seen = store::procs::Seen::new();
        seen.keep(&a);
        let mut hashed = Vec::new();
        if store::procs::in_pid_order(&procs) {
            prop_assert!(seen.put_delta_procs(&mut hashed, 9, &procs).is_some());
        } else {
            seen.put_delta_rows(&mut hashed, 9, &b);
        }
        prop_assert_eq!(&hashed, &delta);
        prop_assert_eq!(seen.len(), procs.len());
        let mut none = Vec::new();
        seen.put_delta_rows(&mut none, 10, &b);
        prop_assert_eq!(none.len(), 12, "nothing changed since the table kept");
    }
}
