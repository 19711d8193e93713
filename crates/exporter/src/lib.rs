//! Serves the agent's snapshots to consumers: `/metrics` (Prometheus text or
//! OpenMetrics, by content negotiation) and `/api/v1/snapshot` (JSON). A
//! request is answered from the latest snapshots and triggers no kernel read
//! unless it asks, with `max_age_ms`, for data younger than what there is.

#[cfg(feature = "http")]
pub mod http;
pub mod http_stats;
pub mod json;
pub mod metrics;
#[cfg(feature = "http")]
pub mod remote;
#[cfg(feature = "http")]
pub mod web_config;
