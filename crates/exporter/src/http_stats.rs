//! The HTTP server's connection figures: counted by the server, exported
//! by the metrics (its own module, so neither imports the other).

use std::sync::atomic::AtomicU64;

/// The server's connection figures, exported as `quietstat_http_*`.
#[derive(Debug, Default)]
pub struct HttpStats {
    pub open: AtomicU64,
    pub max: AtomicU64,
    pub evicted: AtomicU64,
    pub refused: AtomicU64,
    pub accept_errors: AtomicU64,
    /// Requests not answered: their client was gone before the answer was
    /// made.
    pub abandoned: AtomicU64,
    /// Requests answered, by status code (counted once the answer is made).
    pub answered: std::sync::Mutex<std::collections::BTreeMap<u16, u64>>,
}

impl HttpStats {
    #[cfg(feature = "http")]
    pub(crate) fn count_answer(&self, code: u16) {
        let mut a = self.answered.lock().unwrap_or_else(|e| e.into_inner());
        *a.entry(code).or_default() += 1;
    }

    /// Requests answered so far, by status code.
    pub fn answered(&self) -> Vec<(u16, u64)> {
        let a = self.answered.lock().unwrap_or_else(|e| e.into_inner());
        a.iter().map(|(c, n)| (*c, *n)).collect()
    }
}
