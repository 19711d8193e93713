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
