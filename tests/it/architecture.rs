//! The layering of docs/architecture.md, enforced: every `crate::` path in `src/` goes
//! to a module of a lower layer that its row does not name under "may not import"
//! (`report` may not import `config`), except the known exceptions the document lists
//! (and every listed exception still exists, so the list stays true).

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

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_imports_one_above_it() {
    let (Table { layers, forbidden }, exceptions) = documented();
    let src = root().join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut broken = Vec::new();
    let mut seen = BTreeSet::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
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
        for target in imports(&fs::read_to_string(file).unwrap(), depth_of(rel)) {
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
    let src = root().join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut found = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        if rel == Path::new("reference.rs") {
            continue;
        }
        let text = fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for lit in string_literals(code) {
            let prefix =
                lit.len() > 3 && lit.ends_with('.') && ids.iter().any(|id| id.starts_with(lit));
            if ids.contains(lit) || prefix {
                found.push(format!("src/{}: \"{lit}\"", rel.display()));
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
    let src = root().join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let (mut found, mut seen) = (Vec::new(), BTreeSet::new());
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let shown = rel.to_string_lossy().replace('\\', "/");
        if shown.starts_with("cli/") || shown == "main.rs" || shown == "stdout.rs" {
            continue;
        }
        let code = strip_comments(&fs::read_to_string(file).unwrap());
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
    let exceptions: BTreeSet<(&str, &str)> = [
        ("cli/check.rs", "run"),
        ("diff/compare.rs", "events"),
        ("diff/walker/structural.rs", "variants"),
        ("diff/witness/candidates.rs", "objects"),
        ("diff/witness/instance.rs", "embed"),
        ("diff/witness/mod.rs", "attach"),
    ]
    .into();
    let src = root().join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let (mut found, mut seen) = (Vec::new(), BTreeSet::new());
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let shown = rel.to_string_lossy().replace('\\', "/");
        let code = strip_comments(&fs::read_to_string(file).unwrap());
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
