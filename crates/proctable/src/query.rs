use crate::fields::Fields;

/// What one snapshot reads.
#[derive(Debug, Clone)]
pub struct Query {
    pub fields: Fields,
    /// One row per thread instead of per process.
    pub threads: bool,
    /// Only these PIDs (thread-group ids); `None` for every process.
    pub pids: Option<Vec<u32>>,
}

impl Default for Query {
    fn default() -> Self {
        Query {
            fields: Fields::stat(),
            threads: false,
            pids: None,
        }
    }
}

/// The PIDs a caller asked for, as [`Query::pids`] takes them: sorted,
/// distinct, and only those that can be a process (above 0, within u32):
/// what the C library and the Python module both pass on.
pub fn pid_set<T: Copy + TryInto<u32>>(pids: &[T]) -> Vec<u32> {
    let mut v: Vec<u32> = pids
        .iter()
        .filter_map(|&p| p.try_into().ok().filter(|&p| p > 0))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The PIDs a caller asked for in the order asked, as
/// [`crate::ProcTable::start_ticks`] takes them: 0 (no process) for one
/// that cannot be a process (0 or less, past u32).
pub fn pid_list<T: Copy + TryInto<u32>>(pids: &[T]) -> Vec<u32> {
    pids.iter().map(|&p| p.try_into().unwrap_or(0)).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn pid_set_keeps_what_can_be_a_process_sorted_once() {
        assert_eq!(super::pid_set(&[5i32, -1, 0, 3, 5]), [3, 5]);
        assert_eq!(super::pid_set(&[1i64 << 40, 7, 7]), [7]);
        assert!(super::pid_set::<i32>(&[]).is_empty());
    }

    #[test]
    fn pid_list_keeps_the_order_and_zeroes_what_cannot_be_a_process() {
        assert_eq!(super::pid_list(&[5i32, -1, 0, 3, 5]), [5, 0, 0, 3, 5]);
        assert_eq!(super::pid_list(&[1i64 << 40, 7]), [0, 7]);
    }
}
