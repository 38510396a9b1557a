//! The index over the rows: the binding of each schema keyword and element field to its
//! comparator and rows, the catch-all and walk-limit rows, the server rows; lookup by
//! event (`pick`, `server_row`), by id (`find`) and by former id (`renamed`); and the
//! default severity of a change (covenant.toml's overrides are the policy's, not the
//! tables').

use std::collections::HashMap;

use serde_json::Value;

use super::model::{
    Comparator, Condition, Direction, Retired, Rule, Scope, Severity, ANY_KEYWORD, WALK_KEYWORD,
};
use crate::elements::Kind;
use crate::error::{Error, Result};
use crate::path::Path;

/// How a keyword (or element field) is compared, and the rows that classify it.
#[derive(Clone, Debug)]
pub struct Binding {
    pub comparator: Comparator,
    pub absent: Option<Value>,
    pub rows: Vec<usize>,
}

#[derive(Clone, Debug)]
pub struct Rules {
    pub rows: Vec<Rule>,
    schema: HashMap<String, Binding>,
    /// Each kind of element itself (its coming and going).
    elements: HashMap<Kind, Binding>,
    /// Element fields by kind and path (`annotations.readOnlyHint`).
    fields: HashMap<Kind, HashMap<Path, Binding>>,
    schema_unhandled: usize,
    surface_unhandled: usize,
    walk_limit: usize,
    /// Rows about the server's own declarations.
    server: Vec<usize>,
    /// Ids no longer reported, kept so that covenant.toml naming them is told so.
    pub retired: Vec<Retired>,
}

/// What became of a rule id that no row has any more.
#[derive(Clone, Debug)]
pub enum Former<'a> {
    /// Renamed: the rows that list it among their `aliases` took it over, and a
    /// covenant.toml entry naming it applies to them.
    Renamed(Vec<&'a str>),
    /// Retired: no row reports it; a covenant.toml entry naming it no longer applies.
    Retired(&'a Retired),
}

impl Former<'_> {
    /// `rule id `OLD` is deprecated; it is now `NEW``, or `rule id `OLD` is retired,
    /// replaced by `NEW` (why)`: the body of the warning a former id gets.
    pub fn describe(&self, old: &str) -> String {
        let ids = |ids: &mut dyn Iterator<Item = &str>| {
            ids.map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(" and ")
        };
        match self {
            Former::Renamed(new) => format!(
                "rule id `{old}` is deprecated; it is now {}",
                ids(&mut new.iter().copied())
            ),
            Former::Retired(r) if r.replaced_by.is_empty() => {
                format!("rule id `{old}` is retired ({})", r.reason)
            }
            Former::Retired(r) => format!(
                "rule id `{old}` is retired, replaced by {} ({})",
                ids(&mut r.replaced_by.iter().map(String::as_str)),
                r.reason
            ),
        }
    }
}

impl Rules {
    pub(super) fn index(rows: Vec<Rule>, retired: Vec<Retired>) -> Result<Rules> {
        for r in &rows {
            if let Some(a) = r.aliases.iter().find(|a| rows.iter().any(|o| &o.id == *a)) {
                return Err(Error::new(format!(
                    "{}: `{}` lists `{a}` as a former id, but a row still has that id",
                    r.source, r.id
                )));
            }
        }
        for (i, r) in retired.iter().enumerate() {
            let fail = |msg: String| {
                Err(Error::new(format!(
                    "{}: retired id `{}`: {msg}",
                    r.source, r.id
                )))
            };
            if rows.iter().any(|o| o.id == r.id) {
                return fail("a row still has that id".into());
            }
            if let Some(o) = rows.iter().find(|o| o.aliases.contains(&r.id)) {
                return fail(format!(
                    "it is also a former id of `{}`; give it one fate",
                    o.id
                ));
            }
            if retired[..i].iter().any(|o| o.id == r.id) {
                return fail("retired twice".into());
            }
            if let Some(n) = r
                .replaced_by
                .iter()
                .find(|n| !rows.iter().any(|o| &o.id == *n))
            {
                return fail(format!("`replaced_by` names `{n}`, which no row has"));
            }
        }
        let mut schema: HashMap<String, Binding> = HashMap::new();
        let mut elements: HashMap<Kind, Binding> = HashMap::new();
        let mut fields: HashMap<Kind, HashMap<Path, Binding>> = HashMap::new();
        let (mut schema_unhandled, mut surface_unhandled, mut walk_limit) = (None, None, None);
        let mut server = Vec::new();
        let mut seen = HashMap::new();
        for (i, rule) in rows.iter().enumerate() {
            let dup_key = (
                rule.scope.clone(),
                rule.event.clone(),
                rule.when,
                rule.value.as_ref().map(Value::to_string),
            );
            if let Some(j) = seen.insert(dup_key, i) {
                let other: &Rule = &rows[j];
                return Err(Error::new(format!(
                    "{}: rules `{}` and `{}` both classify event `{}` on {}",
                    rule.source,
                    other.id,
                    rule.id,
                    rule.event,
                    rule.describe_scope()
                )));
            }
            let fresh = || Binding {
                comparator: rule.comparator,
                absent: rule.absent.clone(),
                rows: Vec::new(),
            };
            match &rule.scope {
                Scope::Schema { keyword } if keyword == ANY_KEYWORD => schema_unhandled = Some(i),
                Scope::Schema { keyword } if keyword == WALK_KEYWORD => walk_limit = Some(i),
                Scope::Element { kind: None, .. } => surface_unhandled = Some(i),
                Scope::Server { .. } => server.push(i),
                Scope::Schema { keyword } => {
                    merge(schema.entry(keyword.clone()).or_insert_with(fresh), rule, i)?
                }
                Scope::Element {
                    kind: Some(kind),
                    field,
                } => {
                    let binding = match field {
                        Some(f) => {
                            let path = f.parse::<Path>().map_err(|_| {
                                Error::new(format!(
                                    "{}: rule `{}`: `{f}` is no field path (`annotations.title`)",
                                    rule.source, rule.id
                                ))
                            })?;
                            let of_kind = fields.entry(*kind).or_default();
                            of_kind.entry(path).or_insert_with(fresh)
                        }
                        None => elements.entry(*kind).or_insert_with(fresh),
                    };
                    merge(binding, rule, i)?
                }
            }
        }
        let missing = |what: &str| Error::new(format!("rule tables: no row for {what}"));
        Ok(Rules {
            schema_unhandled: schema_unhandled
                .ok_or_else(|| missing("unmodelled schema keywords (keyword = \"*\")"))?,
            surface_unhandled: surface_unhandled
                .ok_or_else(|| missing("unmodelled element fields (element = \"*\")"))?,
            walk_limit: walk_limit
                .ok_or_else(|| missing("the walk limit (keyword = \"$walk\")"))?,
            rows,
            schema,
            elements,
            fields,
            server,
            retired,
        })
    }

    /// What became of `id` if it is a former id (renamed or retired); `None` for a
    /// current id or one that never existed.
    pub fn former(&self, id: &str) -> Option<Former<'_>> {
        let renamed = self.renamed(id);
        if !renamed.is_empty() {
            return Some(Former::Renamed(renamed));
        }
        self.retired
            .iter()
            .find(|r| r.id == id)
            .map(Former::Retired)
    }

    /// The current ids of the rows that list `old` among their `aliases` (empty: `old`
    /// is no former id).
    pub fn renamed(&self, old: &str) -> Vec<&str> {
        let mut ids: Vec<&str> = self
            .rows
            .iter()
            .filter(|r| r.aliases.iter().any(|a| a == old))
            .map(|r| r.id.as_str())
            .collect();
        ids.dedup();
        ids
    }

    /// The default severity of a change classified by row `rule` in `direction` (the
    /// project's `[severity]` entries are applied by `policy::Policy`). A row that states
    /// no severity for this direction never drops the change: its most severe default
    /// applies.
    pub fn severity(&self, rule: usize, direction: Option<Direction>) -> Severity {
        let row = &self.rows[rule];
        row.default_severity(direction)
            .unwrap_or_else(|| row.worst_default())
    }

    pub fn schema_binding(&self, keyword: &str) -> Option<&Binding> {
        self.schema.get(keyword)
    }

    /// The binding of element field `field` of `kind` (`None`: the element itself).
    pub fn element_binding(&self, kind: Kind, field: Option<&Path>) -> Option<&Binding> {
        match field {
            Some(f) => self.fields.get(&kind)?.get(f),
            None => self.elements.get(&kind),
        }
    }

    /// Element fields that rows name for `kind` (compared even when absent on both
    /// sides, since an absent field may stand for a default).
    pub fn element_fields(&self, kind: Kind) -> impl Iterator<Item = &Path> {
        self.fields.get(&kind).into_iter().flat_map(HashMap::keys)
    }

    /// The row for `event` in `binding` under `cond`, if any: a row whose `when` names
    /// the condition wins over one that states none.
    pub fn pick(&self, binding: &Binding, event: &str, cond: Option<Condition>) -> Option<usize> {
        let of_event = || {
            binding
                .rows
                .iter()
                .copied()
                .filter(move |&i| self.rows[i].event == event)
        };
        of_event()
            .find(|&i| cond.is_some() && self.rows[i].when == cond)
            .or_else(|| of_event().find(|&i| self.rows[i].when.is_none()))
    }

    /// [`Rules::pick`] for an event about one `value` (a value that came or went): a row
    /// naming that value wins over the rows that name none.
    pub fn pick_value(
        &self,
        binding: &Binding,
        event: &str,
        cond: Option<Condition>,
        value: Option<&Value>,
    ) -> Option<usize> {
        let named = binding.rows.iter().copied().find(|&i| {
            let r = &self.rows[i];
            r.event == event && r.value.is_some() && r.value.as_ref() == value
        });
        named.or_else(|| {
            let unnamed = |i: &usize| self.rows[*i].value.is_none() && self.rows[*i].event == event;
            binding
                .rows
                .iter()
                .copied()
                .filter(unnamed)
                .find(|&i| cond.is_some() && self.rows[i].when == cond)
                .or_else(|| {
                    binding
                        .rows
                        .iter()
                        .copied()
                        .filter(unnamed)
                        .find(|&i| self.rows[i].when.is_none())
                })
        })
    }

    /// The server row for `event`.
    pub fn server_row(&self, event: &str) -> Option<usize> {
        self.server
            .iter()
            .copied()
            .find(|&i| self.rows[i].event == event)
    }

    pub fn schema_unhandled(&self) -> usize {
        self.schema_unhandled
    }

    pub fn surface_unhandled(&self) -> usize {
        self.surface_unhandled
    }

    pub fn walk_limit(&self) -> usize {
        self.walk_limit
    }

    pub fn find<'a>(&'a self, id: &'a str) -> impl Iterator<Item = (usize, &'a Rule)> + 'a {
        self.rows
            .iter()
            .enumerate()
            .filter(move |(_, r)| r.id == id)
    }
}

fn merge(binding: &mut Binding, rule: &Rule, i: usize) -> Result<()> {
    if binding.comparator != rule.comparator {
        return Err(Error::new(format!(
            "{}: rule `{}` compares {} with `{}`, but an earlier row uses `{}`",
            rule.source,
            rule.id,
            rule.describe_scope(),
            rule.comparator.word(),
            binding.comparator.word()
        )));
    }
    if rule.absent.is_some() && binding.absent.is_some() && rule.absent != binding.absent {
        return Err(Error::new(format!(
            "{}: rule `{}` gives {} a different `absent` value than an earlier row",
            rule.source,
            rule.id,
            rule.describe_scope()
        )));
    }
    if binding.absent.is_none() {
        binding.absent = rule.absent.clone();
    }
    binding.rows.push(i);
    Ok(())
}
