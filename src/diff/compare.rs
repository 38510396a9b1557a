//! The closed set of value comparators. Each turns a pair of optional JSON values into
//! events named in the comparator's vocabulary; the rule tables give them meaning.
//! Structural comparators (fields, variants, openness) live in the walker, since they
//! recurse.

use std::collections::HashSet;

use serde_json::Value;

use super::Event;
use crate::rules::Comparator;
use crate::schema::pattern::{self, Relation};

/// The events `comparator` sees between `a` and `b`, or `None` when the values are not
/// of the kind the comparator understands (then the change is reported as unhandled).
pub(crate) fn events<'e>(
    comparator: Comparator,
    absent: Option<&Value>,
    a: Option<&Value>,
    b: Option<&Value>,
) -> Option<Vec<Event<'e>>> {
    let a = a.or(absent);
    let b = b.or(absent);
    if a == b {
        return Some(Vec::new());
    }
    match comparator {
        Comparator::Presence => presence(a, b).or(Some(Vec::new())),
        Comparator::Text | Comparator::Value => texts(comparator, a, b),
        Comparator::Number => numbers(a, b),
        Comparator::Bool => bools(a, b),
        Comparator::Values => value_sets(a, b),
        Comparator::Typeset => typesets(a, b),
        Comparator::Divisor => divisors(a, b),
        Comparator::Format => formats(a, b),
        Comparator::Pattern => patterns(a, b),
        Comparator::Unhandled => Some(vec![Event::new("changed").values(a, b)]),
        // Structural comparators are the walker's; they never reach here.
        Comparator::Fields
        | Comparator::Variants
        | Comparator::Openness
        | Comparator::Limit
        | Comparator::Semver
        | Comparator::Subschema
        | Comparator::Entries => None,
    }
}

/// `added` or `removed` when one side is absent; `None` when both are there.
fn presence<'e>(a: Option<&Value>, b: Option<&Value>) -> Option<Vec<Event<'e>>> {
    match (a, b) {
        (None, Some(_)) => Some(vec![Event::new("added").values(a, b)]),
        (Some(_), None) => Some(vec![Event::new("removed").values(a, b)]),
        _ => None,
    }
}

/// `Text` (strings only) and `Value`: any difference is `changed`.
fn texts<'e>(
    comparator: Comparator,
    a: Option<&Value>,
    b: Option<&Value>,
) -> Option<Vec<Event<'e>>> {
    if comparator == Comparator::Text
        && !(a.is_none_or(Value::is_string) && b.is_none_or(Value::is_string))
    {
        return None;
    }
    presence(a, b).or_else(|| Some(vec![Event::new("changed").values(a, b)]))
}

/// `Number`: a bound `increased` or `decreased`.
fn numbers<'e>(a: Option<&Value>, b: Option<&Value>) -> Option<Vec<Event<'e>>> {
    if let Some(evs) = presence(a, b) {
        return Some(evs);
    }
    let (x, y) = (a?.as_f64()?, b?.as_f64()?);
    let event = if y > x {
        "increased"
    } else if y < x {
        "decreased"
    } else {
        // 5 vs 5.0: the same bound written differently.
        return Some(Vec::new());
    };
    Some(vec![Event::new(event).values(a, b)])
}

/// `Bool`: a flag (absent is false) turned `to_true` or `to_false`.
fn bools<'e>(a: Option<&Value>, b: Option<&Value>) -> Option<Vec<Event<'e>>> {
    let flag = |v: Option<&Value>| match v {
        None => Some(false),
        Some(v) => v.as_bool(),
    };
    match (flag(a)?, flag(b)?) {
        (false, true) => Some(vec![Event::new("to_true").values(a, b)]),
        (true, false) => Some(vec![Event::new("to_false").values(a, b)]),
        _ => Some(Vec::new()),
    }
}

/// `Values`: each value of a list `value_removed` or `value_added`.
fn value_sets<'e>(a: Option<&Value>, b: Option<&Value>) -> Option<Vec<Event<'e>>> {
    if let Some(evs) = presence(a, b) {
        return Some(evs);
    }
    let (xs, ys) = (a?.as_array()?, b?.as_array()?);
    let key = |v: &Value| serde_json::to_string(v).unwrap_or_default();
    let in_a: HashSet<String> = xs.iter().map(key).collect();
    let in_b: HashSet<String> = ys.iter().map(key).collect();
    let mut out = Vec::new();
    for x in xs {
        if !in_b.contains(&key(x)) {
            let mut ev = Event::new("value_removed");
            ev.value = Some(x.clone());
            out.push(ev);
        }
    }
    for y in ys {
        if !in_a.contains(&key(y)) {
            let mut ev = Event::new("value_added");
            ev.value = Some(y.clone());
            out.push(ev);
        }
    }
    Some(out)
}

/// `Typeset`: the set of types `narrowed`, `widened` or `changed`.
fn typesets<'e>(a: Option<&Value>, b: Option<&Value>) -> Option<Vec<Event<'e>>> {
    let (x, y) = (TypeSet::parse(a)?, TypeSet::parse(b)?);
    let event = match (x.within(&y), y.within(&x)) {
        (true, true) => return Some(Vec::new()),
        (false, true) => "narrowed",
        (true, false) => "widened",
        (false, false) => "changed",
    };
    Some(vec![Event::new(event).values(a, b)])
}

/// `Divisor`: a `multipleOf` `tightened` (a multiple of the old) or `loosened`.
fn divisors<'e>(a: Option<&Value>, b: Option<&Value>) -> Option<Vec<Event<'e>>> {
    if let Some(evs) = presence(a, b) {
        return Some(evs);
    }
    let (x, y) = (a?.as_f64()?, b?.as_f64()?);
    let multiple = |n: f64, d: f64| d != 0.0 && ((n / d) - (n / d).round()).abs() < 1e-9;
    let event = if multiple(y, x) {
        "tightened"
    } else if multiple(x, y) {
        "loosened"
    } else {
        "changed"
    };
    Some(vec![Event::new(event).values(a, b)])
}

/// `Format`: a format `widened` or `narrowed` by the formats one contains.
fn formats<'e>(a: Option<&Value>, b: Option<&Value>) -> Option<Vec<Event<'e>>> {
    if let Some(evs) = presence(a, b) {
        return Some(evs);
    }
    let (x, y) = (a?.as_str()?, b?.as_str()?);
    let event = if format_within(x, y) {
        "widened"
    } else if format_within(y, x) {
        "narrowed"
    } else {
        "changed"
    };
    Some(vec![Event::new(event).values(a, b)])
}

/// `Pattern`: a regex `rewritten`, `widened`, `narrowed`, `changed` or `undecided`, by
/// the languages the two accept.
fn patterns<'e>(a: Option<&Value>, b: Option<&Value>) -> Option<Vec<Event<'e>>> {
    if let Some(evs) = presence(a, b) {
        return Some(evs);
    }
    let (x, y) = (a?.as_str()?, b?.as_str()?);
    let event = match pattern::relation(x, y) {
        Relation::Equal => "rewritten",
        Relation::Wider(_) => "widened",
        Relation::Narrower(_) => "narrowed",
        Relation::Neither(..) => "changed",
        Relation::Unknown => "undecided",
    };
    Some(vec![Event::new(event).values(a, b)])
}

/// Every string valid in `format` `small` is also valid in `big` (the 2020-12 format
/// definitions: the internationalised forms extend the ASCII ones; a URI is a URI
/// reference). Anything else is not provably a subset.
fn format_within(small: &str, big: &str) -> bool {
    const WITHIN: &[(&str, &str)] = &[
        ("email", "idn-email"),
        ("hostname", "idn-hostname"),
        ("uri", "iri"),
        ("uri", "uri-reference"),
        ("uri", "iri-reference"),
        ("iri", "iri-reference"),
        ("uri-reference", "iri-reference"),
    ];
    WITHIN.contains(&(small, big))
}

/// A JSON Schema `type` set. Absent means every type; `integer` is inside `number`.
struct TypeSet(Vec<String>);

const ALL_TYPES: &[&str] = &["array", "boolean", "null", "number", "object", "string"];

impl TypeSet {
    fn parse(v: Option<&Value>) -> Option<TypeSet> {
        let names = match v {
            None => ALL_TYPES.iter().map(|s| s.to_string()).collect(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()?,
            Some(_) => return None,
        };
        Some(TypeSet(names))
    }

    fn covers(&self, t: &str) -> bool {
        self.0.iter().any(|s| s == t) || (t == "integer" && self.0.iter().any(|s| s == "number"))
    }

    /// Every value of a type in `self` is also allowed by `other`.
    fn within(&self, other: &TypeSet) -> bool {
        self.0.iter().all(|t| other.covers(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(c: Comparator, a: Option<Value>, b: Option<Value>) -> Vec<String> {
        events(c, None, a.as_ref(), b.as_ref())
            .unwrap()
            .iter()
            .map(|e| e.event.to_string())
            .collect()
    }

    #[test]
    fn integer_is_inside_number() {
        let t = Comparator::Typeset;
        assert_eq!(
            names(t, Some(json!("number")), Some(json!("integer"))),
            ["narrowed"]
        );
        assert_eq!(
            names(t, Some(json!("integer")), Some(json!(["integer", "null"]))),
            ["widened"]
        );
        assert_eq!(
            names(t, Some(json!("string")), Some(json!("number"))),
            ["changed"]
        );
        assert_eq!(names(t, None, Some(json!("string"))), ["narrowed"]);
        assert!(names(t, Some(json!(["number", "integer"])), Some(json!("number"))).is_empty());
    }

    #[test]
    fn numbers_compare_by_value() {
        let n = Comparator::Number;
        assert!(names(n, Some(json!(5)), Some(json!(5.0))).is_empty());
        assert_eq!(names(n, Some(json!(5)), Some(json!(3))), ["decreased"]);
        assert!(events(n, None, Some(&json!("x")), Some(&json!(1))).is_none());
    }

    #[test]
    fn enum_values_are_a_set() {
        let v = Comparator::Values;
        assert!(names(v, Some(json!(["a", "b"])), Some(json!(["b", "a"]))).is_empty());
        assert_eq!(
            names(v, Some(json!(["a", "b"])), Some(json!(["b", "c"]))),
            ["value_removed", "value_added"]
        );
    }
}
