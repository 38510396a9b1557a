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

/// The modules `text` names through `crate::` (`crate::x::...` and `crate::{x, y::z}`),
/// outside comments.
fn imports(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let inside = group.split('}').next().unwrap_or("");
                for item in inside.split(',') {
                    let name = item.trim().split("::").next().unwrap_or("");
                    if !name.is_empty() {
                        found.insert(name.to_string());
                    }
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        }
    }
    found
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
        for target in imports(&fs::read_to_string(file).unwrap()) {
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
fn the_import_scanner_reads_both_forms() {
    let found = imports(
        "use crate::a::B;\nuse crate::{c, d::E};\n// crate::commented\nlet x = crate::f::g(); // crate::h",
    );
    let want: BTreeSet<String> = ["a", "c", "d", "f"].map(String::from).into();
    assert_eq!(found, want);
}
