//! `ignore`: append an `[[ignore]]` entry to covenant.toml, keeping its comments and
//! layout (toml_edit edits the document as written). The new file is read back as
//! covenant.toml is read before it is written, so an entry `check` would refuse is
//! refused here, and nothing is written. `check --prune-ignores` removes entries the
//! same way (`prune`).

use std::path::PathBuf;

use super::args::IgnoreArgs;
use crate::config::{Config, Ignore, RetiredIgnore};
use crate::error::{Error, Result};
use crate::lint::LintRules;
use crate::rules::Rules;

pub(super) fn run(args: IgnoreArgs, config: &Config, rules: &Rules) -> Result<u8> {
    let (path, text) = match &config.file {
        Some(f) => (f.clone(), crate::config::read_text(f)?),
        None => (PathBuf::from(crate::config::DEFAULT_FILE), String::new()),
    };
    let name = path.display().to_string();
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| Error::new(format!("{name}: {}", e.message())))?;
    let mut entry = toml_edit::Table::new();
    for (key, value) in [
        ("fingerprint", &args.fingerprint),
        ("subject", &args.subject),
        ("path", &args.path),
        ("code", &args.code),
        ("reason", &Some(args.reason.clone())),
        ("until", &args.until),
    ] {
        if let Some(v) = value {
            entry.insert(key, toml_edit::value(v.as_str()));
        }
    }
    // A list of [[ignore]] tables (or none yet): the entry is appended after everything
    // else in the file, below the starter's commented keys (toml_edit would place it
    // above the document's trailing comments, so an uncommented key there would fall
    // into the new table).
    if matches!(
        doc.get("ignore"),
        None | Some(toml_edit::Item::ArrayOfTables(_))
    ) {
        let mut one = toml_edit::DocumentMut::new();
        let mut list = toml_edit::ArrayOfTables::new();
        list.push(entry);
        one.insert("ignore", toml_edit::Item::ArrayOfTables(list));
        let sep = match text.as_str() {
            "" => "",
            t if t.ends_with("\n\n") => "",
            t if t.ends_with('\n') => "\n",
            _ => "\n\n",
        };
        return finish(
            &path,
            config,
            &args,
            rules,
            &name,
            line_ends_of(&text, format!("{text}{sep}{one}")),
        );
    }
    let item = doc
        .entry("ignore")
        .or_insert_with(|| toml_edit::Item::ArrayOfTables(Default::default()));
    match item {
        toml_edit::Item::ArrayOfTables(a) => a.push(entry),
        toml_edit::Item::Value(toml_edit::Value::Array(a)) => {
            a.push(entry.into_inline_table());
        }
        _ => {
            return Err(Error::new(format!(
            "{name}: `ignore` is not a list of [[ignore]] tables, so no entry can be added to it"
        )))
        }
    }
    let new_text = line_ends_of(&text, doc.to_string());
    finish(&path, config, &args, rules, &name, new_text)
}

/// Read `new_text` back as `check` would, then write it and say so.
fn finish(
    path: &std::path::Path,
    config: &Config,
    args: &IgnoreArgs,
    rules: &Rules,
    name: &str,
    new_text: String,
) -> Result<u8> {
    let name = name.to_string();
    // Read back as `check` reads it: an invalid pattern, date or fingerprint, or an entry
    // that matches everything, is refused before anything is written.
    let lint = LintRules::embedded()?;
    // The user cannot open the text that was not written: a line and column of it
    // would send them looking for an entry that is not there. The entry is its flags.
    let parsed = Config::parse(&new_text, &name, rules, &lint).map_err(|e| {
        Error::new(format!(
            "the [[ignore]] entry for {name} is refused, and nothing was written: {}",
            without_place(e.message(), &name)
        ))
    })?;
    let added = parsed
        .ignore
        .last()
        .map(|i| i.origin.clone())
        .unwrap_or_else(|| name.clone());
    crate::io::write_atomic(path, new_text.as_bytes())?;
    if config.file.is_none() {
        status!("mcp-covenant: wrote {name} with an [[ignore]] entry ({added})");
    } else {
        status!("mcp-covenant: added an [[ignore]] entry to {name} ({added})");
    }
    if let Some(until) = &args.until {
        status!("mcp-covenant: the change is reported again after {until} (UTC)");
    }
    Ok(0)
}

/// An `[[ignore]]` entry that `check --prune-ignores` removes, and why.
pub(super) struct Idle<'a> {
    pub index: usize,
    pub origin: &'a str,
    pub reason: &'a str,
    pub why: String,
}

impl<'a> Idle<'a> {
    pub(super) fn of(i: &'a Ignore, why: String) -> Self {
        let (index, origin, reason) = (i.index, i.origin.as_str(), i.reason.as_str());
        Idle {
            index,
            origin,
            reason,
            why,
        }
    }

    pub(super) fn retired(r: &'a RetiredIgnore, why: String) -> Self {
        let (index, origin, reason) = (r.index, r.origin.as_str(), r.reason.as_str());
        Idle {
            index,
            origin,
            reason,
            why,
        }
    }
}

/// `check --prune-ignores`: remove `idle` (entries of `config`'s file, each with why it
/// goes) from that file, keeping everything else as written, and say so for each. The
/// file is read again and each entry found where it was (same place, same reason), and
/// the new text is read back as covenant.toml is read, before anything is written.
pub(super) fn prune(config: &Config, rules: &Rules, idle: &[Idle<'_>]) -> Result<()> {
    let Some(path) = config.file.as_deref().filter(|_| !idle.is_empty()) else {
        return Ok(());
    };
    let name = path.display().to_string();
    let text = crate::config::read_text(path)?;
    let changed = || {
        Error::new(format!(
            "{name} changed while it was checked; nothing was pruned (run the check again)"
        ))
    };
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|_| changed())?;
    let mut gone: Vec<usize> = idle.iter().map(|i| i.index).collect();
    gone.sort_unstable();
    gone.dedup();
    let reason_at = |item: &toml_edit::Item, n: usize| -> Option<String> {
        let reason = match item {
            toml_edit::Item::ArrayOfTables(a) => a.get(n)?.get("reason")?.as_str(),
            toml_edit::Item::Value(toml_edit::Value::Array(a)) => {
                a.get(n)?.as_inline_table()?.get("reason")?.as_str()
            }
            _ => None,
        };
        reason.map(str::to_string)
    };
    let list = doc.get_mut("ignore").ok_or_else(changed)?;
    for i in idle {
        if reason_at(list, i.index).as_deref() != Some(i.reason) {
            return Err(changed());
        }
    }
    for &n in gone.iter().rev() {
        match list {
            toml_edit::Item::ArrayOfTables(a) => {
                a.remove(n);
            }
            toml_edit::Item::Value(toml_edit::Value::Array(a)) => remove_inline(a, n),
            _ => return Err(changed()),
        }
    }
    if list.as_array_of_tables().is_some_and(|a| a.is_empty())
        || list.as_array().is_some_and(|a| a.is_empty())
    {
        doc.remove("ignore");
    }
    let mut new_text = doc.to_string();
    // The blank line that set a removed first entry's successor apart is not left at the
    // top of the file.
    if !text.starts_with('\n') {
        new_text = new_text.trim_start_matches('\n').to_string();
    }
    let new_text = line_ends_of(&text, new_text);
    let lint = LintRules::embedded()?;
    let parsed = Config::parse(&new_text, &name, rules, &lint).map_err(|e| {
        Error::new(format!(
            "{name} would not read back without the entries --prune-ignores removes, so nothing was removed: {}",
            without_place(e.message(), &name)
        ))
    })?;
    let before = Config::parse(&text, &name, rules, &lint).map_err(|_| changed())?;
    let entries = |c: &Config| c.ignore.len() + c.retired_ignores.len();
    if entries(&parsed) + gone.len() != entries(&before)
        || !gone.iter().all(|&n| same_at(config, &before, n))
    {
        return Err(changed());
    }
    crate::io::write_atomic(path, new_text.as_bytes())?;
    for i in idle {
        super::warn(&format!(
            "{}: removed this [[ignore]] ({}): {}",
            i.origin, i.reason, i.why
        ));
    }
    Ok(())
}

/// Whether the entry at place `n` of the file now (`now`) is the one `was` had there,
/// as written: two entries with one reason may have swapped places meanwhile.
fn same_at(was: &Config, now: &Config, n: usize) -> bool {
    fn at(c: &Config, n: usize) -> Option<&Ignore> {
        c.ignore.iter().find(|i| i.index == n)
    }
    fn retired(c: &Config, n: usize) -> Option<(&str, &str)> {
        let r = c.retired_ignores.iter().find(|r| r.index == n)?;
        Some((r.code.as_str(), r.reason.as_str()))
    }
    match (at(was, n), at(now, n)) {
        (Some(a), Some(b)) => a.says_the_same(b),
        (None, None) => retired(was, n).is_some() && retired(was, n) == retired(now, n),
        _ => false,
    }
}

/// Element `n` of an inline array removed with its own comment. toml_edit keeps what
/// follows an element's comma (`{...}, # why`) as the next element's prefix (the last
/// one's as the array's trailing text): the removed element's prefix, which holds its
/// predecessor's comment, moves to its successor (or to the end), and its own comment
/// goes with it.
fn remove_inline(a: &mut toml_edit::Array, n: usize) {
    let prefix = a
        .get(n)
        .and_then(|v| v.decor().prefix())
        .and_then(|p| p.as_str())
        .map(str::to_string);
    a.remove(n);
    let Some(prefix) = prefix else { return };
    match a.get_mut(n) {
        Some(next) => next.decor_mut().set_prefix(prefix),
        None => {
            // The closing bracket keeps its own indentation.
            let old = a.trailing().as_str().unwrap_or_default().to_string();
            let indent = old.rfind('\n').map_or("", |o| &old[o + 1..]);
            let trailing = match prefix.rfind('\n') {
                Some(p) => format!("{}{indent}", &prefix[..=p]),
                None => old.clone(),
            };
            a.set_trailing(trailing);
        }
    }
}

/// `new` (toml_edit's text, which ends every line with `\n`) with the line ends of
/// `old`: a CRLF file (a Windows checkout) stays one, not rewritten line by line.
fn line_ends_of(old: &str, new: String) -> String {
    match old.contains("\r\n") {
        true => new.replace("\r\n", "\n").replace('\n', "\r\n"),
        false => new,
    }
}

/// `message` without the `FILE:LINE:COLUMN: ` it starts with.
fn without_place<'m>(message: &'m str, file: &str) -> &'m str {
    let digits = |s: &'m str| s.trim_start_matches(|c: char| c.is_ascii_digit());
    message
        .strip_prefix(file)
        .and_then(|r| r.strip_prefix(':'))
        .and_then(|r| digits(r).strip_prefix(':'))
        .and_then(|r| digits(r).strip_prefix(": "))
        .unwrap_or(message)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_place_is_taken_off_only_when_it_is_one() {
        use super::without_place as w;
        assert_eq!(w("c.toml:4:15: bad", "c.toml"), "bad");
        assert_eq!(w("c.toml:4: bad", "c.toml"), "c.toml:4: bad");
        assert_eq!(w("c.toml: bad", "c.toml"), "c.toml: bad");
        assert_eq!(w("d.toml:4:15: bad", "c.toml"), "d.toml:4:15: bad");
    }
}
