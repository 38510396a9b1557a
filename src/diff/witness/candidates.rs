//! Candidate values at one node: what the source schema allows there, pushed towards
//! the target's edges (its bounds, the values it lacks, the properties it does not
//! know, the positions it no longer has).

use serde_json::{Map, Value};

use crate::diff::walker::resolve;
use crate::schema::pattern::{Pattern, MAX_INCLUSION_STEPS};

/// Candidates tried per change, and validator steps per candidate: a witness is a
/// convenience, never a reason for a slow or unbounded check.
pub(super) const MAX_CANDIDATES: usize = 400;

/// Builds the candidates for one change: the roots of the source (0) and the target
/// (1), and how many nodes it has made candidates for (bounded by `MAX_CANDIDATES`).
pub(super) struct Gen<'a> {
    pub(super) roots: [&'a Value; 2],
    pub(super) made: usize,
    /// Also try the names only a variant or conditional declares (see `objects`): a
    /// second round, when the first found no witness.
    pub(super) variant_names: bool,
}

/// A sample string for a format, valid in it.
pub(super) fn format_sample(f: &str) -> Option<&'static str> {
    Some(match f {
        "date-time" => "2024-01-01T00:00:00Z",
        "date" => "2024-01-01",
        "time" => "00:00:00Z",
        "email" | "idn-email" => "a@example.com",
        "uri" | "iri" => "https://example.com/",
        "uri-reference" | "iri-reference" => "/a",
        "uuid" => "00000000-0000-0000-0000-000000000000",
        "ipv4" => "192.0.2.1",
        "ipv6" => "2001:db8::1",
        "hostname" | "idn-hostname" => "example.com",
        _ => return None,
    })
}

/// A shortest string the source's `pattern` matches (any string, without one) and the
/// target's does not, when both patterns are within the regex engine and it is found
/// within a tenth of the verdict's step budget (a candidate, tried per node).
fn pattern_difference(src: &Value, tgt: Option<&Value>) -> Option<String> {
    let pattern = |s: &Value| s.get("pattern").and_then(Value::as_str).map(str::to_owned);
    let theirs = Pattern::parse(&pattern(tgt?)?)?;
    let ours = Pattern::parse(&pattern(src).unwrap_or_default())?;
    ours.difference(&theirs, MAX_INCLUSION_STEPS / 10).flatten()
}

impl<'a> Gen<'a> {
    /// `s` and the subschemas in it that constrain the same value, through `$ref`s.
    fn nested(&self, side: usize, s: &'a Value) -> Vec<&'a Value> {
        let mut out = vec![s];
        let mut i = 0;
        while i < out.len() && out.len() < 32 {
            let cur = out[i];
            i += 1;
            for kw in ["allOf", "anyOf", "oneOf"] {
                if let Some(Value::Array(vs)) = cur.get(kw) {
                    out.extend(vs.iter().take(8).map(|v| self.deref(side, v)));
                }
            }
            for kw in ["not", "if", "then", "else"] {
                if let Some(v) = cur.get(kw) {
                    out.push(self.deref(side, v));
                }
            }
            // A `$ref` beside other keywords applies on its own, as an `allOf` member
            // would (2020-12); `deref` only looks through a `$ref` that stands alone.
            if cur.as_object().is_some_and(|m| m.len() > 1) {
                let target = cur
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| resolve(self.roots[side], r));
                let target = target.map(|t| self.deref(side, t));
                // (A `$ref` back to a schema already here adds nothing.)
                out.extend(target.filter(|t| !out.iter().any(|o| std::ptr::eq(*o, *t))));
            }
        }
        out.truncate(32);
        out
    }

    /// Candidate values at one node: what the source schema allows there, pushed
    /// towards the target's edges (its bounds, the values it lacks, the properties
    /// it does not know, the positions it no longer has).
    pub(super) fn values(
        &mut self,
        src: &'a Value,
        tgt: Option<&'a Value>,
        depth: usize,
    ) -> Vec<Value> {
        self.made += 1;
        if depth > 12 || self.made > MAX_CANDIDATES {
            return Vec::new();
        }
        let src = self.deref(0, src);
        let tgt = tgt.map(|t| self.deref(1, t));
        // The node's schemas and the ones nested in it that constrain the same value
        // (`allOf`, `not`, `if`/`then`/`else`, ...): their edges are the candidates.
        let mut both: Vec<Option<&'a Value>> = self.nested(0, src).into_iter().map(Some).collect();
        if let Some(t) = tgt {
            both.extend(self.nested(1, t).into_iter().map(Some));
        }
        let mut out: Vec<Value> = Vec::new();
        for s in both.iter().flatten() {
            for k in ["const", "default"] {
                if let Some(v) = s.get(k) {
                    out.push(v.clone());
                }
            }
            for k in ["enum", "examples"] {
                if let Some(Value::Array(vs)) = s.get(k) {
                    out.extend(vs.iter().take(32).cloned());
                }
            }
        }
        // Variants of the source (and their merge with the node's own keywords).
        for kw in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(vs)) = src.get(kw) {
                for v in vs.iter().take(8) {
                    out.extend(self.values(v, None, depth + 1));
                }
            }
        }
        let mut types: Vec<String> = types_of(src);
        for t in tgt.map(types_of).unwrap_or_default() {
            if !types.contains(&t) {
                types.push(t);
            }
        }
        let num = |s: Option<&Value>, k: &str| s.and_then(|s| s.get(k)).and_then(Value::as_f64);
        for t in &types {
            match t.as_str() {
                "null" => out.push(Value::Null),
                "boolean" => out.extend([Value::Bool(true), Value::Bool(false)]),
                "integer" | "number" => {
                    let mut ns = vec![0.0, 1.0, -1.0, 1e9, -1e9];
                    for s in both.iter() {
                        for k in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
                            if let Some(b) = num(*s, k) {
                                ns.extend([b, b - 1.0, b + 1.0, b.floor(), b.ceil()]);
                            }
                        }
                        if let Some(d) = num(*s, "multipleOf") {
                            ns.extend([d, 2.0 * d, 3.0 * d, 5.0 * d]);
                        }
                    }
                    if t == "number" {
                        ns.extend([0.5, 1.5]);
                    }
                    out.extend(ns.into_iter().map(number));
                }
                "string" => {
                    let mut lens = vec![0usize, 1, 3];
                    for s in both.iter() {
                        for k in ["minLength", "maxLength"] {
                            if let Some(n) = num(*s, k) {
                                let n = n.clamp(0.0, 4096.0) as usize;
                                lens.extend([n, n + 1, n.saturating_sub(1)]);
                            }
                        }
                    }
                    out.extend(lens.into_iter().map(|n| Value::String("a".repeat(n))));
                    for s in both.iter().flatten() {
                        if let Some(f) = s
                            .get("format")
                            .and_then(Value::as_str)
                            .and_then(format_sample)
                        {
                            out.push(Value::String(f.into()));
                        }
                        let pattern = s
                            .get("pattern")
                            .and_then(Value::as_str)
                            .and_then(Pattern::parse);
                        for sample in pattern.map(|p| p.samples()).unwrap_or_default() {
                            out.push(Value::String(sample));
                        }
                    }
                    out.extend(pattern_difference(src, tgt).map(Value::String));
                    out.extend(
                        [
                            "2024-01-01",
                            "2024-01-01T00:00:00Z",
                            "a@example.com",
                            "https://example.com/",
                        ]
                        .map(|s| Value::String(s.into())),
                    );
                }
                "array" => out.extend(self.arrays(src, tgt, depth)),
                "object" => out.extend(self.objects(src, tgt, depth)),
                _ => {}
            }
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|v| seen.insert(v.to_string()));
        out
    }

    fn arrays(&mut self, src: &'a Value, tgt: Option<&'a Value>, depth: usize) -> Vec<Value> {
        let base = self.minimal(src, depth);
        let base = base.as_array().cloned().unwrap_or_default();
        let mut out = vec![Value::Array(base.clone()), Value::Array(Vec::new())];
        let item_schema = src
            .get("items")
            .filter(|i| !i.is_array())
            .or_else(|| src.get("contains"));
        let t_item = tgt.and_then(|t| {
            t.get("items")
                .filter(|i| !i.is_array())
                .or_else(|| t.get("contains"))
        });
        let items: Vec<Value> = match item_schema {
            Some(s) => self.values(s, t_item, depth + 1),
            None => vec![Value::String("a".into()), Value::from(1), Value::Null],
        };
        let (min, max) = (
            src.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize,
            tgt.and_then(|t| t.get("maxItems"))
                .and_then(Value::as_u64)
                .map(|n| n as usize + 1),
        );
        for item in items.iter().take(24) {
            let n = min.clamp(1, 8);
            out.push(Value::Array(vec![item.clone(); n]));
            let mut longer = base.clone();
            longer.push(item.clone());
            out.push(Value::Array(longer));
        }
        if let (Some(m), Some(first)) = (max, items.first()) {
            if m <= 64 {
                out.push(Value::Array(vec![first.clone(); m]));
            }
        }
        // Lengths at the edges of either side's counts.
        let mut counts = Vec::new();
        for s in [Some(src), tgt].into_iter().flatten() {
            for k in ["minItems", "maxItems", "minContains", "maxContains"] {
                if let Some(n) = s.get(k).and_then(Value::as_u64).filter(|&n| n <= 64) {
                    counts.extend([n as usize, n as usize + 1, (n as usize).saturating_sub(1)]);
                }
            }
        }
        for item in items.iter().take(4) {
            for &n in &counts {
                out.push(Value::Array(vec![item.clone(); n]));
            }
        }
        // Distinct items, for a new `uniqueItems`.
        if items.len() >= 2 {
            out.push(Value::Array(vec![items[0].clone(), items[0].clone()]));
        }
        // Tuples: every position minimal, then one more position.
        for s in [Some(src), tgt].into_iter().flatten() {
            let tuple = s
                .get("prefixItems")
                .or_else(|| s.get("items").filter(|i| i.is_array()));
            if let Some(Value::Array(ps)) = tuple {
                let mut a: Vec<Value> = ps
                    .iter()
                    .take(16)
                    .map(|p| self.minimal(p, depth + 1))
                    .collect();
                out.push(Value::Array(a.clone()));
                for extra in [Value::from(1), Value::String("a".into()), Value::Null] {
                    a.push(extra);
                    out.push(Value::Array(a.clone()));
                    a.pop();
                }
            }
        }
        out
    }

    fn objects(&mut self, src: &'a Value, tgt: Option<&'a Value>, depth: usize) -> Vec<Value> {
        let base = self.minimal(src, depth);
        let base = base.as_object().cloned().unwrap_or_default();
        let mut out = vec![Value::Object(base.clone())];
        let names = property_names(src, tgt);
        out.extend(object_edges(src, tgt, &base));
        self.named_properties(src, tgt, &names, &base, depth, &mut out);
        // A name only a variant declares or requires: only in the second round (these
        // small candidates would sort ahead of the first round's and crowd them out).
        if !self.variant_names {
            return out;
        }
        self.variant_properties(src, tgt, &names, &base, depth, &mut out);
        out
    }

    /// Objects with each known property (of `names`) holding each of its candidates, an
    /// unknown name beside what the source needs (and what the target needs), a name
    /// each pattern of either side matches, and every optional property at once.
    fn named_properties(
        &mut self,
        src: &'a Value,
        tgt: Option<&'a Value>,
        names: &[String],
        base: &Map<String, Value>,
        depth: usize,
        out: &mut Vec<Value>,
    ) {
        // Each known property with each of its candidates; an unknown one too.
        for name in names.iter().take(32) {
            let s_sub = properties(Some(src)).and_then(|p| p.get(name));
            let t_sub = properties(tgt).and_then(|p| p.get(name));
            let vals = match s_sub {
                Some(s) => self.values(s, t_sub, depth + 1),
                None => match t_sub {
                    Some(t) => {
                        let mut v = self.values(&Value::Bool(true), Some(t), depth + 1);
                        v.push(Value::String("a".into()));
                        v
                    }
                    None => vec![Value::String("a".into())],
                },
            };
            for v in vals.into_iter().take(24) {
                let mut o = base.clone();
                o.insert(name.clone(), v);
                out.push(Value::Object(o));
            }
        }
        // An unknown name, beside what the source needs (and what the target needs).
        for b in self.bases(Value::Object(base.clone()), tgt, depth) {
            let mut o = b.as_object().cloned().unwrap_or_default();
            o.insert("x_witness".into(), Value::String("a".into()));
            out.push(Value::Object(o));
        }
        // A name each pattern of either side matches, with values its schema allows.
        for s in [Some(src), tgt].into_iter().flatten() {
            let patterns = s.get("patternProperties").and_then(Value::as_object);
            for (p, ps) in patterns.into_iter().flatten().take(8) {
                let sample = Pattern::parse(p).and_then(|p| p.samples().into_iter().next());
                let Some(name) = sample else { continue };
                for v in self.values(ps, None, depth + 1).into_iter().take(12) {
                    let mut o = base.clone();
                    o.insert(name.clone(), v);
                    out.push(Value::Object(o));
                }
            }
        }
        // Every optional property at once (for min/maxProperties, dependencies).
        let mut all = base.clone();
        for name in names.iter().take(32) {
            if !all.contains_key(name) {
                let s = properties(Some(src))
                    .and_then(|p| p.get(name))
                    .unwrap_or(&Value::Bool(true));
                let v = self.minimal(s, depth + 1);
                all.insert(name.clone(), v);
            }
        }
        out.push(Value::Object(all));
    }

    /// A name only a variant declares or requires (an `allOf`/`anyOf`/`oneOf` member or
    /// a conditional, through `$ref`s, on either side), not among `names`, beside what
    /// the source needs: the instance may match two overlapping `oneOf` variants where
    /// it matched one. A few plain values each.
    fn variant_properties(
        &mut self,
        src: &'a Value,
        tgt: Option<&'a Value>,
        names: &[String],
        base: &Map<String, Value>,
        depth: usize,
        out: &mut Vec<Value>,
    ) {
        // (side, schema): a target's subschema resolves its `$ref`s in the target.
        let mut nested: Vec<(usize, &'a Value)> = self
            .nested(0, src)
            .into_iter()
            .skip(1)
            .map(|s| (0, s))
            .collect();
        if let Some(t) = tgt {
            nested.extend(self.nested(1, t).into_iter().skip(1).map(|s| (1, s)));
        }
        let mut extra: Vec<(String, usize, &'a Value)> = Vec::new();
        for (side, s) in nested {
            let declared = properties(Some(s))
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.as_str(), v));
            let required = s
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(|k| (k, &Value::Bool(true)));
            for (k, sub) in declared.chain(required) {
                if !names.iter().any(|n| n == k) && !extra.iter().any(|(n, ..)| n == k) {
                    extra.push((k.to_string(), side, sub));
                }
            }
        }
        for (name, side, sub) in extra.into_iter().take(16) {
            let minimal = self.minimal_in(side, sub, depth + 1);
            for v in [minimal, Value::String("a".into()), Value::from(0)] {
                let mut o = base.clone();
                o.insert(name.clone(), v);
                out.push(Value::Object(o));
            }
        }
    }
}

/// The `properties` schema `s` declares.
fn properties(s: Option<&Value>) -> Option<&Map<String, Value>> {
    s.and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
}

/// The property names either side speaks of, each once: those it declares, those it
/// requires, and those its dependencies speak of.
fn property_names(src: &Value, tgt: Option<&Value>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for p in [properties(Some(src)), properties(tgt)]
        .into_iter()
        .flatten()
    {
        for k in p.keys() {
            if !names.contains(k) {
                names.push(k.clone());
            }
        }
    }
    for s in [Some(src), tgt].into_iter().flatten() {
        for k in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(k) = k.as_str() {
                if !names.iter().any(|n| n == k) {
                    names.push(k.to_string());
                }
            }
        }
    }
    // Names that dependencies speak of.
    for s in [Some(src), tgt].into_iter().flatten() {
        for kw in ["dependentRequired", "dependentSchemas", "dependencies"] {
            for (k, v) in s.get(kw).and_then(Value::as_object).into_iter().flatten() {
                let listed = v.as_array().into_iter().flatten().filter_map(Value::as_str);
                for n in std::iter::once(k.as_str()).chain(listed) {
                    if !names.iter().any(|x| x == n) {
                        names.push(n.to_string());
                    }
                }
            }
        }
    }
    names
}

/// Objects at the edges of `src`'s and `tgt`'s object keywords, around `base` (what the
/// source needs): each dependency's trigger with only the source's dependents, sizes at
/// the edges of either side's property counts, and each required property left out.
fn object_edges(src: &Value, tgt: Option<&Value>, base: &Map<String, Value>) -> Vec<Value> {
    let mut out = Vec::new();
    // Each dependency's trigger with only the source's dependents.
    for (k, v) in src
        .get("dependentRequired")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let mut o = base.clone();
        o.insert(k.clone(), Value::String("a".into()));
        for n in v.as_array().into_iter().flatten().filter_map(Value::as_str) {
            o.insert(n.to_string(), Value::String("a".into()));
        }
        out.push(Value::Object(o));
    }
    // Sizes at the edges of either side's property counts.
    for s in [Some(src), tgt].into_iter().flatten() {
        for k in ["minProperties", "maxProperties"] {
            if let Some(n) = s.get(k).and_then(Value::as_u64).filter(|&n| n <= 64) {
                for size in [n, n + 1, n.saturating_sub(1)] {
                    let mut o = base.clone();
                    let mut i = 0;
                    while (o.len() as u64) < size {
                        o.insert(format!("x_witness{i}"), Value::String("a".into()));
                        i += 1;
                    }
                    out.push(Value::Object(o));
                }
            }
        }
    }
    // Leave each required property out (for one the target newly requires).
    for k in base.keys() {
        let mut o = base.clone();
        o.remove(k);
        out.push(Value::Object(o));
    }
    out
}

/// The types a schema allows, most specific first; inferred from its keywords when it
/// has no `type`.
pub(super) fn types_of(s: &Value) -> Vec<String> {
    match s.get("type") {
        Some(Value::String(t)) => return vec![t.clone()],
        Some(Value::Array(ts)) => {
            return ts
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        }
        _ => {}
    }
    let has = |ks: &[&str]| ks.iter().any(|k| s.get(*k).is_some());
    let mut out = Vec::new();
    if has(&[
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
    ]) {
        out.push("object".to_string());
    }
    if has(&[
        "items",
        "prefixItems",
        "contains",
        "minItems",
        "maxItems",
        "uniqueItems",
        "unevaluatedItems",
    ]) {
        out.push("array".to_string());
    }
    if has(&["minLength", "maxLength", "pattern", "format"]) {
        out.push("string".to_string());
    }
    if has(&[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ]) {
        out.push("number".to_string());
    }
    if out.is_empty() {
        out = [
            "string", "integer", "object", "array", "boolean", "null", "number",
        ]
        .map(str::to_string)
        .to_vec();
    }
    out
}

pub(super) fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Value::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}
