//! The small three-valued validator: whether a schema accepts an instance, `Yes`,
//! `No` or `Unknown` when it cannot tell (a pattern outside the small engine, an
//! unresolvable `$ref`, a format it does not check), so no guess ever proves a break.

use serde_json::{Map, Value};

use super::pattern::Pattern;
use super::resolve;

/// Validator steps for one instance: a check never runs unbounded.
const MAX_STEPS: usize = 20_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Truth {
    Yes,
    No,
    Unknown,
}

impl Truth {
    fn and(self, other: Truth) -> Truth {
        match (self, other) {
            (Truth::No, _) | (_, Truth::No) => Truth::No,
            (Truth::Unknown, _) | (_, Truth::Unknown) => Truth::Unknown,
            _ => Truth::Yes,
        }
    }
    fn or(self, other: Truth) -> Truth {
        match (self, other) {
            (Truth::Yes, _) | (_, Truth::Yes) => Truth::Yes,
            (Truth::Unknown, _) | (_, Truth::Unknown) => Truth::Unknown,
            _ => Truth::No,
        }
    }
    fn not(self) -> Truth {
        match self {
            Truth::Yes => Truth::No,
            Truth::No => Truth::Yes,
            Truth::Unknown => Truth::Unknown,
        }
    }
    fn of(b: bool) -> Truth {
        if b {
            Truth::Yes
        } else {
            Truth::No
        }
    }
}

/// Whether `schema` (its own root for `$ref`s) accepts `x`.
pub fn validate(schema: &Value, x: &Value) -> Truth {
    let mut v = Validator {
        root: schema,
        steps: 0,
    };
    v.check(schema, x, 0)
}

struct Validator<'a> {
    root: &'a Value,
    steps: usize,
}

fn type_matches(t: &str, x: &Value) -> bool {
    match t {
        "null" => x.is_null(),
        "boolean" => x.is_boolean(),
        "object" => x.is_object(),
        "array" => x.is_array(),
        "string" => x.is_string(),
        "number" => x.is_number(),
        "integer" => x.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    }
}

/// JSON equality with numbers compared by value (1 == 1.0).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// The keywords on any instance: `type` (with OpenAPI's `nullable`), `enum`, `const`.
fn any_instance(m: &Map<String, Value>, k: &str, v: &Value, x: &Value) -> Truth {
    match k {
        // OpenAPI's `nullable` is not JSON Schema: whether null passes is undecided.
        "type" if x.is_null() && m.get("nullable") == Some(&Value::Bool(true)) => Truth::Unknown,
        "type" => match v {
            Value::String(t) => Truth::of(type_matches(t, x)),
            Value::Array(ts) => Truth::of(
                ts.iter()
                    .any(|t| t.as_str().is_some_and(|t| type_matches(t, x))),
            ),
            _ => Truth::Unknown,
        },
        "enum" => match v {
            Value::Array(vs) => Truth::of(vs.iter().any(|e| same(e, x))),
            _ => Truth::Unknown,
        },
        "const" => Truth::of(same(v, x)),
        // `nullable` widens `type`; handled there as OpenAPI does not
        _ => Truth::Yes,
    }
}

/// The numeric keywords: `multipleOf` and the bounds.
fn numeric(k: &str, v: &Value, x: &Value) -> Truth {
    let Some(n) = x.as_f64() else {
        return Truth::Yes;
    };
    if k == "multipleOf" {
        return match v.as_f64() {
            Some(d) if d > 0.0 => {
                let q = n / d;
                Truth::of((q - q.round()).abs() < 1e-9)
            }
            _ => Truth::Unknown,
        };
    }
    let Some(b) = v.as_f64() else {
        return Truth::Unknown; // draft-04 boolean form
    };
    Truth::of(match k {
        "minimum" => n >= b,
        "maximum" => n <= b,
        "exclusiveMinimum" => n > b,
        _ => n < b,
    })
}

/// The string keywords: `minLength`, `maxLength`, `pattern`, `format`.
fn string(k: &str, v: &Value, x: &Value) -> Truth {
    let Some(s) = x.as_str() else {
        return Truth::Yes;
    };
    match k {
        "minLength" | "maxLength" => {
            let Some(b) = v.as_u64() else {
                return Truth::Unknown;
            };
            let n = s.chars().count() as u64;
            Truth::of(if k == "minLength" { n >= b } else { n <= b })
        }
        "pattern" => match v.as_str().and_then(Pattern::parse) {
            Some(p) => match p.matches(s) {
                Some(m) => Truth::of(m),
                None => Truth::Unknown,
            },
            // A feature outside the small engine's subset: undecided.
            None => Truth::Unknown,
        },
        // `format`
        _ => match v.as_str() {
            Some(f) => format_check(f, s),
            None => Truth::Unknown,
        },
    }
}

impl Validator<'_> {
    fn check(&mut self, s: &Value, x: &Value, depth: usize) -> Truth {
        self.steps += 1;
        if self.steps > MAX_STEPS || depth > 64 {
            return Truth::Unknown;
        }
        let m = match s {
            Value::Bool(b) => return Truth::of(*b),
            Value::Object(m) => m,
            _ => return Truth::Unknown,
        };
        let mut t = Truth::Yes;
        for (k, v) in m {
            let r = self.keyword(m, k, v, x, depth);
            t = t.and(r);
            if t == Truth::No {
                return t;
            }
        }
        t
    }

    /// One keyword of `m` on `x`, by its family: each family's keywords constrain one
    /// kind of instance (numbers, strings, arrays, objects) and pass any other; the
    /// applicators and `$ref` check subschemas.
    fn keyword(
        &mut self,
        m: &Map<String, Value>,
        k: &str,
        v: &Value,
        x: &Value,
        depth: usize,
    ) -> Truth {
        match k {
            "$ref" => match v.as_str().and_then(|r| resolve(self.root, r)) {
                Some(target) => self.check(target, x, depth + 1),
                None => Truth::Unknown,
            },
            "$dynamicRef" => Truth::Unknown,
            "type" | "enum" | "const" | "nullable" => any_instance(m, k, v, x),
            "multipleOf" | "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                numeric(k, v, x)
            }
            "minLength" | "maxLength" | "pattern" | "format" => string(k, v, x),
            "minItems" | "maxItems" | "uniqueItems" | "items" | "prefixItems"
            | "additionalItems" | "contains" | "minContains" | "maxContains" => {
                self.array(m, k, v, x, depth)
            }
            "minProperties"
            | "maxProperties"
            | "required"
            | "dependentRequired"
            | "dependentSchemas"
            | "dependencies"
            | "properties"
            | "patternProperties"
            | "additionalProperties"
            | "propertyNames" => self.object(m, k, v, x, depth),
            "unevaluatedProperties" | "unevaluatedItems" => self.unevaluated(m, k, v, x, depth),
            "allOf" | "anyOf" | "oneOf" | "not" | "if" => self.applicator(m, k, v, x, depth),
            // Annotations, identifiers, definitions, `then`/`else` (with `if`), and
            // vendor extensions constrain nothing.
            _ => {
                if crate::keywords::get(k).is_some() || k.starts_with("x-") {
                    Truth::Yes
                } else {
                    Truth::Unknown
                }
            }
        }
    }

    /// The array keywords: `minItems`, `maxItems`, `uniqueItems`, the item keywords and
    /// `contains` with its bounds.
    fn array(
        &mut self,
        m: &Map<String, Value>,
        k: &str,
        v: &Value,
        x: &Value,
        depth: usize,
    ) -> Truth {
        match k {
            "minItems" | "maxItems" => {
                let (Some(a), Some(b)) = (x.as_array(), v.as_u64()) else {
                    return if x.is_array() {
                        Truth::Unknown
                    } else {
                        Truth::Yes
                    };
                };
                let n = a.len() as u64;
                Truth::of(if k == "minItems" { n >= b } else { n <= b })
            }
            "uniqueItems" => match (x.as_array(), v.as_bool()) {
                (Some(a), Some(true)) => {
                    Truth::of((0..a.len()).all(|i| (i + 1..a.len()).all(|j| !same(&a[i], &a[j]))))
                }
                _ => Truth::Yes,
            },
            "items" | "prefixItems" | "additionalItems" => self.items(m, k, x, depth),
            // `contains`, `minContains`, `maxContains`
            _ => {
                if k != "contains" && m.contains_key("contains") {
                    return Truth::Yes; // checked with `contains`
                }
                self.contains(m, x, depth)
            }
        }
    }

    /// `contains` with `minContains` and `maxContains`: how many items it accepts.
    fn contains(&mut self, m: &Map<String, Value>, x: &Value, depth: usize) -> Truth {
        let Some(a) = x.as_array() else {
            return Truth::Yes;
        };
        let Some(c) = m.get("contains") else {
            return Truth::Yes;
        };
        let mut yes = 0u64;
        let mut unknown = 0u64;
        for item in a {
            match self.check(c, item, depth + 1) {
                Truth::Yes => yes += 1,
                Truth::Unknown => unknown += 1,
                Truth::No => {}
            }
        }
        let min = m.get("minContains").and_then(Value::as_u64).unwrap_or(1);
        let max = m.get("maxContains").and_then(Value::as_u64);
        let ok = |n: u64| n >= min && max.is_none_or(|mx| n <= mx);
        if unknown == 0 {
            Truth::of(ok(yes))
        } else if (yes..=yes + unknown).all(ok) {
            Truth::Yes
        } else if (yes..=yes + unknown).any(ok) {
            Truth::Unknown
        } else {
            Truth::No
        }
    }

    /// The object keywords: property counts, `required`, the dependent keywords, the
    /// property keywords and `propertyNames`.
    fn object(
        &mut self,
        m: &Map<String, Value>,
        k: &str,
        v: &Value,
        x: &Value,
        depth: usize,
    ) -> Truth {
        match k {
            "minProperties" | "maxProperties" => {
                let (Some(o), Some(b)) = (x.as_object(), v.as_u64()) else {
                    return if x.is_object() {
                        Truth::Unknown
                    } else {
                        Truth::Yes
                    };
                };
                let n = o.len() as u64;
                Truth::of(if k == "minProperties" { n >= b } else { n <= b })
            }
            "required" => match (x.as_object(), v.as_array()) {
                (Some(o), Some(names)) => Truth::of(
                    names
                        .iter()
                        .all(|n| n.as_str().is_some_and(|n| o.contains_key(n))),
                ),
                (None, _) => Truth::Yes,
                _ => Truth::Unknown,
            },
            "dependentRequired" | "dependentSchemas" | "dependencies" => {
                self.dependent(k, v, x, depth)
            }
            "properties" | "patternProperties" | "additionalProperties" => {
                if k != "properties" && m.contains_key("properties") {
                    return Truth::Yes; // checked with `properties`
                }
                if k == "additionalProperties" && m.contains_key("patternProperties") {
                    return Truth::Yes; // checked with `patternProperties`
                }
                self.properties(m, x, depth)
            }
            // `propertyNames`
            _ => match x.as_object() {
                Some(o) => {
                    let mut t = Truth::Yes;
                    for key in o.keys() {
                        t = t.and(self.check(v, &Value::String(key.clone()), depth + 1));
                    }
                    t
                }
                None => Truth::Yes,
            },
        }
    }

    /// `dependentRequired`, `dependentSchemas` and draft-07's `dependencies` (either):
    /// what a present property asks of the object.
    fn dependent(&mut self, k: &str, v: &Value, x: &Value, depth: usize) -> Truth {
        match k {
            "dependentRequired" => match (x.as_object(), v.as_object()) {
                (Some(o), Some(deps)) => {
                    let mut t = Truth::Yes;
                    for (name, needs) in deps {
                        if o.contains_key(name) {
                            let ok = needs.as_array().is_some_and(|ns| {
                                ns.iter()
                                    .all(|n| n.as_str().is_some_and(|n| o.contains_key(n)))
                            });
                            t = t.and(Truth::of(ok));
                        }
                    }
                    t
                }
                (None, _) => Truth::Yes,
                _ => Truth::Unknown,
            },
            // `dependentSchemas`, `dependencies`
            _ => match (x.as_object(), v.as_object()) {
                (Some(o), Some(deps)) => {
                    let mut t = Truth::Yes;
                    for (name, dep) in deps {
                        if !o.contains_key(name) {
                            continue;
                        }
                        let r = match dep {
                            Value::Array(ns) => Truth::of(
                                ns.iter()
                                    .all(|n| n.as_str().is_some_and(|n| o.contains_key(n))),
                            ),
                            schema => self.check(schema, x, depth + 1),
                        };
                        t = t.and(r);
                    }
                    t
                }
                (None, _) => Truth::Yes,
                _ => Truth::Unknown,
            },
        }
    }

    /// `unevaluatedProperties` and `unevaluatedItems`: exact only where nothing but the
    /// plain keywords evaluates, as `additionalProperties` and the item keywords.
    fn unevaluated(
        &mut self,
        m: &Map<String, Value>,
        k: &str,
        v: &Value,
        x: &Value,
        depth: usize,
    ) -> Truth {
        let composed = ["allOf", "anyOf", "oneOf", "if", "$ref", "dependentSchemas"]
            .iter()
            .any(|c| m.contains_key(*c));
        let trivial = matches!(v, Value::Bool(true)) || v.as_object().is_some_and(|o| o.is_empty());
        if trivial {
            Truth::Yes
        } else if composed {
            Truth::Unknown
        } else if k == "unevaluatedProperties" {
            let mut mm = m.clone();
            mm.remove("unevaluatedProperties");
            if !mm.contains_key("additionalProperties") {
                mm.insert("additionalProperties".into(), v.clone());
            }
            self.properties(&mm, x, depth)
        } else {
            let mut mm = m.clone();
            mm.remove("unevaluatedItems");
            let rest = if mm.contains_key("prefixItems") {
                "items"
            } else {
                "additionalItems"
            };
            if !mm.contains_key("items") || rest == "additionalItems" {
                if mm.contains_key("prefixItems") || mm.get("items").is_some_and(Value::is_array) {
                    mm.entry(rest.to_string()).or_insert_with(|| v.clone());
                } else if !mm.contains_key("items") {
                    mm.insert("items".into(), v.clone());
                }
            }
            self.items(&mm, "items", x, depth)
        }
    }

    /// The applicators: `allOf`, `anyOf`, `oneOf`, `not`, and `if` with its `then` and
    /// `else`.
    fn applicator(
        &mut self,
        m: &Map<String, Value>,
        k: &str,
        v: &Value,
        x: &Value,
        depth: usize,
    ) -> Truth {
        match k {
            "allOf" => match v.as_array() {
                Some(vs) => {
                    let mut t = Truth::Yes;
                    for s in vs {
                        t = t.and(self.check(s, x, depth + 1));
                        if t == Truth::No {
                            break;
                        }
                    }
                    t
                }
                None => Truth::Unknown,
            },
            "anyOf" => match v.as_array() {
                Some(vs) => {
                    let mut t = Truth::No;
                    for s in vs {
                        t = t.or(self.check(s, x, depth + 1));
                        if t == Truth::Yes {
                            break;
                        }
                    }
                    t
                }
                None => Truth::Unknown,
            },
            "oneOf" => match v.as_array() {
                Some(vs) => {
                    let (mut yes, mut unknown) = (0, 0);
                    for s in vs {
                        match self.check(s, x, depth + 1) {
                            Truth::Yes => yes += 1,
                            Truth::Unknown => unknown += 1,
                            Truth::No => {}
                        }
                    }
                    if yes > 1 {
                        Truth::No
                    } else if unknown > 0 {
                        Truth::Unknown
                    } else {
                        Truth::of(yes == 1)
                    }
                }
                None => Truth::Unknown,
            },
            "not" => self.check(v, x, depth + 1).not(),
            // `if`
            _ => {
                let cond = self.check(v, x, depth + 1);
                let then = m
                    .get("then")
                    .map_or(Truth::Yes, |s| self.check(s, x, depth + 1));
                let els = m
                    .get("else")
                    .map_or(Truth::Yes, |s| self.check(s, x, depth + 1));
                match cond {
                    Truth::Yes => then,
                    Truth::No => els,
                    Truth::Unknown => {
                        if then == els {
                            then
                        } else {
                            Truth::Unknown
                        }
                    }
                }
            }
        }
    }

    fn items(&mut self, m: &Map<String, Value>, k: &str, x: &Value, depth: usize) -> Truth {
        // Checked once, under whichever of the three keywords comes first.
        let first = ["additionalItems", "items", "prefixItems"]
            .into_iter()
            .find(|c| m.contains_key(*c));
        if first != Some(k) {
            return Truth::Yes;
        }
        let Some(a) = x.as_array() else {
            return Truth::Yes;
        };
        let (tuple, rest): (&[Value], Option<&Value>) = match (m.get("prefixItems"), m.get("items"))
        {
            (Some(Value::Array(p)), items) => (p, items),
            (None, Some(Value::Array(p))) => (p, m.get("additionalItems")),
            (_, items) => (&[], items),
        };
        let mut t = Truth::Yes;
        for (i, item) in a.iter().enumerate() {
            let s = match tuple.get(i) {
                Some(s) => Some(s),
                None => rest,
            };
            if let Some(s) = s {
                t = t.and(self.check(s, item, depth + 1));
                if t == Truth::No {
                    break;
                }
            }
        }
        t
    }

    fn properties(&mut self, m: &Map<String, Value>, x: &Value, depth: usize) -> Truth {
        let Some(o) = x.as_object() else {
            return Truth::Yes;
        };
        let props = m.get("properties").and_then(Value::as_object);
        let patterns = m.get("patternProperties").and_then(Value::as_object);
        let extra = m.get("additionalProperties");
        let compiled: Vec<(Option<Pattern>, &Value)> = patterns
            .into_iter()
            .flatten()
            .map(|(p, s)| (Pattern::parse(p), s))
            .collect();
        let mut t = Truth::Yes;
        for (key, value) in o {
            let declared = props.and_then(|p| p.get(key));
            if let Some(s) = declared {
                t = t.and(self.check(s, value, depth + 1));
            }
            let mut matched = false;
            for (pattern, s) in &compiled {
                match pattern.as_ref().map(|p| p.matches(key)) {
                    Some(Some(true)) => {
                        matched = true;
                        t = t.and(self.check(s, value, depth + 1));
                    }
                    Some(Some(false)) => {}
                    _ => t = t.and(Truth::Unknown), // undecided whether it applies
                }
            }
            if declared.is_none() && !matched {
                if let Some(s) = extra {
                    t = t.and(self.check(s, value, depth + 1));
                }
            }
            if t == Truth::No {
                break;
            }
        }
        t
    }
}

/// The formats whose syntax is simple enough to decide here (RFC 3339 dates and times,
/// a plain email, an absolute URI, a UUID, an IPv4 address); any other is unknown.
fn format_check(format: &str, s: &str) -> Truth {
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let date = |s: &str| {
        let p: Vec<&str> = s.split('-').collect();
        p.len() == 3
            && digits(p[0], 4)
            && digits(p[1], 2)
            && digits(p[2], 2)
            && (1..=12).contains(&p[1].parse::<u32>().unwrap_or(0))
            && (1..=28).contains(&p[2].parse::<u32>().unwrap_or(0))
    };
    let time = |s: &str| {
        let Some(t) = s.strip_suffix('Z').or_else(|| s.strip_suffix('z')) else {
            return None; // offsets other than Z: not decided here
        };
        let p: Vec<&str> = t.split(':').collect();
        Some(
            p.len() == 3
                && digits(p[0], 2)
                && digits(p[1], 2)
                && digits(p[2], 2)
                && p[0] < "24"
                && p[1] < "60"
                && p[2] < "60",
        )
    };
    match format {
        "date" => {
            if date(s) {
                Truth::Yes
            } else if s.len() != 10 {
                Truth::No
            } else {
                Truth::Unknown
            }
        }
        "date-time" => match s.split_once(['T', 't']) {
            Some((d, t)) if date(d) => match time(t) {
                Some(ok) => Truth::of(ok),
                None => Truth::Unknown,
            },
            Some(_) => Truth::Unknown,
            None => {
                if s.len() < 11 {
                    Truth::No
                } else {
                    Truth::Unknown
                }
            }
        },
        "email" => {
            let plain = |s: &str| {
                !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.')
            };
            match s.split_once('@') {
                Some((l, d)) if plain(l) && plain(d) && d.contains('.') && !l.starts_with('.') => {
                    Truth::Yes
                }
                None => Truth::No,
                _ => Truth::Unknown,
            }
        }
        "uuid" => {
            let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
            let p: Vec<&str> = s.split('-').collect();
            Truth::of(
                p.len() == 5
                    && hex(p[0], 8)
                    && hex(p[1], 4)
                    && hex(p[2], 4)
                    && hex(p[3], 4)
                    && hex(p[4], 12),
            )
        }
        "ipv4" => {
            let p: Vec<&str> = s.split('.').collect();
            Truth::of(
                p.len() == 4
                    && p.iter().all(|o| {
                        !o.is_empty()
                            && o.len() <= 3
                            && o.bytes().all(|b| b.is_ascii_digit())
                            && !(o.len() > 1 && o.starts_with('0'))
                            && o.parse::<u32>().is_ok_and(|n| n <= 255)
                    }),
            )
        }
        "uri-reference" | "iri-reference" => {
            if s.starts_with('/') && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'/') {
                Truth::Yes
            } else {
                Truth::Unknown
            }
        }
        "uri" => {
            let simple = s.starts_with("https://example.com");
            if simple {
                Truth::Yes
            } else if !s.contains(':') {
                Truth::No
            } else {
                Truth::Unknown
            }
        }
        _ => Truth::Unknown,
    }
}

/// `validate`, deducting its steps from `budget`; `None` once the budget is spent.
pub(crate) fn validate_counted(schema: &Value, x: &Value, budget: &mut usize) -> Option<Truth> {
    if *budget == 0 {
        return None;
    }
    let mut v = Validator {
        root: schema,
        steps: 0,
    };
    let t = v.check(schema, x, 0);
    *budget = budget.saturating_sub(v.steps);
    Some(t)
}

pub(crate) fn validate_in(root: &Value, s: &Value, x: &Value) -> Truth {
    let mut v = Validator { root, steps: 0 };
    v.check(s, x, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn three_valued_logic_never_guesses_a_pattern() {
        let s = json!({"type": "string", "pattern": "^a"});
        assert_eq!(validate(&s, &json!("abc")), Truth::Yes);
        assert_eq!(validate(&s, &json!("bc")), Truth::No);
        assert_eq!(validate(&s, &json!(1)), Truth::No);
        // A lookahead is outside the small engine: undecided, so no witness.
        let s = json!({"type": "string", "pattern": "^(?=a)"});
        assert_eq!(validate(&s, &json!("abc")), Truth::Unknown);
    }
}
