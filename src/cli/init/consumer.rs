//! `init --from-client FILE`: set up a repository that consumes servers instead of
//! serving one. The packages FILE pins decide the workflow's setup (node for npm pins,
//! uv for PyPI ones); the workflow runs the Action's `mode: upgrade` on pull requests
//! (the pins a change moves, gated) and weekly (what each pin could move to). Nothing
//! else is written: `upgrade` reads the client config itself, and needs no lockfile.

use std::path::{Path, PathBuf};

use super::{package_workflow_path, say, write_all};
use crate::cli::upgrade::pins::{self, What, CLIENT_CONFIGS};
use crate::error::{Error, Result};
use crate::registry::Registry;

/// The workflow, at the repository's root.
const WORKFLOW: &str = ".github/workflows/mcp-upgrades.yml";

pub(super) fn run(client: &Path, force: bool) -> Result<u8> {
    let text = String::from_utf8(crate::io::read_input(client, "client config")?)
        .map_err(|_| Error::new(format!("{}: not UTF-8", client.display())))?;
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
            "{} pins no published package (npx/uvx servers with a version), so `mcp-covenant upgrade` has nothing to check; to gate a server's own interface, run `mcp-covenant init -- COMMAND` in its repository",
            client.display()
        )));
    }
    let name = client_arg(client)?;
    let package = crate::git::prefix().filter(|p| !p.is_empty());
    let path = match &package {
        Some(p) => package_workflow_path("mcp-upgrades", p)?,
        None => crate::git::up_to_root().unwrap_or_default().join(WORKFLOW),
    };
    let files = vec![(
        path.clone(),
        workflow(&registries, name.as_deref(), package.as_deref()),
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
        "mcp-covenant: {} pins {} packages (npm: {}, PyPI: {}), which the workflow checks",
        client.display(),
        registries.len(),
        count(Registry::Npm),
        count(Registry::Pypi)
    );
    for s in &skipped {
        status!("mcp-covenant: not checked: {}", crate::escape::text(s));
    }
    status!(
        "next: commit it: `git add {} && git commit -m 'Check MCP server upgrades with mcp-covenant'`; `mcp-covenant upgrade` shows now what each pin could move to",
        crate::cli::shell_word(&path.display().to_string())
    );
    Ok(0)
}

/// `--from-client FILE` for the workflow's `args`, when `upgrade` would not read the
/// file by itself (`None`: it is one of the client configs it looks for). The Action
/// splits `args` on white space and the workflow must not evaluate it: such a path is
/// refused.
fn client_arg(client: &Path) -> Result<Option<String>> {
    let plain: PathBuf = client
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    let text = plain.to_str().unwrap_or_default();
    if CLIENT_CONFIGS.contains(&text) {
        return Ok(None);
    }
    if text.is_empty()
        || plain.is_absolute()
        || text.contains("${{")
        || text.contains(['\'', '"', '#', ':'])
        || text.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(Error::new(format!(
            "{}: the workflow could not name this file (give a path relative to the project, without spaces, quotes, `#`, `:` or `${{{{`), or move it to .mcp.json, which `upgrade` reads by itself",
            crate::escape::text(&client.display().to_string())
        )));
    }
    Ok(Some(text.to_string()))
}

/// The workflow for pins of `registries`, naming the client config when `upgrade` would
/// not find it, running in `package` (a monorepo's directory) when given.
fn workflow(registries: &[Registry], client: Option<&str>, package: Option<&str>) -> String {
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
    let mut with = String::new();
    if let Some(c) = client {
        with.push_str(&format!("          args: --from-client {c}\n"));
    }
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
