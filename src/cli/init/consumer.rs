//! `init --from-client FILE`: set up a repository that consumes servers instead of
//! serving one. The packages FILE pins decide the workflow's setup (node for npm pins,
//! uv for PyPI ones); the workflow runs the Action's `mode: upgrade` on pull requests
//! (the pins a change moves, gated) and weekly (what each pin could move to), always
//! naming FILE (`upgrade` would otherwise read every client config it finds, and
//! covenant.toml's packages, from the covenant.toml's directory, which in a monorepo may
//! be above FILE's): what it checks is what the setup was chosen for. Nothing else is
//! written: `upgrade` reads the client config itself, and needs no lockfile.

use std::path::{Path, PathBuf};

use super::{package_workflow_path, say, write_all};
use crate::cli::upgrade::pins::{self, What};
use crate::error::{Error, Result};
use crate::registry::Registry;

/// The workflow, at the repository's root.
const WORKFLOW: &str = ".github/workflows/mcp-upgrades.yml";

pub(super) fn run(client: &Path, force: bool) -> Result<u8> {
    let name = client_arg(client)?;
    let shown = crate::escape::text(&client.display().to_string()).into_owned();
    let text = String::from_utf8(crate::io::read_input(client, "client config")?)
        .map_err(|_| Error::new(format!("{shown}: not UTF-8")))?;
    let pins = pins::from_client(&text, client)?;
    let mut registries = Vec::new();
    let mut skipped = Vec::new();
    for pin in &pins {
        match &pin.what {
            What::Package { package, .. } => registries.push(package.registry),
            What::NotChecked(why) => skipped.push(format!("`{}`: {why}", pin.name)),
        }
    }
    if registries.is_empty() {
        return Err(Error::new(format!(
            "{shown} pins no published package (npx/uvx servers with a version), so `mcp-covenant upgrade` has nothing to check; to gate a server's own interface, run `mcp-covenant init -- COMMAND` in its repository"
        )));
    }
    let package = crate::git::prefix().filter(|p| !p.is_empty());
    let path = match &package {
        Some(p) => package_workflow_path("mcp-upgrades", p)?,
        None => crate::git::up_to_root().unwrap_or_default().join(WORKFLOW),
    };
    let files = vec![(
        path.clone(),
        workflow(&registries, &name, package.as_deref()),
    )];
    let done = write_all(&files, force).map_err(|e| {
        Error::new(format!(
            "{}{}",
            e.message(),
            if force {
                ""
            } else {
                " (`init --force --from-client` replaces it and says what changed)"
            }
        ))
    })?;
    say(&done, &files);
    let count = |r: Registry| registries.iter().filter(|x| **x == r).count();
    status!(
        "mcp-covenant: {shown} pins {} (npm: {}, PyPI: {}), which the workflow checks",
        match registries.len() {
            1 => "1 package".to_string(),
            n => format!("{n} packages"),
        },
        count(Registry::Npm),
        count(Registry::Pypi)
    );
    for s in &skipped {
        status!("mcp-covenant: not checked: {}", crate::escape::text(s));
    }
    status!(
        "next: commit it: `git add {} && git commit -m 'Check MCP server upgrades with mcp-covenant'`; `mcp-covenant upgrade --from-client {name}` shows now what each pin could move to",
        crate::cli::shell_word(&path.display().to_string())
    );
    Ok(0)
}

/// FILE as the workflow's `args` give it to `--from-client`. The Action splits `args`
/// on white space and the workflow must not evaluate it, so a path with white space,
/// quotes, `#`, `:` or `${{`, an absolute one or one that reads as a flag is refused.
fn client_arg(client: &Path) -> Result<String> {
    let plain: PathBuf = client
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    let text = plain.to_str().unwrap_or_default();
    if text.is_empty()
        || plain.is_absolute()
        || text.starts_with('-')
        || text.contains("${{")
        || text.contains(['\'', '"', '#', ':'])
        || text.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(Error::new(format!(
            "{}: the workflow could not name this file (give a path relative to the project, not starting with `-`, without spaces, quotes, `#`, `:` or `${{{{`)",
            crate::escape::text(&client.display().to_string())
        )));
    }
    Ok(text.to_string())
}

/// The workflow for pins of `registries` in the client config `client`, running in
/// `package` (a monorepo's directory) when given.
fn workflow(registries: &[Registry], client: &str, package: Option<&str>) -> String {
    let mut setup = String::new();
    if registries.contains(&Registry::Npm) {
        setup.push_str(
            "      - uses: actions/setup-node@v4 # npx pins: npm installs them\n        with:\n          node-version: 22\n",
        );
    }
    if registries.contains(&Registry::Pypi) {
        setup.push_str(
            "      - uses: astral-sh/setup-uv@v6 # uvx pins: uv installs each release with the dependencies of its day\n",
        );
    }
    let quoted = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let mut with = format!("          args: --from-client {client}\n");
    if let Some(p) = package {
        with.push_str(&format!("          working-directory: {}\n", quoted(p)));
    }
    let name = match package {
        Some(p) => quoted(&format!("mcp-upgrades ({p})")),
        None => "mcp-upgrades".to_string(),
    };
    include_str!("upgrade.yml")
        .replace("%NAME%", &name)
        .replace("%SETUP%\n", &setup)
        .replace("%VERSION%", env!("CARGO_PKG_VERSION"))
        .replace("%WITH%\n", &with)
}
