//! The layering of docs/architecture.md, enforced: every `crate::` path in `src/` goes
//! to a module of a lower layer that its row does not name under "may not import"
//! (`report` may not import `config`), except the known exceptions the document lists
//! (and every listed exception still exists, so the list stays true); and no two source
//! files import each other, directly or in a loop, but for the known circles it lists.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The layer table: each module's layer, and the modules its row says it may not import.
struct Table {
    layers: BTreeMap<String, usize>,
    forbidden: BTreeMap<String, BTreeSet<String>>,
}

/// The layer table and the known exceptions (from → to).
fn documented() -> (Table, BTreeSet<(String, String)>) {
    let doc = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let mut layers = BTreeMap::new();
    let mut forbidden = BTreeMap::new();
    let mut exceptions = BTreeSet::new();
    let mut section = "";
    for line in doc.lines() {
        if line.starts_with('#') {
            section = line.trim_start_matches('#').trim();
            continue;
        }
        if section.starts_with("Layers") && line.starts_with("| ") {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            if let Ok(layer) = cells[1].parse::<usize>() {
                // `a` `b`; prose between the names is not a name.
                let names: BTreeSet<String> = cells[3]
                    .split('`')
                    .skip(1)
                    .step_by(2)
                    .map(String::from)
                    .collect();
                for module in cells[2].split_whitespace() {
                    let module = module.trim_matches('`').to_string();
                    layers.insert(module.clone(), layer);
                    forbidden.insert(module, names.clone());
                }
            }
        }
        if section.starts_with("Known exceptions") && line.starts_with("- ") {
            // - `a → b`, `c → d`: why
            let head = line.split("`:").next().unwrap_or("");
            for pair in head.split('`').filter(|p| p.contains('→')) {
                let (from, to) = pair.split_once('→').unwrap();
                exceptions.insert((from.trim().to_string(), to.trim().to_string()));
            }
        }
    }
    assert!(
        layers.len() > 10,
        "no layer table in docs/architecture.md: {layers:?}"
    );
    for (module, names) in &forbidden {
        for name in names {
            assert!(
                layers.contains_key(name),
                "docs/architecture.md: the row of `{module}` names `{name}`, which is in no layer"
            );
        }
    }
    (Table { layers, forbidden }, exceptions)
}

/// The top-level module a source file belongs to (`src/diff/walker.rs` → `diff`).
fn module_of(rel: &Path) -> Option<String> {
    let mut parts = rel.components().map(|c| c.as_os_str().to_string_lossy());
    let first = parts.next()?;
    let name = first.trim_end_matches(".rs").to_string();
    (name != "main" && name != "lib").then_some(name)
}

/// The top-level modules `text` names through `crate::` or `super::` (`crate::x::...`,
/// `crate::{x, y::{z, w}}` over several lines, `super::super::x`), outside comments.
/// `depth` is how deep the file's module is (`lint.rs` 1, `diff/mod.rs` 1,
/// `diff/surface.rs` 2): a `super::` that climbs to the crate root names a top-level
/// module; one that stays inside the file's own top-level module names that module.
fn imports(text: &str, depth: usize) -> BTreeSet<String> {
    let code: String = strip_comments(text);
    let mut found = BTreeSet::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let boundary = at == 0
            || !(bytes[at - 1].is_ascii_alphanumeric()
                || bytes[at - 1] == b'_'
                || bytes[at - 1] == b':');
        let (root_level, skip) = if !boundary {
            (None, 1)
        } else if rest.starts_with("crate::") {
            (Some(true), "crate::".len())
        } else if rest.starts_with("super::") {
            let mut n = 0;
            let mut r = rest;
            while let Some(x) = r.strip_prefix("super::") {
                n += 1;
                r = x;
            }
            (Some(n >= depth), rest.len() - r.len())
        } else {
            (None, rest.chars().next().map_or(1, char::len_utf8))
        };
        at += skip;
        let Some(root_level) = root_level else {
            continue;
        };
        if !root_level {
            // Inside the file's own top-level module: never a layering question.
            continue;
        }
        for name in first_segments(&code[at..]) {
            found.insert(name);
        }
    }
    found
}

/// The first path segment of what follows `crate::`: a name, or each item of a group.
fn first_segments(rest: &str) -> Vec<String> {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        // The group's top-level items, up to its closing brace.
        let (mut level, mut items, mut item) = (0, Vec::new(), String::new());
        for c in group.chars() {
            match c {
                '{' => level += 1,
                '}' if level == 0 => break,
                '}' => level -= 1,
                ',' if level == 0 => items.push(std::mem::take(&mut item)),
                _ if level == 0 => item.push(c),
                _ => {}
            }
        }
        items.push(item);
        items
            .iter()
            .map(|i| ident(i.trim()))
            .filter(|n| !n.is_empty() && n != "self")
            .collect()
    } else {
        let name = ident(rest);
        if name.is_empty() {
            vec![]
        } else {
            vec![name]
        }
    }
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// `text` as code only: comments, string literals (plain, byte and raw) and char
/// literals blanked, each of their characters but a newline turned into a space, so that
/// none can hold a path, a call or a brace, and every line stays where it was.
fn strip_comments(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, from: usize, to: usize| {
        for &c in &chars[from.min(chars.len())..to.min(chars.len())] {
            out.push(if c == '\n' { '\n' } else { ' ' });
        }
    };
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        // A raw string: r"...", r#"..."#, br"...".
        let r = if c == 'b' && at(i + 1) == 'r' {
            i + 1
        } else {
            i
        };
        if at(r) == 'r'
            && (at(r + 1) == '"' || at(r + 1) == '#')
            && (i == 0 || !(at(i - 1).is_alphanumeric() || at(i - 1) == '_'))
        {
            let mut j = r + 1;
            while at(j) == '#' {
                j += 1;
            }
            if at(j) == '"' {
                let hashes = j - r - 1;
                let mut k = j + 1;
                while k < chars.len()
                    && !(chars[k] == '"' && (1..=hashes).all(|h| at(k + h) == '#'))
                {
                    k += 1;
                }
                blank(&mut out, i, k + 1 + hashes);
                i = k + 1 + hashes;
                continue;
            }
        }
        let end = match (c, at(i + 1)) {
            ('"', _) => {
                let mut k = i + 1;
                while k < chars.len() && chars[k] != '"' {
                    k += if chars[k] == '\\' { 2 } else { 1 };
                }
                k + 1
            }
            // A char literal ('x', '\n', '\'', '\u{1F}'); a lifetime ('a) is kept.
            ('\'', '\\') => {
                let mut k = i + 3;
                while k < chars.len() && chars[k] != '\'' {
                    k += 1;
                }
                k + 1
            }
            ('\'', _) if at(i + 2) == '\'' => i + 3,
            ('/', '/') => {
                let mut k = i;
                while k < chars.len() && chars[k] != '\n' {
                    k += 1;
                }
                k
            }
            // Block comments nest.
            ('/', '*') => {
                let (mut k, mut level) = (i + 2, 1);
                while k < chars.len() && level > 0 {
                    match (chars[k], at(k + 1)) {
                        ('/', '*') => (level, k) = (level + 1, k + 2),
                        ('*', '/') => (level, k) = (level - 1, k + 2),
                        _ => k += 1,
                    }
                }
                k
            }
            _ => {
                out.push(c);
                i += 1;
                continue;
            }
        };
        blank(&mut out, i, end);
        i = end;
    }
    out
}

/// How deep a file's module is: `lint.rs` and `diff/mod.rs` 1, `diff/surface.rs` 2.
fn depth_of(rel: &Path) -> usize {
    let n = rel.components().count();
    if rel.file_name().is_some_and(|f| f == "mod.rs") {
        n - 1
    } else {
        n
    }
}

/// Every Rust file under src/, in path order: its path from src/ (`diff/walker.rs`, with
/// `/` on every platform) and its text. The one walk over src/ of these tests.
fn source_files() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let src = root().join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    files.sort();
    files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(&src).unwrap().to_string_lossy();
            (rel.replace('\\', "/"), fs::read_to_string(f).unwrap())
        })
        .collect()
}

#[test]
fn no_module_imports_one_above_it() {
    let (Table { layers, forbidden }, exceptions) = documented();
    let mut broken = Vec::new();
    let mut seen = BTreeSet::new();
    for (shown, text) in source_files() {
        let rel = Path::new(&shown);
        let Some(module) = module_of(rel) else {
            continue;
        };
        let Some(&layer) = layers.get(&module) else {
            broken.push(format!(
                "src/{}: module `{module}` is in no layer of docs/architecture.md",
                rel.display()
            ));
            continue;
        };
        for target in imports(&text, depth_of(rel)) {
            if target == module {
                continue;
            }
            let Some(&to) = layers.get(&target) else {
                broken.push(format!(
                    "src/{}: imports `{target}`, which is in no layer",
                    rel.display()
                ));
                continue;
            };
            let named = forbidden[&module].contains(&target);
            if to < layer && !named {
                continue;
            }
            let pair = (module.clone(), target.clone());
            if exceptions.contains(&pair) {
                seen.insert(pair);
                continue;
            }
            broken.push(if named && to < layer {
                format!(
                    "src/{}: `{module}` imports `{target}`, which its row says it may not",
                    rel.display()
                )
            } else {
                format!(
                    "src/{}: `{module}` (layer {layer}) imports `{target}` (layer {to})",
                    rel.display()
                )
            });
        }
    }
    for gone in exceptions.difference(&seen) {
        broken.push(format!(
            "the known exception `{} → {}` no longer occurs: strike it from docs/architecture.md",
            gone.0, gone.1
        ));
    }
    assert!(
        broken.is_empty(),
        "layering (docs/architecture.md):\n  {}",
        broken.join("\n  ")
    );
}

#[test]
fn the_import_scanner_reads_every_form() {
    let found = imports(
        "use crate::a::B;\nuse crate::{c, d::E};\n// crate::commented\nlet x = crate::f::g(); // crate::h\n\
         use crate::{\n    i::{J, K},\n    l,\n};\n/* crate::m */ let s = \"crate::n\\\"crate::n2\"; let c = '\"'; let r = r#\"crate::n3 \"x\" \"#;\n\
         use super::o; use super::super::p::Q; let t = notcrate::r;",
        2,
    );
    let want: BTreeSet<String> = ["a", "c", "d", "f", "i", "l", "p"].map(String::from).into();
    assert_eq!(found, want);
    // In a top-level module, `super::` is the crate root.
    let found = imports("use super::{q, r::S};", 1);
    let want: BTreeSet<String> = ["q", "r"].map(String::from).into();
    assert_eq!(found, want);
    assert_eq!(depth_of(Path::new("diff/mod.rs")), 1);
    assert_eq!(depth_of(Path::new("diff/walker/mod.rs")), 2);
    assert_eq!(depth_of(Path::new("lint.rs")), 1);
}

/// The string literals of `code` (plain `"..."` only; escapes kept as written).
fn string_literals(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = code.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'\'' if b.get(i + 1) == Some(&b'"') => i += 3,
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                out.push(&code[start..i.min(b.len())]);
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Behaviour is decided by a row's scope, comparator or flags (`model_facing`), never by
/// matching a rule id: renaming an id through `aliases` must not change what the code
/// does. No string literal outside unit tests names a rule id, or the start of ids
/// (`"server.version."`). reference.rs is the covenant.toml reference text, where ids are
/// examples for the reader.
#[test]
fn no_rule_id_is_matched_in_rust() {
    let rules = mcp_covenant::rules::Rules::embedded().unwrap();
    let lint = mcp_covenant::lint::LintRules::embedded().unwrap();
    let ids: BTreeSet<String> = rules
        .rows
        .iter()
        .map(|r| r.id.clone())
        .chain(lint.rows.iter().map(|r| r.id.clone()))
        .collect();
    let mut found = Vec::new();
    for (rel, text) in source_files() {
        if rel == "reference.rs" {
            continue;
        }
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for lit in string_literals(code) {
            let prefix =
                lit.len() > 3 && lit.ends_with('.') && ids.iter().any(|id| id.starts_with(lit));
            if ids.contains(lit) || prefix {
                found.push(format!("src/{rel}: \"{lit}\""));
            }
        }
    }
    assert!(
        found.is_empty(),
        "rule ids matched in Rust:\n  {}",
        found.join("\n  ")
    );
    // The scanner sees what it must.
    let seen = string_literals("if code == \"schema.type.changed\" { f('\"') } // \"x.y\"");
    assert_eq!(seen, ["schema.type.changed"]);
}

/// The identifiers of `code` (comments and string literals already stripped), each
/// with whether a `!` follows it (a macro call).
fn words(code: &str) -> Vec<(&str, bool)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let bang = b.get(i) == Some(&b'!') && b.get(i + 1) != Some(&b'=');
            out.push((&code[start..i], bang));
        } else {
            i += 1;
        }
    }
    out
}

/// Output is the command line's: below src/cli nothing prints (a lower layer hands its
/// warnings and progress to the `notice::Notices` it is given, or returns them), and
/// clap (its derives, `ValueEnum`) is the command line's alone: the other layers have
/// their own types, which src/cli maps clap's onto. main.rs calls the command line;
/// stdout.rs is the standard output the command line writes to.
#[test]
fn only_the_command_line_prints_or_speaks_clap() {
    // The one exception: the signal handler's `error:` line, written just before it
    // ends the process; there is no caller left to hand it to.
    let exceptions: BTreeSet<(&str, &str)> = [("mcp/stdio.rs", "eprint")].into();
    let printing = ["print", "println", "eprint", "eprintln", "dbg"];
    let (mut found, mut seen) = (Vec::new(), BTreeSet::new());
    for (shown, text) in source_files() {
        if shown.starts_with("cli/") || shown == "main.rs" || shown == "stdout.rs" {
            continue;
        }
        let code = strip_comments(&text);
        for (word, bang) in words(&code) {
            let prints = bang && printing.contains(&word);
            if !(prints || word == "clap" || word == "ValueEnum") {
                continue;
            }
            let pair = (shown.as_str(), word);
            if let Some(e) = exceptions.iter().find(|e| **e == pair) {
                seen.insert(*e);
                continue;
            }
            found.push(format!(
                "src/{shown}: `{word}{}`",
                if bang { "!" } else { "" }
            ));
        }
    }
    assert!(
        found.is_empty(),
        "printing or clap below src/cli:\n  {}",
        found.join("\n  ")
    );
    assert_eq!(
        seen.len(),
        exceptions.len(),
        "an exception no longer occurs: strike it"
    );
    // The scanner sees what it must, and not what a string or a comment holds.
    let code = strip_comments("eprintln!(\"println!\"); // dbg!(x)\nif a != b { clap::x() }");
    let calls: Vec<_> = words(&code).into_iter().filter(|w| w.1).collect();
    assert_eq!(calls, [("eprintln", true)]);
    assert!(words(&code).contains(&("clap", false)));
}

// --- no import circles: the file-level graph ----------------------------------------

/// `code` (comments and strings already stripped) without its `#[cfg(test)]` modules:
/// a unit test's `super::` is its own file, and unit tests are no part of the layering.
fn without_test_modules(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let is_mod = after
            .trim_start()
            .strip_prefix("pub(crate)")
            .unwrap_or(after.trim_start());
        let (Some(open), true) = (after.find('{'), is_mod.trim_start().starts_with("mod ")) else {
            out.push_str("#[cfg(test)]");
            rest = after;
            continue;
        };
        let mut level = 0;
        let mut end = after.len();
        for (i, c) in after[open..].char_indices() {
            match c {
                '{' => level += 1,
                '}' => {
                    level -= 1;
                    if level == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Every full path a use tree names, with the name it is given as: `a::{b, c::{d, *},
/// self, e as f}` is `a::b`, `a::c::d`, `a::c::*`, `a` and `a::e` (as `f`). An expression
/// path (`a::b(1)`) is its segments.
fn use_paths(rest: &str) -> Vec<(Vec<String>, Option<String>)> {
    let mut prefix = Vec::new();
    let mut r = rest.trim_start();
    loop {
        if let Some(group) = r.strip_prefix('{') {
            let (mut level, mut items, mut item) = (0, Vec::new(), String::new());
            for c in group.chars() {
                match c {
                    '{' => level += 1,
                    '}' if level == 0 => break,
                    '}' => level -= 1,
                    ',' if level == 0 => {
                        items.push(std::mem::take(&mut item));
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            items.push(item);
            let mut out = Vec::new();
            for item in items.iter().filter(|i| !i.trim().is_empty()) {
                for (tail, alias) in use_paths(item) {
                    let mut p = prefix.clone();
                    p.extend(tail.into_iter().filter(|s| s != "self"));
                    out.push((p, alias));
                }
            }
            return out;
        }
        if r.starts_with('*') {
            prefix.push("*".to_string());
            return vec![(prefix, None)];
        }
        let name = ident(r);
        if name.is_empty() {
            return vec![(prefix, None)];
        }
        r = &r[name.len()..];
        prefix.push(name);
        match r.trim_start().strip_prefix("::") {
            Some(next) => r = next.trim_start(),
            None => {
                let alias = r
                    .trim_start()
                    .strip_prefix("as ")
                    .map(|a| ident(a.trim_start()));
                return vec![(prefix, alias)];
            }
        }
    }
}

/// The source files as modules: `["config", "load"]` → `config/load.rs`.
struct Modules {
    files: BTreeMap<Vec<String>, String>,
    /// Per module, the names its `pub use` items give and the path each stands for
    /// (from the module, or from the crate root when it starts with `crate`).
    reexports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
}

/// The module a file is (`config/mod.rs` → `["config"]`, `lib.rs` → `[]`).
fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

impl Modules {
    fn read(codes: &BTreeMap<String, String>) -> Modules {
        let mut files = BTreeMap::new();
        let mut reexports = BTreeMap::new();
        for (rel, code) in codes {
            if rel == "main.rs" {
                continue;
            }
            let module = module_path(rel);
            files.insert(module.clone(), rel.clone());
            let mut names = BTreeMap::new();
            for (at, _) in code.match_indices("use ") {
                let before = code[..at].trim_end();
                let public =
                    before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
                if !public || !code[..at].ends_with(' ') {
                    continue;
                }
                let end = code[at..].find(';').map_or(code.len(), |e| at + e);
                let tree = &code[at + 4..end];
                for (path, alias) in use_paths(tree) {
                    if let Some(last) = path.last().filter(|l| *l != "*") {
                        names.insert(alias.unwrap_or_else(|| last.clone()), path);
                    }
                }
            }
            reexports.insert(module, names);
        }
        Modules { files, reexports }
    }

    /// The file that defines what `path` names, from module `from`: its modules
    /// followed as far as they go, then an item's `pub use` followed to where it is.
    fn resolve(&self, from: &[String], path: &[String], hops: usize) -> Option<&String> {
        let mut module = from.to_vec();
        for (i, seg) in path.iter().enumerate() {
            match seg.as_str() {
                "crate" => module.clear(),
                "super" => {
                    module.pop();
                }
                "self" => {}
                _ => {
                    let mut next = module.clone();
                    next.push(seg.clone());
                    if self.files.contains_key(&next) {
                        module = next;
                        continue;
                    }
                    let target = self.reexports.get(&module).and_then(|r| r.get(seg));
                    if let (Some(target), true) = (target, hops < 8) {
                        let mut via = target.clone();
                        via.extend(path[i + 1..].iter().cloned());
                        if let Some(found) = self.resolve(&module, &via, hops + 1) {
                            return Some(found);
                        }
                    }
                    break;
                }
            }
        }
        self.files.get(&module)
    }
}

/// The source files each source file imports through `crate::` or `super::` paths (the
/// forms [`imports`] reads), outside its unit tests.
fn file_graph() -> BTreeMap<String, BTreeSet<String>> {
    let codes: BTreeMap<String, String> = source_files()
        .into_iter()
        .map(|(rel, text)| (rel, without_test_modules(&strip_comments(&text))))
        .collect();
    let modules = Modules::read(&codes);
    let mut graph = BTreeMap::new();
    for (rel, code) in &codes {
        let from = module_path(rel);
        let mut found = BTreeSet::new();
        let bytes = code.as_bytes();
        for (at, _) in code
            .match_indices("crate::")
            .chain(code.match_indices("super::"))
        {
            let prev = at.checked_sub(1).map(|i| bytes[i]);
            if prev.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':') {
                continue;
            }
            let mut base = from.clone();
            let mut rest = &code[at..];
            if let Some(r) = rest.strip_prefix("crate::") {
                base.clear();
                rest = r;
            } else {
                while let Some(r) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = r;
                }
            }
            for (path, _) in use_paths(rest) {
                if let Some(file) = modules.resolve(&base, &path, 0) {
                    if file != rel {
                        found.insert(file.clone());
                    }
                }
            }
        }
        graph.insert(rel.clone(), found);
    }
    graph
}

/// The import circles of `graph`: each strongly connected set of two or more files.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    // Reachability by search from each file (a few hundred files): a circle is a set of
    // files each reaching the other.
    let reach = |start: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start.clone()];
        while let Some(f) = todo.pop() {
            for g in graph.get(&f).into_iter().flatten() {
                if seen.insert(g.clone()) {
                    todo.push(g.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|f| (f, reach(f))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for (f, r) in &reaches {
        if !r.contains(*f) || out.iter().any(|c| c.contains(*f)) {
            continue;
        }
        let circle: BTreeSet<String> = r
            .iter()
            .filter(|g| reaches.get(g).is_some_and(|back| back.contains(*f)))
            .cloned()
            .collect();
        out.push(circle);
    }
    out
}

/// One import circle of `graph` through `circle`'s files, written out (`a.rs → b.rs →
/// a.rs`), for the message.
fn one_loop(graph: &BTreeMap<String, BTreeSet<String>>, circle: &BTreeSet<String>) -> String {
    let start = circle.iter().next().unwrap();
    // Breadth first from `start` inside the circle, back to it.
    let mut parent: BTreeMap<&String, &String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(f) = queue.pop_front() {
        for g in graph[f].iter().filter(|g| circle.contains(*g)) {
            if g == start {
                let mut back = Vec::new();
                let mut at = f;
                while at != start {
                    back.push(at.as_str());
                    at = parent[at];
                }
                let mut path = vec![start.as_str()];
                path.extend(back.into_iter().rev());
                path.push(start);
                return path.join(" → ");
            }
            if !parent.contains_key(g) {
                parent.insert(g, f);
                queue.push_back(g);
            }
        }
    }
    circle.iter().cloned().collect::<Vec<_>>().join(", ")
}

/// The known import circles docs/architecture.md lists (each a set of files).
fn documented_circles() -> Vec<BTreeSet<String>> {
    let doc = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let mut section = "";
    let mut out = Vec::new();
    for line in doc.lines() {
        if line.starts_with('#') {
            section = line.trim_start_matches('#').trim();
            continue;
        }
        if section.starts_with("Known import circles") && line.starts_with("- ") {
            // - `a.rs`, `b.rs`: why
            let head = line.split("`:").next().unwrap_or("");
            let files: BTreeSet<String> = head
                .split('`')
                .skip(1)
                .step_by(2)
                .map(|f| f.trim_start_matches("src/").to_string())
                .collect();
            out.push(files);
        }
    }
    out
}

/// No two source files import each other, directly or in a loop (through `crate::` and
/// `super::` paths, an item re-exported by a `pub use` counted where it is defined),
/// but for the known circles docs/architecture.md lists, each of which still exists.
#[test]
fn no_source_files_import_each_other() {
    let graph = file_graph();
    let known = documented_circles();
    let found = circles(&graph);
    let mut broken: Vec<String> = found
        .iter()
        .filter(|c| !known.contains(c))
        .map(|c| format!("an import circle: {}", one_loop(&graph, c)))
        .collect();
    for gone in known.iter().filter(|k| !found.contains(k)) {
        broken.push(format!(
            "the known import circle of {gone:?} no longer occurs as listed: strike or correct it in docs/architecture.md"
        ));
    }
    assert!(
        broken.is_empty(),
        "import circles:\n  {}",
        broken.join("\n  ")
    );
}

/// The longest a function may be, from its `fn` line to its closing brace (issue 39.8).
const LONGEST_FUNCTION: usize = 120;

/// Every function of `code` (already through `strip_comments`) with a body: its name,
/// the line of its `fn` (from 1) and its length in lines, from that line to the line of
/// the brace that closes its body. A declaration without a body (`fn f();` in a trait)
/// and a `fn(..)` type are not functions.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let b = code.as_bytes();
    let line_at = |i: usize| b[..i].iter().filter(|&&c| c == b'\n').count() + 1;
    let word = |i: usize| b[i].is_ascii_alphanumeric() || b[i] == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 < b.len() {
        let starts =
            &b[i..i + 2] == b"fn" && (i == 0 || !word(i - 1)) && b[i + 2].is_ascii_whitespace();
        if !starts {
            i += 1;
            continue;
        }
        let name = ident(code[i + 2..].trim_start());
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            i += 2;
            continue;
        }
        // The body's opening brace: the first `{` outside the signature's parentheses and
        // brackets (`[u8; 4]`), unless a `;` ends a declaration first.
        let (mut k, mut level, mut open) = (i + 2, 0i32, None);
        while k < b.len() {
            match b[k] {
                b'(' | b'[' => level += 1,
                b')' | b']' => level -= 1,
                b';' if level == 0 => break,
                b'{' if level == 0 => {
                    open = Some(k);
                    break;
                }
                _ => {}
            }
            k += 1;
        }
        if let Some(open) = open {
            let (mut k, mut depth) = (open, 0usize);
            while k < b.len() {
                match b[k] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                k += 1;
            }
            let first = line_at(i);
            out.push((name, first, line_at(k.min(b.len() - 1)) - first + 1));
        }
        i += 2;
    }
    out
}

/// No function in src/ is over LONGEST_FUNCTION lines: a long one is split along its
/// table's seams (a keyword family, a comparator, an ecosystem row). The exceptions are
/// the functions still being split, each named by file and name; an exception that is no
/// longer over the limit must be struck, so the list stays true.
#[test]
fn no_function_is_over_120_lines() {
    // Each a file under src/ and a function name, as `("diff/compare.rs", "events")`; none now.
    let exceptions: BTreeSet<(&str, &str)> = [].into();
    let (mut found, mut seen) = (Vec::new(), BTreeSet::new());
    for (shown, text) in source_files() {
        let code = strip_comments(&text);
        for (name, line, length) in functions(&code) {
            if length <= LONGEST_FUNCTION {
                continue;
            }
            if let Some(e) = exceptions
                .iter()
                .find(|e| e.0 == shown && e.1 == name.as_str())
            {
                seen.insert(*e);
                continue;
            }
            found.push(format!("src/{shown}:{line}: `{name}` is {length} lines"));
        }
    }
    let stale: Vec<_> = exceptions.difference(&seen).collect();
    assert!(
        found.is_empty() && stale.is_empty(),
        "functions over {LONGEST_FUNCTION} lines (split them along their table's seams):\n  {}\n\
         exceptions no longer over the limit (strike them): {stale:?}",
        found.join("\n  ")
    );
}

#[test]
fn the_file_graph_reads_paths_and_reexports() {
    let paths = use_paths("a::{b, c::{d, *}, self, e as f}");
    let alias = |p: &[&str], a: Option<&str>| -> (Vec<String>, Option<String>) {
        (
            p.iter().map(|s| s.to_string()).collect(),
            a.map(String::from),
        )
    };
    let want = vec![
        alias(&["a", "b"], None),
        alias(&["a", "c", "d"], None),
        alias(&["a", "c", "*"], None),
        alias(&["a"], None),
        alias(&["a", "e"], Some("f")),
    ];
    assert_eq!(paths, want);
    assert_eq!(use_paths("x::y(1)"), vec![alias(&["x", "y"], None)]);
    let code = |s: &str| s.to_string();
    let codes: BTreeMap<String, String> = [
        ("lib.rs".to_string(), code("mod m; mod n;")),
        (
            "m/mod.rs".to_string(),
            code("mod a; mod b; pub use self::a::A; pub use b::{B, C as D};"),
        ),
        ("m/a.rs".to_string(), code("pub struct A;")),
        ("m/b.rs".to_string(), code("pub struct B; pub struct C;")),
        ("n.rs".to_string(), code("pub(crate) use crate::m::D as E;")),
    ]
    .into();
    let m = Modules::read(&codes);
    let seg = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    let at = |from: &str, p: &str| {
        m.resolve(
            &seg(from)
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>(),
            &seg(p),
            0,
        )
        .cloned()
    };
    assert_eq!(at("m::b", "super::A"), Some("m/a.rs".into()));
    assert_eq!(at("", "crate::m::D"), Some("m/b.rs".into()));
    assert_eq!(at("", "crate::n::E"), Some("m/b.rs".into()));
    assert_eq!(at("m::a", "super::b::B"), Some("m/b.rs".into()));
    assert_eq!(at("m::a", "super::nothing"), Some("m/mod.rs".into()));
    let test = without_test_modules("a #[cfg(test)]\nmod tests { fn f() { super::x(); } } b");
    assert_eq!(test.split_whitespace().collect::<Vec<_>>(), ["a", "b"]);
    // A circle, written out.
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_string(), ["b".to_string()].into()),
        ("b".to_string(), ["c".to_string()].into()),
        ("c".to_string(), ["a".to_string(), "d".to_string()].into()),
        ("d".to_string(), BTreeSet::new()),
    ]
    .into();
    let found = circles(&g);
    assert_eq!(found, vec![["a", "b", "c"].map(String::from).into()]);
    assert_eq!(one_loop(&g, &found[0]), "a → b → c → a");
}

#[test]
fn the_function_scanner_counts_from_fn_to_its_closing_brace() {
    let code = strip_comments(
        "/// fn doc() {\nfn a(x: [u8; 4]) -> u8 {\n    let s = \"}\";\n    let c = '}';\n    \
         let d = '\\'';\n    /* } /* } */ } */\n    let r = r#\"}\"#;\n    x[0]\n}\n\
         trait T {\n    fn decl(&self);\n    fn with_body(&self) -> fn(u8) -> u8 where Self: Sized {\n        \
         |y| y\n    }\n}\n",
    );
    assert_eq!(
        functions(&code),
        [("a".to_string(), 2, 8), ("with_body".to_string(), 12, 3),]
    );
}
