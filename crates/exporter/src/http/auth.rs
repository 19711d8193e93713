//! Basic authentication against bcrypt hashes (the web configuration's
//! `basic_auth_users`). A bcrypt check costs tens of milliseconds by design,
//! so it runs on the offload threads, and credentials that passed are
//! remembered (a few, by their header value) so a scraper pays it once.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use base64::Engine;

use super::offload::{Busy, Offload};

/// Credentials remembered at most; past it the memory starts over.
const REMEMBERED: usize = 64;

pub(crate) struct Auth {
    users: BTreeMap<String, String>,
    passed: Mutex<HashSet<String>>,
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
                let ok = bcrypt::verify(&password, hash).unwrap_or(false) && known;
                if ok {
                    let mut passed = me.passed.lock().unwrap_or_else(|e| e.into_inner());
                    if passed.len() >= REMEMBERED {
                        passed.clear();
                    }
                    passed.insert(key);
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
