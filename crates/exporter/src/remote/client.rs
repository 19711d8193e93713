//! One receiver's HTTP client (ureq, rustls with ring; the system's CA
//! certificates unless `tls_config.ca_file` names others) and what its
//! answers mean under the remote-write protocol.

use std::sync::Arc;
use std::time::Duration;

use agent::config::RemoteWrite;
use ureq::tls::{Certificate, ClientCert, PemItem, PrivateKey, RootCerts, TlsConfig};

/// The system's CA certificates (Debian's ca-certificates).
const SYSTEM_CAS: &str = "/etc/ssl/certs/ca-certificates.crt";

/// What a receiver's answer to one request means.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// 2xx: every sample in it is the receiver's.
    Taken,
    /// 5xx, 429 or no answer: sent again later (not before `after`, when
    /// the receiver said `Retry-After`). `why` is a label value
    /// (`http_5xx`, `http_429`, `timeout`, `connect`, `dns`, `tls`, `io`).
    Again {
        why: &'static str,
        after: Option<Duration>,
        detail: String,
    },
    /// Another 4xx: never sent again; its samples are dropped for
    /// `reason` (`out_of_bounds`, `too_old`, `out_of_order`, `duplicate`,
    /// `rejected`).
    Refused {
        reason: &'static str,
        status: u16,
        detail: String,
    },
}

/// A receiver's client: its agent (connection kept alive), URL and the
/// headers every request carries.
pub struct Client {
    agent: ureq::Agent,
    url: String,
    headers: Vec<(String, String)>,
}

fn read(path: &std::path::Path, what: &str) -> Result<Vec<u8>, sys::Error> {
    std::fs::read(path).map_err(|e| sys::Error::io(format!("{what} {}", path.display()), e))
}

fn certs(pem: &[u8], path: &std::path::Path) -> Result<Vec<Certificate<'static>>, sys::Error> {
    let mut out = Vec::new();
    for item in ureq::tls::parse_pem(pem) {
        match item {
            Ok(PemItem::Certificate(c)) => out.push(c),
            Ok(_) => {}
            Err(e) => {
                return Err(sys::Error::malformed(
                    path.display().to_string(),
                    None,
                    format!("not PEM certificates: {e}"),
                ));
            }
        }
    }
    if out.is_empty() {
        return Err(sys::Error::malformed(
            path.display().to_string(),
            None,
            "holds no certificate",
        ));
    }
    Ok(out)
}

fn tls(c: &RemoteWrite) -> Result<TlsConfig, sys::Error> {
    let t = &c.tls_config;
    let ca = t
        .ca_file
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from(SYSTEM_CAS));
    let roots = match read(&ca, "tls_config.ca_file") {
        Ok(pem) => RootCerts::new_with_certs(&certs(&pem, &ca)?),
        // No system bundle and none given: plain http still works; https
        // fails with the reason at its first request.
        Err(_) if t.ca_file.is_none() => RootCerts::new_with_certs(&[]),
        Err(e) => return Err(e),
    };
    let client_cert = match (&t.cert_file, &t.key_file) {
        (Some(cf), Some(kf)) => {
            let chain = certs(&read(cf, "tls_config.cert_file")?, cf)?;
            let key = PrivateKey::from_pem(&read(kf, "tls_config.key_file")?).map_err(|e| {
                sys::Error::malformed(
                    kf.display().to_string(),
                    None,
                    format!("not a PEM key: {e}"),
                )
            })?;
            Some(ClientCert::new_with_certs(&chain, key))
        }
        (None, None) => None,
        _ => {
            return Err(sys::Error::invalid(
                "tls_config: cert_file and key_file go together",
            ));
        }
    };
    Ok(TlsConfig::builder()
        .root_certs(roots)
        .client_cert(client_cert)
        .disable_verification(t.insecure_skip_verify)
        .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .build())
}

impl Client {
    /// The client of receiver `c`; its files (CAs, certificate, key,
    /// password, token) read now, so that a wrong path is an error at start.
    pub fn new(c: &RemoteWrite) -> Result<Client, sys::Error> {
        let mut headers = c.headers.clone();
        let a = &c.basic_auth;
        if let Some(user) = &a.username {
            let pass = match (&a.password, &a.password_file) {
                (Some(p), _) => p.clone(),
                (None, Some(f)) => String::from_utf8_lossy(&read(f, "basic_auth.password_file")?)
                    .trim_end_matches('\n')
                    .to_string(),
                (None, None) => String::new(),
            };
            use base64::Engine;
            let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
            headers.push(("Authorization".into(), format!("Basic {token}")));
        }
        if let Some(f) = &c.bearer_token_file {
            if a.username.is_some() {
                return Err(sys::Error::invalid(
                    "basic_auth and bearer_token_file: give one of them",
                ));
            }
            let t = String::from_utf8_lossy(&read(f, "bearer_token_file")?)
                .trim()
                .to_string();
            headers.push(("Authorization".into(), format!("Bearer {t}")));
        }
        // Each phase of a request bounded, but not the name's resolution:
        // a bounded resolution runs on a thread made for it each time.
        // The connection is kept between wakes (one flush interval apart,
        // at most five minutes).
        let t = Some(c.timeout);
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(t)
            .timeout_send_request(t)
            .timeout_send_body(t)
            .timeout_recv_response(t)
            .timeout_recv_body(t)
            .max_idle_age(std::time::Duration::from_secs(600))
            .max_redirects(0)
            .proxy(None)
            .user_agent(concat!("quietstat/", env!("CARGO_PKG_VERSION")))
            .tls_config(tls(c)?)
            .build();
        Ok(Client {
            agent: config.new_agent(),
            url: c.url.clone(),
            headers,
        })
    }

    /// Posts one request's `body` (snappy protobuf) and says what the
    /// answer means.
    pub fn send(&self, body: &[u8]) -> Answer {
        let mut req = self
            .agent
            .post(&self.url)
            .header("Content-Encoding", "snappy")
            .header("Content-Type", "application/x-protobuf")
            .header("X-Prometheus-Remote-Write-Version", "0.1.0");
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        match req.send(body) {
            Ok(mut r) => {
                let status = r.status().as_u16();
                let after = r
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(retry_after);
                let text = r
                    .body_mut()
                    .with_config()
                    .limit(64 << 10)
                    .read_to_vec()
                    .map(|b| String::from_utf8_lossy(&b).trim().to_string())
                    .unwrap_or_default();
                answer(status, after, text)
            }
            Err(e) => Answer::Again {
                why: transport_why(&e),
                after: None,
                detail: e.to_string(),
            },
        }
    }
}

/// `Retry-After` in seconds (an HTTP date is taken as no hint).
fn retry_after(v: &str) -> Option<Duration> {
    v.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// The meaning of an HTTP answer.
pub fn answer(status: u16, after: Option<Duration>, text: String) -> Answer {
    match status {
        200..=299 => Answer::Taken,
        429 => Answer::Again {
            why: "http_429",
            after,
            detail: format!("429 {text}"),
        },
        500..=599 => Answer::Again {
            why: "http_5xx",
            after,
            detail: format!("{status} {text}"),
        },
        _ => {
            let t = text.to_ascii_lowercase();
            let reason = if t.contains("out of bounds") {
                "out_of_bounds"
            } else if t.contains("too old") {
                "too_old"
            } else if t.contains("out of order") {
                "out_of_order"
            } else if t.contains("duplicate sample") {
                "duplicate"
            } else {
                "rejected"
            };
            Answer::Refused {
                reason,
                status,
                detail: text,
            }
        }
    }
}

fn transport_why(e: &ureq::Error) -> &'static str {
    use std::io::ErrorKind as K;
    match e {
        ureq::Error::Timeout(_) => "timeout",
        ureq::Error::HostNotFound => "dns",
        ureq::Error::ConnectionFailed => "connect",
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) => "tls",
        ureq::Error::Io(io) => match io.kind() {
            _ if io.get_ref().is_some_and(|i| i.is::<rustls::Error>()) => "tls",
            K::ConnectionRefused | K::ConnectionReset | K::ConnectionAborted => "connect",
            K::TimedOut | K::WouldBlock => "timeout",
            // getaddrinfo's failure, as std words it.
            _ if io.to_string().contains("lookup address") => "dns",
            _ => "io",
        },
        _ => "io",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_mean_what_the_protocol_says() {
        assert_eq!(answer(204, None, String::new()), Answer::Taken);
        let d = Some(Duration::from_secs(7));
        assert!(
            matches!(answer(429, d, "slow".into()), Answer::Again { why: "http_429", after, .. } if after == d)
        );
        assert!(matches!(
            answer(503, None, String::new()),
            Answer::Again {
                why: "http_5xx",
                ..
            }
        ));
        for (text, reason) in [
            ("out of bounds", "out_of_bounds"),
            ("too old sample", "too_old"),
            ("out of order sample", "out_of_order"),
            ("duplicate sample for timestamp", "duplicate"),
            ("bad request", "rejected"),
        ] {
            assert!(
                matches!(answer(400, None, text.into()), Answer::Refused { reason: r, status: 400, .. } if r == reason),
                "{text}"
            );
        }
        assert_eq!(retry_after(" 30 "), Some(Duration::from_secs(30)));
        assert_eq!(retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
