//! The DRM fdinfo parser on arbitrary and mutated files: never a panic; a
//! file it accepts names its driver, and its figures are those of its own
//! lines (a mutation of a number's digits changes the sum, not the
//! parser's state).

use proctable::gpu::fdinfo::parse;
use proptest::prelude::*;

const AMDGPU: &str = "/fixtures/gpu-drm/proc/100/fdinfo/5";
const I915: &str = "/fixtures/gpu-drm/proc/200/fdinfo/3";

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(format!("{}/../..{rel}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse(&bytes);
    }

    #[test]
    fn mutated_fixtures_never_panic(which in 0..2usize, at in 0..4096usize, b in any::<u8>(), cut in 0..4096usize) {
        let mut f = fixture([AMDGPU, I915][which]);
        let n = f.len();
        f[at % n] = b;
        f.truncate(cut % (n + 1));
        if let Ok(Some(c)) = parse(&f) {
            prop_assert!(!c.device.is_empty() || f.windows(11).any(|w| w == b"drm-driver:"));
        }
    }

    #[test]
    fn engine_lines_sum(ns in proptest::collection::vec(0u64..1 << 40, 0..8)) {
        let mut f = String::from("drm-driver:\tx\n");
        for (i, n) in ns.iter().enumerate() {
            f.push_str(&format!("drm-engine-e{i}:\t{n} ns\n"));
        }
        let c = parse(f.as_bytes()).unwrap().unwrap();
        prop_assert_eq!(c.busy_ns, ns.iter().sum::<u64>());
        prop_assert_eq!(c.timed, !ns.is_empty());
    }
}
