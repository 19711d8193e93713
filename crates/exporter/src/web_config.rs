//! The web configuration file, in node_exporter's format
//! (`--web.config.file`), so an existing file and the Prometheus scrape
//! configurations written for it work unchanged:
//!
//! ```yaml
//! tls_server_config:
//!   cert_file: server.crt        # or `cert:` with the PEM inline
//!   key_file: server.key         # or `key:`
//!   client_auth_type: RequireAndVerifyClientCert   # optional
//!   client_ca_file: ca.crt       # with a client_auth_type that verifies
//!   min_version: TLS12           # TLS12 or TLS13
//!   max_version: TLS13
//! http_server_config:
//!   headers: { Strict-Transport-Security: max-age=31536000 }
//! basic_auth_users:
//!   prometheus: $2y$10$...       # bcrypt hash
//! ```
//!
//! Relative file names are taken from the configuration file's directory.
//! Keys this server cannot honour are refused by name, except the cipher
//! and curve preferences, which TLS 1.2/1.3 here fixes to modern choices (a
//! warning says they are ignored), and `http2`, which is not served.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use sys::Error;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;

/// The most a web configuration, certificate or key file may hold.
const FILE_CAP: u64 = 1 << 20;

#[derive(Debug, thiserror::Error)]
#[error("web configuration {path}: {message}")]
pub struct WebConfigError {
    pub path: String,
    pub kind: sys::ErrorKind,
    pub message: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    tls_server_config: Option<TlsFile>,
    http_server_config: Option<HttpFile>,
    basic_auth_users: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsFile {
    cert_file: Option<String>,
    key_file: Option<String>,
    cert: Option<String>,
    key: Option<String>,
    client_auth_type: Option<String>,
    client_ca_file: Option<String>,
    client_ca: Option<String>,
    client_allowed_sans: Option<Vec<String>>,
    min_version: Option<String>,
    max_version: Option<String>,
    cipher_suites: Option<Vec<String>>,
    prefer_server_cipher_suites: Option<bool>,
    curve_preferences: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpFile {
    http2: Option<bool>,
    headers: Option<BTreeMap<String, String>>,
}

/// The loaded configuration.
#[derive(Debug)]
pub struct WebConfig {
    /// `None`: plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// User name to bcrypt hash; empty: no authentication.
    pub users: BTreeMap<String, String>,
    /// Added to every response.
    pub headers: Vec<(String, String)>,
    /// What was accepted but has no effect, for the log.
    pub warnings: Vec<String>,
}

impl WebConfig {
    /// Reads and checks `path`: the YAML, the certificate and key, the hashes.
    pub fn load(path: &Path) -> Result<WebConfig, WebConfigError> {
        let err = |e: Error| WebConfigError {
            path: path.display().to_string(),
            kind: e.kind,
            message: e.to_string(),
        };
        let text = sys::file::read_text_capped(path, FILE_CAP).map_err(|e| err(e.into()))?;
        let file: File = if text.trim().is_empty() {
            File::default()
        } else {
            yaml_serde::from_str(&text)
                .map_err(|e| err(Error::malformed("", None, e.to_string())))?
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut warnings = Vec::new();
        let tls = match file.tls_server_config {
            Some(t) => Some(Arc::new(tls(&t, dir, &mut warnings).map_err(err)?)),
            None => None,
        };
        let mut headers = Vec::new();
        if let Some(h) = file.http_server_config {
            if h.http2.is_some() {
                warnings.push("http_server_config.http2 is ignored: HTTP/1.1 is served".into());
            }
            for (k, v) in h.headers.unwrap_or_default() {
                if hyper::header::HeaderName::from_bytes(k.as_bytes()).is_err()
                    || hyper::header::HeaderValue::from_str(&v).is_err()
                {
                    return Err(err(Error::invalid(format!(
                        "http_server_config.headers: {k:?}: {v:?} is not a valid header"
                    ))));
                }
                headers.push((k, v));
            }
        }
        let users = file.basic_auth_users.unwrap_or_default();
        for (user, hash) in &users {
            if user.contains(':') {
                return Err(err(Error::invalid(format!(
                    "basic_auth_users: user {user:?} contains ':', which basic authentication cannot carry"
                ))));
            }
            // The hash's form is checked now; a password is checked against
            // it only at first use (a cost-31 hash takes a day to check:
            // the agent must be listening long before).
            let cost = bcrypt_cost(hash).ok_or_else(|| {
                err(Error::invalid(format!(
                    "basic_auth_users.{user}: not a bcrypt hash; write one with `htpasswd -nBC 10 \"\" | tr -d ':\\n'`"
                )))
            })?;
            if cost > 16 {
                warnings.push(format!(
                    "basic_auth_users.{user}: bcrypt cost {cost}: each check of a new password takes about {} s of a CPU (cost 10 takes about 0.06 s); checked at first use, one at a time",
                    (0.06 * f64::from(1u32 << (cost - 10).min(31))).round()
                ));
            }
        }
        Ok(WebConfig {
            tls,
            users,
            headers,
            warnings,
        })
    }
}

/// The cost of a well-formed bcrypt hash (`$2a|b|x|y$NN$` and 53 characters
/// of bcrypt's base64), without checking any password against it.
fn bcrypt_cost(hash: &str) -> Option<u32> {
    let parts: bcrypt::HashParts = hash.parse().ok()?;
    let body = hash.rsplit('$').next()?;
    let b64 = |c: u8| c.is_ascii_alphanumeric() || c == b'.' || c == b'/';
    let cost = parts.get_cost();
    ((4..=31).contains(&cost) && body.bytes().all(b64)).then_some(cost)
}

fn resolve(dir: &Path, name: &str) -> PathBuf {
    let p = Path::new(name);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    }
}

/// PEM from a file (`file_key`) or inline (`inline_key`).
fn pem(
    dir: &Path,
    file: &Option<String>,
    inline: &Option<String>,
    file_key: &str,
    inline_key: &str,
) -> Result<Vec<u8>, Error> {
    match (file, inline) {
        (Some(_), Some(_)) => Err(Error::invalid(format!(
            "tls_server_config: {file_key} and {inline_key} both set; give one"
        ))),
        (Some(f), None) => sys::file::read_capped(&resolve(dir, f), FILE_CAP)
            .map_err(|e| Error::from(e).context(format!("tls_server_config.{file_key}"))),
        (None, Some(pem)) => Ok(pem.as_bytes().to_vec()),
        (None, None) => Err(Error::invalid(format!(
            "tls_server_config: {file_key} (or {inline_key}) is required"
        ))),
    }
}

fn certs(bytes: &[u8], key: &str) -> Result<Vec<CertificateDer<'static>>, Error> {
    let certs = CertificateDer::pem_slice_iter(bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::invalid(format!("tls_server_config.{key}: {e}")))?;
    if certs.is_empty() {
        return Err(Error::invalid(format!(
            "tls_server_config.{key}: no PEM certificate found"
        )));
    }
    Ok(certs)
}

fn version(key: &str, v: &Option<String>) -> Result<Option<u8>, Error> {
    match v.as_deref() {
        None => Ok(None),
        Some("TLS12") => Ok(Some(12)),
        Some("TLS13") => Ok(Some(13)),
        Some(o @ ("TLS10" | "TLS11")) => Err(Error::invalid(format!(
            "tls_server_config.{key}: {o} is not offered (insecure); accepted: TLS12, TLS13"
        ))),
        Some(o) => Err(Error::invalid(format!(
            "tls_server_config.{key}: {o:?}; accepted: TLS12, TLS13"
        ))),
    }
}

fn tls(t: &TlsFile, dir: &Path, warnings: &mut Vec<String>) -> Result<rustls::ServerConfig, Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = certs(
        &pem(dir, &t.cert_file, &t.cert, "cert_file", "cert")?,
        "cert_file",
    )?;
    let key = PrivateKeyDer::from_pem_slice(&pem(dir, &t.key_file, &t.key, "key_file", "key")?)
        .map_err(|e| Error::invalid(format!("tls_server_config.key_file: no private key ({e})")))?;
    let min = version("min_version", &t.min_version)?.unwrap_or(12);
    let max = version("max_version", &t.max_version)?.unwrap_or(13);
    if min > max {
        return Err(Error::invalid(
            "tls_server_config: min_version is above max_version",
        ));
    }
    let versions: Vec<&'static rustls::SupportedProtocolVersion> =
        [(12, &rustls::version::TLS12), (13, &rustls::version::TLS13)]
            .into_iter()
            .filter(|(v, _)| (min..=max).contains(v))
            .map(|(_, p)| p)
            .collect();
    if t.client_allowed_sans.is_some() {
        return Err(Error::invalid(
            "tls_server_config.client_allowed_sans is not supported; remove it or verify clients by CA only",
        ));
    }
    for (set, key) in [
        (t.cipher_suites.is_some(), "cipher_suites"),
        (t.curve_preferences.is_some(), "curve_preferences"),
        (
            t.prefer_server_cipher_suites.is_some(),
            "prefer_server_cipher_suites",
        ),
    ] {
        if set {
            warnings.push(format!(
                "tls_server_config.{key} is ignored: the TLS library's modern defaults apply"
            ));
        }
    }
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| Error::invalid(format!("tls_server_config: {e}")))?;
    let auth = t.client_auth_type.as_deref().unwrap_or("NoClientCert");
    let builder = match auth {
        "NoClientCert" => builder.with_no_client_auth(),
        "RequireAndVerifyClientCert" | "VerifyClientCertIfGiven" => {
            let ca = pem(
                dir,
                &t.client_ca_file,
                &t.client_ca,
                "client_ca_file",
                "client_ca",
            )?;
            let mut roots = rustls::RootCertStore::empty();
            for c in certs(&ca, "client_ca_file")? {
                roots.add(c).map_err(|e| {
                    Error::invalid(format!("tls_server_config.client_ca_file: {e}"))
                })?;
            }
            let mut v = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            );
            if auth == "VerifyClientCertIfGiven" {
                v = v.allow_unauthenticated();
            }
            builder.with_client_cert_verifier(
                v.build().map_err(|e| {
                    Error::invalid(format!("tls_server_config.client_ca_file: {e}"))
                })?,
            )
        }
        o => {
            return Err(Error::invalid(format!(
                "tls_server_config.client_auth_type: {o:?}; accepted: NoClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert"
            )));
        }
    };
    let mut config = builder.with_single_cert(chain, key).map_err(|e| {
        Error::invalid(format!(
            "tls_server_config: the key does not fit the certificate: {e}"
        ))
    })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<WebConfig, WebConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("web.yml");
        std::fs::write(&p, text).unwrap();
        WebConfig::load(&p)
    }

    /// A cost-31 hash (a day per check) loads at once, with a warning; it
    /// is checked only when a password is offered.
    #[test]
    fn hashes_are_checked_for_form_at_load_and_a_high_cost_is_a_warning() {
        let salt_and_hash = "N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy";
        let c = load(&format!(
            "basic_auth_users:\n  slow: '$2b$31${salt_and_hash}'\n"
        ))
        .unwrap();
        assert_eq!(c.users.len(), 1);
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains("slow") && w.contains("cost 31")),
            "{:?}",
            c.warnings
        );
        for bad in ["$2b$32$", "$2b$03$", "$3a$10$", "$2b$xx$"] {
            let e = load(&format!("basic_auth_users:\n  u: '{bad}{salt_and_hash}'\n"));
            assert!(e.is_err(), "{bad}");
        }
        let e = load(
            "basic_auth_users:\n  u: '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lh!y'\n",
        );
        assert!(e.is_err());
    }

    #[test]
    fn basic_auth_users_need_bcrypt_hashes() {
        let hash = bcrypt::hash("secret", 4).unwrap();
        let c = load(&format!("basic_auth_users:\n  prom: '{hash}'\n")).unwrap();
        assert!(c.tls.is_none());
        assert_eq!(c.users.len(), 1);
        let e = load("basic_auth_users:\n  prom: plain\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("basic_auth_users.prom") && e.contains("bcrypt"),
            "{e}"
        );
    }

    #[test]
    fn unknown_keys_and_missing_files_are_named() {
        let e = load("tls_server_config:\n  cert_fil: x\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("cert_fil"), "{e}");
        let e = load("tls_server_config:\n  cert_file: absent.crt\n  key_file: absent.key\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("cert_file") && e.contains("absent.crt"), "{e}");
        let e = load("tls_server_config:\n  cert: x\n  key: y\n  min_version: TLS10\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("certificate") || e.contains("TLS10"), "{e}");
        assert!(load("").unwrap().users.is_empty());
    }
}
