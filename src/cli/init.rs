//! `init`: a starter covenant.toml and the GitHub workflow.

use std::path::Path;

use super::settings::InitSettings;
use crate::error::Result;

pub(super) fn run(settings: InitSettings) -> Result<u8> {
    let command = settings.command.as_deref();
    for path in crate::reference::init(Path::new(""), &settings.config, command)? {
        eprintln!("mcp-covenant: wrote {}", path.display());
    }
    Ok(0)
}
