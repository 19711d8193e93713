//! Basic authentication against bcrypt hashes (the web configuration's
//! `basic_auth_users`). A bcrypt check costs tens of milliseconds by design
//! (and days at cost 31), so:
//! - hashes are checked at first use, never at load;
//! - a check runs on the offload threads, one at a time (as node_exporter
//!   serialises them): a flood of wrong passwords costs one CPU at most;
//! - credentials that passed are remembered (a few, by their header value:
//!   user and password), so a scraper pays once;
//! - credentials that failed are answered at once for [`FAILED_FOR`]
//!   without another check.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;

use super::offload::{Busy, Offload};

/// Credentials remembered at most; past it the memory starts over.
const REMEMBERED: usize = 64;

/// How long credentials that failed are refused without a new check.
pub(crate) const FAILED_FOR: Duration = Duration::from_secs(10);

pub(crate) struct Auth {
    users: BTreeMap<String, String>,
    passed: Mutex<HashSet<String>>,
    /// Header values that failed, and when.
    failed: Mutex<HashMap<String, Instant>>,
    /// Held for each bcrypt check: one at a time.
    checking: Mutex<()>,
    /// Checked for unknown users, so the answer takes as long as for a
    /// known one.
    decoy: String,
}

pub(crate) enum Verdict {
    Pass,
    Fail,
    Busy,
}

/// `Basic base64(user:password)` into its two halves.
fn credentials(header: &str) -> Option<(String, String)> {
    let (scheme, rest) = header.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(rest.trim())
        .ok()?;
    let text = String::from_utf8(raw).ok()?;
    let (u, p) = text.split_once(':')?;
    Some((u.to_string(), p.to_string()))
}

impl Auth {
    pub(crate) fn new(users: BTreeMap<String, String>) -> Auth {
        let decoy = users
            .values()
            .next()
            .cloned()
            .unwrap_or_else(|| bcrypt::hash("", 4).unwrap_or_default());
        Auth {
            users,
            passed: Mutex::new(HashSet::new()),
            failed: Mutex::new(HashMap::new()),
            checking: Mutex::new(()),
            decoy,
        }
    }

    pub(crate) async fn check(
        self: &Arc<Self>,
        header: Option<&str>,
        offload: &Offload,
    ) -> Verdict {
        let Some(header) = header else {
            return Verdict::Fail;
        };
        if self
            .passed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(header)
        {
            return Verdict::Pass;
        }
        if self
            .failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(header)
            .is_some_and(|t| t.elapsed() < FAILED_FOR)
        {
            return Verdict::Fail;
        }
        let Some((user, password)) = credentials(header) else {
            return Verdict::Fail;
        };
        let me = self.clone();
        let key = header.to_string();
        let r = offload
            .run(move || {
                let (hash, known) = match me.users.get(&user) {
                    Some(h) => (h.as_str(), true),
                    None => (me.decoy.as_str(), false),
                };
                let ok = {
                    let _one = me.checking.lock().unwrap_or_else(|e| e.into_inner());
                    bcrypt::verify(&password, hash).unwrap_or(false) && known
                };
                if ok {
                    let mut passed = me.passed.lock().unwrap_or_else(|e| e.into_inner());
                    if passed.len() >= REMEMBERED {
                        passed.clear();
                    }
                    passed.insert(key);
                } else {
                    let mut failed = me.failed.lock().unwrap_or_else(|e| e.into_inner());
                    if failed.len() >= REMEMBERED {
                        failed.retain(|_, t| t.elapsed() < FAILED_FOR);
                        if failed.len() >= REMEMBERED {
                            failed.clear();
                        }
                    }
                    failed.insert(key, Instant::now());
                }
                ok
            })
            .await;
        match r {
            Ok(true) => Verdict::Pass,
            Ok(false) => Verdict::Fail,
            Err(Busy) => Verdict::Busy,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_decoded() {
        let h = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode("prom:pa:ss")
        );
        assert_eq!(credentials(&h), Some(("prom".into(), "pa:ss".into())));
        assert_eq!(credentials("Bearer abc"), None);
        assert_eq!(credentials("Basic !!!"), None);
    }
}
