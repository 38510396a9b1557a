//! Package sources (`npm:NAME@VERSION`, `pypi:NAME==VERSION`, `--baseline published`):
//! hostile specs refused before anything runs, `[[server]] package` validated, a
//! registry that cannot be reached failing closed, and (ignored: they need the network,
//! npm and python) real published pairs giving the corpus's reports, the second run
//! installing nothing.

use std::fs;
use std::path::Path;
use std::process::Output;
use std::time::Instant;

use crate::common::{assert_fails_cleanly, bin, stderr, tmpdir};

fn check_in(dir: &Path, cache: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .env("MCP_COVENANT_CACHE", cache)
        .args(["check", "--color", "never"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_hostile_package_spec_is_refused_before_anything_runs() {
    let dir = tmpdir("registry-hostile");
    let cache = dir.join("cache");
    for spec in [
        "npm:--registry=http://127.0.0.1:1/@1.0.0",
        "npm:-g@1.0.0",
        "npm:x@1.0.0 --global",
        "npm:x@file:../y",
        "npm:x@^1.0.0",
        "pypi:-e==1.0",
        "pypi:x==--index-url=http://127.0.0.1:1",
        "pypi:x @ https://127.0.0.1:1/x.whl",
    ] {
        let o = check_in(&dir, &cache, &["--baseline", spec, "--against", spec]);
        assert_fails_cleanly(&o, "package source");
        assert!(!cache.exists(), "{spec}: nothing may be installed");
    }
}

#[test]
fn a_package_server_is_validated() {
    let dir = tmpdir("registry-config");
    let cases = [
        (
            "name = \"a\"\npackage = \"npm:x@1.0.0\"\ncommand = [\"node\"]\nlockfile = \"a.lock\"",
            "has `package` and `command`",
        ),
        (
            "name = \"a\"\npackage = \"npm:-x@1.0.0\"\nlockfile = \"a.lock\"",
            "not an npm package name",
        ),
        (
            "name = \"a\"\npackage = \"cargo:x\"\nlockfile = \"a.lock\"",
            "not a package source",
        ),
        (
            "name = \"a\"\npackage = \"npm:x@1.0.0\"\nenv = [\"A=b\"]\nlockfile = \"a.lock\"",
            "`env` lists variable names",
        ),
        (
            "name = \"a\"\npackage = \"pypi:x==1.0\"\nwith = [\"--index-url=http://x\"]\nlockfile = \"a.lock\"",
            "`with` requirement",
        ),
        (
            "name = \"a\"\ncommand = [\"node\"]\nargs = [\"x\"]\nlockfile = \"a.lock\"",
            "are for `package` servers",
        ),
    ];
    for (server, needle) in cases {
        fs::write(dir.join("covenant.toml"), format!("[[server]]\n{server}\n")).unwrap();
        let o = check_in(&dir, &dir.join("cache"), &[]);
        assert_fails_cleanly(&o, needle);
        assert!(stderr(&o).contains("covenant.toml:"), "{}", stderr(&o));
    }
}

#[test]
fn a_package_server_whose_env_is_unset_is_an_error_naming_it() {
    let dir = tmpdir("registry-env");
    fs::write(
        dir.join("covenant.toml"),
        "[[server]]\nname = \"a\"\npackage = \"npm:x@1.0.0\"\nenv = [\"MCP_COVENANT_TEST_UNSET_TOKEN\"]\nlockfile = \"a.lock\"\n",
    )
    .unwrap();
    fs::write(
        dir.join("a.lock"),
        "{\"covenant_version\":\"0.2.0\",\"captured_at_unix\":0,\"surface\":{}}",
    )
    .unwrap();
    let o = check_in(&dir, &dir.join("cache"), &[]);
    assert_fails_cleanly(&o, "MCP_COVENANT_TEST_UNSET_TOKEN");
    assert!(stderr(&o).contains("npm:x@1.0.0"), "{}", stderr(&o));
    assert!(!dir.join("cache").join("npm").exists(), "nothing installed");
}

/// A registry on 127.0.0.1 that answers every request with `body` and `status`.
#[cfg(feature = "http")]
fn registry(status: &'static str, body: String) -> String {
    crate::common::HttpServer::start(move |_| {
        let json = "Content-Type: application/json\r\n";
        (status, json, body.clone().into_bytes())
    })
    .url()
}

/// A project in a new directory `name` whose package.json declares
/// `npm:@acme/server@2.0.0`.
#[cfg(feature = "http")]
fn acme_project(name: &str) -> std::path::PathBuf {
    let dir = tmpdir(name);
    fs::write(
        dir.join("package.json"),
        r#"{"name": "@acme/server", "version": "2.0.0"}"#,
    )
    .unwrap();
    dir
}

/// `check --baseline published` in `dir`, the npm registry's listing read from `url`:
/// the install that follows fails at once (npm is pointed at nothing), which shows the
/// version chosen.
#[cfg(feature = "http")]
fn check_published_npm(dir: &Path, url: &str) -> std::process::Command {
    let mut c = bin();
    c.current_dir(dir)
        .env("MCP_COVENANT_CACHE", dir.join("cache"))
        .env("MCP_COVENANT_NPM_REGISTRY", url)
        .env("npm_config_registry", "http://127.0.0.1:1/")
        .env("npm_config_fetch_retries", "0")
        .env("MCP_COVENANT_INSTALL_TIMEOUT", "60")
        .args(["check", "--baseline", "published", "--against", "x.lock"]);
    c
}

#[cfg(feature = "http")]
#[test]
fn published_picks_the_highest_release_below_the_declared_version() {
    let dir = acme_project("registry-published");
    let versions = r#"{"versions": {"1.0.0": {}, "1.10.0": {}, "2.0.0": {}, "2.1.0-beta.1": {}, "1.9.0": {}}}"#;
    let url = registry("200 OK", versions.to_string());
    // The registry lists versions; the failed install shows the version chosen and that
    // a failure is exit 2.
    let o = check_published_npm(&dir, &url).output().unwrap();
    let err = stderr(&o);
    assert!(
        err.contains(
            "package.json declares npm:@acme/server@2.0.0; the baseline is npm:@acme/server@1.10.0"
        ),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.lines().last().unwrap().starts_with("error: "), "{err}");
}

#[cfg(feature = "http")]
#[test]
fn an_unreachable_or_failing_registry_fails_closed() {
    let dir = tmpdir("registry-unreachable");
    fs::write(
        dir.join("pyproject.toml"),
        "[project]\nname = \"acme-server\"\nversion = \"1.2.0\"\n",
    )
    .unwrap();
    let cases = [
        ("http://127.0.0.1:1".to_string(), "cannot be reached"),
        (registry("503 Service Unavailable", "{}".into()), "HTTP 503"),
        (registry("404 Not Found", "{}".into()), "no such package"),
        (registry("200 OK", "<html>".into()), "did not answer JSON"),
        (
            registry("200 OK", r#"{"releases": {"1.2.0": [{}]}}"#.into()),
            "no release below it",
        ),
    ];
    for (url, needle) in cases {
        let o = bin()
            .current_dir(&dir)
            .env("MCP_COVENANT_CACHE", dir.join("cache"))
            .env("MCP_COVENANT_PYPI_URL", &url)
            .args(["check", "--baseline", "published", "--against", "x.lock"])
            .output()
            .unwrap();
        assert_fails_cleanly(&o, needle);
        assert!(stderr(&o).contains("acme-server"), "{}", stderr(&o));
    }
}

/// `-q` silences the progress a package source reports (asking a registry, installing,
/// capturing), never its warnings or its error.
#[cfg(feature = "http")]
#[test]
fn quiet_silences_the_registry_progress_but_not_the_error() {
    let dir = tmpdir("registry-quiet");
    fs::write(
        dir.join("pyproject.toml"),
        "[project]\nname = \"acme-server\"\nversion = \"1.2.0\"\n",
    )
    .unwrap();
    let url = registry("503 Service Unavailable", "{}".into());
    for quiet in [false, true] {
        let o = bin()
            .current_dir(&dir)
            .env("MCP_COVENANT_CACHE", dir.join("cache"))
            .env("MCP_COVENANT_PYPI_URL", &url)
            .args(quiet.then_some("-q"))
            .args(["check", "--baseline", "published", "--against", "x.lock"])
            .output()
            .unwrap();
        assert_fails_cleanly(&o, "HTTP 503");
        let err = stderr(&o);
        assert_eq!(err.contains("mcp-covenant: asking"), !quiet, "{err}");
    }
}

#[cfg(not(feature = "http"))]
#[test]
fn without_the_http_feature_published_says_it_needs_it() {
    let dir = tmpdir("registry-no-http");
    fs::write(
        dir.join("package.json"),
        r#"{"name": "acme", "version": "2.0.0"}"#,
    )
    .unwrap();
    let o = check_in(
        &dir,
        &dir.join("cache"),
        &["--baseline", "published", "--against", "x.lock"],
    );
    assert_fails_cleanly(&o, "without the `http` feature");
    let o = check_in(
        &dir,
        &dir.join("cache"),
        &["--baseline", "npm:acme@latest", "--against", "x.lock"],
    );
    assert_fails_cleanly(&o, "without the `http` feature");
}

/// The corpus expectation of a pair, without its `exit N` line.
fn corpus(package: &str, pair: &str) -> (serde_json::Value, i32) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(package)
        .join(format!("{pair}.expected.json"));
    let text = fs::read_to_string(path).unwrap();
    let at = text.rfind("exit ").unwrap();
    let code = text[at + 5..].trim().parse().unwrap();
    (serde_json::from_str(&text[..at]).unwrap(), code)
}

/// Check `old` against `new` twice in a fresh cache: both reports are the corpus's,
/// and the second run installs and starts nothing. Returns the two durations.
fn pair_twice(
    name: &str,
    config: &str,
    old: &str,
    new: &str,
    expected: (serde_json::Value, i32),
) -> (f64, f64) {
    let dir = tmpdir(name);
    let cache = dir.join("cache");
    fs::write(dir.join("covenant.toml"), config).unwrap();
    let mut times = Vec::new();
    for run in 0..2 {
        let start = Instant::now();
        let o = check_in(
            &dir,
            &cache,
            &["--format", "json", "--baseline", old, "--against", new],
        );
        times.push(start.elapsed().as_secs_f64());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(expected.1), "{err}");
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(report, expected.0, "run {run}: {err}");
        if run == 0 {
            assert!(err.contains("installing"), "{err}");
        } else {
            assert!(!err.contains("installing"), "the rerun installed: {err}");
            assert!(
                !err.contains("capturing"),
                "the rerun started a server: {err}"
            );
            assert_eq!(err.matches("cached capture").count(), 2, "{err}");
        }
    }
    eprintln!(
        "{old} .. {new}: cold {:.1} s, cached {:.2} s",
        times[0], times[1]
    );
    (times[0], times[1])
}

#[test]
#[ignore = "needs network and npm/python"]
fn published_npm_and_pypi_pairs_give_the_corpus_reports_and_reruns_install_nothing() {
    pair_twice(
        "registry-npm-pair",
        "",
        "npm:@modelcontextprotocol/server-memory@2025.9.25",
        "npm:@modelcontextprotocol/server-memory@2025.11.25",
        corpus(
            "modelcontextprotocol__server-memory",
            "2025.9.25..2025.11.25",
        ),
    );
    // As tests/corpus/capture.sh starts it: `--local-timezone UTC`, and mcp<2 beside
    // 2026.1.26 (it declares mcp>=1 with no upper bound, and mcp 2 removed what it
    // imports).
    let config = r#"
[[server]]
name = "time-2026-1"
package = "pypi:mcp-server-time==2026.1.26"
args = ["--local-timezone", "UTC"]
with = ["mcp<2"]
lockfile = "time-2026-1.lock"

[[server]]
name = "time"
package = "pypi:mcp-server-time==2026.10.19"
args = ["--local-timezone", "UTC"]
lockfile = "time.lock"
"#;
    pair_twice(
        "registry-pypi-pair",
        config,
        "pypi:mcp-server-time==2026.1.26",
        "pypi:mcp-server-time==2026.10.19",
        corpus("mcp-server-time", "2026.1.26..2026.10.19"),
    );
}

/// A tiny MCP server in JavaScript (no dependencies) listing the tools it is given.
#[cfg(feature = "http")]
const JS_SERVER: &str = r#"#!/usr/bin/env node
const tools = TOOLS;
let buf = '';
process.stdin.on('data', (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i); buf = buf.slice(i + 1);
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    if (m.id === undefined) continue;
    let reply;
    if (m.method === 'initialize') {
      reply = { result: { protocolVersion: '2025-11-25', capabilities: { tools: {} },
                serverInfo: { name: 'fixture-mcp-server', version: 'VERSION' } } };
    } else if (m.method === 'tools/list') {
      reply = { result: { tools: tools.map((n) => ({ name: n, description: n,
                inputSchema: { type: 'object' } })) } };
    } else {
      reply = { error: { code: -32601, message: 'method not found' } };
    }
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, ...reply }) + '\n');
  }
});
"#;

/// Offline, from a local registry: a `[[server]] package` is installed (scripts off),
/// started through its `bin`, snapshotted and checked, its capture cached (the rerun
/// installs nothing); `--baseline published` compares it with the release below it.
#[cfg(feature = "http")]
#[test]
#[ignore = "needs node and npm"]
fn a_package_from_a_local_registry_is_installed_once_and_compared_with_the_release_below() {
    let dir = tmpdir("registry-local");
    let reg = dir.join("registry");
    fs::create_dir_all(&reg).unwrap();
    let url = crate::common::HttpServer::files(reg.clone()).url();
    let mut versions = serde_json::Map::new();
    for (version, tools) in [("1.0.0", "['a', 'b']"), ("1.1.0", "['a']")] {
        let pkg = dir.join(format!("build-{version}")).join("package");
        fs::create_dir_all(&pkg).unwrap();
        let manifest = serde_json::json!({
            "name": "fixture-mcp-server", "version": version,
            "bin": {"fixture-mcp-server": "server.js", "other-tool": "server.js"},
            // Never run: installs pass --ignore-scripts.
            "scripts": {"postinstall": format!("touch {}", dir.join("POSTINSTALL_RAN").display())}
        });
        fs::write(pkg.join("package.json"), manifest.to_string()).unwrap();
        fs::write(
            pkg.join("server.js"),
            JS_SERVER
                .replace("TOOLS", tools)
                .replace("VERSION", version),
        )
        .unwrap();
        let tgz = format!("fixture-mcp-server-{version}.tgz");
        let o = std::process::Command::new("tar")
            .args(["czf"])
            .arg(reg.join(&tgz))
            .arg("-C")
            .arg(pkg.parent().unwrap())
            .arg("package")
            .output()
            .unwrap();
        assert!(o.status.success());
        let mut m = manifest.clone();
        m["dist"] = serde_json::json!({"tarball": format!("{url}/{tgz}")});
        versions.insert(version.to_string(), m);
    }
    let doc = serde_json::json!({
        "name": "fixture-mcp-server",
        "dist-tags": {"latest": "1.1.0"},
        "versions": versions
    });
    fs::write(reg.join("fixture-mcp-server"), doc.to_string()).unwrap();
    let work = dir.join("work");
    fs::create_dir_all(&work).unwrap();
    fs::write(
        work.join("covenant.toml"),
        "[[server]]\nname = \"fx\"\npackage = \"npm:fixture-mcp-server@1.1.0\"\nlockfile = \"fx.lock\"\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        bin()
            .current_dir(&work)
            .env("MCP_COVENANT_CACHE", dir.join("cache"))
            .env("MCP_COVENANT_NPM_REGISTRY", &url)
            .env("npm_config_registry", format!("{url}/"))
            .env("npm_config_cache", dir.join("npm-cache"))
            .args(args)
            .output()
            .unwrap()
    };
    let o = run(&["snapshot"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("installing npm:fixture-mcp-server@1.1.0"),
        "{err}"
    );
    assert!(err.contains("fixture-mcp-server/server.js`"), "{err}");
    let lock = fs::read_to_string(work.join("fx.lock")).unwrap();
    assert!(
        lock.contains("\"name\": \"a\"") && !lock.contains("\"name\": \"b\""),
        "{lock}"
    );
    assert!(!dir.join("POSTINSTALL_RAN").exists(), "install scripts ran");
    // The live check: cached, nothing installed or started.
    let o = run(&["check"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        !err.contains("installing") && !err.contains("capturing"),
        "{err}"
    );
    // The release below 1.1.0 is 1.0.0, which had tool b: removing it is breaking.
    let o = run(&["check", "--server", "fx", "--baseline", "published"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "declares npm:fixture-mcp-server@1.1.0; the baseline is npm:fixture-mcp-server@1.0.0"
        ),
        "{err}"
    );
    assert!(
        crate::common::stdout(&o).contains("x tool:b — tool was removed"),
        "{}",
        crate::common::stdout(&o)
    );
    // Install scripts run only when the entry allows them.
    fs::write(
        work.join("covenant.toml"),
        "[[server]]\nname = \"fx\"\npackage = \"npm:fixture-mcp-server@1.1.0\"\nallow_scripts = true\nlockfile = \"fx.lock\"\n",
    )
    .unwrap();
    let o = run(&["snapshot", "--check"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(dir.join("POSTINSTALL_RAN").exists(), "{}", stderr(&o));
    let latest = [
        "check",
        "--baseline",
        "npm:fixture-mcp-server@latest",
        "--against",
        "npm:fixture-mcp-server@1.1.0",
    ];
    // `-q`: the registry is asked and the cache used, and nothing of it is said.
    let o = run(&[&["-q"][..], &latest[..]].concat());
    assert_eq!((o.status.code(), stderr(&o)), (Some(0), String::new()));
    // @latest asks the registry, then uses the cache.
    let o = run(&latest);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("asking") && !err.contains("installing"),
        "{err}"
    );
    // lint reads a package as check does: from the cache, nothing installed.
    let o = run(&[
        "lint",
        "--from",
        "npm:fixture-mcp-server@1.1.0",
        "--format",
        "json",
    ]);
    let err = stderr(&o);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{err}");
    assert!(!err.contains("installing"), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("a JSON report");
    assert!(report["findings"].is_array(), "{report}");
}

/// An HTTPS server on 127.0.0.1 whose certificate a CA made here signs, answering every
/// request with `body`; the CA's certificate (PEM) and the server's URL.
#[cfg(feature = "http")]
fn https_registry(body: String) -> (String, String) {
    use std::io::{Read, Write};
    use std::sync::Arc;
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "mcp-covenant test CA");
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .unwrap();
    let config = Arc::new(config);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let Ok(tcp) = tcp else { continue };
            let Ok(conn) = rustls::ServerConnection::new(config.clone()) else {
                continue;
            };
            let mut tls = rustls::StreamOwned::new(conn, tcp);
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && matches!(tls.read(&mut byte), Ok(1)) {
                head.push(byte[0]);
            }
            if !head.ends_with(b"\r\n\r\n") {
                continue; // the client refused the certificate
            }
            let _ = write!(
                tls,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    });
    (ca_cert.pem(), format!("https://127.0.0.1:{port}"))
}

/// Behind a TLS-inspecting proxy or with a private registry, the CA the machine trusts
/// (here through SSL_CERT_FILE) is trusted; without it the error names the roots used
/// and the variable that adds one.
#[cfg(feature = "http")]
#[test]
fn a_registry_with_a_private_ca_is_trusted_through_ssl_cert_file() {
    let dir = acme_project("registry-private-ca");
    let versions = r#"{"versions": {"1.0.0": {}, "1.10.0": {}, "2.0.0": {}}}"#;
    let (ca, url) = https_registry(versions.to_string());
    fs::write(dir.join("ca.pem"), ca).unwrap();
    let run = |cert_file: Option<&Path>| {
        let mut c = check_published_npm(&dir, &url);
        c.env_remove("SSL_CERT_FILE").env_remove("SSL_CERT_DIR");
        if let Some(f) = cert_file {
            c.env("SSL_CERT_FILE", f);
        }
        c.output().unwrap()
    };
    let o = run(None);
    assert_fails_cleanly(&o, "the trusted roots were");
    let err = stderr(&o);
    assert!(
        err.contains("system store") || err.contains("Mozilla"),
        "{err}"
    );
    assert!(err.contains("set SSL_CERT_FILE"), "{err}");
    let o = run(Some(&dir.join("ca.pem")));
    let err = stderr(&o);
    assert!(
        err.contains(
            "package.json declares npm:@acme/server@2.0.0; the baseline is npm:@acme/server@1.10.0"
        ),
        "{err}"
    );
}

/// A registry that lists a path as a version: the listing is refused, nothing is made
/// outside (or inside) the cache.
#[cfg(feature = "http")]
#[test]
fn a_registry_listing_a_path_as_a_version_installs_nothing_outside_the_cache() {
    let dir = tmpdir("registry-path-version");
    let cache = dir.join("c").join("cache");
    let doc = r#"{"releases": {"9.9+x/../../../victim": [{"yanked": false}]}}"#;
    let url = registry("200 OK", doc.into());
    let o = bin()
        .current_dir(&dir)
        .env("MCP_COVENANT_CACHE", &cache)
        .env("MCP_COVENANT_PYPI_URL", &url)
        .args([
            "check",
            "--baseline",
            "pypi:acme@latest",
            "--against",
            "x.lock",
        ])
        .output()
        .unwrap();
    assert_fails_cleanly(&o, "lists no release");
    assert!(
        stderr(&o).contains("not exact versions, ignored"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("victim").exists() && !dir.join("c").join("victim").exists());
    assert!(!cache.join("pypi").exists(), "nothing installed");
}

/// npm install fails (its registry is unreachable): the install directory is gone.
#[test]
fn a_failed_install_leaves_nothing_in_the_cache() {
    let dir = tmpdir("registry-failed-install");
    let cache = dir.join("cache");
    let o = bin()
        .current_dir(&dir)
        .env("MCP_COVENANT_CACHE", &cache)
        .env("npm_config_registry", "http://127.0.0.1:1/")
        .env("npm_config_fetch_retries", "0")
        .env("MCP_COVENANT_INSTALL_TIMEOUT", "120")
        .args([
            "check",
            "--baseline",
            "npm:acme-nothing@1.0.0",
            "--against",
            "x.lock",
        ])
        .output()
        .unwrap();
    assert_fails_cleanly(&o, "npm:acme-nothing@1.0.0");
    let left: Vec<_> = fs::read_dir(cache.join("npm"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// A registry address with credentials: used, never printed.
#[cfg(feature = "http")]
#[test]
fn registry_credentials_are_never_shown() {
    let dir = tmpdir("registry-credentials");
    fs::write(
        dir.join("package.json"),
        r#"{"name": "acme", "version": "2.0.0"}"#,
    )
    .unwrap();
    let url = registry("503 Service Unavailable", "{}".into());
    let with_creds = url.replace("http://", "http://deploy:Sup3rSecretToken@");
    let o = bin()
        .current_dir(&dir)
        .env("MCP_COVENANT_CACHE", dir.join("cache"))
        .env("MCP_COVENANT_NPM_REGISTRY", &with_creds)
        .args(["check", "--baseline", "published", "--against", "x.lock"])
        .output()
        .unwrap();
    assert_fails_cleanly(&o, "HTTP 503");
    let err = stderr(&o);
    assert!(!err.contains("Sup3rSecretToken"), "{err}");
    assert!(err.contains("***@127.0.0.1"), "{err}");
}

/// The registry comes from the user's npmrc (here NPM_CONFIG_USERCONFIG), never from
/// the project's own .npmrc, which a pull request controls.
#[cfg(feature = "http")]
#[test]
fn a_projects_npmrc_does_not_choose_the_registry() {
    let dir = acme_project("registry-npmrc");
    let versions = r#"{"versions": {"1.0.0": {}, "1.10.0": {}, "2.0.0": {}}}"#;
    let planted = crate::common::HttpServer::start(move |_| {
        (
            "200 OK",
            "Content-Type: application/json\r\n",
            versions.as_bytes().to_vec(),
        )
    });
    fs::write(dir.join(".npmrc"), format!("registry={}/\n", planted.url())).unwrap();
    let user = registry("200 OK", versions.to_string());
    fs::write(
        dir.join("user.npmrc"),
        format!("registry=http://127.0.0.1:1/\n@acme:registry={user}/\n"),
    )
    .unwrap();
    let o = bin()
        .current_dir(&dir)
        .env("MCP_COVENANT_CACHE", dir.join("cache"))
        .env_remove("MCP_COVENANT_NPM_REGISTRY")
        .env_remove("npm_config_registry")
        .env_remove("NPM_CONFIG_REGISTRY")
        .env("NPM_CONFIG_USERCONFIG", dir.join("user.npmrc"))
        .env("MCP_COVENANT_INSTALL_TIMEOUT", "1")
        .args(["check", "--baseline", "published", "--against", "x.lock"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(
        err.contains("the baseline is npm:@acme/server@1.10.0"),
        "{err}"
    );
    assert!(err.contains("user.npmrc"), "{err}");
    assert_eq!(planted.requests(), 0, "{err}");
}

/// `--baseline published` with a declared version below every release: exit 2 saying
/// so, never a comparison with the newest release (above it).
#[cfg(feature = "http")]
#[test]
fn published_below_every_release_says_so() {
    let dir = tmpdir("registry-below-every");
    fs::write(
        dir.join("pyproject.toml"),
        "[project]\nname = \"acme-server\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    let doc = r#"{"releases": {"1.0.0": [{}], "2.0.0": [{}]}}"#;
    let o = bin()
        .current_dir(&dir)
        .env("MCP_COVENANT_CACHE", dir.join("cache"))
        .env("MCP_COVENANT_PYPI_URL", registry("200 OK", doc.into()))
        .args(["check", "--baseline", "published", "--against", "x.lock"])
        .output()
        .unwrap();
    assert_fails_cleanly(&o, "below every release");
    assert!(stderr(&o).contains("the lowest is 1.0.0"), "{}", stderr(&o));
}

/// `--baseline published` reads the package name from a file the pull request controls:
/// a pull request renaming the package to a look-alike chooses its own baseline. When
/// the base is known (`GITHUB_BASE_REF` on a pull request, else `origin/HEAD`), a name
/// that differs there is warned about, naming both.
#[cfg(feature = "http")]
#[test]
fn published_warns_when_the_package_name_differs_from_the_base_revision() {
    use crate::common::git;
    let dir = tmpdir("registry-published-renamed");
    git(&dir, &["init", "-q", "-b", "main"]);
    let manifest = |name: &str| format!(r#"{{"name": "{name}", "version": "2.0.0"}}"#);
    fs::write(dir.join("package.json"), manifest("@acme/server")).unwrap();
    git(&dir, &["add", "package.json"]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    git(&dir, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    let versions = r#"{"versions": {"1.0.0": {}}}"#;
    let url = registry("200 OK", versions.to_string());
    let run = |base: Option<&str>| {
        let mut c = bin();
        c.current_dir(&dir)
            .env("MCP_COVENANT_CACHE", dir.join("cache"))
            .env("MCP_COVENANT_NPM_REGISTRY", &url)
            .env("npm_config_registry", "http://127.0.0.1:1/")
            .env("npm_config_fetch_retries", "0")
            .env_remove("GITHUB_BASE_REF")
            .args(["check", "--baseline", "published", "--against", "x.lock"]);
        if let Some(base) = base {
            c.env("GITHUB_BASE_REF", base);
        }
        stderr(&c.output().unwrap())
    };
    // The same name: nothing to say.
    let err = run(Some("main"));
    assert!(!err.contains("warning"), "{err}");
    // Renamed in the work tree (the pull request): a warning naming both and the base.
    fs::write(dir.join("package.json"), manifest("@acme/servre")).unwrap();
    let err = run(Some("main"));
    let warning = err
        .lines()
        .find(|l| l.starts_with("warning: ") && l.contains("origin/main"))
        .unwrap_or_else(|| panic!("no warning naming the base: {err}"));
    assert!(
        warning.contains("@acme/servre") && warning.contains("@acme/server"),
        "{warning}"
    );
    // No pull request: the base is origin/HEAD when the remote names one.
    git(
        &dir,
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/main",
        ],
    );
    let err = run(None);
    assert!(
        err.contains("warning: ") && err.contains("@acme/server"),
        "{err}"
    );
    // A base revision without the file (a new package): nothing to compare, no warning.
    fs::rename(dir.join("package.json"), dir.join("package.json.bak")).unwrap();
    git(&dir, &["rm", "-q", "--cached", "package.json"]);
    git(&dir, &["commit", "-q", "-m", "no manifest"]);
    git(&dir, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    fs::rename(dir.join("package.json.bak"), dir.join("package.json")).unwrap();
    let err = run(Some("main"));
    assert!(!err.contains("warning"), "{err}");
}
