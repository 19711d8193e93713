//! The agent's own resource use, for its self-cost figures.

/// The agent's own resource use.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SelfUsage {
    pub user_ns: u64,
    pub system_ns: u64,
    /// Voluntary and involuntary context switches summed over all threads,
    /// live and ended: every time an agent thread stopped running.
    pub voluntary_ctxsw: u64,
    pub involuntary_ctxsw: u64,
    pub rss_bytes: u64,
    pub max_rss_bytes: u64,
    pub virtual_bytes: u64,
    pub threads: u64,
}

/// One getrusage call (all threads) and /proc/self/statm.
pub fn self_usage() -> SelfUsage {
    // SAFETY: ru is a valid out-parameter.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    let page = sys::page_size();
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages = |i: usize| {
        statm
            .split_whitespace()
            .nth(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let (virtual_pages, rss_pages) = (pages(0), pages(1));
    let threads = std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count() as u64);
    SelfUsage {
        user_ns: tv(ru.ru_utime),
        system_ns: tv(ru.ru_stime),
        voluntary_ctxsw: ru.ru_nvcsw as u64,
        involuntary_ctxsw: ru.ru_nivcsw as u64,
        rss_bytes: rss_pages * page,
        max_rss_bytes: ru.ru_maxrss as u64 * 1024,
        virtual_bytes: virtual_pages * page,
        threads,
    }
}
