//! `snapshot --from-client PATH`: the MCP servers an agent client is configured with
//! (`.mcp.json`, `.cursor/mcp.json`, `claude_desktop_config.json`: `mcpServers`;
//! `.vscode/mcp.json`: `servers`) become `[[server]]` entries of covenant.toml: the
//! stdio command and its arguments (`npx -y PKG` and `uvx PKG` as a `package`), the HTTP
//! URL, and the *names* of environment variables and headers. A value is never copied:
//! secrets stay in the environment. An entry that is neither (or SSE) is skipped with a
//! warning naming it; so is one whose name covenant.toml already has.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::registry::Package;

/// One server from a client config, as covenant.toml will hold it.
#[derive(Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub kind: Kind,
    pub env: Vec<String>,
    pub lockfile: String,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    Command(Vec<String>),
    Package {
        package: String,
        args: Vec<String>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// Read `client` and append its servers to the covenant.toml at `config` (created when
/// missing). Returns the names of the entries written; warnings go to stderr.
pub fn import(client: &Path, config: &Path) -> Result<Vec<String>> {
    let bytes = crate::io::read_input(client, "client config")?;
    let doc: Value = crate::canon::value_from_slice(&bytes).map_err(|e| {
        Error::new(format!(
            "{}: not a JSON client config: {e}",
            client.display()
        ))
    })?;
    let existing = match config.is_file() {
        true => String::from_utf8(crate::io::read_input(config, "config")?)
            .map_err(|_| Error::new(format!("{} is not UTF-8", config.display())))?,
        false => String::new(),
    };
    let taken: toml::Table = toml::from_str(&existing)
        .map_err(|e| Error::new(format!("{}: {}", config.display(), e.message().trim())))?;
    let taken_names: Vec<String> = taken
        .get("server")
        .and_then(|s| s.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|s| s.get("name")?.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let (entries, warnings) = entries(&doc, &client.display().to_string())?;
    for w in warnings {
        eprintln!("warning: {}", crate::error::log(&w));
    }
    let mut text = existing;
    let mut written = Vec::new();
    for e in entries {
        if taken_names.contains(&e.name) || written.contains(&e.name) {
            eprintln!(
                "warning: {}: server `{}` is already in {}; skipped",
                client.display(),
                e.name,
                config.display()
            );
            continue;
        }
        if !text.is_empty() && !text.ends_with("\n\n") {
            text.push_str(if text.ends_with('\n') { "\n" } else { "\n\n" });
        }
        text.push_str(&render(&e));
        written.push(e.name);
    }
    if written.is_empty() {
        return Err(Error::new(format!(
            "{}: no server to add to {}",
            client.display(),
            config.display()
        )));
    }
    // What is appended must read back: a config whose `server` is an inline array
    // (`server = [{ ... }]`) cannot take [[server]] tables after it.
    if let Err(e) = toml::from_str::<toml::Table>(&text) {
        let why = match taken.get("server") {
            Some(toml::Value::Array(_)) => {
                "its `server` is an inline array, which [[server]] tables cannot extend: write its entries as [[server]] tables".to_string()
            }
            _ => e.message().trim().to_string(),
        };
        return Err(Error::new(format!(
            "cannot add [[server]] entries to {}: {why}; nothing was written",
            config.display()
        )));
    }
    let locks = config
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join("locks");
    std::fs::create_dir_all(&locks)
        .map_err(|e| Error::new(format!("cannot create {}: {e}", locks.display())))?;
    crate::io::write_atomic(config, text.as_bytes())?;
    eprintln!(
        "mcp-covenant: added {} [[server]] entr{} to {} from {}: {}",
        written.len(),
        if written.len() == 1 { "y" } else { "ies" },
        config.display(),
        client.display(),
        written.join(", ")
    );
    Ok(written)
}

/// The servers of a client config, and a warning per entry skipped.
pub fn entries(doc: &Value, origin: &str) -> Result<(Vec<Entry>, Vec<String>)> {
    let servers = doc
        .get("mcpServers")
        .or_else(|| doc.get("servers"))
        .and_then(Value::as_object)
        .ok_or_else(|| {
            Error::new(format!(
                "{origin}: no `mcpServers` or `servers` object (the MCP servers of .mcp.json, .vscode/mcp.json, .cursor/mcp.json or claude_desktop_config.json)"
            ))
        })?;
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    for (raw_name, server) in servers {
        let shown = raw_name.escape_debug().to_string();
        let name = sanitise(raw_name);
        let Some(name) = name else {
            warnings.push(format!(
                "{origin}: server `{shown}`: no usable name; skipped"
            ));
            continue;
        };
        match entry(&name, server) {
            Ok(kind) => {
                let env = server
                    .get("env")
                    .and_then(Value::as_object)
                    .map(|m| m.keys().filter(|k| env_name(k)).cloned().collect())
                    .unwrap_or_default();
                let (args, url): (&[String], _) = match &kind {
                    Kind::Command(argv) => (&argv[1..], None),
                    Kind::Package { args, .. } => (&args[..], None),
                    Kind::Http { url, .. } => (&[], Some(url.as_str())),
                };
                // A value that is a credential would be written into a file people
                // commit: the entry is skipped, and the user moves it to the environment.
                if url.is_some_and(url_secret) || carries_secret(args) {
                    warnings.push(format!(
                        "{origin}: server `{shown}`: its URL or an argument carries a credential (a password in a URL, a token in its query, a --token/--key value, NAME=VALUE with a secret NAME); skipped, so that it is not written into covenant.toml: add the entry by hand, with the value in the environment"
                    ));
                    continue;
                }
                if args.iter().any(|a| looks_secret(a)) {
                    warnings.push(format!(
                        "{origin}: server `{shown}`: an argument looks like it carries a credential (a URL with a password, a ${{input:...}}, a --token/--key value); check the entry before committing covenant.toml"
                    ));
                }
                if server.get("envFile").is_some() {
                    warnings.push(format!(
                        "{origin}: server `{shown}`: its envFile is not read; set what the server needs in the environment"
                    ));
                }
                out.push(Entry {
                    lockfile: format!("locks/{name}.lock"),
                    name,
                    kind,
                    env: match server.get("url") {
                        Some(_) => Vec::new(),
                        None => env,
                    },
                });
            }
            Err(why) => warnings.push(format!("{origin}: server `{shown}`: {why}; skipped")),
        }
    }
    Ok((out, warnings))
}

fn entry(name: &str, server: &Value) -> std::result::Result<Kind, String> {
    let Some(s) = server.as_object() else {
        return Err("not an object".into());
    };
    let kind = s.get("type").and_then(Value::as_str);
    let strings = |v: Option<&Value>| -> std::result::Result<Vec<String>, String> {
        match v {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(str::to_string)
                        .ok_or("`args` holds a non-string".to_string())
                })
                .collect(),
            Some(_) => Err("`args` is not a list".into()),
        }
    };
    match (kind, s.get("command"), s.get("url")) {
        (Some("sse"), _, _) => {
            Err("the SSE transport is not supported (Streamable HTTP and stdio are)".into())
        }
        (None | Some("stdio"), Some(Value::String(cmd)), None) if !cmd.is_empty() => {
            let args = strings(s.get("args"))?;
            Ok(as_package(cmd, &args).unwrap_or_else(|| {
                let mut argv = vec![cmd.clone()];
                argv.extend(args);
                Kind::Command(argv)
            }))
        }
        (
            None | Some("http") | Some("streamable-http") | Some("streamableHttp"),
            None,
            Some(Value::String(url)),
        ) if url.starts_with("http://") || url.starts_with("https://") => {
            let headers = s
                .get("headers")
                .and_then(Value::as_object)
                .map(|h| headers(name, h))
                .unwrap_or_default();
            Ok(Kind::Http {
                url: url.clone(),
                headers,
            })
        }
        (Some(other), _, _)
            if !matches!(
                other,
                "stdio" | "http" | "streamable-http" | "streamableHttp"
            ) =>
        {
            Err(format!("unknown transport type `{}`", other.escape_debug()))
        }
        _ => Err("neither a `command` (stdio) nor an http(s) `url`".into()),
    }
}

/// `npx [-y] PKG ARGS...` and `uvx PKG ARGS...` as a package source, when PKG is one.
fn as_package(cmd: &str, args: &[String]) -> Option<Kind> {
    let program = Path::new(cmd).file_name()?.to_str()?;
    let (registry, rest) = match program {
        "npx" => {
            let skip = args
                .iter()
                .take_while(|a| matches!(a.as_str(), "-y" | "--yes"))
                .count();
            ("npm", &args[skip..])
        }
        "uvx" => ("pypi", args),
        _ => return None,
    };
    let spec = rest.first()?;
    let spec = match registry {
        // uvx takes `pkg@1.0` as well as `pkg==1.0`.
        "pypi" => match spec.split_once('@') {
            Some((n, v)) if v != "latest" => format!("pypi:{n}=={v}"),
            _ => format!("pypi:{spec}"),
        },
        _ => format!("npm:{spec}"),
    };
    let package = Package::parse(&spec)?.ok()?;
    Some(Kind::Package {
        package: package.display(),
        args: rest[1..].to_vec(),
    })
}

/// Each header maps to the variable that holds its value: the one a `${env:VAR}` or
/// `${VAR}` value names, else `<SERVER>_<HEADER>`.
fn headers(server: &str, h: &Map<String, Value>) -> Vec<(String, String)> {
    h.iter()
        .filter(|(k, _)| !k.is_empty() && k.bytes().all(|b| b.is_ascii_graphic() && b != b':'))
        .map(|(k, v)| {
            let named = v.as_str().and_then(|v| {
                let inner = v.strip_prefix("${")?.strip_suffix('}')?;
                let var = inner.strip_prefix("env:").unwrap_or(inner);
                env_name(var).then(|| var.to_string())
            });
            let var = named.unwrap_or_else(|| {
                format!("{server}_{k}")
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            c.to_ascii_uppercase()
                        } else {
                            '_'
                        }
                    })
                    .collect()
            });
            (k.clone(), var)
        })
        .collect()
}

/// An argument that may hold a secret: a URL with a password, a client's prompt for
/// input, or a flag named like a credential with its value attached.
fn looks_secret(a: &str) -> bool {
    let url_password = a.split_once("://").is_some_and(|(_, rest)| {
        let authority = rest.split('/').next().unwrap_or("");
        authority.contains('@') && authority.split('@').next().unwrap_or("").contains(':')
    });
    let lower = a.to_ascii_lowercase();
    let flag = lower.starts_with("--")
        && lower.contains('=')
        && ["token", "key", "secret", "password"]
            .iter()
            .any(|w| lower.split('=').next().unwrap_or("").contains(w));
    url_password || a.contains("${input:") || flag
}

/// Named like a credential: `token`, `key`, `secret`, `password`, `auth`, `cookie` (any
/// case), or a name whose value the notices mask (`code`, `sig`, ...: one list).
fn secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
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
        || crate::redact::token_like(name)
}

/// Short and unlisted flag names that take a credential (`-p`, `--pat`, `--pass`).
fn secret_flag(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ["p", "pat", "pass", "pw", "pwd", "bearer", "basic"].contains(&lower.as_str())
        || (lower.len() > 1 && secret_name(&lower))
}

/// A URL with a password (also one holding `/` or `?`), a query parameter named like a
/// credential with a value (`?api_key=...`, `?code=...`), or a path segment that looks
/// like a key (`/mcp/sk-ak-.../sse`).
fn url_secret(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let password = authority
        .rsplit_once('@')
        .is_some_and(|(user, _)| user.contains(':'))
        // `user:pa/ss@host`: the user has no `/`, `?` or `#`, the password may.
        || rest.split_once('@').is_some_and(|(info, _)| {
            info.split_once(':')
                .is_some_and(|(user, _)| !user.contains(['/', '?', '#']))
        });
    let query = rest.split_once('?').map_or("", |(_, q)| q);
    let query = query.split('#').next().unwrap_or("");
    let path = rest
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .split('/')
        .skip(1);
    password
        || query.split('&').any(|pair| {
            pair.split_once('=')
                .is_some_and(|(k, v)| !v.is_empty() && secret_name(k))
        })
        || path.into_iter().any(key_like)
}

/// A URL path segment that looks like a key: a known key prefix, or 20 characters or
/// more mixing letters and digits.
fn key_like(segment: &str) -> bool {
    let prefixed = [
        "sk-",
        "sk_",
        "ghp_",
        "gho_",
        "github_pat_",
        "xox",
        "pk_",
        "rk_",
    ]
    .iter()
    .any(|p| segment.starts_with(p));
    let mixed = segment.len() >= 20
        && segment.bytes().any(|b| b.is_ascii_alphabetic())
        && segment.bytes().any(|b| b.is_ascii_digit());
    prefixed || mixed
}

/// A header given as an argument (`Authorization: Bearer ...`, mcp-remote's
/// `--header NAME:VALUE`) whose name is a credential's or whose value is a scheme's.
fn header_secret(a: &str) -> bool {
    let Some((name, value)) = a.split_once(':') else {
        return false;
    };
    let value = value.trim();
    let name_ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    name_ok
        && !value.is_empty()
        && !value.starts_with("${")
        && !value.starts_with("//")
        && (secret_name(name) || scheme_secret(value))
}

/// `Bearer TOKEN` / `Basic CREDENTIALS`, in one argument.
fn scheme_secret(a: &str) -> bool {
    let lower = a.trim().to_ascii_lowercase();
    ["bearer ", "basic ", "token "].iter().any(|s| {
        lower
            .strip_prefix(s)
            .is_some_and(|v| !v.trim().is_empty() && !v.trim().starts_with("${"))
    })
}

/// Arguments that carry a credential's value: a URL with one ([`url_secret`]), a flag
/// named like a credential with its value attached (`--api-key=...`) or next
/// (`--api-key ...`, `-p ...`), `NAME=VALUE` with a credential's NAME (`docker -e
/// TOKEN=...`), a header (`Authorization: Bearer ...`), or `Bearer`/`Basic` and a value.
fn carries_secret(args: &[String]) -> bool {
    fn flag_name(a: &str) -> Option<&str> {
        a.strip_prefix("--").or_else(|| a.strip_prefix('-'))
    }
    args.iter().enumerate().any(|(i, a)| {
        if a.contains("://") && url_secret(a) {
            return true;
        }
        if header_secret(a) || scheme_secret(a) {
            return true;
        }
        let next = args.get(i + 1);
        let scheme = matches!(a.to_ascii_lowercase().as_str(), "bearer" | "basic");
        if scheme && next.is_some_and(|n| !n.starts_with("${")) {
            return true;
        }
        if let Some((name, value)) = a.split_once('=') {
            let flag = flag_name(name);
            let named = match flag {
                Some(f) => secret_flag(f),
                None => secret_name(name),
            };
            if !value.is_empty() && !value.starts_with("${") && (named || header_secret(value)) {
                return true;
            }
        }
        match (flag_name(a), next) {
            (Some(name), Some(next)) => {
                !a.contains('=')
                    && secret_flag(name)
                    && !next.starts_with('-')
                    && !next.starts_with("${")
            }
            _ => false,
        }
    })
}

fn env_name(k: &str) -> bool {
    !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A covenant.toml server name: letters, digits, `.`, `_`, `-` (others become `-`).
fn sanitise(name: &str) -> Option<String> {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let s = s.trim_matches('-').to_string();
    (!s.is_empty() && s.len() <= 100 && !s.starts_with('.')).then_some(s)
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| quote(s)).collect();
    format!("[{}]", quoted.join(", "))
}

/// The `[[server]]` table of an entry.
pub fn render(e: &Entry) -> String {
    let mut t = format!("[[server]]\nname = {}\n", quote(&e.name));
    match &e.kind {
        Kind::Command(argv) => t.push_str(&format!("command = {}\n", list(argv))),
        Kind::Package { package, args } => {
            t.push_str(&format!("package = {}\n", quote(package)));
            if !args.is_empty() {
                t.push_str(&format!("args = {}\n", list(args)));
            }
        }
        Kind::Http { url, headers } => {
            t.push_str(&format!("http = {}\n", quote(url)));
            if !headers.is_empty() {
                let pairs: Vec<String> = headers
                    .iter()
                    .map(|(h, v)| format!("{} = {}", quote(h), quote(v)))
                    .collect();
                t.push_str(&format!("headers_from_env = {{ {} }}\n", pairs.join(", ")));
            }
        }
    }
    if !e.env.is_empty() {
        t.push_str(&format!("env = {}\n", list(&e.env)));
    }
    t.push_str(&format!("lockfile = {}\n", quote(&e.lockfile)));
    t
}

/// Where `--from-client` writes: the covenant.toml in use, else `--config`, else
/// ./covenant.toml.
pub fn target(found: Option<&Path>, flag: Option<&Path>) -> PathBuf {
    found
        .or(flag)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(crate::config::DEFAULT_FILE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn client_servers_become_entries_without_values() {
        let doc = json!({"mcpServers": {
            "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github@2025.4.8"],
                       "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret"}},
            "time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone", "UTC"]},
            "local": {"type": "stdio", "command": "/usr/bin/python3", "args": ["server.py"]},
            "remote": {"type": "http", "url": "https://example.com/mcp",
                       "headers": {"Authorization": "Bearer sk-secret", "X-Key": "${env:MY_KEY}"}},
            "old": {"type": "sse", "url": "https://example.com/sse"},
            "broken": {"args": []},
            "we ird/name": {"url": "http://127.0.0.1:1/mcp"}
        }});
        let (entries, warnings) = entries(&doc, "x.json").unwrap();
        let text: String = entries.iter().map(render).collect();
        assert!(!text.contains("secret"), "{text}");
        assert!(
            text.contains("package = \"npm:@modelcontextprotocol/server-github@2025.4.8\""),
            "{text}"
        );
        assert!(
            text.contains("env = [\"GITHUB_PERSONAL_ACCESS_TOKEN\"]"),
            "{text}"
        );
        assert!(
            text.contains(
                "package = \"pypi:mcp-server-time@latest\"\nargs = [\"--local-timezone\", \"UTC\"]"
            ),
            "{text}"
        );
        assert!(
            text.contains("command = [\"/usr/bin/python3\", \"server.py\"]"),
            "{text}"
        );
        assert!(
            text.contains("headers_from_env = { \"Authorization\" = \"REMOTE_AUTHORIZATION\", \"X-Key\" = \"MY_KEY\" }"),
            "{text}"
        );
        assert!(text.contains("name = \"we-ird-name\""), "{text}");
        assert_eq!(entries.len(), 5);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings
            .iter()
            .any(|w| w.contains("`old`") && w.contains("SSE")));
        assert!(warnings.iter().any(|w| w.contains("`broken`")));
        let vscode = json!({"servers": {"a": {"type": "http", "url": "http://h/mcp"}}});
        assert_eq!(super::entries(&vscode, "v").unwrap().0.len(), 1);
        assert!(super::entries(&json!({"x": 1}), "v").is_err());
    }

    #[test]
    fn arguments_that_may_carry_a_credential_are_flagged() {
        assert!(looks_secret("postgres://user:pw@db/x"));
        assert!(looks_secret("--api-key=sk-1"));
        assert!(looks_secret("${input:token}"));
        assert!(!looks_secret("postgres://db/x"));
        assert!(!looks_secret("--local-timezone=UTC"));
        assert!(!looks_secret("@scope/pkg"));
    }

    /// The credentials round three found written into covenant.toml: header values
    /// (mcp-remote's `--header`), `Bearer`/`Basic` arguments, query names the notices
    /// mask (`code`, `sig`), short and unlisted flags, a DSN password with `/` or `?`,
    /// a secret-looking URL path segment.
    #[test]
    fn every_credential_form_is_kept_out_of_covenant_toml() {
        let doc = json!({"mcpServers": {
            "remote": {"command": "npx", "args": ["mcp-remote", "https://h.example/mcp", "--header", "Authorization: Bearer s3cr-A"]},
            "remote2": {"command": "npx", "args": ["mcp-remote", "https://h.example/mcp", "--header", "X-Api-Key:s3cr-B"]},
            "bearer": {"command": "srv", "args": ["--auth-header", "Bearer s3cr-C"]},
            "basic": {"command": "srv", "args": ["Basic", "czNjci1E"]},
            "code": {"url": "https://h.example/mcp?code=s3cr-E"},
            "sig": {"url": "https://h.example/mcp?sig=s3cr-F&x=1"},
            "short": {"command": "srv", "args": ["-p", "s3cr-G"]},
            "pat": {"command": "srv", "args": ["--pat", "s3cr-H"]},
            "pass": {"command": "srv", "args": ["--pass", "s3cr-I"]},
            "bearer-eq": {"command": "srv", "args": ["--bearer=s3cr-J"]},
            "dsn-slash": {"command": "srv", "args": ["postgres://u:s3cr/K@db/x"]},
            "dsn-query": {"command": "srv", "args": ["postgres://u:s3cr?L@db/x"]},
            "path": {"url": "https://actions.example.com/mcp/sk-ak-s3crM0a1b2c3d4e5f6g7h8/sse"},
            "fine": {"command": "srv", "args": ["--port", "8080", "--path", "/srv/data", "https://h.example/v1/mcp"]}
        }});
        let (entries, warnings) = entries(&doc, "x.json").unwrap();
        let text: String = entries.iter().map(render).collect();
        assert!(!text.contains("s3cr"), "{text}");
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["fine"], "{warnings:?}");
        for w in &warnings {
            assert!(!w.contains("s3cr"), "{w}");
        }
    }

    #[test]
    fn an_entry_whose_url_or_arguments_carry_a_credential_is_not_written() {
        let doc = json!({"mcpServers": {
            "query": {"type": "http", "url": "https://h.example/mcp?api_key=sk_live_1&profile=p"},
            "basic": {"url": "https://admin:hunter2@h.example/mcp"},
            "flag": {"command": "srv", "args": ["--api-key", "sk-2"]},
            "attached": {"command": "srv", "args": ["--token=sk-3"]},
            "docker": {"command": "docker", "args": ["run", "-i", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_4", "img"]},
            "dsn": {"command": "npx", "args": ["-y", "@x/pg@1.0.0", "postgres://u:pw@db/x"]},
            "fine": {"command": "docker", "args": ["run", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "--keyboard", "--log-level", "debug", "img"]},
            "fine-url": {"url": "https://h.example/mcp?profile=p&key="}
        }});
        let (entries, warnings) = entries(&doc, "x.json").unwrap();
        let text: String = entries.iter().map(render).collect();
        for secret in ["sk_live_1", "hunter2", "sk-2", "sk-3", "ghp_4", "pw@"] {
            assert!(!text.contains(secret), "{secret}: {text}");
        }
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["fine", "fine-url"]);
        assert_eq!(warnings.len(), 6, "{warnings:?}");
    }

    #[test]
    fn names_and_strings_are_quoted_for_toml() {
        assert_eq!(quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000A\"");
        assert_eq!(sanitise("--"), None);
        assert_eq!(sanitise("My Server!").as_deref(), Some("My-Server"));
    }
}
