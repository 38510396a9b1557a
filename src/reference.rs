//! What `mcp-covenant help config` prints (and docs/config.md holds) and what
//! `mcp-covenant init` writes: the covenant.toml reference, a commented starter
//! covenant.toml, and where the GitHub workflow goes (src/cli/init/workflow.yml is it).

/// `mcp-covenant help config`.
pub const CONFIG_REFERENCE: &str = r#"covenant.toml: the project's configuration for mcp-covenant

Found as ruff and buf find theirs: covenant.toml in the current directory, else in the
nearest parent directory that has one, up to the repository's root (the directory
holding .git); on unix only a .git and a covenant.toml the current user owns count
(another user's covenant.toml is used only when --config names it); --config FILE
wins, and `-v` says which file is used. A command runs in
the file's directory: paths in it (lockfile, a server's command) are relative to it, and
so are the lockfile paths `check --baseline-rev` reads at a revision. Every key is
optional. Validation is strict: an unknown key, rule id, level, glob or date is exit 2
with file:line:column (and a "did you mean" for a misspelt id). A command-line flag wins
over the file, the file over the built-in defaults. `mcp-covenant init` writes one with
the server's command.

command = ["node", "dist/server.js"]
    The server, when there is one: the program and its arguments, started without a
    shell in this file's directory. Or http = "http://127.0.0.1:3000/mcp" (with
    headers_from_env, as in [[server]] below). `snapshot`, `check` and `lint` capture it
    when no server is given on the command line. lockfile = "mcp-covenant.lock" (the
    default) is its lockfile, relative to this file. Several servers are [[server]]
    entries instead.

profile = "consumer"
    For a team that pins a third-party server its agents depend on: description, title,
    server instructions and tool annotation changes become breaking, because they change
    what the model is told (a silently rewritten description fails the check). A
    [severity] entry still wins. The default, "provider", leaves them to the rule tables.

fail_on = "breaking"
    The level at which `check` exits 1: breaking (or major), minor, patch or never
    (--fail-on). Or "version": only breaking changes that come without the version
    bump they need fail (a major; in 0.y.z the minor, as Cargo reads it), judged by the
    versions the server reports in the two lockfiles; minor and patch changes never
    fail. An intended major release passes. `init` sets it when package.json,
    pyproject.toml or Cargo.toml declares a semver version. A calendar version
    (2025.12.18: a first number of 1900 or more) declares no bump, so under "version"
    every breaking change fails; gate such a server with "breaking" and ship a break
    with the approve label or `mcp-covenant ignore`.

lint_fail_on = "error"
    The level at which `lint` exits 1: error, warning, info or never (lint --fail-on).

[severity]
"tool.description.changed" = "none"
"schema.enum.value.added" = { output = "minor" }
    A change rule's severity: breaking, minor, patch or none (silenced, but counted in
    the report), for every direction, or per direction with { input = ..., output = ... }
    (input: what a caller sends; output: what it receives). `mcp-covenant rules` lists
    every id with its default and effective severity; `mcp-covenant rules ID` explains
    one. A renamed rule's former id still works, with a warning naming the current id
    (an entry on the current id wins); a retired id warns and sets nothing.
    An optional parameter removed from an open inputSchema is minor: old calls still
    validate, and the server ignores the value (a rename shows as "looks renamed to").
    When your callers are programs that would silently lose that value, make it breaking:
    "schema.property.removed" = { input = "breaking" }

[lint]
"tool.description.too_long" = "info"
    A lint rule's level: error, warning, info or none.

[[ignore]]
subject = "tool:internal_*"
path = "inputSchema.properties.debug*"
code = "schema.*"
fingerprint = "15b09cb13ab412378f616c01fd296f48"
reason = "internal tools are not part of the contract"
until = "2026-12-31"
    `mcp-covenant ignore FINGERPRINT --reason TEXT [--until DATE]` appends one
    (--code, --subject, --path give patterns), keeping the file's comments.
    Acknowledges the changes it matches; they are counted as ignored, and listed with
    the entry and its reason by `check --verbose`. Every pattern given must match:
    subject (tool:NAME, prompt:NAME, resource:URI, template:URI_TEMPLATE, server),
    path (an empty path is the element itself), code (a rule id) are globs: ? one
    byte (an ASCII character; a non-ASCII one is two to four), * any run, [a-z] /
    [!a-z], {a,b}, \ escapes. A code glob matches current rule ids; a former id
    written out in full still matches the rules that took it over (with a warning), a retired one matches nothing; fingerprint (32 hex
    digits, from `check -v` or `--format json`) matches exactly one change (the 12-digit form
    of 0.2 still matches, with a warning: two changes can share it). `reason` is required; an entry
    must give at least one pattern. `until` (a quoted "YYYY-MM-DD" or a bare TOML date)
    is the last day, UTC, the entry applies: after it the change is reported again and
    `check` warns, naming the entry. `check` also warns about an entry that matches
    no change; `check --prune-ignores` removes those, the expired ones and those on a
    retired rule id.

[[server]]
name = "orders"
command = ["python3", "server.py"]
lockfile = "locks/orders.lock"

[[server]]
name = "billing"
http = "http://127.0.0.1:3000/mcp"
headers_from_env = { Authorization = "BILLING_TOKEN" }
lockfile = "locks/billing.lock"

[[server]]
name = "time"
package = "pypi:mcp-server-time==2026.10.19"   # or npm:@scope/server@1.4.0, @latest
args = ["--local-timezone", "UTC"]
env = ["TIME_API_KEY"]                         # names only: values stay in the environment
# with = ["mcp<2"]        # installed beside it (an old release's open ranges)
# allow_scripts = true    # npm install scripts (off: --ignore-scripts)
# allow_sdist = true      # pip may build source distributions (off: wheels only)
# python = "3.12"         # the Python a PyPI package runs on (or --python)
lockfile = "locks/time.lock"
    Several servers. `snapshot`, `check` and `lint` given no server on the command line
    (no -- CMD, --http, --against or --from) run every entry, and --server NAME picks
    one. name: letters, digits, `.`, `_`, `-`, unique. command: the program and its
    arguments, started without a shell in this file's directory; or http: a Streamable HTTP endpoint, whose
    headers_from_env maps a header to the environment variable holding its value (no
    secret in the file; MCP_COVENANT_HEADER_* variables are not sent to configured
    servers). lockfile: relative to covenant.toml, one per server; `snapshot` writes it,
    `check` compares with it, `check --baseline-rev REV` compares it with itself at REV.
    Reports are grouped by server and the exit code is the worst; `lint` adds the tool
    and prompt names two servers share (tool.name_collision, prompt.name_collision).
    package: a published server, installed into the cache (MCP_COVENANT_CACHE, else
    $XDG_CACHE_HOME/mcp-covenant or ~/.cache/mcp-covenant; npm with --ignore-scripts,
    PyPI in a venv with uv or pip, wheels only unless allow_sdist; python picks the
    interpreter) and started through the entry point it declares (npm `bin`,
    `[project.scripts]`: the only one or the one named like the package) with `args`;
    every variable `env` names must be set. Its capture is cached by package, version,
    capture settings, the values of its `env` variables (hashed) and the interpreter's
    version: a rerun installs and starts nothing. A
    package named on the command line (`--baseline npm:...`, `--against pypi:...`) is
    installed and started as the entry with the same package says. `env` (command and
    package servers) names the variables the server needs; an unset one is an error.
    `snapshot --from-client .mcp.json` (also .vscode/mcp.json, .cursor/mcp.json,
    claude_desktop_config.json) adds the servers an agent client runs as entries
    (`npx -y PKG` and `uvx PKG` as a `package`; header and variable names, never
    values) and captures them.

Compared with a revision (`check --baseline-rev REV`, the GitHub Action's verdict), this
file is held to REV's: a severity it lowers, an [[ignore]] REV lacks or a looser fail_on
is named in a warning and applies only once merged, so a pull request cannot loosen its
own gate. What the file ignores or re-classifies is counted in every report format, and
`check -v` lists each ignored change with the entry and reason that hid it.
"#;

/// The starter covenant.toml `init` writes: every key commented out, so it changes
/// nothing until edited.
pub const STARTER_CONFIG: &str = r#"# covenant.toml: how mcp-covenant judges this project's MCP server.
# Every key is optional; `mcp-covenant help config` describes them all.

# The level at which `check` fails: breaking, minor, patch, never, or version (breaking
# changes without a major version bump). --fail-on wins.
# fail_on = "breaking"

# The level at which `lint` fails: error, warning, info or never.
# lint_fail_on = "error"

# A rule's severity (breaking, minor, patch, none), in both directions or per direction.
# `mcp-covenant rules` lists every rule id.
# [severity]
# "tool.description.changed" = "none"
# "schema.enum.value.added" = { output = "minor" }

# A lint rule's level (error, warning, info, none).
# [lint]
# "tool.description.too_long" = "info"

# Acknowledge an intended change, with the reason, until a day (UTC) if you like.
# [[ignore]]
# fingerprint = "15b09cb13ab412378f616c01fd296f48"   # from `mcp-covenant check -v` (`mcp-covenant ignore` appends one)
# reason = "y became an integer in 2.0, announced in the changelog"
# until = "2026-12-31"

# Several servers, each with its lockfile: snapshot, check and lint run them all, and
# --server NAME picks one.
# [[server]]
# name = "orders"
# command = ["node", "dist/server.js"]   # or: http = "http://127.0.0.1:3000/mcp"
# lockfile = "mcp-covenant.lock"
"#;

pub const WORKFLOW_PATH: &str = ".github/workflows/mcp-covenant.yml";

/// The server `init` writes into covenant.toml: a command started over stdio, or a
/// Streamable HTTP URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InitServer {
    Command(Vec<String>),
    Http(String),
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    toml_edit::Value::from(s).to_string().trim().to_string()
}

/// The starter's `fail_on` lines, which `init` replaces when it sets the key.
const STARTER_FAIL_ON: &str = "# The level at which `check` fails: breaking, minor, patch, never, or version (breaking\n# changes without a major version bump). --fail-on wins.\n# fail_on = \"breaking\"\n";

/// covenant.toml as `init` writes it: the server, then the starter's commented keys
/// (`fail_on = "version"` set when `version` names where the project declares its
/// version).
pub fn starter_config(server: &InitServer, version: Option<&str>) -> String {
    let line = match server {
        InitServer::Command(argv) => {
            let words: Vec<String> = argv.iter().map(|w| toml_string(w)).collect();
            format!(
                "# The server: started without a shell, in this file's directory. `snapshot`, `check`\n# and `lint` capture it when no server is given on the command line.\ncommand = [{}]\n",
                words.join(", ")
            )
        }
        InitServer::Http(url) => format!(
            "# The server: its Streamable HTTP endpoint (it must be running). `snapshot`, `check`\n# and `lint` capture it when no server is given on the command line.\nhttp = {}\n",
            toml_string(url)
        ),
    };
    let (head, rest) = STARTER_CONFIG
        .split_once("\n\n")
        .unwrap_or((STARTER_CONFIG, ""));
    let rest = match version {
        Some(from) => rest.replacen(
            STARTER_FAIL_ON,
            &format!("# Breaking changes fail unless the server's version declares them: a major bump (in\n# 0.y.z the minor) of {from}, snapshotted and committed, ships them.\n# Minor and patch changes never fail (breaking, minor, patch or never: fail at that level).\nfail_on = \"version\"\n"),
            1,
        ),
        None => rest.to_string(),
    };
    format!("{head}\n\n{line}# Its lockfile is mcp-covenant.lock, next to this file (set `lockfile` to move it).\n\n{rest}")
}
