//! `--write`: each pin moved in the file it came from, and nothing else changed. A
//! client config is edited as text: only the bytes of the version inside its string
//! literal change (the whole literal when it holds escapes), so its indentation, key
//! order and line ends stay as they were; covenant.toml is edited through toml_edit,
//! which keeps its comments and layout.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::pins::Place;
use crate::error::{Error, Result};
use crate::registry::Package;

/// One pin to move.
pub(super) struct Move<'a> {
    pub name: &'a str,
    pub package: &'a Package,
    pub at: &'a Place,
    pub to: &'a str,
}

/// The new text of every file with a move, from the text each was read as. Files are
/// written only once every edit applied (the caller writes them).
pub(super) fn edit(
    texts: &BTreeMap<PathBuf, String>,
    moves: &BTreeMap<PathBuf, Vec<Move<'_>>>,
) -> Result<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    for (file, list) in moves {
        let text = texts
            .get(file)
            .ok_or_else(|| Error::new(format!("internal: {} was not read", file.display())))?;
        let edited = if list.iter().all(|m| matches!(m.at, Place::Toml)) {
            edit_toml(text, file, list)?
        } else {
            edit_json(text, file, list)?
        };
        out.push((file.clone(), edited));
    }
    Ok(out)
}

fn edit_json(text: &str, file: &std::path::Path, list: &[Move<'_>]) -> Result<String> {
    let mut edits: Vec<((usize, usize), String)> = Vec::new();
    for m in list {
        let Place::Json {
            literal,
            value,
            version,
        } = m.at
        else {
            return Err(Error::new(format!(
                "internal: {}: a covenant.toml pin in a JSON file",
                file.display()
            )));
        };
        let raw = &text[literal.0..literal.1];
        let plain = serde_json::to_string(value).unwrap_or_default();
        if raw == plain && version.0 < version.1 {
            // No escapes: the literal is the value in quotes.
            let at = literal.0 + 1;
            edits.push(((at + version.0, at + version.1), m.to.to_string()));
        } else {
            let mut new = value.clone();
            match version.0 < version.1 {
                true => new.replace_range(version.0..version.1, m.to),
                false => {
                    return Err(Error::new(format!(
                        "{}: server `{}` names no version to move",
                        file.display(),
                        m.name.escape_debug()
                    )))
                }
            }
            edits.push((*literal, serde_json::to_string(&new).unwrap_or_default()));
        }
    }
    edits.sort_by_key(|e| std::cmp::Reverse(e.0 .0));
    let mut out = text.to_string();
    for ((start, end), with) in edits {
        out.replace_range(start..end, &with);
    }
    // What was edited still reads as the same servers.
    crate::canon::value_from_str(&out).map_err(|e| {
        Error::new(format!(
            "internal: {} would not be JSON after the edit: {e}",
            file.display()
        ))
    })?;
    Ok(out)
}

fn edit_toml(text: &str, file: &std::path::Path, list: &[Move<'_>]) -> Result<String> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        Error::new(format!("{}: {}", file.display(), e.message()))
    })?;
    for m in list {
        let spec = m.package.display_at(m.to);
        let servers = doc
            .get_mut("server")
            .and_then(|s| s.as_array_of_tables_mut());
        let entry = servers.and_then(|a| {
            a.iter_mut()
                .find(|t| t.get("name").and_then(|n| n.as_str()) == Some(m.name))
        });
        let value = entry
            .and_then(|t| t.get_mut("package"))
            .and_then(|p| p.as_value_mut())
            .ok_or_else(|| {
                Error::new(format!(
                    "{}: no [[server]] `{}` with a `package` to move",
                    file.display(),
                    m.name
                ))
            })?;
        let decor = value.decor().clone();
        *value = toml_edit::Value::from(spec);
        *value.decor_mut() = decor;
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Package;

    #[test]
    fn a_json_pin_moves_and_nothing_else_changes() {
        let text = "{\r\n\t\"mcpServers\": {\"a\": {\"command\": \"npx\",   \"args\": [\"-y\", \"x@1.0.0\", \"--v=1.0.0\"]}}}";
        let pins = super::super::pins::from_client(text, std::path::Path::new("m.json")).unwrap();
        let super::super::pins::What::Package { package, at, .. } = &pins[0].what else {
            panic!()
        };
        let mut moves = BTreeMap::new();
        moves.insert(
            PathBuf::from("m.json"),
            vec![Move {
                name: "a",
                package,
                at,
                to: "1.1.0",
            }],
        );
        let mut texts = BTreeMap::new();
        texts.insert(PathBuf::from("m.json"), text.to_string());
        let out = edit(&texts, &moves).unwrap();
        assert_eq!(out[0].1, text.replace("x@1.0.0", "x@1.1.0"));
    }

    #[test]
    fn a_toml_pin_moves_keeping_comments() {
        let text = "# mine\n[[server]]\nname = \"a\"   # the one\npackage = \"npm:x@1.0.0\"  # pinned\nlockfile = \"a.lock\"\n";
        let package = Package::parse("npm:x").unwrap().unwrap();
        let mut moves = BTreeMap::new();
        moves.insert(
            PathBuf::from("covenant.toml"),
            vec![Move {
                name: "a",
                package: &package,
                at: &Place::Toml,
                to: "2.0.0",
            }],
        );
        let mut texts = BTreeMap::new();
        texts.insert(PathBuf::from("covenant.toml"), text.to_string());
        let out = edit(&texts, &moves).unwrap();
        assert_eq!(out[0].1, text.replace("x@1.0.0", "x@2.0.0"));
    }

    /// Adversarial round four: a server named twice in a client config (a client reads
    /// the last), its version spelt with escapes: the move edits the literal the client
    /// reads, and the file stays JSON with the first entry untouched.
    #[test]
    fn a_pin_given_twice_moves_where_the_client_reads_it() {
        let text = "{\"mcpServers\": {\"a\": {\"command\": \"npx\", \"args\": [\"-y\", \"x@1.0.0\"]},\n \"a\": {\"command\": \"npx\", \"args\": [\"-y\", \"x@1.0.\\u0030\"], \"args\": [\"-y\", \"x@1.0.1\"]}}}";
        let pins = super::super::pins::from_client(text, std::path::Path::new("m.json")).unwrap();
        assert_eq!(pins.len(), 1);
        let super::super::pins::What::Package { package, at, .. } = &pins[0].what else {
            panic!("{:?}", pins[0].what)
        };
        let mut moves = BTreeMap::new();
        moves.insert(
            PathBuf::from("m.json"),
            vec![Move {
                name: "a",
                package,
                at,
                to: "1.2.0",
            }],
        );
        let mut texts = BTreeMap::new();
        texts.insert(PathBuf::from("m.json"), text.to_string());
        let out = edit(&texts, &moves).unwrap();
        assert_eq!(out[0].1, text.replace("x@1.0.1", "x@1.2.0"));
    }
}
