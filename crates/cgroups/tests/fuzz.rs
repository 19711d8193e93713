//! Every cgroup file's parser on arbitrary bytes, and on the fixture
//! trees' text cut and flipped: never a panic; a figure set only from text
//! that held it.

use cgroups::{FILES, Figures};
use proptest::prelude::*;

/// Each file's text in the v2 and v1 fixture trees.
fn samples() -> Vec<(usize, Vec<u8>)> {
    let mut out = Vec::new();
    for (tree, sub) in [
        ("cgroup-v2", "sys/fs/cgroup/system.slice"),
        ("cgroup-v1", "sys/fs/cgroup"),
    ] {
        let base = fixtures::dir().join(tree).join(sub);
        for (i, f) in FILES.iter().enumerate() {
            let dirs = [
                base.clone(),
                base.join("memory/system.slice"),
                base.join("cpu,cpuacct/system.slice"),
                base.join("blkio/system.slice"),
                base.join("pids/system.slice"),
            ];
            if let Some(t) = dirs.iter().find_map(|d| std::fs::read(d.join(f.name)).ok()) {
                out.push((i, t));
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_bytes_parse_or_are_refused(i in 0..FILES.len(), text in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut out = Figures::default();
        let _ = cgroups::parse::parse(&FILES[i], &text, &mut out);
    }

    #[test]
    fn real_text_cut_or_flipped_parses_or_is_refused(k in any::<prop::sample::Index>(), cut in any::<prop::sample::Index>(), flip in any::<prop::sample::Index>(), x in 1u8..) {
        let s = samples();
        prop_assume!(!s.is_empty());
        let (i, t) = &s[k.index(s.len())];
        let mut out = Figures::default();
        let whole = cgroups::parse::parse(&FILES[*i], t, &mut out);
        prop_assert!(whole.is_ok(), "{}: {:?}", FILES[*i].name, whole);
        prop_assert_eq!(whole.unwrap(), 0);
        let mut bad = t.clone();
        if !bad.is_empty() {
            let j = flip.index(bad.len());
            bad[j] ^= x;
            let _ = cgroups::parse::parse(&FILES[*i], &bad, &mut Figures::default());
            let _ = cgroups::parse::parse(&FILES[*i], &t[..cut.index(t.len())], &mut Figures::default());
        }
    }
}

#[test]
fn every_file_has_fixture_text_to_mutate() {
    let s = samples();
    for (i, f) in FILES.iter().enumerate() {
        assert!(
            s.iter().any(|(j, _)| *j == i),
            "no fixture text for {}",
            f.spelled()
        );
    }
}
