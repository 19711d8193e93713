//! Keeping the processes that use the most memory, when a memory ceiling
//! caps the rows.

/// Keeps the `cap` items of `items` whose `rss` is largest, in the order
/// they came (ties go to the first); returns how many were left out.
pub fn keep_largest_by<T>(items: &mut Vec<T>, cap: usize, rss: impl Fn(&T) -> u64) -> usize {
    if items.len() <= cap {
        return 0;
    }
    let shed = items.len() - cap;
    if cap == 0 {
        items.clear();
        return shed;
    }
    // The cap-th largest: items above it are kept, then ties in order.
    let mut all: Vec<u64> = items.iter().map(&rss).collect();
    let (_, nth, _) = all.select_nth_unstable_by(cap - 1, |a, b| b.cmp(a));
    let line = *nth;
    let mut kept = items.iter().filter(|t| rss(t) > line).count();
    items.retain(|t| {
        let r = rss(t);
        if r > line {
            true
        } else if r == line && kept < cap {
            kept += 1;
            true
        } else {
            false
        }
    });
    shed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_are_kept_in_order_and_ties_go_to_the_first() {
        // (pid, rss): rss 3 for 3 and 7; rss 2 for 2, 6 and 10.
        let mut v: Vec<(u32, u64)> = (1..=10).map(|p| (p, u64::from(p % 4))).collect();
        assert_eq!(keep_largest_by(&mut v, 4, |t| t.1), 6);
        let kept: Vec<u32> = v.iter().map(|t| t.0).collect();
        assert_eq!(kept, [2, 3, 6, 7]);
        assert_eq!(keep_largest_by(&mut v, 10, |t| t.1), 0);
        assert_eq!(keep_largest_by(&mut v, 0, |t| t.1), 4);
        assert!(v.is_empty());
    }
}
