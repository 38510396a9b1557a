//! The roots every HTTPS request trusts (registry lookups and `--http https://`): the
//! platform's certificate store, as curl, git, pip and uv read it, so a TLS-inspecting
//! proxy or a private CA that the machine trusts is trusted here too.
//!
//! - `SSL_CERT_FILE` (a PEM bundle) and `SSL_CERT_DIR` (a directory of PEM files), when
//!   set, are read in place of the system store, as OpenSSL reads them;
//! - otherwise the system store (Linux: the bundle `openssl-probe` finds, such as
//!   /etc/ssl/certs/ca-certificates.crt; macOS: the keychains; Windows: the system store);
//! - when that yields no certificate (a container without ca-certificates), the Mozilla
//!   roots built into the binary.
//!
//! The roots are loaded once per process. A certificate error names the roots that were
//! used and the variables that add one ([`explain`]).

use std::sync::OnceLock;

use ureq::tls::{Certificate, RootCerts, TlsConfig};

/// The roots, and a sentence saying where they came from.
struct Roots {
    certs: RootCerts,
    described: String,
}

fn roots() -> &'static Roots {
    static ROOTS: OnceLock<Roots> = OnceLock::new();
    ROOTS.get_or_init(load)
}

fn load() -> Roots {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let file = var("SSL_CERT_FILE");
    let dir = var("SSL_CERT_DIR");
    let loaded = rustls_native_certs::load_native_certs();
    let certs: Vec<Certificate<'static>> = loaded
        .certs
        .iter()
        .map(|c| Certificate::from_der(c.as_ref()).to_owned())
        .collect();
    let mut from = Vec::new();
    if let Some(f) = &file {
        from.push(format!(
            "SSL_CERT_FILE={}",
            crate::escape::text(&f.to_string_lossy())
        ));
    }
    if let Some(d) = &dir {
        from.push(format!(
            "SSL_CERT_DIR={}",
            crate::escape::text(&d.to_string_lossy())
        ));
    }
    let problems = if loaded.errors.is_empty() {
        String::new()
    } else {
        let first = crate::escape::text(&loaded.errors[0].to_string()).into_owned();
        format!(
            "; {} could not be read ({first})",
            match loaded.errors.len() {
                1 => "one source".to_string(),
                n => format!("{n} sources"),
            }
        )
    };
    if !from.is_empty() {
        return Roots {
            described: format!(
                "{} certificate(s) from {} (in place of the system store){problems}",
                certs.len(),
                from.join(" and ")
            ),
            certs: RootCerts::from(certs),
        };
    }
    if certs.is_empty() {
        return Roots {
            certs: RootCerts::WebPki,
            described: format!(
                "the Mozilla roots built into mcp-covenant (the system store has no certificate){problems}"
            ),
        };
    }
    Roots {
        described: format!(
            "{} certificate(s) from the system store{problems}",
            certs.len()
        ),
        certs: RootCerts::from(certs),
    }
}

/// The TLS settings of every agent: the roots above.
pub fn config() -> TlsConfig {
    TlsConfig::builder()
        .root_certs(roots().certs.clone())
        .build()
}

/// For an error that is about a certificate: which roots were used and how to add one.
pub fn explain(error: &ureq::Error) -> Option<String> {
    // rustls's handshake error reaches ureq inside an I/O error, or as its own variant.
    let text = error.to_string().to_ascii_lowercase();
    let about_certificates = matches!(error, ureq::Error::Rustls(_) | ureq::Error::Io(_))
        && ["certificate", "unknownissuer"]
            .iter()
            .any(|w| text.contains(w));
    about_certificates.then(|| {
        format!(
            "the trusted roots were {}; to trust another certificate authority (a private CA, a TLS-inspecting proxy), set SSL_CERT_FILE to a PEM bundle that holds it, or SSL_CERT_DIR to a directory of PEM files (either replaces the system store)",
            roots().described
        )
    })
}
