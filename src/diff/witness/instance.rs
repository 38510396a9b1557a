//! Placing candidates in an instance of the whole schema: walking the change's path
//! down both schemas, the minimal instance around it, and the names and values the
//! target needs elsewhere so that a witness proves this change and no other.

use serde_json::{Map, Value};

use super::candidates::{format_sample, number, types_of, Gen};
use super::Seg;
use crate::diff::walker::resolve;
use crate::schema::pattern::Pattern;
use crate::schema::validate::{validate_in, Truth};

/// A `$ref` alone, or beside keywords that constrain nothing (pydantic's
/// `{"$ref": …, "description": …}`): the same instances as its target.
fn annotated_ref(m: &Map<String, Value>) -> bool {
    use crate::keywords::{role, Role};
    m.keys()
        .all(|k| k == "$ref" || matches!(role(k), Some(Role::Annotation | Role::Definitions)))
}

/// The name a path step is, if it is one.
fn name_of(s: &Seg) -> Option<String> {
    match s {
        Seg::Name(n) => Some(n.clone()),
        Seg::Index(_) => None,
    }
}

/// The index a path step is, if it is one.
fn index_of(s: Option<&Seg>) -> Option<usize> {
    match s {
        Some(Seg::Index(i)) => Some(*i),
        _ => None,
    }
}

/// The subschema of `s` at the keys of `path`.
fn sub<'v>(s: Option<&'v Value>, path: &[&str]) -> Option<&'v Value> {
    let mut cur = s?;
    for p in path {
        cur = cur.get(*p)?;
    }
    Some(cur)
}

/// Item `i` of the list `s` holds at `kw`.
fn at<'v>(s: Option<&'v Value>, kw: &str, i: usize) -> Option<&'v Value> {
    s?.get(kw)?.as_array()?.get(i)
}

impl<'a> Gen<'a> {
    /// `s` seen through its local `$ref`s (in the side's own root), also those beside
    /// annotations only.
    pub(super) fn deref(&self, side: usize, mut s: &'a Value) -> &'a Value {
        for _ in 0..32 {
            match s
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| resolve(self.roots[side], r))
            {
                Some(t) if s.as_object().is_some_and(annotated_ref) => s = t,
                _ => break,
            }
        }
        s
    }

    /// Candidates for the whole instance, with the value at `segs` drawn from `local`
    /// candidates of the source subschema there (guided by the target's subschema).
    pub(super) fn embed(
        &mut self,
        src: &'a Value,
        tgt: Option<&'a Value>,
        segs: &[Seg],
        depth: usize,
    ) -> Vec<Value> {
        let src = self.deref(0, src);
        let tgt = tgt.map(|t| self.deref(1, t));
        let Some((first, rest)) = segs.split_first() else {
            return self.values(src, tgt, 0);
        };
        if depth > 256 {
            return Vec::new();
        }
        let key = name_of(first).unwrap_or_default();
        let base = self.minimal(src, depth);
        match key.as_str() {
            "properties" | "patternProperties" | "dependentSchemas" => {
                self.embed_property(&key, src, tgt, rest, base, depth)
            }
            "additionalProperties" | "unevaluatedProperties" => {
                self.embed_extra_property(&key, src, tgt, rest, base, depth)
            }
            "items" | "prefixItems" if index_of(rest.first()).is_some() => {
                self.embed_position(&key, src, tgt, rest, depth)
            }
            "items" | "contains" | "unevaluatedItems" | "additionalItems" => {
                self.embed_items(&key, src, tgt, rest, depth)
            }
            "anyOf" | "oneOf" | "allOf" => self.embed_variant(&key, src, tgt, rest, depth),
            "then" | "else" => self.embed(
                src.get(&key).unwrap_or(&Value::Bool(true)),
                tgt.and_then(|t| t.get(&key)),
                rest,
                depth + 1,
            ),
            // `not`, `if`, `propertyNames`, ...: the node itself is the best guess.
            _ => self.values(src, tgt, depth),
        }
    }

    /// [`Gen::embed`] under `properties`, `patternProperties` or `dependentSchemas`
    /// (`key`): the property `rest` names (for a pattern, a name it matches) holding
    /// each inner candidate, and left out, in each of the `bases` around `base`.
    fn embed_property(
        &mut self,
        key: &str,
        src: &'a Value,
        tgt: Option<&'a Value>,
        rest: &[Seg],
        base: Value,
        depth: usize,
    ) -> Vec<Value> {
        let Some(prop) = rest.first().and_then(name_of) else {
            return Vec::new();
        };
        let s_sub = sub(Some(src), &[key, &prop])
            .or_else(|| src.get("additionalProperties"))
            .unwrap_or(&Value::Bool(true));
        let t_sub =
            sub(tgt, &[key, &prop]).or_else(|| tgt.and_then(|t| t.get("additionalProperties")));
        let inner = self.embed(s_sub, t_sub, &rest[1..], depth + 1);
        let name = match key {
            "properties" | "dependentSchemas" => prop,
            // A name the pattern matches.
            _ => Pattern::parse(&prop)
                .and_then(|p| p.samples().into_iter().next())
                .unwrap_or_else(|| "x_witness".to_string()),
        };
        let mut out = Vec::new();
        for base in self.bases(base, tgt, depth) {
            // The property left out, too (for one the target newly requires),
            // with whatever else the base holds (another name the target newly
            // requires, so that only this one is missing).
            let mut without = base.as_object().cloned().unwrap_or_default();
            without.remove(&name);
            out.push(Value::Object(without));
            out.extend(inner.iter().map(|v| {
                let mut o = base.as_object().cloned().unwrap_or_default();
                o.insert(name.clone(), v.clone());
                Value::Object(o)
            }));
        }
        out
    }

    /// [`Gen::embed`] under `additionalProperties` or `unevaluatedProperties` (`key`):
    /// an unknown name holding each inner candidate, in each of the `bases` around
    /// `base`.
    fn embed_extra_property(
        &mut self,
        key: &str,
        src: &'a Value,
        tgt: Option<&'a Value>,
        rest: &[Seg],
        base: Value,
        depth: usize,
    ) -> Vec<Value> {
        let inner = self.embed(
            src.get(key).unwrap_or(&Value::Bool(true)),
            tgt.and_then(|t| t.get(key)),
            rest,
            depth + 1,
        );
        let mut out = Vec::new();
        for base in self.bases(base, tgt, depth) {
            out.extend(inner.iter().map(|v| {
                let mut o = base.as_object().cloned().unwrap_or_default();
                o.insert("x_witness".into(), v.clone());
                Value::Object(o)
            }));
        }
        out
    }

    /// [`Gen::embed`] at a position of `items` or `prefixItems` (`key`): each inner
    /// candidate after the minimal values of the positions before it.
    fn embed_position(
        &mut self,
        key: &str,
        src: &'a Value,
        tgt: Option<&'a Value>,
        rest: &[Seg],
        depth: usize,
    ) -> Vec<Value> {
        let i = index_of(rest.first()).unwrap_or(0);
        let s_sub = at(Some(src), key, i)
            .or_else(|| {
                src.get(if key == "items" {
                    "additionalItems"
                } else {
                    "items"
                })
            })
            .unwrap_or(&Value::Bool(true));
        let t_sub = at(tgt, key, i);
        let prefix: Vec<Value> = (0..i)
            .map(|j| {
                at(Some(src), key, j)
                    .map(|s| self.minimal(s, depth + 1))
                    .unwrap_or(Value::Null)
            })
            .collect();
        self.embed(s_sub, t_sub, &rest[1..], depth + 1)
            .into_iter()
            .map(|v| {
                let mut a = prefix.clone();
                a.push(v);
                Value::Array(a)
            })
            .collect()
    }

    /// [`Gen::embed`] under `items`, `contains`, `unevaluatedItems` or
    /// `additionalItems` (`key`): each inner candidate as many times as `minItems`
    /// asks (at most 8), and once.
    fn embed_items(
        &mut self,
        key: &str,
        src: &'a Value,
        tgt: Option<&'a Value>,
        rest: &[Seg],
        depth: usize,
    ) -> Vec<Value> {
        let inner = self.embed(
            src.get(key).unwrap_or(&Value::Bool(true)),
            tgt.and_then(|t| t.get(key)),
            rest,
            depth + 1,
        );
        let min = src
            .get("minItems")
            .and_then(Value::as_u64)
            .unwrap_or(0)
            .min(8) as usize;
        inner
            .into_iter()
            .flat_map(|v| {
                let n = min.max(1);
                [Value::Array(vec![v.clone(); n]), Value::Array(vec![v])]
            })
            .collect()
    }

    /// [`Gen::embed`] in a variant of `anyOf`, `oneOf` or `allOf` (`key`): the inner
    /// candidates of the variant `rest` names.
    fn embed_variant(
        &mut self,
        key: &str,
        src: &'a Value,
        tgt: Option<&'a Value>,
        rest: &[Seg],
        depth: usize,
    ) -> Vec<Value> {
        let Some(i) = index_of(rest.first()) else {
            return Vec::new();
        };
        // A side with no such list at all is a plain schema the walker paired
        // with this variant: it stands for the variant itself.
        // The walker compares an `anyOf` with a `oneOf` whose variants cannot
        // overlap as one list: a side may spell it the other way.
        let spelled = |s: &Value| -> String {
            let other = match key {
                "anyOf" => "oneOf",
                "oneOf" => "anyOf",
                _ => return key.to_string(),
            };
            if s.get(key).is_none() && s.get(other).is_some() {
                other.to_string()
            } else {
                key.to_string()
            }
        };
        let variant = match src.get(spelled(src)) {
            None => src,
            Some(_) => at(Some(src), &spelled(src), i).unwrap_or(&Value::Bool(true)),
        };
        let t_variant = match tgt {
            Some(t) if t.get(spelled(t)).is_none() => Some(t),
            Some(t) => at(tgt, &spelled(t), i),
            None => None,
        };
        self.embed(variant, t_variant, &rest[1..], depth + 1)
    }

    /// A small instance `s` accepts, when one is found among its candidates.
    pub(super) fn minimal(&mut self, s: &'a Value, depth: usize) -> Value {
        self.minimal_in(0, s, depth)
    }

    /// The object around a change: the source's minimal instance, and, when the target
    /// requires names it lacks, that instance with them too (the target's minimal
    /// values), so that a witness of this change is not rejected for a missing name
    /// the target newly requires (another change).
    pub(super) fn bases(
        &mut self,
        base: Value,
        tgt: Option<&'a Value>,
        depth: usize,
    ) -> Vec<Value> {
        let (Value::Object(o), Some(t)) = (&base, tgt) else {
            return vec![base];
        };
        let mut more = o.clone();
        // Values the target would reject away from the change (a new `format`,
        // `minLength`): the target's own minimal value instead.
        for (name, v) in more.iter_mut() {
            if let Some(p) = t.get("properties").and_then(|p| p.get(name)) {
                *v = self.minimal_in(1, p, depth + 1);
            }
        }
        for name in t
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(name) = name.as_str() else { continue };
            if more.contains_key(name) {
                continue;
            }
            let p = t
                .get("properties")
                .and_then(|p| p.get(name))
                .unwrap_or(&Value::Bool(true));
            let v = self.minimal_in(1, p, depth + 1);
            more.insert(name.to_string(), v);
        }
        if &more == o {
            return vec![base];
        }
        vec![base, Value::Object(more)]
    }

    /// `minimal` for a schema of side `side` (0: the source, 1: the target).
    pub(super) fn minimal_in(&mut self, side: usize, s: &'a Value, depth: usize) -> Value {
        let s = self.deref(side, s);
        if depth > 16 {
            return Value::Null;
        }
        if let Some(c) = s.get("const") {
            return c.clone();
        }
        if let Some(e) = s
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            return e.clone();
        }
        if let Some(d) = s.get("default") {
            if validate_in(self.roots[side], s, d) == Truth::Yes {
                return d.clone();
            }
        }
        let types = types_of(s);
        let wanted = types.first().map(String::as_str).unwrap_or("null");
        match wanted {
            "object" => {
                let mut o = Map::new();
                for name in s
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let Some(name) = name.as_str() else { continue };
                    let p = s
                        .get("properties")
                        .and_then(|p| p.get(name))
                        .unwrap_or(&Value::Bool(true));
                    let v = self.minimal_in(side, p, depth + 1);
                    o.insert(name.to_string(), v);
                }
                Value::Object(o)
            }
            "array" => {
                let n = s
                    .get("minItems")
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
                    .min(8) as usize;
                let mut a = Vec::new();
                let tuple = s
                    .get("prefixItems")
                    .or_else(|| s.get("items").filter(|i| i.is_array()));
                for i in 0..n {
                    let item = tuple
                        .and_then(|t| t.get(i))
                        .or_else(|| s.get("items").filter(|i| i.is_object()))
                        .unwrap_or(&Value::Bool(true));
                    a.push(self.minimal_in(side, item, depth + 1));
                }
                Value::Array(a)
            }
            "string" => {
                if let Some(f) = s
                    .get("format")
                    .and_then(Value::as_str)
                    .and_then(format_sample)
                {
                    return Value::String(f.into());
                }
                let n = s
                    .get("minLength")
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
                    .min(64) as usize;
                Value::String("a".repeat(n))
            }
            "integer" | "number" => {
                let lo = s.get("minimum").and_then(Value::as_f64).or_else(|| {
                    s.get("exclusiveMinimum")
                        .and_then(Value::as_f64)
                        .map(|x| x.floor() + 1.0)
                });
                let v = lo.map(f64::ceil).unwrap_or(0.0);
                number(v)
            }
            "boolean" => Value::Bool(false),
            _ => Value::Null,
        }
    }
}
