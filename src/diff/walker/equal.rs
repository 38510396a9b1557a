//! When two schemas (or keyword values) mean the same: canonical text for pairing,
//! similarity scores, equality through `$ref`s, the value keywords a schema compares
//! with their equivalent spellings normalised (integer bounds, a one-value `enum` against
//! `const`), and set relations between simple schemas (a union that splits a plain
//! schema, variants that cannot overlap). Pure functions: nothing here reports.

use super::*;

/// A schema's text with every order that carries no meaning sorted away (`enum`,
/// `required`, `type`, and the variants of `anyOf` / `oneOf` / `allOf`): two schemas
/// with the same text are the same schema.
pub(super) fn canonical(v: &Value) -> String {
    fn write(v: &Value, unordered: bool, out: &mut String) {
        match v {
            Value::Object(m) => {
                out.push('{');
                for (k, x) in m {
                    out.push_str(&serde_json::to_string(k).unwrap_or_default());
                    out.push(':');
                    let un = keywords::unordered(k);
                    write(x, un, out);
                    out.push(',');
                }
                out.push('}');
            }
            Value::Array(a) => {
                let mut parts: Vec<String> = a
                    .iter()
                    .map(|x| {
                        let mut s = String::new();
                        write(x, false, &mut s);
                        s
                    })
                    .collect();
                if unordered {
                    parts.sort();
                }
                out.push('[');
                out.push_str(&parts.join(","));
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(v, false, &mut out);
    out
}

/// How alike two subschemas are, for pairing variants that are not the same.
pub(super) fn similarity(x: &Value, y: &Value) -> usize {
    let (Some(a), Some(b)) = (x.as_object(), y.as_object()) else {
        return usize::from(x == y);
    };
    let mut score = 0;
    for key in ["type", "$ref", "const"] {
        if a.get(key).is_some() && a.get(key).map(canonical) == b.get(key).map(canonical) {
            score += 8;
        }
    }
    for (k, v) in a {
        if let Some(w) = b.get(k) {
            score += if canonical(v) == canonical(w) { 4 } else { 1 };
        }
    }
    score
}

/// True when `a` and `b` are equal and hold no `$ref` (whose target might still differ).
/// Iterative: depth is bounded by the parser, but we do not rely on it.
pub(super) fn same_without_refs(a: &Value, b: &Value) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((x, y)) = stack.pop() {
        match (x, y) {
            (Value::Object(m), Value::Object(n)) => {
                if m.len() != n.len() || m.contains_key("$ref") {
                    return false;
                }
                for (k, v) in m {
                    match n.get(k) {
                        Some(w) => stack.push((v, w)),
                        None => return false,
                    }
                }
            }
            (Value::Array(m), Value::Array(n)) => {
                if m.len() != n.len() {
                    return false;
                }
                stack.extend(m.iter().zip(n.iter()));
            }
            _ => {
                if x != y {
                    return false;
                }
            }
        }
    }
    true
}

/// Equal values, where every local `$ref` inside is compared by what it points at
/// (each side in its own root). Pairs of references already being compared are taken as
/// equal (a recursive definition); nesting is bounded.
pub(super) fn same_resolved(roots: [&Value; 2], a: &Value, b: &Value) -> bool {
    fn go(
        roots: [&Value; 2],
        a: &Value,
        b: &Value,
        seen: &mut Vec<(usize, usize)>,
        depth: usize,
    ) -> bool {
        if depth > 256 {
            return false; // too deep to prove equal: report it
        }
        if let (Some(ra), Some(rb)) = (resolve_ptr(roots[0], a), resolve_ptr(roots[1], b)) {
            let pair = (ra as *const Value as usize, rb as *const Value as usize);
            if seen.contains(&pair) {
                return true;
            }
            seen.push(pair);
            // The targets, and the keywords beside `$ref`, must both agree.
            let siblings = |v: &Value| {
                let mut m = v.as_object().cloned().unwrap_or_default();
                m.remove("$ref");
                Value::Object(m)
            };
            return go(roots, ra, rb, seen, depth + 1)
                && go(roots, &siblings(a), &siblings(b), seen, depth + 1);
        }
        // A schema that is only a `$ref` against one written out: its target.
        let only_ref = |v: &Value| v.as_object().is_some_and(|m| m.len() == 1);
        for (side, v) in [(0, a), (1, b)] {
            if let Some(target) = resolve_ptr(roots[side], v).filter(|_| only_ref(v)) {
                let (x, y) = if side == 0 { (target, b) } else { (a, target) };
                let pair = (x as *const Value as usize, y as *const Value as usize);
                if seen.contains(&pair) {
                    return true;
                }
                seen.push(pair);
                return go(roots, x, y, seen, depth + 1);
            }
        }
        match (a, b) {
            (Value::Object(m), Value::Object(n)) => {
                m.len() == n.len()
                    && m.iter()
                        .all(|(k, v)| n.get(k).is_some_and(|w| go(roots, v, w, seen, depth + 1)))
            }
            (Value::Array(m), Value::Array(n)) => {
                m.len() == n.len()
                    && m.iter()
                        .zip(n)
                        .all(|(v, w)| go(roots, v, w, seen, depth + 1))
            }
            _ => a == b,
        }
    }
    fn resolve_ptr<'v>(root: &'v Value, v: &Value) -> Option<&'v Value> {
        resolve(root, v.get("$ref")?.as_str()?)
    }
    same_without_refs(a, b) || go(roots, a, b, &mut Vec::new(), 0)
}

/// `true`, `{}` and absent all mean "no constraint".
pub(super) fn trivial(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Bool(true)) => true,
        Some(Value::Object(m)) => m.is_empty(),
        _ => false,
    }
}

/// Two field schemas alike enough to call one field a rename of the other: equal but
/// for their words (`title`, `description`, `examples`, `$comment`), and constraining
/// something (two unconstrained fields are alike without being the same thing).
pub(super) fn alike_but_words(x: &Value, y: &Value) -> bool {
    const WORDS: [&str; 4] = ["title", "description", "examples", "$comment"];
    fn rest(m: &Map<String, Value>) -> std::collections::BTreeMap<&str, &Value> {
        m.iter()
            .filter(|(k, _)| !WORDS.contains(&k.as_str()))
            .map(|(k, v)| (k.as_str(), v))
            .collect()
    }
    match (x, y) {
        (Value::Object(a), Value::Object(b)) => {
            let ra = rest(a);
            !ra.is_empty() && ra == rest(b)
        }
        _ => x == y && !trivial(Some(x)),
    }
}

/// A schema every string satisfies: a `type` that admits strings and nothing else but
/// annotations.
pub(super) fn any_string(v: Option<&Value>) -> bool {
    let Some(Value::Object(m)) = v else {
        return false;
    };
    let admits_string = match m.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
        _ => false,
    };
    admits_string
        && m.keys().all(|k| {
            k == "type" || matches!(keywords::role(k), Some(Role::Annotation | Role::Identifier))
        })
}

/// A schema of annotations only (a `description`, a `title`): it constrains nothing.
pub(super) fn annotations_only(v: Option<&Value>) -> bool {
    let Some(Value::Object(m)) = v else {
        return false;
    };
    m.keys()
        .all(|k| matches!(keywords::role(k), Some(Role::Annotation | Role::Identifier)))
}

/// A schema's value keywords (everything but applicators, definitions and a followed
/// `$ref`), as compared by the rows.
pub(super) type Keywords<'v> = std::collections::BTreeMap<&'v str, Cow<'v, Value>>;

pub(super) fn value_keywords<'v>(view: &View<'v>) -> Keywords<'v> {
    let mut out = Keywords::new();
    for k in view.keys() {
        // `required` is compared with `properties`, as one set of fields.
        let structural = k == "required"
            || matches!(
                keywords::role(k),
                Some(Role::Applicator | Role::Definitions | Role::Reference)
            );
        if structural || out.contains_key(k.as_str()) {
            continue;
        }
        if let Some(v) = view.get(k) {
            out.insert(k.as_str(), Cow::Borrowed(v));
        }
    }
    if let Some(r) = view.get("$ref") {
        out.insert("$ref", Cow::Borrowed(r));
    }
    out
}

/// The value keywords of one schema node as written (no `$ref` followed), as the walker
/// compares them: bounds normalised (`exclusiveMinimum: 0` on an integer is `minimum:
/// 1`). `None` when the node is not an object.
pub(crate) fn compared_keywords(node: &Value) -> Option<std::collections::BTreeMap<String, Value>> {
    let m = node.as_object()?;
    let mut kv: Keywords<'_> = m
        .iter()
        .filter(|(k, _)| {
            *k != "required"
                && !matches!(
                    keywords::role(k),
                    Some(Role::Applicator | Role::Definitions | Role::Reference)
                )
        })
        .map(|(k, v)| (k.as_str(), Cow::Borrowed(v)))
        .collect();
    normalise_bounds(&mut kv);
    Some(
        kv.into_iter()
            .map(|(k, v)| (k.to_string(), v.into_owned()))
            .collect(),
    )
}

/// The largest integer a JSON number holds exactly (zod's `.int()` bounds).
pub(super) const SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// On an integer-only schema, every bound is rewritten as the inclusive bound on
/// integers it amounts to (`exclusiveMinimum: 0` is `minimum: 1`), an integer bound kept
/// exact, not through a float (2^63 − 1 is a bound an integer can be past). zod's
/// ±(2^53 − 1) are aligned with the other side afterwards ([`align_safe_bounds`]).
pub(super) fn normalise_bounds(kv: &mut Keywords<'_>) {
    let integer = match kv.get("type").map(|v| v.as_ref()) {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => {
            ts.iter().any(|t| t == "integer") && ts.iter().all(|t| t == "integer" || t == "null")
        }
        _ => false,
    };
    if !integer {
        return;
    }
    // Each bound as (its value on the number line, the exact integer bound it is).
    let num = |kv: &Keywords<'_>, k: &str, step: i128| -> Option<(f64, Value)> {
        let v = kv.get(k)?;
        let exact = v
            .as_i64()
            .map(i128::from)
            .or_else(|| v.as_u64().map(i128::from))
            .map(|n| n + step);
        let x = v.as_f64()?;
        let rounded = match step {
            0 if k == "minimum" => x.ceil(),
            0 => x.floor(),
            s => (if s > 0 { x.floor() } else { x.ceil() }) + s as f64,
        };
        let value = match exact {
            Some(n) if (i128::from(i64::MIN)..=i128::from(u64::MAX)).contains(&n) => {
                serde_json::from_str(&n.to_string()).unwrap_or(Value::Null)
            }
            _ => serde_json::Number::from_f64(rounded).map_or(Value::Null, Value::Number),
        };
        Some((rounded, value))
    };
    let lower = [num(kv, "minimum", 0), num(kv, "exclusiveMinimum", 1)];
    let upper = [num(kv, "maximum", 0), num(kv, "exclusiveMaximum", -1)];
    let pick = |a: (f64, Value), b: (f64, Value), lower: bool| {
        if (b.0 > a.0) == lower && b.0 != a.0 {
            b
        } else {
            a
        }
    };
    let lo = lower
        .clone()
        .into_iter()
        .flatten()
        .reduce(|a, b| pick(a, b, true));
    let hi = upper
        .clone()
        .into_iter()
        .flatten()
        .reduce(|a, b| pick(a, b, false));
    for (k, parsed) in [
        ("minimum", lower[0].is_some()),
        ("exclusiveMinimum", lower[1].is_some()),
        ("maximum", upper[0].is_some()),
        ("exclusiveMaximum", upper[1].is_some()),
    ] {
        if parsed {
            kv.remove(k);
        }
    }
    // A whole float within the exact range is written as an integer (`1.0` is `1`).
    let tidy = |(x, v): (f64, Value)| match v {
        Value::Number(n) if n.is_f64() && x.abs() <= SAFE_INTEGER => Value::from(x as i64),
        v => v,
    };
    if let Some(lo) = lo {
        kv.insert("minimum", Cow::Owned(tidy(lo)));
    }
    if let Some(hi) = hi {
        kv.insert("maximum", Cow::Owned(tidy(hi)));
    }
}

/// zod's `.int()` bounds, exactly ±(2^53 − 1), against no bound on the other side: the
/// same in practice (no JavaScript number is an integer past them), so they are dropped.
/// Against a bound beyond them (2^63 − 1), they stay: that is a real tightening.
pub(super) fn align_safe_bounds(kv: &mut [Keywords<'_>; 2]) {
    for (k, safe) in [("minimum", -SAFE_INTEGER), ("maximum", SAFE_INTEGER)] {
        let at = |kv: &Keywords<'_>| kv.get(k).and_then(|v| v.as_f64());
        for (i, j) in [(0, 1), (1, 0)] {
            if at(&kv[i]) == Some(safe) && !kv[j].contains_key(k) {
                kv[i].remove(k);
            }
        }
    }
}

/// `const: x` on one side and `enum` on the other: compare `const` as `enum: [x]`,
/// so `enum: ["x"]` against `const: "x"` is no change.
pub(super) fn align_const(kv: &mut [Keywords<'_>; 2]) {
    for (i, j) in [(0, 1), (1, 0)] {
        let lone_const = kv[i].contains_key("const") && !kv[i].contains_key("enum");
        let lone_enum = kv[j].contains_key("enum") && !kv[j].contains_key("const");
        if lone_const && lone_enum {
            if let Some(c) = kv[i].remove("const") {
                kv[i].insert("enum", Cow::Owned(Value::Array(vec![c.into_owned()])));
            }
        }
    }
}

/// `dependentRequired` as a set of `"name → dependent"` pairs.
pub(super) fn name_pairs(v: &Value) -> Value {
    let Some(map) = v.as_object() else {
        return v.clone();
    };
    let mut out = Vec::new();
    for (k, names) in map {
        for n in names.as_array().into_iter().flatten() {
            out.push(Value::String(format!(
                "{k} → {}",
                n.as_str().unwrap_or_default()
            )));
        }
    }
    Value::Array(out)
}

/// A schema taken apart for the simple containment cases: its `enum` (or `const`), its
/// `type` set, and the rest apart from annotations. `None` when it is not a plain object
/// or holds a `$ref` anywhere (what that means depends on the root it is read in).
pub(super) struct Parts {
    values: Option<Vec<Value>>,
    types: Option<Vec<String>>,
    rest: std::collections::BTreeMap<String, Value>,
}

pub(super) fn parts(s: &Value) -> Option<Parts> {
    let m = s.as_object()?;
    if refers(s) {
        return None;
    }
    let mut rest: std::collections::BTreeMap<String, Value> = m
        .iter()
        .filter(|(k, _)| !keywords::is_annotation(k))
        .map(|(k, x)| (k.clone(), x.clone()))
        .collect();
    let values = match (rest.remove("const"), rest.remove("enum")) {
        (Some(c), None) => Some(vec![c]),
        (None, Some(Value::Array(e))) => Some(e),
        (None, None) => None,
        _ => return None,
    };
    let types = match rest.remove("type") {
        None => None,
        Some(Value::String(t)) => Some(vec![t]),
        Some(Value::Array(ts)) => Some(
            ts.iter()
                .map(|t| t.as_str().map(String::from))
                .collect::<Option<Vec<_>>>()?,
        ),
        Some(_) => return None,
    };
    Some(Parts {
        values,
        types,
        rest,
    })
}

/// Type `t` is within the type set `ts` (an integer is a number).
pub(super) fn type_within(t: &str, ts: &[String]) -> bool {
    ts.iter()
        .any(|x| x == t || (t == "integer" && x == "number"))
}

/// Every value `v` accepts, `s` accepts, by the simple cases: the two are equal apart
/// from annotations, but `v`'s `enum` (or `const`) may be within `s`'s and `v`'s `type`
/// within `s`'s. Anything else: `false` (not known).
pub(super) fn covers(s: &Value, v: &Value) -> bool {
    if let Some((sp, vps)) = one_property_apart(s, &[v]) {
        return covers(sp, vps[0]);
    }
    let (Some(s), Some(v)) = (parts(s), parts(v)) else {
        return false;
    };
    let values_ok = match (&s.values, &v.values) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(sv), Some(vv)) => vv.iter().all(|x| sv.contains(x)),
    };
    let types_ok = match (&s.types, &v.types) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(st), Some(vt)) => vt.iter().all(|t| type_within(t, st)),
    };
    values_ok && types_ok && s.rest == v.rest
}

/// Every value `v` accepts, `s` accepts: `covers`, or `s` is (apart from annotations)
/// some of `v`'s own keywords with the same values, types and listed values within, so
/// `v` only adds constraints. Keywords that read their neighbours
/// (`additionalProperties` sees `properties`, `items` sees `prefixItems`, ...) in `s`
/// make any keyword `v` adds unknown. `false`: not known.
pub(super) fn within(s: &Value, v: &Value) -> bool {
    if covers(s, v) {
        return true;
    }
    let Some(mut sp) = parts(s) else {
        return false;
    };
    drop_noops(&mut sp.rest);
    // `s` constrains nothing but the type (`{type: object, properties: {},
    // additionalProperties: {}}`, zod's record of anything): `v` is within it when `v`'s
    // own `type` is, whatever else `v` says (its other keywords only take values away).
    if sp.values.is_none() && sp.rest.is_empty() {
        let Some(st) = &sp.types else {
            return true;
        };
        return only_types(v).is_some_and(|vt| vt.iter().all(|t| type_within(t, st)));
    }
    let Some(vp) = parts(v) else {
        return false;
    };
    let values_ok = match (&sp.values, &vp.values) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(sv), Some(vv)) => vv.iter().all(|x| sv.contains(x)),
    };
    let types_ok = match (&sp.types, &vp.types) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(st), Some(vt)) => vt.iter().all(|t| type_within(t, st)),
    };
    const READS_NEIGHBOURS: [&str; 7] = [
        "additionalProperties",
        "unevaluatedProperties",
        "items",
        "additionalItems",
        "unevaluatedItems",
        "contains",
        "if",
    ];
    // Every keyword `v` adds takes values away, but OpenAPI's `nullable: true`, which
    // may let null past `type`.
    let adds = vp.rest.keys().any(|k| !sp.rest.contains_key(k));
    if !sp.rest.contains_key("nullable") && vp.rest.get("nullable") == Some(&Value::Bool(true)) {
        return false;
    }
    let rest_ok = sp.rest.iter().all(|(k, x)| vp.rest.get(k) == Some(x))
        && !(adds
            && sp
                .rest
                .keys()
                .any(|k| READS_NEIGHBOURS.contains(&k.as_str())));
    values_ok && types_ok && rest_ok
}

/// The JSON types every value `v` accepts has, by its own `type` (an empty list for
/// `false`, which accepts nothing); `None` when `v` does not say, says it beside a
/// reference (draft-07 ignores the keywords beside `$ref`) or beside OpenAPI's
/// `nullable: true`.
fn only_types(v: &Value) -> Option<Vec<String>> {
    let m = match v {
        Value::Bool(false) => return Some(Vec::new()),
        Value::Object(m) => m,
        _ => return None,
    };
    // OpenAPI's `nullable: true` may let null past `type` too.
    if ["$ref", "$dynamicRef", "$recursiveRef"]
        .iter()
        .any(|k| m.contains_key(*k))
        || m.get("nullable") == Some(&Value::Bool(true))
    {
        return None;
    }
    match m.get("type")? {
        Value::String(t) => Some(vec![t.clone()]),
        Value::Array(ts) => ts.iter().map(|t| t.as_str().map(String::from)).collect(),
        _ => None,
    }
}

/// `rest` (a schema's keywords but its values, types and annotations) without the
/// keywords that constrain nothing as written: `additionalProperties: {}`, `items:
/// true`, `properties` whose every schema is `{}`, `required: []`, `minLength: 0`, ...
/// Some of them still matter to a neighbour (`properties` exempts its names from
/// `additionalProperties`; `unevaluatedProperties` skips what they evaluate): without
/// them a schema can only accept less, never more, so what is within the rest is within
/// the whole.
fn drop_noops(rest: &mut std::collections::BTreeMap<String, Value>) {
    let each_trivial = |v: &Value| {
        v.as_object()
            .is_some_and(|m| m.values().all(|x| trivial(Some(x))))
    };
    rest.retain(|k, v| {
        let noop = match k.as_str() {
            "additionalProperties"
            | "items"
            | "additionalItems"
            | "unevaluatedProperties"
            | "unevaluatedItems" => trivial(Some(v)),
            "propertyNames" => trivial(Some(v)) || any_string(Some(v)),
            "properties" | "patternProperties" | "dependentSchemas" => each_trivial(v),
            "required" => v.as_array().is_some_and(Vec::is_empty),
            "minLength" | "minItems" | "minProperties" => v.as_f64() == Some(0.0),
            _ => false,
        };
        !noop
    });
}

/// `s` accepts exactly what the variants accept together: each variant is within `s`
/// (`covers`), and each of `s`'s values and types is some variant's (`type: [string,
/// number]` against `anyOf: [{type: string}, {type: number}]`).
pub(super) fn split_into(s: &Value, variants: &[&Value]) -> bool {
    // Objects alike but in one property (a tag): the union splits that property.
    if let Some((sp, vps)) = one_property_apart(s, variants) {
        return split_into(sp, &vps);
    }
    if variants.is_empty() || !variants.iter().all(|v| covers(s, v)) {
        return false;
    }
    let (Some(sp), Some(vps)) = (
        parts(s),
        variants
            .iter()
            .map(|v| parts(v))
            .collect::<Option<Vec<_>>>(),
    ) else {
        return false;
    };
    // Each value of `s` (each of its listed values, or else each of its types whole) is
    // some one variant's: value and type together.
    let json_type_within = |x: &Value, ts: &[String]| {
        let t = match x {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        type_within(t, ts)
    };
    match (&sp.values, &sp.types) {
        (Some(values), _) => values.iter().all(|x| {
            vps.iter().any(|p| {
                p.values.as_ref().is_none_or(|vs| vs.contains(x))
                    && p.types.as_ref().is_none_or(|ts| json_type_within(x, ts))
            })
        }),
        (None, Some(types)) => types.iter().all(|t| {
            vps.iter()
                .any(|p| p.values.is_none() && p.types.as_ref().is_none_or(|ts| type_within(t, ts)))
        }),
        (None, None) => vps.iter().any(|p| p.values.is_none() && p.types.is_none()),
    }
}

/// An object's keywords but `properties` and annotations.
type Outer<'a> = std::collections::BTreeMap<&'a String, &'a Value>;

/// Whether `v` holds a reference anywhere (`$ref`, `$dynamicRef`, `$recursiveRef`). A
/// reference reads its own document, so two schemas from two documents are compared by
/// their text only where neither refers anywhere.
fn refers(v: &Value) -> bool {
    let text = v.to_string();
    ["\"$ref\"", "\"$dynamicRef\"", "\"$recursiveRef\""]
        .iter()
        .any(|r| text.contains(r))
}

/// Objects that are the same (apart from annotations, with the same property names)
/// but in the schema of one property: that property's schema in `s` and in each variant.
/// An object accepted by one of them is accepted by another exactly when its value there
/// is, so containment and splitting come down to that one property.
fn one_property_apart<'a>(
    s: &'a Value,
    variants: &[&'a Value],
) -> Option<(&'a Value, Vec<&'a Value>)> {
    let outer = |x: &'a Value| -> Option<(Outer<'a>, &'a Map<String, Value>)> {
        let m = x.as_object()?;
        if refers(x) {
            return None;
        }
        let props = m.get("properties")?.as_object()?;
        let rest = m
            .iter()
            .filter(|(k, _)| *k != "properties" && !keywords::is_annotation(k))
            .collect();
        Some((rest, props))
    };
    let (s_rest, s_props) = outer(s)?;
    let mut apart: Option<&String> = None;
    let mut out = Vec::new();
    for v in variants {
        let (v_rest, v_props) = outer(v)?;
        if v_rest != s_rest || v_props.len() != s_props.len() {
            return None;
        }
        for (name, x) in s_props {
            let y = v_props.get(name)?;
            if x != y && apart.is_some_and(|a| a != name) {
                return None;
            }
            if x != y {
                apart = Some(name);
            }
        }
    }
    let name = apart?;
    for v in variants {
        out.push(v.get("properties")?.get(name)?);
    }
    Some((s.get("properties")?.get(name)?, out))
}

/// Variants no value can match twice (each read in `root`, where their `$ref`s lead):
/// every two of them are `apart`. Then `anyOf` and `oneOf` over them accept the same
/// values, and a change inside one variant cannot make a value match two.
/// Past `SMALL_UNION` variants only the linear checks run (each lists its own values, no
/// value listed twice; or each allows one JSON type no other allows).
pub(super) fn disjoint(root: &Value, variants: &[&Value]) -> bool {
    // Each variant through its `$ref`s; one that still holds a `$ref` beside other
    // keywords is not read here (draft-07 ignores them; `apart` says "may overlap").
    let seen: Vec<&Value> = variants.iter().map(|v| through_refs(root, v)).collect();
    let plain = |v: &Value| v.get("$ref").is_none();
    // Each variant lists its values (`enum` or `const`), and no value is listed twice.
    let listed: Option<Vec<Vec<Value>>> = seen
        .iter()
        .filter(|v| plain(v))
        .map(|v| match (v.get("const"), v.get("enum")) {
            (Some(c), None) => Some(vec![c.clone()]),
            (None, Some(Value::Array(e))) => Some(e.clone()),
            _ => None,
        })
        .collect();
    if let Some(listed) = listed.filter(|l| l.len() == seen.len()) {
        // By text, through a set: a hostile enum of many values costs linear time.
        // Numbers by their value (`1` and `1.0` are one value).
        let mut seen = HashSet::new();
        if listed.iter().flatten().all(|x| seen.insert(value_key(x))) {
            return true;
        }
    }
    let single_type = |v: &Value| -> Option<String> {
        if !plain(v) {
            return None;
        }
        let t = v.get("type")?.as_str()?;
        Some(if t == "integer" {
            "number".into()
        } else {
            t.to_string()
        })
    };
    let types: Option<Vec<String>> = seen.iter().map(|v| single_type(v)).collect();
    if let Some(types) = types {
        let distinct: BTreeSet<&String> = types.iter().collect();
        if distinct.len() == types.len() {
            return true;
        }
    }
    if variants.len() > super::structural::SMALL_UNION {
        return false;
    }
    let mut steps = APART_STEPS;
    variants.iter().enumerate().all(|(i, x)| {
        variants[i + 1..]
            .iter()
            .all(|y| apart(root, x, y, 0, &mut steps))
    })
}

/// Work one `disjoint` question may spend on its pairs (names and values looked at).
const APART_STEPS: usize = 10_000;

/// A value's text with every number written by its value, so `1` and `1.0` meet.
fn value_key(v: &Value) -> String {
    match v {
        // `-0` is `0` (JSON Schema compares numbers by value).
        Value::Number(n) => match n.as_f64() {
            Some(0.0) => "0.0".into(), // (a float pattern matches -0.0 too)
            Some(f) => format!("{f:?}"),
            None => n.to_string(),
        },
        Value::Array(xs) => format!(
            "[{}]",
            xs.iter().map(value_key).collect::<Vec<_>>().join(",")
        ),
        Value::Object(m) => {
            let mut parts: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{k:?}:{}", value_key(x)))
                .collect();
            parts.sort();
            format!("{{{}}}", parts.join(","))
        }
        other => other.to_string(),
    }
}

/// The JSON types an instance may have, as a bit set over null, boolean, object, array,
/// string, integer, and number that is no integer; `None` for a `type` not read.
fn type_bits(s: &Map<String, Value>) -> Option<u8> {
    let bit = |t: &str| match t {
        "null" => Some(1),
        "boolean" => Some(2),
        "object" => Some(4),
        "array" => Some(8),
        "string" => Some(16),
        "integer" => Some(32),
        "number" => Some(32 | 64),
        _ => None,
    };
    match s.get("type") {
        None => Some(127),
        Some(Value::String(t)) => bit(t),
        Some(Value::Array(ts)) => ts
            .iter()
            .try_fold(0, |acc, t| Some(acc | bit(t.as_str()?)?)),
        Some(_) => None,
    }
}

/// The type bit of one instance value (a whole number is an integer).
fn value_bit(x: &Value) -> u8 {
    match x {
        Value::Null => 1,
        Value::Bool(_) => 2,
        Value::Object(_) => 4,
        Value::Array(_) => 8,
        Value::String(_) => 16,
        Value::Number(n) if n.is_i64() || n.is_u64() => 32,
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => 32,
        Value::Number(_) => 64,
    }
}

/// No value matches both `x` and `y`, by what their own keywords say (each is a
/// conjunct, so any of them alone can prove it): no JSON type in common; listed values
/// (`const` / `enum`) none of which the other lists or admits by type; or, when only
/// objects can match both, a property one requires that the other forbids (closed by
/// `additionalProperties: false` without it, or `false` there), or that both require
/// with schemas themselves apart (a discriminator tag). `false` means "may overlap".
fn apart(root: &Value, x: &Value, y: &Value, depth: usize, steps: &mut usize) -> bool {
    let (x, y) = (through_refs(root, x), through_refs(root, y));
    // Bounded work: a hostile union of huge enums or deep tags is "may overlap".
    if *steps == 0 {
        return false;
    }
    *steps -= 1;
    if matches!(x, Value::Bool(false)) || matches!(y, Value::Bool(false)) {
        return true;
    }
    if depth > 8 {
        return false;
    }
    let (Some(mx), Some(my)) = (x.as_object(), y.as_object()) else {
        return false;
    };
    // Beside a `$ref` (what is left after `through_refs`) draft-07 ignores the other
    // keywords: nothing is read from them.
    if mx.contains_key("$ref") || my.contains_key("$ref") {
        return false;
    }
    let (Some(tx), Some(ty)) = (type_bits(mx), type_bits(my)) else {
        return false;
    };
    let common = tx & ty;
    if common == 0 {
        return true;
    }
    let listed = |m: &Map<String, Value>| -> Option<Vec<Value>> {
        match (m.get("const"), m.get("enum")) {
            (Some(c), None) => Some(vec![c.clone()]),
            (None, Some(Value::Array(e))) => Some(e.clone()),
            (Some(c), Some(Value::Array(e))) => Some(
                e.iter()
                    .filter(|v| value_key(v) == value_key(c))
                    .cloned()
                    .collect(),
            ),
            _ => None,
        }
    };
    let (lx, ly) = (listed(mx), listed(my));
    // Values that pass the listing and the type of `m`: none of them passes `other`'s.
    let cost = lx.as_ref().map_or(0, Vec::len) + ly.as_ref().map_or(0, Vec::len);
    if cost > *steps {
        *steps = 0;
        return false;
    }
    *steps -= cost;
    let values_apart = |values: &[Value], others: Option<&Vec<Value>>, other_types: u8| {
        let others: Option<HashSet<String>> = others.map(|o| o.iter().map(value_key).collect());
        values.iter().all(|v| {
            value_bit(v) & other_types == 0
                || others.as_ref().is_some_and(|o| !o.contains(&value_key(v)))
        })
    };
    if let Some(vs) = &lx {
        if values_apart(vs, ly.as_ref(), ty) {
            return true;
        }
    }
    if let Some(vs) = &ly {
        if values_apart(vs, lx.as_ref(), tx) {
            return true;
        }
    }
    // Past here only objects: `required` and `properties` say nothing of other values.
    if common != 4 {
        return false;
    }
    fn required(m: &Map<String, Value>) -> Vec<&str> {
        m.get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
    fn property<'m>(m: &'m Map<String, Value>, name: &str) -> Option<&'m Value> {
        m.get("properties")?.as_object()?.get(name)
    }
    // `m` rejects every object holding `name`.
    let forbids = |m: &Map<String, Value>, name: &str| match property(m, name) {
        Some(p) => matches!(through_refs(root, p), Value::Bool(false)),
        None => {
            matches!(m.get("additionalProperties"), Some(Value::Bool(false)))
                && m.get("patternProperties")
                    .is_none_or(|p| p.as_object().is_some_and(Map::is_empty))
        }
    };
    let (rx, ry) = (required(mx), required(my));
    let cost = rx.len() + ry.len();
    if cost > *steps {
        *steps = 0;
        return false;
    }
    *steps -= cost;
    if rx.iter().any(|n| forbids(my, n)) || ry.iter().any(|n| forbids(mx, n)) {
        return true;
    }
    let both: HashSet<&str> = ry.iter().copied().collect();
    rx.iter()
        .filter(|n| both.contains(*n))
        .any(|n| match (property(mx, n), property(my, n)) {
            (Some(p), Some(q)) => apart(root, p, q, depth + 1, steps),
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn split(s: Value, vs: &[Value]) -> bool {
        split_into(&s, &vs.iter().collect::<Vec<_>>())
    }

    fn apart_all(vs: &[Value]) -> bool {
        let root = json!({"$defs": {"A": {"type": "object", "properties": {"k": {"const": "a"}}, "required": ["k"]}}});
        disjoint(&root, &vs.iter().collect::<Vec<_>>())
    }

    #[test]
    fn variants_are_disjoint_only_when_no_value_can_match_two() {
        let tagged = |t: &str| json!({"type": "object", "properties": {"k": {"type": "string", "const": t}, "n": {}}, "required": ["k"]});
        assert!(apart_all(&[tagged("a"), tagged("b"), tagged("c")]));
        assert!(!apart_all(&[tagged("a"), tagged("a")]));
        // Through a `$ref`.
        assert!(apart_all(&[json!({"$ref": "#/$defs/A"}), tagged("b")]));
        // Beside a `$ref`, draft-07 ignores `type` and `const`: A may be either.
        assert!(!apart_all(&[
            json!({"$ref": "#/$defs/A", "type": "string"}),
            json!({"type": "object"})
        ]));
        assert!(!apart_all(&[
            json!({"$ref": "#/$defs/A", "const": 1}),
            json!({"$ref": "#/$defs/A", "const": 2})
        ]));
        // Without `type: object`, a string matches both: `required` says nothing of it.
        let untyped = |t: &str| json!({"properties": {"k": {"const": t}}, "required": ["k"]});
        assert!(!apart_all(&[untyped("a"), untyped("b")]));
        // A closed object rejects a name the other requires.
        let closed = |n: &str| json!({"type": "object", "properties": {n: {"type": "string"}}, "required": [n], "additionalProperties": false});
        assert!(apart_all(&[closed("path"), closed("url")]));
        // Open objects: {"path": "", "url": ""} matches both.
        let open = |n: &str| json!({"type": "object", "properties": {n: {}}, "required": [n]});
        assert!(!apart_all(&[open("path"), open("url")]));
        // Types: integer is a number; a listed value of another type is apart.
        assert!(!apart_all(&[
            json!({"type": "integer"}),
            json!({"type": ["number", "null"], "maximum": 3})
        ]));
        assert!(apart_all(&[
            json!({"type": ["string", "null"]}),
            json!({"type": "object"}),
            json!({"const": 1})
        ]));
        // 1 and 1.0 are one value.
        assert!(!apart_all(&[
            json!({"const": 1}),
            json!({"enum": [1.0, 2]})
        ]));
        // So are 0 and -0.0.
        assert!(!apart_all(&[json!({"const": 0}), json!({"const": -0.0})]));
        assert!(!apart_all(&[
            json!({"type": "number", "const": -0.0}),
            json!({"type": "integer", "enum": [0, 1]})
        ]));
        assert!(apart_all(&[json!(false), json!({})]));
        assert!(!apart_all(&[json!({}), json!({"type": "string"})]));
    }

    #[test]
    fn a_variant_is_within_a_plain_schema_when_it_only_adds_constraints() {
        let within_ = |s: Value, v: Value| within(&s, &v);
        assert!(within_(
            json!({}),
            json!({"type": "array", "items": {"type": "string"}})
        ));
        assert!(within_(json!({"description": "x"}), json!({"const": 1})));
        assert!(within_(
            json!({"type": "string"}),
            json!({"type": "string", "maxLength": 3})
        ));
        assert!(within_(
            json!({"type": ["string", "null"]}),
            json!({"type": "null"})
        ));
        assert!(!within_(
            json!({"type": "string"}),
            json!({"type": "number"})
        ));
        assert!(!within_(
            json!({"type": "string", "maxLength": 3}),
            json!({"type": "string"})
        ));
        assert!(!within_(json!({"enum": [1, 2]}), json!({"enum": [2, 3]})));
        // `additionalProperties` reads its neighbours: a property the variant declares
        // is no longer additional there.
        assert!(!within_(
            json!({"type": "object", "additionalProperties": false}),
            json!({"type": "object", "additionalProperties": false, "properties": {"a": {}}})
        ));
        assert!(!within_(
            json!({"contains": {"type": "string"}}),
            json!({"contains": {"type": "string"}, "minContains": 0})
        ));
    }

    #[test]
    fn a_schema_that_constrains_only_the_type_holds_every_variant_of_that_type() {
        let within_ = |s: Value, v: Value| within(&s, &v);
        let any_object = json!({"type": "object", "properties": {}, "additionalProperties": {}});
        let stage = json!({"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1},
            "q": {"$ref": "#/$defs/Q"}}, "required": ["limit"]});
        assert!(within_(any_object.clone(), stage.clone()));
        assert!(within_(
            json!({"type": ["object", "null"], "required": []}),
            stage.clone()
        ));
        assert!(within_(
            json!({"properties": {"a": true}, "minLength": 0}),
            json!({"$ref": "#/x"})
        ));
        assert!(within_(
            json!({"type": "number"}),
            json!({"type": "integer", "maximum": 3})
        ));
        assert!(within_(any_object.clone(), json!(false)));
        // Not of that type, or not saying.
        assert!(!within_(
            any_object.clone(),
            json!({"type": ["object", "string"]})
        ));
        assert!(!within_(
            any_object.clone(),
            json!({"properties": {"a": {}}})
        ));
        assert!(!within_(any_object.clone(), json!(true)));
        assert!(!within_(
            json!({"type": "string"}),
            json!({"type": "string", "nullable": true})
        ));
        // Beside a `$ref`, draft-07 ignores `type`: the target may be anything.
        assert!(!within_(
            any_object.clone(),
            json!({"$ref": "#/x", "type": "object"})
        ));
        // Constraints that are not no-ops stay.
        assert!(!within_(
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            stage.clone()
        ));
        assert!(!within_(
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false}),
            json!({"type": "object", "properties": {"b": {}}})
        ));
        assert!(!within_(
            json!({"type": "object", "minProperties": 1}),
            stage.clone()
        ));
        assert!(!within_(
            json!({"type": "array", "contains": {}}),
            json!({"type": "array"})
        ));
    }

    #[test]
    fn a_union_splits_a_plain_schema_only_when_value_and_type_meet_in_one_variant() {
        let ab = json!({"type": "string", "enum": ["a", "b"]});
        assert!(split(
            ab.clone(),
            &[
                json!({"type": "string", "enum": ["a"]}),
                json!({"type": "string", "const": "b"})
            ]
        ));
        assert!(!split(ab, &[json!({"type": "string", "enum": ["a"]})]));
        assert!(split(
            json!({"type": ["string", "number"]}),
            &[json!({"type": "string"}), json!({"type": "number"})]
        ));
        // Integers are numbers, not the other way round.
        assert!(!split(
            json!({"type": ["string", "number"]}),
            &[json!({"type": "string"}), json!({"type": "integer"})]
        ));
        // 1 is listed by one variant and typed by another: no variant accepts it.
        assert!(!split(
            json!({"type": ["string", "integer"], "enum": ["a", 1]}),
            &[
                json!({"type": "string", "enum": ["a", 1]}),
                json!({"type": "integer", "enum": ["a"]})
            ]
        ));
        // A variant that constrains anything else is not within the plain schema.
        assert!(!split(
            json!({"type": "string"}),
            &[
                json!({"type": "string", "maxLength": 3}),
                json!({"type": "string"})
            ]
        ));
        assert!(!split(
            json!({"type": "string", "enum": ["a"]}),
            &[json!({"type": "string"})]
        ));
        // Closed objects alike but in their tag: the one object with every tag value.
        let tagged = |tags: Value| {
            json!({"type": "object", "properties": {"type": {"type": "string", "enum": tags},
                   "n": {"type": "integer"}}, "required": ["type"], "additionalProperties": false})
        };
        assert!(split(
            tagged(json!(["web", "news"])),
            &[tagged(json!(["web"])), tagged(json!(["news"]))]
        ));
        assert!(!split(
            tagged(json!(["web", "news"])),
            &[tagged(json!(["web"]))]
        ));
        // Apart in two properties: not a split (a web object with n = "x" is in neither).
        let mut other = tagged(json!(["news"]));
        other["properties"]["n"] = json!({"type": "string"});
        assert!(!split(
            tagged(json!(["web", "news"])),
            &[tagged(json!(["web"])), other]
        ));
    }
}
