//! The pins: covenant.toml's `[[server]]` packages and the package servers of agent
//! client configs (`npx -y NAME@VERSION`, `uvx NAME==VERSION`, `uvx --from
//! NAME==VERSION CMD`), each with where its version is written, so that `--write` can
//! move it and change nothing else.
//!
//! A client config is read as the client reads it (`client::entries`: the transport,
//! the credential check); what its command starts is then read here, because a range or
//! a missing version is a pin too (an unpinned one) and `--write` needs the byte span of
//! the version in the file. Every entry that is not a package server is kept, with why.

use std::path::{Path, PathBuf};

use serde_json::value::RawValue;
use serde_json::Value;

use crate::cli::client::{self, Kind};
use crate::config::{Config, Transport};
use crate::error::{Error, Result};
use crate::registry::version::Semver;
use crate::registry::{Package, PackageOptions, Registry, Requested};

/// The client configs read when `--from-client` names none, from the project directory.
pub(super) const CLIENT_CONFIGS: [&str; 4] = [
    ".mcp.json",
    ".cursor/mcp.json",
    ".vscode/mcp.json",
    "claude_desktop_config.json",
];

/// One server of a file.
#[derive(Clone, Debug)]
pub(in crate::cli) struct Pin {
    /// As the file names it.
    pub name: String,
    /// The file it came from, as given (relative to the project directory).
    pub source: PathBuf,
    pub what: What,
}

#[derive(Clone, Debug)]
pub(in crate::cli) enum What {
    /// A package server: the package (its `requested` is `Latest`: the version is in
    /// `version`), how it is started, and where the version is written.
    Package {
        package: Package,
        version: Version,
        /// Boxed: the variant would be ten times the other's size.
        options: Box<PackageOptions>,
        at: Place,
    },
    /// Not a package server, with why.
    NotChecked(String),
}

/// The version a pin asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::cli) enum Version {
    Exact(String),
    /// No version, or `latest`: the newest release, on every start.
    Newest,
    /// A range as written (`^1.2.0`, `>=1.0`).
    Range(String),
}

impl Version {
    pub(super) fn exact(&self) -> Option<&str> {
        match self {
            Version::Exact(v) => Some(v),
            _ => None,
        }
    }
}

/// Where a pin's version is written.
#[derive(Clone, Debug)]
pub(in crate::cli) enum Place {
    /// The `package` of covenant.toml's `[[server]]` of this name.
    Toml,
    /// A JSON string literal: its byte span in the file (quotes included), its value,
    /// and the byte span of the version inside the value (empty: no version written).
    Json {
        literal: (usize, usize),
        value: String,
        version: (usize, usize),
    },
}

/// covenant.toml's servers.
pub(super) fn from_config(config: &Config) -> Vec<Pin> {
    let source = config
        .file
        .clone()
        .unwrap_or_else(|| PathBuf::from(crate::config::DEFAULT_FILE));
    config
        .servers
        .iter()
        .map(|s| Pin {
            name: s.name.clone(),
            source: source.clone(),
            what: match &s.transport {
                Transport::Package { package, options } => What::Package {
                    package: Package {
                        requested: Requested::Latest,
                        ..package.clone()
                    },
                    version: match &package.requested {
                        Requested::Exact(v) => Version::Exact(v.clone()),
                        Requested::Latest => Version::Newest,
                    },
                    options: Box::new(options.clone()),
                    at: Place::Toml,
                },
                Transport::Command(argv) => What::NotChecked(format!(
                    "a local command (`{}`), not a published package",
                    program(&argv[0])
                )),
                Transport::Http { .. } => {
                    What::NotChecked("an HTTP server: no package release to compare".into())
                }
            },
        })
        .collect()
}

/// The servers of a client config's text (`origin` names it in messages).
pub(in crate::cli) fn from_client(text: &str, source: &Path) -> Result<Vec<Pin>> {
    let origin = source.display().to_string();
    let bad = |e: serde_json::Error| Error::new(format!("{origin}: not a JSON client config: {e}"));
    let top: std::collections::BTreeMap<String, &RawValue> =
        serde_json::from_str(text).map_err(bad)?;
    // The key the client reads (`client::entries`): `mcpServers`, else `servers`.
    let Some(servers) = top.get("mcpServers").or_else(|| top.get("servers")) else {
        return Err(Error::new(format!(
            "{origin}: no `mcpServers` or `servers` object (the MCP servers of .mcp.json, .vscode/mcp.json, .cursor/mcp.json or claude_desktop_config.json)"
        )));
    };
    let servers: std::collections::BTreeMap<String, &RawValue> =
        serde_json::from_str(servers.get()).map_err(|_| {
            Error::new(format!(
                "{origin}: its servers are not an object of named servers"
            ))
        })?;
    let mut out = Vec::new();
    for (name, raw) in servers {
        let what = client_server(text, &name, raw, &origin)?;
        out.push(Pin {
            name,
            source: source.to_path_buf(),
            what,
        });
    }
    Ok(out)
}

fn client_server(text: &str, name: &str, raw: &RawValue, origin: &str) -> Result<What> {
    let value: Value = crate::canon::value_from_str(raw.get())
        .map_err(|e| Error::new(format!("{origin}: server `{}`: {e}", name.escape_debug())))?;
    // The client's own reading: the transport, and whether it carries a credential.
    let doc = serde_json::json!({ "mcpServers": { name: value.clone() } });
    let (entries, warnings) = client::entries(&doc, origin)?;
    let Some(entry) = entries.into_iter().next() else {
        let why = warnings
            .into_iter()
            .next()
            .unwrap_or_else(|| "not a server mcp-covenant can start".into());
        let prefix = format!("{origin}: server `{}`: ", name.escape_debug());
        let why = why.strip_prefix(&prefix).unwrap_or(&why);
        return Ok(What::NotChecked(
            why.trim_end_matches("; skipped").to_string(),
        ));
    };
    let command = match &entry.kind {
        Kind::Http { .. } => {
            return Ok(What::NotChecked(
                "an HTTP server: no package release to compare".into(),
            ))
        }
        Kind::Command(_) | Kind::Package { .. } => value
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default(),
    };
    // The args, each with its literal's span in the file.
    let args: Vec<(String, (usize, usize))> = match raw_field(raw, "args") {
        None => Vec::new(),
        Some(list) => {
            let items: Vec<&RawValue> = serde_json::from_str(list.get()).map_err(|_| {
                Error::new(format!(
                    "{origin}: server `{}`: `args` is not a list",
                    name.escape_debug()
                ))
            })?;
            let mut out = Vec::new();
            for item in items {
                let s: String = serde_json::from_str(item.get()).map_err(|_| {
                    Error::new(format!(
                        "{origin}: server `{}`: `args` holds a non-string",
                        name.escape_debug()
                    ))
                })?;
                out.push((s, span(text, item.get())?));
            }
            out
        }
    };
    let words: Vec<String> = args.iter().map(|(a, _)| a.clone()).collect();
    let Some(spec) = package_spec(command, &words) else {
        return Ok(What::NotChecked(match program(command) {
            "docker" | "podman" => {
                "a container image (`docker`), not a package release".to_string()
            }
            "npx" | "uvx" => format!(
                "`{}` with options mcp-covenant does not read (it reads `npx -y NAME@VERSION`, `uvx NAME==VERSION`, `uvx --from NAME==VERSION CMD`)",
                program(command)
            ),
            p => format!("a local command (`{p}`), not a published package"),
        }));
    };
    let (arg, literal) = &args[spec.index];
    let env = entry
        .env
        .iter()
        .filter(|n| std::env::var_os(n).is_some())
        .cloned()
        .collect();
    Ok(What::Package {
        package: spec.package,
        version: spec.version,
        options: Box::new(PackageOptions {
            args: words[spec.rest..].to_vec(),
            env,
            with: Vec::new(),
            allow_scripts: false,
            allow_sdist: false,
            python: None,
        }),
        at: Place::Json {
            literal: *literal,
            value: arg.clone(),
            version: spec.span,
        },
    })
}

/// A field of a JSON object given as raw text.
fn raw_field<'a>(raw: &'a RawValue, key: &str) -> Option<&'a RawValue> {
    let map: std::collections::BTreeMap<String, &'a RawValue> =
        serde_json::from_str(raw.get()).ok()?;
    map.get(key).copied()
}

/// Where `piece` (a slice of `text`, as serde_json's borrowed raw values are) sits in it.
fn span(text: &str, piece: &str) -> Result<(usize, usize)> {
    let start = (piece.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    let end = start.wrapping_add(piece.len());
    match text.get(start..end) {
        Some(s) if end <= text.len() && std::ptr::eq(s.as_ptr(), piece.as_ptr()) => {
            Ok((start, end))
        }
        _ => Err(Error::new("internal: a JSON value outside its file")),
    }
}

/// `program`'s file name (`/usr/bin/npx` → `npx`).
fn program(cmd: &str) -> &str {
    Path::new(cmd)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(cmd)
}

/// The package a client command starts.
#[derive(Debug)]
pub(super) struct Spec {
    pub package: Package,
    pub version: Version,
    /// The argument that names it.
    pub index: usize,
    /// The version's byte span in that argument (empty at its end when none is written).
    pub span: (usize, usize),
    /// The first argument passed to the server.
    pub rest: usize,
}

/// `npx [-y|--yes]... SPEC ARGS`, `uvx SPEC ARGS`, `uvx --from SPEC CMD ARGS`.
pub(super) fn package_spec(command: &str, args: &[String]) -> Option<Spec> {
    match program(command) {
        "npx" => {
            let index = args
                .iter()
                .take_while(|a| matches!(a.as_str(), "-y" | "--yes"))
                .count();
            let arg = args.get(index)?;
            let (name, version, span) = match arg.rfind('@') {
                Some(i) if i > 0 => (&arg[..i], Some(&arg[i + 1..]), (i + 1, arg.len())),
                _ => (arg.as_str(), None, (arg.len(), arg.len())),
            };
            let package = checked(Registry::Npm, &format!("npm:{name}"))?;
            let version = match version {
                None | Some("latest") => Version::Newest,
                Some(v) if Semver::parse(v).is_some() => {
                    checked(Registry::Npm, &format!("npm:{name}@{v}"))?;
                    Version::Exact(v.to_string())
                }
                Some(v) if safe_range(v) => Version::Range(v.to_string()),
                Some(_) => return None,
            };
            Some(Spec {
                package,
                version,
                index,
                span,
                rest: index + 1,
            })
        }
        "uvx" => {
            let (index, rest) = match args.first()?.as_str() {
                "--from" => (1, 3),
                a if a.starts_with('-') => return None,
                _ => (0, 1),
            };
            let arg = args.get(index)?;
            if rest == 3 && args.len() < 3 {
                return None;
            }
            let end = arg
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
                .unwrap_or(arg.len());
            let (name, tail) = arg.split_at(end);
            let package = checked(Registry::Pypi, &format!("pypi:{name}"))?;
            let (version, span) = if tail.is_empty() || tail == "@latest" {
                (Version::Newest, (arg.len(), arg.len()))
            } else if let Some(v) = tail.strip_prefix("==").or_else(|| tail.strip_prefix('@')) {
                checked(Registry::Pypi, &format!("pypi:{name}=={v}"))?;
                (
                    Version::Exact(v.to_string()),
                    (arg.len() - v.len(), arg.len()),
                )
            } else if safe_range(tail) {
                (Version::Range(tail.to_string()), (end, arg.len()))
            } else {
                return None;
            };
            Some(Spec {
                package,
                version,
                index,
                span,
                rest,
            })
        }
        _ => None,
    }
}

/// A package source that parses (its name and version validated), without a version.
fn checked(registry: Registry, spec: &str) -> Option<Package> {
    let p = Package::parse(spec)?.ok()?;
    (p.registry == registry).then_some(Package {
        requested: Requested::Latest,
        ..p
    })
}

/// A version range that is only a range: digits, letters, `.^~<>=!*, |-`.
fn safe_range(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 64
        && v.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'.' | b'^'
                        | b'~'
                        | b'<'
                        | b'>'
                        | b'='
                        | b'!'
                        | b'*'
                        | b','
                        | b' '
                        | b'|'
                        | b'-'
                )
        })
}

/// The newest of `releases` that an npm range allows, for the forms `^X.Y.Z`, `~X.Y.Z`,
/// `X`, `X.Y`, `X.x`, `X.Y.x`; `None` for a form not read here.
pub(super) fn npm_range_newest(range: &str, releases: &[String]) -> Option<String> {
    let r = range.trim().trim_start_matches('=').trim_start_matches('v');
    let (op, rest) = match r.chars().next()? {
        '^' | '~' => (r.chars().next(), &r[1..]),
        _ => (None, r),
    };
    let parts: Vec<&str> = rest.split('.').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut nums = Vec::new();
    for p in &parts {
        if matches!(*p, "x" | "X" | "*") {
            break;
        }
        nums.push(p.parse::<u64>().ok()?);
    }
    if nums.is_empty() {
        return None;
    }
    let full = nums.len() == 3;
    let low = Semver::parse(&format!(
        "{}.{}.{}",
        nums[0],
        nums.get(1).unwrap_or(&0),
        nums.get(2).unwrap_or(&0)
    ))?;
    // The upper bound, exclusive.
    let (a, b) = (nums[0], nums.get(1).copied().unwrap_or(0));
    let high = match (op, nums.len()) {
        (Some('^'), _) if a > 0 || nums.len() == 1 => format!("{}.0.0", a + 1),
        (Some('^'), _) if b > 0 || nums.len() == 2 => format!("0.{}.0", b + 1),
        (Some('^'), _) => format!("0.0.{}", nums[2] + 1),
        (Some('~'), 1) => format!("{}.0.0", a + 1),
        (Some('~'), _) => format!("{a}.{}.0", b + 1),
        (None, 1) => format!("{}.0.0", a + 1),
        (None, 2) => format!("{a}.{}.0", b + 1),
        _ => return None,
    };
    if op.is_none() && full {
        return None;
    }
    let high = Semver::parse(&high)?;
    releases
        .iter()
        .filter_map(|r| Some((Semver::parse(r)?, r)))
        .filter(|(v, _)| !v.is_pre() && *v >= low && *v < high)
        .max_by(|x, y| x.0.cmp(&y.0))
        .map(|(_, r)| r.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn client_commands_name_their_package_and_where_the_version_is() {
        let p = package_spec("npx", &s(&["-y", "@s/x@1.2.0", "--flag"])).unwrap();
        assert_eq!(p.package.display(), "npm:@s/x@latest");
        assert_eq!(p.version, Version::Exact("1.2.0".into()));
        assert_eq!((p.index, p.span, p.rest), (1, (5, 10), 2));
        let p = package_spec("/usr/bin/npx", &s(&["x"])).unwrap();
        assert_eq!((p.version, p.span), (Version::Newest, (1, 1)));
        let p = package_spec("npx", &s(&["x@^1.2.0"])).unwrap();
        assert_eq!(p.version, Version::Range("^1.2.0".into()));
        let p = package_spec("uvx", &s(&["mcp-server-time==2025.1.2", "--tz"])).unwrap();
        assert_eq!(p.version, Version::Exact("2025.1.2".into()));
        assert_eq!((p.span, p.rest), ((17, 25), 1));
        let p = package_spec("uvx", &s(&["--from", "pkg==1.0", "pkg-server", "a"])).unwrap();
        assert_eq!((p.index, p.span, p.rest), (1, (5, 8), 3));
        let p = package_spec("uvx", &s(&["pkg>=1.0"])).unwrap();
        assert_eq!(p.version, Version::Range(">=1.0".into()));
        for bad in [
            ("npx", s(&["--registry=http://x", "x"])),
            ("npx", s(&["x@file:../y"])),
            ("uvx", s(&["--python", "3.12", "x"])),
            ("uvx", s(&["--from", "x==1.0"])),
            ("node", s(&["server.js"])),
        ] {
            assert!(package_spec(bad.0, &bad.1).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn npm_ranges_pick_the_newest_release_they_allow() {
        let r = s(&[
            "1.0.0",
            "1.2.0",
            "1.9.1",
            "2.0.0",
            "2.1.0-beta.1",
            "0.3.1",
            "0.3.4",
        ]);
        assert_eq!(npm_range_newest("^1.2.0", &r).as_deref(), Some("1.9.1"));
        assert_eq!(npm_range_newest("~1.2.0", &r).as_deref(), Some("1.2.0"));
        assert_eq!(npm_range_newest("1", &r).as_deref(), Some("1.9.1"));
        assert_eq!(npm_range_newest("2.x", &r).as_deref(), Some("2.0.0"));
        assert_eq!(npm_range_newest("^0.3.1", &r).as_deref(), Some("0.3.4"));
        assert_eq!(npm_range_newest(">=1.0.0 <3", &r), None);
    }

    #[test]
    fn a_client_config_keeps_each_version_span() {
        let text = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"npx\", \"args\": [\"-y\", \"x@1.0.0\"]},\n    \"b\": {\"command\": \"node\", \"args\": [\"s.js\"]},\n    \"c\": {\"url\": \"https://h/mcp\"}\n  }\n}\n";
        let pins = from_client(text, Path::new(".mcp.json")).unwrap();
        assert_eq!(pins.len(), 3);
        match &pins[0].what {
            What::Package {
                at: Place::Json {
                    literal, version, ..
                },
                ..
            } => {
                assert_eq!(&text[literal.0..literal.1], "\"x@1.0.0\"");
                let v = &text[literal.0 + 1..literal.1 - 1][version.0..version.1];
                assert_eq!(v, "1.0.0");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(&pins[1].what, What::NotChecked(w) if w.contains("local command")));
        assert!(matches!(&pins[2].what, What::NotChecked(w) if w.contains("HTTP")));
    }

    /// Adversarial round four: a hostile repository's client config names packages
    /// npm or uv would read as something else (an alias, a URL, a path, a flag, a
    /// second argument, a direct reference). Each is no pin, or a pin whose name and
    /// version are plain: nothing reaches an install's argv but a name and a version.
    #[test]
    fn hostile_package_arguments_are_no_pin_or_a_plain_one() {
        let plain = |s: &str| {
            !s.is_empty()
                && !s.contains("..")
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@' | '/'))
        };
        for (cmd, args) in [
            ("npx", s(&["-y", "x@npm:evil@1.0.0"])),
            ("npx", s(&["-y", "@a/../b@1.0.0"])),
            ("npx", s(&["-y", "../x@1.0.0"])),
            ("npx", s(&["-y", "git+https://e.example/x.git"])),
            ("npx", s(&["-y", "https://e.example/x.tgz"])),
            ("npx", s(&["-y", "file:../x"])),
            ("npx", s(&["-y", "x@1.0.0 ; rm -rf /"])),
            ("npx", s(&["-y", "x@1.0.0\n"])),
            ("npx", s(&["-y", "X@1.0.0"])),
            ("npx", s(&["-y", "--registry=http://e.example", "x@1.0.0"])),
            ("npx", s(&["-y", "-p", "evil", "x@1.0.0"])),
            ("npx", s(&["-y", "x@github:e/x"])),
            ("npx", s(&["-y", "@x@1.0.0"])),
            ("npx", s(&["-y", "x@$(id)"])),
            ("uvx", s(&["z==1.0; curl e.example"])),
            ("uvx", s(&["z[extra]==1.0"])),
            ("uvx", s(&["z @ https://e.example/z.whl"])),
            ("uvx", s(&["z==1.0 --index-url http://e.example"])),
            ("uvx", s(&["--from", "git+https://e.example/z", "z"])),
            ("uvx", s(&["--from", "z==1.0", "--with", "evil"])),
            ("uvx", s(&["../z==1.0"])),
            ("uvx", s(&["z==1.0+local"])),
            ("uvx", s(&["z@1.0/../../x"])),
        ] {
            if let Some(p) = package_spec(cmd, &args) {
                assert!(plain(&p.package.name), "{cmd} {args:?}: {:?}", p.package);
                if let Version::Exact(v) | Version::Range(v) = &p.version {
                    assert!(
                        !v.contains("..") && !v.contains('/') && !v.contains('\n'),
                        "{cmd} {args:?}: {v:?}"
                    );
                }
            }
        }
    }
}
