//! A pull request's covenant.toml held to the one at its base revision, so that a pull
//! request cannot turn its own gate off.

use super::{Config, FailOn, Ignore};
use crate::rules::{Direction, Rules};

impl Config {
    /// This covenant.toml held to `base` (the same file at the revision a pull request
    /// is compared with): wherever this one is looser, base's policy applies, so a pull
    /// request cannot turn its own gate off. A severity lowered for a rule (in any
    /// direction, by `[severity]` or `profile`) keeps base's; an `[[ignore]]` base does
    /// not have is dropped; a looser `fail_on` keeps base's. Also what was loosened, one
    /// line each, for the user (the looser policy applies once it is merged).
    pub fn held_to(mut self, base: &Config, rules: &Rules) -> (Config, Vec<String>) {
        let mut loosened = Vec::new();
        let here = self.name();
        for row in &rules.rows {
            let effective = |c: &Config, d: Option<Direction>| {
                c.severity
                    .get(&row.id)
                    .and_then(|o| o.get(d))
                    .or_else(|| row.default_severity(d))
                    .unwrap_or_else(|| row.worst_default())
            };
            let mut held = self.severity.get(&row.id).cloned().unwrap_or_default();
            let mut changed = false;
            for d in [None, Some(Direction::Input), Some(Direction::Output)] {
                let (mine, theirs) = (effective(&self, d), effective(base, d));
                if mine > theirs {
                    changed = true;
                    let slot = match d {
                        None => &mut held.all,
                        Some(Direction::Input) => &mut held.input,
                        Some(Direction::Output) => &mut held.output,
                    };
                    *slot = Some(theirs);
                    let dir = d.map(|d| format!(" in {}", d.word())).unwrap_or_default();
                    let line = format!(
                        "{here} lowers `{}` from {} to {}{dir}",
                        row.id,
                        theirs.word(),
                        mine.word()
                    );
                    // Rows that differ only in `when` share an id: said once.
                    if !loosened.contains(&line) {
                        loosened.push(line);
                    }
                }
            }
            if changed {
                // The explicit directions win over `all` when read back.
                for d in [Some(Direction::Input), Some(Direction::Output)] {
                    let v = effective(&self, d).min(effective(base, d));
                    match d {
                        Some(Direction::Input) => held.input = Some(v),
                        _ => held.output = Some(v),
                    }
                }
                self.severity.insert(row.id.clone(), held);
            }
        }
        let (kept, dropped): (Vec<Ignore>, Vec<Ignore>) = std::mem::take(&mut self.ignore)
            .into_iter()
            .partition(|i| base.ignore.iter().any(|b| b.identity == i.identity));
        for i in dropped {
            loosened.push(format!(
                "{} adds an [[ignore]] ({})",
                i.origin,
                i.reason.escape_debug()
            ));
        }
        self.ignore = kept;
        let strictness = |f: Option<FailOn>| f.unwrap_or(FailOn::Breaking).strictness();
        // A looser gate fails on fewer changes: `never`, `version`, or a more severe level.
        let looser = strictness(self.fail_on) < strictness(base.fail_on);
        if looser {
            loosened.push(format!("{here} loosens `fail_on`"));
            self.fail_on = base.fail_on.or(Some(FailOn::Breaking));
        }
        (self, loosened)
    }
}
