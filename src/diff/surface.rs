//! Pairing the elements of two surfaces and comparing their fields.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Map, Value};

use super::{compare, walker, witness, Change, Classify, Emitter, Event, Path, Segment, Subject};
use crate::elements::{self, Form};
use crate::lockfile::{key_of, Element, Kind, ServerInfo, Surface};
use crate::path::Step;
use crate::rules::{Binding, Comparator, Condition, Direction, Rules, Scope};

/// Element fields that hold a schema, and the direction it is read in.
fn schema_fields(kind: Kind) -> impl Iterator<Item = (&'static str, Direction, Form)> {
    kind.spec().schema.iter().map(|f| {
        let direction = match f.direction {
            elements::Direction::Input => Direction::Input,
            elements::Direction::Output => Direction::Output,
        };
        (f.field.as_str(), direction, f.form)
    })
}

/// Every classified change from `before` to `after`, unsorted.
pub fn diff(rules: &dyn Classify, before: &Surface, after: &Surface) -> Vec<Change> {
    diff_with_budget(rules, before, after, walker::DEFAULT_WORK_BUDGET)
}

/// `diff` with a work budget per schema comparison (node pairs; see `--walk-budget`).
pub fn diff_with_budget(
    rules: &dyn Classify,
    before: &Surface,
    after: &Surface,
    budget: usize,
) -> Vec<Change> {
    diff_recorded(rules, before, after, budget)
}

/// [`diff_with_budget`]. Every element's `_meta` is compared: a baseline that has none
/// (written before `_meta` was stored, or from a server that declared none) shows what
/// the new side has as added, which is true of the two files; guessing which baselines
/// are old once hid real changes.
pub fn diff_recorded(
    rules: &dyn Classify,
    before: &Surface,
    after: &Surface,
    budget: usize,
) -> Vec<Change> {
    let mut em = Emitter::new(rules);
    for kind in Kind::ALL {
        let key = kind.key_field();
        let index = |list: &'_ [Element]| -> BTreeMap<String, usize> {
            list.iter()
                .enumerate()
                .map(|(i, e)| (key_of(e, key).to_string(), i))
                .collect()
        };
        let (la, lb) = (before.list(kind), after.list(kind));
        let (ia, ib) = (index(la), index(lb));
        let names: BTreeSet<&String> = ia.keys().chain(ib.keys()).collect();
        // Elements that went and came with the same content: a likely rename.
        let (renamed_to, renamed_from) = if kind == Kind::Template {
            Default::default()
        } else {
            let went: Vec<(&str, Element)> = ia
                .iter()
                .filter(|(k, _)| !ib.contains_key(*k))
                .map(|(k, &i)| (k.as_str(), rename_content(kind, &la[i])))
                .collect();
            let came: Vec<(&str, Element)> = ib
                .iter()
                .filter(|(k, _)| !ia.contains_key(*k))
                .map(|(k, &j)| (k.as_str(), rename_content(kind, &lb[j])))
                .collect();
            let (pairs, _) = rename_pairs(kind, &went, &came);
            let from: BTreeMap<String, String> =
                pairs.iter().map(|(a, b)| (b.clone(), a.clone())).collect();
            (pairs, from)
        };
        // A resource template is keyed by its URI template, so changing its variables
        // removes one and adds another: pair them by their (unique) `name`.
        let name_of = |e: &Element| e.get("name").and_then(Value::as_str).map(str::to_string);
        // (key, name) of the elements only on one side, for pairing templates by name.
        let only =
            |mine: &BTreeMap<String, usize>, theirs: &BTreeMap<String, usize>, list: &[Element]| {
                mine.iter()
                    .filter(|(k, _)| !theirs.contains_key(*k))
                    .map(|(k, &i)| (k.clone(), name_of(&list[i])))
                    .collect::<Vec<(String, Option<String>)>>()
            };
        let (went_names, came_names) = if kind == Kind::Template {
            (only(&ia, &ib, la), only(&ib, &ia, lb))
        } else {
            (Vec::new(), Vec::new())
        };
        let by_name = |list: &[(String, Option<String>)], name: Option<String>| -> Option<String> {
            let name = name?;
            let mut hits = list
                .iter()
                .filter(|(_, n)| n.as_deref() == Some(name.as_str()));
            match (hits.next(), hits.next()) {
                (Some((k, _)), None) => Some(k.clone()),
                _ => None,
            }
        };
        for name in names {
            let subject = Subject::element(kind, name);
            match (ia.get(name), ib.get(name)) {
                (Some(&i), None) => {
                    let hint = match kind {
                        Kind::Template => by_name(&came_names, name_of(&la[i]))
                            .filter(|n| {
                                by_name(&went_names, name_of(&lb[ib[n]])).as_ref() == Some(name)
                            })
                            .map(|n| {
                                format!("looks replaced by `{n}` ({})", variable_diff(name, &n))
                            }),
                        _ => renamed_to
                            .get(name)
                            .map(|n| format!("looks renamed to `{n}`")),
                    };
                    element_presence(&mut em, kind, &subject, "removed", hint)
                }
                (None, Some(&j)) => {
                    let hint = match kind {
                        Kind::Template => by_name(&went_names, name_of(&lb[j]))
                            .filter(|o| {
                                by_name(&came_names, name_of(&la[ia[o]])).as_ref() == Some(name)
                            })
                            .map(|o| format!("looks like `{o}` with {}", variable_diff(&o, name))),
                        _ => renamed_from
                            .get(name)
                            .map(|n| format!("looks renamed from `{n}`")),
                    };
                    element_presence(&mut em, kind, &subject, "added", hint)
                }
                (Some(&i), Some(&j)) => {
                    compare_elements(&mut em, budget, kind, &subject, &la[i], &lb[j])
                }
                (None, None) => {}
            }
        }
    }
    em.changes
}

/// Changes to what the server says about itself: its fields of role `name` and `text`
/// in rules/elements.toml (`instructions`, by the `server.instructions.*` rows; the
/// version is checked by the report, against the bump the changes require).
pub fn diff_server(
    classify: &dyn Classify,
    before: &ServerInfo,
    after: &ServerInfo,
) -> Vec<Change> {
    let mut em = Emitter::new(classify);
    let rules = classify.rules();
    let server = Subject::server();
    // An empty name is no name (a capture that found no identity).
    let text = |s: Option<&str>| s.filter(|s| !s.is_empty()).map(|s| Value::String(s.into()));
    let compared = before
        .fields()
        .zip(after.fields())
        .filter(|((f, _), _)| matches!(f.role, elements::Role::Name | elements::Role::Text));
    for ((f, a), (_, b)) in compared {
        let (field, a, b) = (f.field.as_str(), text(a), text(b));
        let rows: Vec<usize> = (0..rules.rows.len())
            .filter(|&i| matches!(&rules.rows[i].scope, Scope::Server { field: f } if f == field))
            .collect();
        for ev in
            compare::events(Comparator::Text, None, a.as_ref(), b.as_ref()).unwrap_or_default()
        {
            let rule = rows
                .iter()
                .copied()
                .find(|&i| rules.rows[i].event == ev.event)
                .unwrap_or_else(|| rules.surface_unhandled());
            em.emit(rule, &server, Some(Path::name(field)), None, field, ev);
        }
    }
    em.changes
}

fn element_presence(
    em: &mut Emitter<'_>,
    kind: Kind,
    subject: &Subject,
    event: &'static str,
    hint: Option<String>,
) {
    let rules = em.rules;
    match rules
        .element_binding(kind, None)
        .and_then(|b| rules.pick(b, event, None))
    {
        Some(rule) => {
            let dir = rules.rows[rule].surface_direction();
            let mut ev = Event::new(event);
            ev.hint = hint;
            em.emit(rule, subject, None, dir, kind.word(), ev);
        }
        None => {
            let rule = rules.surface_unhandled();
            em.emit(
                rule,
                subject,
                None,
                None,
                kind.word(),
                Event::new("changed"),
            );
        }
    }
}

/// A change in an element field no row models: reported, never dropped.
fn unhandled_field(
    em: &mut Emitter<'_>,
    subject: &Subject,
    field: &Path,
    a: Option<&Value>,
    b: Option<&Value>,
) {
    let rule = em.rules.surface_unhandled();
    em.emit(
        rule,
        subject,
        Some(field.clone()),
        None,
        &field.to_string(),
        Event::new("changed").values(a, b),
    );
}

/// The binding of element field `field`: its own rows, else those of the nearest
/// `PREFIX.*` row above it (`annotations.*` for `annotations.description`: a field under
/// PREFIX that no row names).
fn field_binding<'r>(rules: &'r Rules, kind: Kind, field: &Path) -> Option<&'r Binding> {
    if let Some(b) = rules.element_binding(kind, Some(field)) {
        return Some(b);
    }
    // Each prefix in turn, longest first, followed by `*`.
    let mut any = field.clone();
    while any.0.pop().is_some() && !any.0.is_empty() {
        any.0.push(Segment::Name(ANY_FIELD.into()));
        if let Some(b) = rules.element_binding(kind, Some(&any)) {
            return Some(b);
        }
        any.0.pop();
    }
    None
}

/// The last name of a `PREFIX.*` row: any field under PREFIX.
const ANY_FIELD: &str = "*";

/// Whether `field` is a `PREFIX.*` row's.
fn any_field(field: &Path) -> bool {
    field.0.len() > 1 && matches!(field.0.last(), Some(Segment::Name(n)) if n == ANY_FIELD)
}

/// The leaf of a tool's destructive hint.
fn destructive() -> Path {
    Path(vec![
        Segment::Name("annotations".into()),
        Segment::Name("destructiveHint".into()),
    ])
}

/// Whether `element`, a tool, is read-only (`annotations.readOnlyHint: true`; absent
/// means false).
fn read_only(element: &Element) -> bool {
    element
        .get("annotations")
        .and_then(|a| a.get("readOnlyHint"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Classify `ev` on element field `field` by its rows, or as unhandled.
fn classify_field(
    em: &mut Emitter<'_>,
    kind: Kind,
    subject: &Subject,
    field: &Path,
    ev: Event<'_>,
) {
    let rules = em.rules;
    let rule = field_binding(rules, kind, field)
        .and_then(|b| rules.pick_value(b, ev.event, ev.cond, ev.value.as_ref()));
    match rule {
        Some(rule) => {
            let dir = rules.rows[rule].surface_direction();
            let name = field.to_string();
            em.emit(rule, subject, Some(field.clone()), dir, &name, ev);
        }
        None => unhandled_field(em, subject, field, ev.before.as_ref(), ev.after.as_ref()),
    }
}

fn compare_elements(
    em: &mut Emitter<'_>,
    budget: usize,
    kind: Kind,
    subject: &Subject,
    a: &Element,
    b: &Element,
) {
    for (field, direction, form) in schema_fields(kind) {
        let (sa, sb) = (a.get(field), b.get(field));
        let at = Path::name(field);
        if form == Form::Arguments {
            let (xa, xb) = (arguments_schema(sa), arguments_schema(sb));
            let start = em.changes.len();
            walker::compare_schemas(
                em,
                budget,
                subject,
                direction,
                &at,
                true,
                Some(&xa),
                Some(&xb),
            );
            witness::attach(
                em.rules,
                &mut em.changes[start..],
                &mut em.witness_budget,
                (field, form),
                Some(&xa),
                Some(&xb),
            );
            continue;
        }
        // A schema field with presence rows (outputSchema) reports its coming and going
        // as one change; one without (inputSchema, always there) compares against `{}`.
        let presence = em
            .rules
            .element_binding(kind, Some(&at))
            .is_some_and(|_| sa.is_some() != sb.is_some());
        if presence {
            let event = if sa.is_none() { "added" } else { "removed" };
            classify_field(em, kind, subject, &at, Event::new(event));
        } else {
            let start = em.changes.len();
            walker::compare_schemas(em, budget, subject, direction, &at, false, sa, sb);
            witness::attach(
                em.rules,
                &mut em.changes[start..],
                &mut em.witness_budget,
                (field, form),
                sa,
                sb,
            );
        }
    }

    let rules = em.rules;
    let skip: Vec<&str> = std::iter::once(kind.key_field())
        .chain(schema_fields(kind).map(|(f, _, _)| f))
        .collect();
    let mut leaves = Leaves::new();
    for field in rules.element_fields(kind) {
        let skipped = matches!(&field.0[..], [Segment::Name(n)] if skip.contains(&n.as_str()));
        if !skipped && !any_field(field) {
            leaf(&mut leaves, field.to_string(), field);
        }
    }
    for (side, element) in [a, b].into_iter().enumerate() {
        let top = (&Path::default(), "");
        flatten(rules, kind, element, top, &skip, side, &mut leaves);
    }
    emptied_containers(&mut leaves);
    // A read-only tool does not modify its environment, so it was not destructive,
    // whatever its destructiveHint said (the spec gives the hint meaning only when
    // readOnlyHint is false). A tool that stops being read-only is compared with that:
    // destructiveHint false is no change, true (or absent: the default) is.
    if kind == Kind::Tool && read_only(a) && !read_only(b) {
        static NOT_DESTRUCTIVE: Value = Value::Bool(false);
        let field = destructive();
        leaf(&mut leaves, field.to_string(), &field)[0] = Some(&NOT_DESTRUCTIVE);
    }
    // Rows that hold only while the tool is read-only (`when = "read_only"`).
    let cond = (kind == Kind::Tool && read_only(b)).then_some(Condition::ReadOnly);
    for (field, [x, y]) in leaves.values() {
        match field_binding(rules, kind, field) {
            Some(binding) => {
                match compare::events(binding.comparator, binding.absent.as_ref(), *x, *y) {
                    Some(evs) => {
                        for mut ev in evs {
                            ev.cond = cond;
                            classify_field(em, kind, subject, field, ev);
                        }
                    }
                    None => unhandled_field(em, subject, field, *x, *y),
                }
            }
            None if x != y => unhandled_field(em, subject, field, *x, *y),
            None => {}
        }
    }
}

/// An element's leaves, each side's value, by their written paths: the order they are
/// compared in (as paths sort), and a container's leaves follow it (see
/// [`emptied_containers`]).
type Leaves<'v> = BTreeMap<String, (Path, [Option<&'v Value>; 2])>;

/// The sides of the leaf at `path` (written `text`), added when new.
fn leaf<'l, 'v>(
    leaves: &'l mut Leaves<'v>,
    text: String,
    path: &Path,
) -> &'l mut [Option<&'v Value>; 2] {
    &mut leaves
        .entry(text)
        .or_insert_with(|| (path.clone(), [None, None]))
        .1
}

/// Collect an element's fields as leaves (`annotations.readOnlyHint`; a key that is no
/// plain word is one name: `_meta["io.modelcontextprotocol/ui"]`). Objects are opened
/// unless a row names the object itself. `prefix`: the path so far, and its text.
fn flatten<'v>(
    rules: &Rules,
    kind: Kind,
    map: &'v Map<String, Value>,
    (prefix, prefix_text): (&Path, &str),
    skip: &[&str],
    side: usize,
    out: &mut Leaves<'v>,
) {
    for (key, value) in map {
        if prefix.0.is_empty() && skip.contains(&key.as_str()) {
            continue;
        }
        let mut path = prefix.clone();
        path.0.push(Segment::Name(key.clone()));
        let mut text = prefix_text.to_string();
        crate::path::append(&mut text, Step::Name(key));
        // Inside `_meta` a key is a declaration even when its value is `{}` (a marker:
        // kubernetes-mcp-server's `rbac.none: {}`, "needs no permission"): a leaf.
        let in_meta = matches!(prefix.0.first(), Some(Segment::Name(n)) if n == "_meta");
        match value {
            Value::Object(inner) if inner.is_empty() && in_meta => {
                leaf(out, text, &path)[side] = Some(value)
            }
            Value::Object(inner) if rules.element_binding(kind, Some(&path)).is_none() => {
                // An empty object has no leaves elsewhere: `{}` and absent compare equal
                // (`annotations: {}` says what no annotations say).
                flatten(rules, kind, inner, (&path, &text), skip, side, out);
            }
            _ => leaf(out, text, &path)[side] = Some(value),
        }
    }
}

/// A `_meta` object emptied (or filled) on one side while the other holds keys under
/// it (`csp: {frameDomains: [...]}` → `csp: {}`): those keys' own lines say what changed,
/// so the `{}` is no leaf of its own there.
fn emptied_containers(leaves: &mut Leaves<'_>) {
    let empty = |v: Option<&Value>| matches!(v, Some(Value::Object(m)) if m.is_empty());
    let mut drop = Vec::new();
    for (text, (path, sides)) in leaves.iter() {
        for side in 0..2 {
            if !empty(sides[side]) {
                continue;
            }
            // Every leaf below this one is among the run of those whose text starts
            // with its text (`a.b`, but also `a-c`, which is not below it).
            let under = leaves
                .range::<str, _>((
                    std::ops::Bound::Excluded(text.as_str()),
                    std::ops::Bound::Unbounded,
                ))
                .take_while(|(t, _)| t.starts_with(text.as_str()))
                .any(|(_, (p, other))| {
                    p.strip_prefix(path).is_some_and(|rest| !rest.is_empty())
                        && other[1 - side].is_some()
                });
            if under {
                drop.push((text.clone(), side));
            }
        }
    }
    for (text, side) in drop {
        if let Some((_, sides)) = leaves.get_mut(&text) {
            sides[side] = None;
            if sides.iter().all(Option::is_none) {
                leaves.remove(&text);
            }
        }
    }
}

/// The variable names of an RFC 6570 URI template (`db://{schema}/{table}{?limit*}`).
fn template_variables(template: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let expr =
            rest[open + 1..open + close].trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for spec in expr.split(',') {
            let name = spec.split([':', '*']).next().unwrap_or("").trim();
            if !name.is_empty() {
                names.insert(name.to_string());
            }
        }
        rest = &rest[open + close + 1..];
    }
    names
}

/// `variables +schema, -table` between two URI templates.
fn variable_diff(old: &str, new: &str) -> String {
    let (a, b) = (template_variables(old), template_variables(new));
    let mut parts: Vec<String> = b.difference(&a).map(|v| format!("+{v}")).collect();
    parts.extend(a.difference(&b).map(|v| format!("-{v}")));
    if parts.is_empty() {
        "the same variables".to_string()
    } else {
        format!("variables {}", parts.join(", "))
    }
}

/// What a rename keeps: an element without its key, name, title and description.
fn rename_content(kind: Kind, e: &Element) -> Element {
    let mut m = e.clone();
    for f in [kind.key_field(), "title", "description", "name"] {
        m.remove(f);
    }
    m
}

/// A hash of a value that equal values share, whatever the order of their object keys.
fn content_hash(v: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    match v {
        Value::Null => 0u8.hash(&mut h),
        Value::Bool(b) => (1u8, b).hash(&mut h),
        // Equal numbers have equal text (serde_json compares their representation).
        Value::Number(n) => (2u8, n.to_string()).hash(&mut h),
        Value::String(s) => (3u8, s).hash(&mut h),
        Value::Array(a) => {
            4u8.hash(&mut h);
            for x in a {
                content_hash(x).hash(&mut h);
            }
        }
        Value::Object(m) => (5u8, object_hash(m)).hash(&mut h),
    }
    h.finish()
}

/// An object's hash: a sum over its entries, so key order does not matter.
fn object_hash(m: &Map<String, Value>) -> u64 {
    use std::hash::{Hash, Hasher};
    m.iter().fold(m.len() as u64, |sum, (k, x)| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (k, content_hash(x)).hash(&mut h);
        sum.wrapping_add(h.finish())
    })
}

/// Likely renames among the elements that went (`went`: key, content) and came: an
/// element whose content exactly one element on each side shares, and that is
/// substantive. Among several alike elements, none is a rename. Elements are bucketed
/// by a hash of their content, so only elements in one bucket are compared: linear in
/// the elements, not quadratic. Returns the pairs (old key → new key) and the number
/// of content comparisons made.
fn rename_pairs(
    kind: Kind,
    went: &[(&str, Element)],
    came: &[(&str, Element)],
) -> (BTreeMap<String, String>, usize) {
    let mut buckets: HashMap<u64, Vec<(usize, usize)>> = HashMap::new();
    for (side, list) in [went, came].into_iter().enumerate() {
        for (i, (_, content)) in list.iter().enumerate() {
            if substantive(kind, content) {
                buckets
                    .entry(object_hash(content))
                    .or_default()
                    .push((side, i));
            }
        }
    }
    let content = |(side, i): (usize, usize)| &[went, came][side][i].1;
    let mut pairs = BTreeMap::new();
    let mut compared = 0;
    for bucket in buckets.values() {
        // Split the bucket into classes of equal content (a hash collision is rare).
        let mut classes: Vec<Vec<(usize, usize)>> = Vec::new();
        for &member in bucket {
            let class = classes.iter_mut().find(|c| {
                compared += 1;
                content(c[0]) == content(member)
            });
            match class {
                Some(c) => c.push(member),
                None => classes.push(vec![member]),
            }
        }
        for class in classes {
            if let [(0, i), (1, j)] = class[..] {
                pairs.insert(went[i].0.to_string(), came[j].0.to_string());
            }
        }
    }
    // Names that differ only in case and separators (`list-tables`, `list_tables`,
    // `listTables`) with the same content are a rename even without parameters: one
    // to one, as above.
    let spelled = |name: &str| -> String {
        name.chars()
            .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let paired: BTreeSet<&str> = pairs.values().map(String::as_str).collect();
    let unpaired_came: Vec<&(&str, Element)> =
        came.iter().filter(|(n, _)| !paired.contains(n)).collect();
    let mut respelled = Vec::new();
    for (old, content) in went.iter().filter(|(n, _)| !pairs.contains_key(*n)) {
        let alike = |list: &[&(&str, Element)], name: &str, content: &Element| {
            let mut hits = list
                .iter()
                .filter(|(n, c)| spelled(n) == spelled(name) && c == content);
            match (hits.next(), hits.next()) {
                (Some((n, _)), None) => Some(n.to_string()),
                _ => None,
            }
        };
        if let Some(new) = alike(&unpaired_came, old, content) {
            let went_left: Vec<&(&str, Element)> = went.iter().collect();
            if alike(&went_left, &new, content).as_deref() == Some(*old) {
                respelled.push((old.to_string(), new));
            }
        }
    }
    pairs.extend(respelled);
    (pairs, compared)
}

/// Enough shared content to call two elements a likely rename: a tool with parameters
/// or an output schema, a prompt with arguments. (Two argument-less tools, or two
/// resources, are alike without being the same thing.)
fn substantive(kind: Kind, content: &Element) -> bool {
    let non_empty = |v: Option<&Value>| match v {
        Some(Value::Object(m)) => !m.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        _ => false,
    };
    // Parameters a caller sends, or anything a caller receives.
    schema_fields(kind).any(|(field, direction, form)| {
        let value = content.get(field);
        match (form, direction) {
            (Form::Arguments, _) => non_empty(value),
            (Form::Schema, Direction::Input) => non_empty(value.and_then(|s| s.get("properties"))),
            (Form::Schema, Direction::Output) => value.is_some(),
        }
    })
}

/// A prompt's argument list as the input object schema it describes: each argument a
/// property (its description and title kept), `required: true` ones required.
fn arguments_schema(args: Option<&Value>) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    if let Some(Value::Array(list)) = args {
        for arg in list {
            let Some(obj) = arg.as_object() else { continue };
            let Some(name) = obj.get("name").and_then(Value::as_str) else {
                continue;
            };
            let mut schema = obj.clone();
            schema.remove("name");
            if schema.remove("required") == Some(Value::Bool(true)) {
                required.push(Value::String(name.to_string()));
            }
            properties.insert(name.to_string(), Value::Object(schema));
        }
    }
    let mut schema = Map::new();
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("required".into(), Value::Array(required));
    Value::Object(schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tool with `props` string parameters and one more, `extra`, that tells it apart.
    fn tool(props: usize, extra: &str) -> Element {
        let mut properties: Map<String, Value> = (0..props)
            .map(|j| (format!("p{j}"), serde_json::json!({"type": "string"})))
            .collect();
        properties.insert(extra.into(), serde_json::json!({"type": "integer"}));
        let schema = serde_json::json!({"type": "object", "properties": properties});
        let mut m = Map::new();
        m.insert("inputSchema".into(), schema);
        m
    }

    #[test]
    fn rename_pairing_is_linear_at_1000_removed_and_1000_added() {
        let n = 1000;
        let names: Vec<(String, String)> = (0..n)
            .map(|i| (format!("old_{i}"), format!("new_{i}")))
            .collect();
        // Each removed tool has exactly one added twin: 1,000 renames.
        let went: Vec<(&str, Element)> = names
            .iter()
            .enumerate()
            .map(|(i, (o, _))| (o.as_str(), tool(60, &format!("x{i}"))))
            .collect();
        let came: Vec<(&str, Element)> = names
            .iter()
            .enumerate()
            .map(|(i, (_, a))| (a.as_str(), tool(60, &format!("x{i}"))))
            .collect();
        let (pairs, compared) = rename_pairs(Kind::Tool, &went, &came);
        assert_eq!(pairs.len(), n);
        assert_eq!(pairs["old_7"], "new_7");
        // One comparison per pair, not one per (removed, added) pair of tools (a million).
        assert!(compared <= 2 * n, "{compared} comparisons");
        // No added tool resembles a removed one: nothing pairs, and nothing is compared
        // beyond a hash collision.
        let came: Vec<(&str, Element)> = names
            .iter()
            .enumerate()
            .map(|(i, (_, a))| (a.as_str(), tool(60, &format!("y{i}"))))
            .collect();
        let (pairs, compared) = rename_pairs(Kind::Tool, &went, &came);
        assert!(pairs.is_empty());
        assert!(compared <= 10, "{compared} comparisons");
    }

    #[test]
    fn among_alike_elements_none_is_a_rename() {
        let (a, b, c) = (tool(1, "x"), tool(1, "x"), tool(1, "x"));
        // Two removed tools alike, one added: ambiguous.
        let (pairs, _) = rename_pairs(Kind::Tool, &[("a", a.clone()), ("b", b)], &[("c", c)]);
        assert!(pairs.is_empty());
        // Key order does not matter to the bucket.
        let mut reordered = Map::new();
        for (k, v) in a.iter().rev() {
            reordered.insert(k.clone(), v.clone());
        }
        let (pairs, _) = rename_pairs(Kind::Tool, &[("a", a)], &[("c", reordered)]);
        assert_eq!(pairs.len(), 1);
        // Not substantive (no parameters): no rename.
        let bare = Map::new();
        let (pairs, _) = rename_pairs(Kind::Tool, &[("a", bare.clone())], &[("c", bare)]);
        assert!(pairs.is_empty());
    }

    /// A top-level key that is no plain word is quoted in the path, so it cannot pose
    /// as a nested field (`annotations.destructiveHint` the key is not the hint).
    #[test]
    fn a_dotted_top_level_key_is_not_a_nested_field() {
        let rules = Rules::embedded().unwrap();
        let tool = |v: bool| {
            let mut m = Map::new();
            m.insert("name".into(), Value::from("t"));
            m.insert("annotations.destructiveHint".into(), Value::from(v));
            m
        };
        let (mut a, mut b) = (Surface::default(), Surface::default());
        a.tools.push(tool(false));
        b.tools.push(tool(true));
        let changes = diff(&rules, &a, &b);
        assert_eq!(changes.len(), 1, "{changes:?}");
        let c = &changes[0];
        assert_eq!(c.rule, rules.surface_unhandled());
        assert_eq!(
            c.path.as_ref().map(|p| p.to_string()).as_deref(),
            Some(r#"["annotations.destructiveHint"]"#)
        );
    }

    #[test]
    fn uri_template_variables_follow_rfc_6570() {
        let v = template_variables("db://{schema}/{table}{?limit,offset*}{#frag:3}{+path}");
        let names: Vec<&str> = v.iter().map(String::as_str).collect();
        assert_eq!(
            names,
            ["frag", "limit", "offset", "path", "schema", "table"]
        );
        assert_eq!(variable_diff("a://{x}", "a://{x}/{y}"), "variables +y");
        assert_eq!(variable_diff("a://{x}{y}", "b://{x}"), "variables -y");
        assert_eq!(variable_diff("a://{x}", "b://{x}"), "the same variables");
    }
}
