//! Secrets never reach a message: HTTP header values (`--header`,
//! `MCP_COVENANT_HEADER_*`), the password in a URL's userinfo and the values of
//! token-like query parameters are registered once, when the HTTP endpoint is set up,
//! and every error and warning line is passed through [`secrets`], which replaces each
//! registered value, wherever it appears (a server that echoes a credential in a 401
//! body or in its stderr included), with `***`.

use std::borrow::Cow;
use std::sync::Mutex;

static SECRETS: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[cfg(feature = "http")]
/// Shorter values are too likely to occur by chance in ordinary text to be replaced
/// everywhere (and a credential that short is no secret).
const MIN_SECRET: usize = 4;

/// What replaces a secret.
pub const MASK: &str = "***";

/// Query parameters whose value is treated as a secret (compared lower-case, `-` and
/// `_` ignored).
const TOKEN_PARAMS: &[&str] = &[
    "token",
    "accesstoken",
    "apikey",
    "key",
    "secret",
    "clientsecret",
    "password",
    "pass",
    "pwd",
    "auth",
    "authorization",
    "sig",
    "signature",
    "code",
    "session",
    "sessionid",
    "credential",
    "credentials",
    "jwt",
    "bearer",
];

fn lock() -> std::sync::MutexGuard<'static, Vec<String>> {
    SECRETS.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(feature = "http")]
/// Never show `value` again: the whole value, and each of its words (the token of
/// `Bearer TOKEN`, the parts of `Basic ...`).
pub fn register(value: &str) {
    let mut all = lock();
    let value = value.trim();
    // An authorization scheme (`Bearer`, `Basic`) is no secret, and masking it would
    // garble the hints that name it.
    let mut words: Vec<&str> = value.split_whitespace().collect();
    if words.len() > 1 && words[0].len() <= 10 && words[0].chars().all(|c| c.is_ascii_alphabetic())
    {
        words.remove(0);
    }
    for s in std::iter::once(value).chain(words) {
        if s.chars().count() >= MIN_SECRET && !all.iter().any(|k| k == s) {
            all.push(s.to_string());
        }
    }
    // Longest first, so a value is replaced whole before one of its words is.
    all.sort_by_key(|s| std::cmp::Reverse(s.len()));
}

#[cfg(feature = "http")]
/// Register what is secret in an HTTP endpoint: every header value, and the URL's
/// userinfo and token-like query values.
pub fn register_endpoint(url: &str, headers: &[(String, String)]) {
    for (_, value) in headers {
        register(value);
    }
    let (_, secrets) = split_url(url);
    for s in secrets {
        // A server may echo a value as it was sent, or decoded (`%2F` as `/`).
        let decoded = percent_decoded(&s);
        register(&s);
        register(&decoded);
    }
    // Userinfo goes out as `Authorization: Basic base64(user:password)`, and a server
    // may echo that header back.
    if let Some(userinfo) = userinfo(url) {
        register(&base64(percent_decoded(userinfo).as_bytes()));
    }
}

#[cfg(feature = "http")]
/// The userinfo of an absolute URL (`user:password` of `http://user:password@host/`).
fn userinfo(url: &str) -> Option<&str> {
    let rest = &url[url.find("://")? + 3..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    Some(&authority[..authority.rfind('@')?])
}

#[cfg(feature = "http")]
/// `%XX` escapes decoded (as UTF-8, lossily); anything else kept.
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| char::from(c).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(feature = "http")]
/// Standard base64 with padding. Twelve lines instead of a dependency.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |n, &b| (n << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
        for k in 0..4 {
            out.push(match k <= chunk.len() {
                true => char::from(ALPHABET[(n >> (18 - 6 * k)) as usize & 63]),
                false => '=',
            });
        }
    }
    out
}

/// `text` with every registered secret replaced by `***`.
pub fn secrets(text: &str) -> Cow<'_, str> {
    let all = lock();
    if !all.iter().any(|s| text.contains(s.as_str())) {
        return Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    for s in all.iter() {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), MASK);
        }
    }
    Cow::Owned(out)
}

/// `url` as it may be shown: userinfo and token-like query values as `***`.
pub fn url(url: &str) -> String {
    split_url(url).0
}

/// (the shown URL, the secret parts it hid).
fn split_url(url: &str) -> (String, Vec<String>) {
    let mut hidden = Vec::new();
    let (scheme, rest) = match url.find("://") {
        Some(i) => (&url[..i + 3], &url[i + 3..]),
        None => ("", url),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            hidden.push(userinfo.to_string());
            if let Some((_, password)) = userinfo.split_once(':') {
                hidden.push(password.to_string());
            }
            format!("{MASK}@{}", &authority[at + 1..])
        }
        None => authority.to_string(),
    };
    let (path, query_and_fragment) = match tail.find('?') {
        Some(q) => (&tail[..q], &tail[q..]),
        None => (tail, ""),
    };
    let mut shown = format!("{scheme}{authority}{path}");
    if let Some(qf) = query_and_fragment.strip_prefix('?') {
        let (query, fragment) = match qf.find('#') {
            Some(h) => (&qf[..h], &qf[h..]),
            None => (qf, ""),
        };
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, value)) if token_like(name) && !value.is_empty() => {
                    hidden.push(value.to_string());
                    format!("{name}={MASK}")
                }
                _ => pair.to_string(),
            })
            .collect();
        shown.push('?');
        shown.push_str(&pairs.join("&"));
        shown.push_str(fragment);
    }
    (shown, hidden)
}

/// A server's command line as it may be shown (the "capturing" line, start errors): a
/// URL as [`url`] shows it, the value of a credential flag (`--token V`, `--api-key=V`,
/// `-p V`, `--pat V`), of `NAME=VALUE` with a credential's NAME, of a header argument
/// (`Authorization: Bearer V`) and after `Bearer`/`Basic` as `***`; then registered
/// secrets masked.
pub fn argv(argv: &[String]) -> String {
    fn flag(a: &str) -> Option<&str> {
        a.strip_prefix("--").or_else(|| a.strip_prefix('-'))
    }
    fn credential(name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        ["p", "pat", "pass", "pw", "pwd", "bearer", "basic"].contains(&lower.as_str())
            || [
                "token",
                "key",
                "secret",
                "password",
                "passwd",
                "auth",
                "credential",
                "cookie",
            ]
            .iter()
            .any(|w| lower.contains(w))
            || token_like(name)
    }
    let mut out: Vec<String> = Vec::with_capacity(argv.len());
    let mut hide_next = false;
    for a in argv {
        if std::mem::take(&mut hide_next) && !a.starts_with('-') {
            out.push(MASK.to_string());
            continue;
        }
        let lower = a.to_ascii_lowercase();
        let shown = if a.contains("://") {
            url(a)
        } else if let Some((name, _)) = a
            .split_once(['=', ':'])
            .filter(|(n, v)| !v.trim().is_empty() && credential(flag(n).unwrap_or(n)))
        {
            let sep = &a[name.len()..name.len() + 1];
            format!("{name}{sep}{MASK}")
        } else if let Some(scheme) = ["bearer ", "basic ", "token "]
            .iter()
            .find(|s| lower.starts_with(*s))
        {
            format!("{}{MASK}", &a[..scheme.len()])
        } else {
            hide_next = matches!(lower.as_str(), "bearer" | "basic")
                || flag(a).is_some_and(|f| !f.is_empty() && credential(f));
            a.clone()
        };
        out.push(shown);
    }
    secrets(&out.join(" ")).into_owned()
}

/// A query parameter (or other name) whose value is treated as a secret: the one list
/// the notices mask and `--from-client` keeps out of covenant.toml.
pub fn token_like(name: &str) -> bool {
    let n: String = name
        .chars()
        .filter(|c| !matches!(c, '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect();
    TOKEN_PARAMS.contains(&n.as_str())
        || n.ends_with("token")
        || n.ends_with("secret")
        || n.ends_with("apikey")
        || n.ends_with("password")
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_command_line_is_shown_without_its_credentials() {
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let shown = argv(&words(
            "srv --token s3A --api-key=s3B -p s3C --pat s3D --bearer=s3E postgres://u:s3F@db/x --port 8080 --keyboard",
        ));
        assert!(!shown.contains("s3"), "{shown}");
        assert!(shown.contains("--port 8080 --keyboard"), "{shown}");
        let mut header = words("npx mcp-remote https://h/mcp --header");
        header.push("Authorization: Bearer s3G".into());
        header.extend(words("Bearer s3H"));
        let shown = argv(&header);
        assert!(!shown.contains("s3"), "{shown}");
        assert!(shown.contains("Authorization:***"), "{shown}");
    }

    use super::*;

    #[test]
    fn urls_hide_userinfo_and_token_values() {
        assert_eq!(
            url("https://alice:s3cret@example.com:8443/mcp?api_key=K123&x=1#f"),
            "https://***@example.com:8443/mcp?api_key=***&x=1#f"
        );
        assert_eq!(
            url("http://127.0.0.1:3000/mcp"),
            "http://127.0.0.1:3000/mcp"
        );
        assert_eq!(
            url("http://h/mcp?access-token=abc&sessionId=zz"),
            "http://h/mcp?access-token=***&sessionId=***"
        );
    }

    #[cfg(feature = "http")]
    #[test]
    fn registered_values_are_masked_everywhere() {
        register_endpoint(
            "http://u:pw-unit-test-1@h/?token=tok-unit-test-2",
            &[("Authorization".into(), "Bearer abc-unit-test-3".into())],
        );
        let s = secrets("401: bad Bearer abc-unit-test-3 from pw-unit-test-1 tok-unit-test-2");
        assert_eq!(s, "401: bad *** from *** ***");
        let s = secrets("pass --header 'Authorization: Bearer ...'; got abc-unit-test-3");
        assert_eq!(s, "pass --header 'Authorization: Bearer ...'; got ***");
        assert_eq!(secrets("nothing here"), "nothing here");
    }

    #[cfg(feature = "http")]
    #[test]
    fn echoed_forms_of_a_secret_are_masked_too() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(
            base64(b"Aladdin:open sesame"),
            "QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
        assert_eq!(percent_decoded("a%2Fb%zz%4"), "a/b%zz%4");
        register_endpoint(
            "http://al%40ice:pw%2Dunit%2Dtest%2D4@h/?token=t%2Bunit%2Btest%2B5",
            &[],
        );
        // The decoded password and token, and the Basic header's base64.
        let basic = base64(b"al@ice:pw-unit-test-4");
        let echoed = format!("echo: pw-unit-test-4 t+unit+test+5 Basic {basic}");
        let s = secrets(&echoed);
        assert_eq!(s, "echo: *** *** Basic ***");
    }
}
