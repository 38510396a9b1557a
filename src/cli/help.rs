//! `help [TOPIC]`.

use termcolor::WriteColor;

use super::args::Cli;
use crate::error::{Error, Result};

/// `help [TOPIC]`: the main help, a command's, or the covenant.toml reference.
pub(super) fn run(topic: Option<&str>, out: &mut dyn WriteColor) -> Result<u8> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    cmd.build();
    let text = match topic {
        None => cmd.render_long_help().to_string(),
        Some("config") => crate::reference::CONFIG_REFERENCE.to_string(),
        Some(name) => match cmd.find_subcommand_mut(name) {
            Some(sub) => sub.render_long_help().to_string(),
            None => {
                let mut topics: Vec<&str> = vec!["config"];
                let names: Vec<String> = cmd
                    .get_subcommands()
                    .map(|c| c.get_name().to_string())
                    .collect();
                topics.extend(names.iter().map(String::as_str));
                let hint = crate::config::suggest(name, &topics)
                    .map(|s| format!("did you mean `{s}`? "))
                    .unwrap_or_default();
                return Err(Error::new(format!(
                    "no help topic `{name}`; {hint}topics: {}",
                    topics.join(", ")
                )));
            }
        },
    };
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Error::new(format!("cannot write: {e}")))?;
    Ok(0)
}
