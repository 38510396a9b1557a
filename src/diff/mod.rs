//! Comparing two surfaces: which elements came, went, or changed, and how.
//!
//! `surface` pairs elements by key and compares their fields; `walker` compares
//! schemas; `compare` holds the closed set of comparators both use. None of them
//! decides a severity or a code: they report events, and `Emitter` looks the event
//! up in the rule tables.

mod compare;
pub mod lazy;
mod surface;
pub mod version;
mod walker;
pub mod witness;

use serde_json::Value;

use crate::rules::{render_message, Certainty, Condition, Direction, Rules, Severity};

/// The severity a classified change gets. The tables answer with their defaults
/// (`Rules` itself); the policy step answers with covenant.toml's `[severity]` and
/// `profile` applied (`policy::Policy`), which the tables never hold. The diff asks
/// because a breaking change gets a witness: it reports the answer, it does not decide.
pub trait Classify {
    /// The rule tables.
    fn rules(&self) -> &Rules;
    /// The severity of a change that row `rule` classifies, in `direction`.
    fn severity(&self, rule: usize, direction: Option<Direction>) -> Severity;
}

impl Classify for Rules {
    fn rules(&self) -> &Rules {
        self
    }

    fn severity(&self, rule: usize, direction: Option<Direction>) -> Severity {
        Rules::severity(self, rule, direction)
    }
}

pub use crate::path::{Path, Segment};
pub use crate::subject::{Subject, SubjectKind};
pub use surface::{diff, diff_server, diff_with_budget};
pub use walker::DEFAULT_WORK_BUDGET;

/// One classified change.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// Index of the rule row that classified it.
    pub rule: usize,
    pub code: String,
    pub severity: Severity,
    pub subject: Subject,
    pub path: Option<Path>,
    pub direction: Option<Direction>,
    pub message: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
    pub fingerprint: String,
    /// `Exact` when a row models the change; `Conservative` when it is reported as
    /// breaking because nothing proves it harmless.
    pub certainty: Certainty,
    /// For a breaking schema change: an instance of the whole element schema that proves
    /// it (input: the baseline accepts it and the new schema rejects it; output: the
    /// other way round). `None` where none could be built: the verdict is unproven.
    pub witness: Option<Value>,
    /// For a breaking change whose witness is another change's instance (no instance
    /// proves this change alone): the fingerprint of the change that rejects it.
    pub shared_with: Option<String>,
    /// For a breaking change without a witness: why there is none.
    pub witness_absent: Option<witness::Absent>,
}

/// An event from a comparator, before the rule tables classify it.
pub(crate) struct Event<'a> {
    pub event: &'a str,
    pub cond: Option<Condition>,
    pub before: Option<Value>,
    pub after: Option<Value>,
    /// The value that came or went (an enum value), for `{value}`.
    pub value: Option<Value>,
    /// Said after the message ("looks renamed from `x`"); not part of the fingerprint.
    pub hint: Option<String>,
}

impl<'a> Event<'a> {
    pub fn new(event: &'a str) -> Self {
        Event {
            event,
            cond: None,
            before: None,
            after: None,
            value: None,
            hint: None,
        }
    }

    pub fn values(mut self, before: Option<&Value>, after: Option<&Value>) -> Self {
        self.before = before.cloned();
        self.after = after.cloned();
        self
    }
}

/// Turns events into changes: row lookup, severity per direction, message, fingerprint.
pub(crate) struct Emitter<'r> {
    pub rules: &'r Rules,
    /// Where each change's severity comes from.
    pub classify: &'r dyn Classify,
    pub changes: Vec<Change>,
    /// Validator steps left for building witnesses in this comparison.
    pub witness_budget: usize,
}

impl<'r> Emitter<'r> {
    pub fn new(classify: &'r dyn Classify) -> Self {
        Emitter {
            rules: classify.rules(),
            classify,
            changes: Vec::new(),
            witness_budget: witness::TOTAL_STEPS,
        }
    }

    /// Record `ev` as classified by row `rule` at `path`. `name` fills `{keyword}` /
    /// `{field}`.
    pub fn emit(
        &mut self,
        rule: usize,
        subject: &Subject,
        path: Option<Path>,
        direction: Option<Direction>,
        name: &str,
        ev: Event<'_>,
    ) {
        let row = &self.rules.rows[rule];
        let severity = self.classify.severity(rule, direction);
        let show = |v: &Option<Value>| match v {
            Some(v) => compact(v),
            None => "(absent)".to_string(),
        };
        let (before, after) = match (&ev.before, &ev.after) {
            (Some(Value::String(x)), Some(Value::String(y))) => text_pair(x, y),
            _ => (show(&ev.before), show(&ev.after)),
        };
        let value = show(&ev.value);
        let mut message = render_message(
            &row.message,
            &[
                ("before", &before),
                ("after", &after),
                ("value", &value),
                ("keyword", name),
                ("field", name),
            ],
        );
        if let Some(hint) = &ev.hint {
            message.push_str("; ");
            message.push_str(hint);
        }
        let (before, after) = match ev.value {
            Some(v) if ev.event.ends_with("_added") => (None, Some(v)),
            Some(v) => (Some(v), None),
            None => (ev.before, ev.after),
        };
        let fingerprint = fingerprint(
            row.fingerprint_id(),
            &subject.to_string(),
            path.as_ref().map(Path::to_string).as_deref(),
            &before,
            &after,
        );
        self.changes.push(Change {
            rule,
            code: row.id.clone(),
            severity,
            subject: subject.clone(),
            path,
            direction,
            message,
            before,
            after,
            fingerprint,
            certainty: row.certainty,
            witness: None,
            shared_with: None,
            // Schema changes get theirs from `witness::attach`.
            witness_absent: (severity == Severity::Breaking).then_some(witness::Absent::NotSchema),
        });
    }
}

/// A value as it is shown in a message: compact JSON, long values shortened. Written
/// only as far as a message can show (81 characters are at most 324 bytes): a value can
/// be most of a file.
pub fn compact(v: &Value) -> String {
    let kept = match JsonSink::Keep(Vec::new(), 81 * 4).write(v) {
        JsonSink::Keep(kept, _) => kept,
        _ => Vec::new(),
    };
    // Cut on a byte: what is past the last whole character is never shown.
    let s = match String::from_utf8(kept) {
        Ok(s) => s,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
    };
    if s.chars().count() > 80 {
        let cut: String = s.chars().take(77).collect();
        format!("{cut}...")
    } else {
        s
    }
}

/// Two texts for a message, as JSON strings: whole when short, else around where they
/// differ (`"…the model's name"` → `"…name of the node"`), so that a changed
/// description shows what changed and not only its first 80 characters.
pub fn text_pair(x: &str, y: &str) -> (String, String) {
    const CONTEXT: usize = 20;
    const MIDDLE: usize = 60;
    let whole = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let (a, b): (Vec<char>, Vec<char>) = (x.chars().collect(), y.chars().collect());
    if a.len().max(b.len()) <= 78 {
        return (whole(x), whole(y));
    }
    let prefix = a.iter().zip(&b).take_while(|(p, q)| p == q).count();
    let room = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(room)
        .take_while(|(p, q)| p == q)
        .count();
    let start = prefix.saturating_sub(CONTEXT);
    let piece = |v: &[char]| -> String {
        let stop = (v.len() - suffix + CONTEXT).min(v.len());
        let mut mid: String = v[start..stop].iter().collect();
        let mut cut_end = stop < v.len();
        if stop - start > MIDDLE + 2 * CONTEXT {
            mid = v[start..start + MIDDLE + CONTEXT].iter().collect();
            cut_end = true;
        }
        let quoted = whole(&mid);
        format!(
            "\"{}{}{}\"",
            if start > 0 { "…" } else { "" },
            &quoted[1..quoted.len() - 1],
            if cut_end { "…" } else { "" }
        )
    };
    (piece(&a), piece(&b))
}

/// A stable hash of what identifies a change: its code, subject, path and values, never
/// its message (so rewording a message moves nothing). SHA-256, its first 128 bits as 32
/// hex digits: no two changes can be made to share one.
pub fn fingerprint(
    code: &str,
    subject: &str,
    path: Option<&str>,
    before: &Option<Value>,
    after: &Option<Value>,
) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    // Each part with its length first, so no two sequences of parts read the same.
    for part in [code, subject, path.unwrap_or("")] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    // The values as compact JSON (as [`fingerprint_parts`] writes them), hashed as
    // they are written: a value can be most of a file.
    for v in [before, after] {
        let len = match v.as_ref().map(|v| JsonSink::Count(0).write(v)) {
            Some(JsonSink::Count(n)) => n,
            _ => 0,
        };
        h.update((len as u64).to_le_bytes());
        if let Some(v) = v {
            JsonSink::Hash(&mut h).write(v);
        }
    }
    let digest = h.finalize();
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// Where [`fingerprint`] and [`compact`] write a value's compact JSON: one type, so that
/// serde_json's serializer is in the binary once for both.
enum JsonSink<'h> {
    /// Count the bytes.
    Count(usize),
    /// Hash them.
    Hash(&'h mut sha2::Sha256),
    /// Keep them up to a number of bytes, then refuse the rest (which ends the writing).
    Keep(Vec<u8>, usize),
}

impl JsonSink<'_> {
    fn write(mut self, v: &Value) -> Self {
        let _ = serde_json::to_writer(&mut self, v);
        self
    }
}

impl std::io::Write for JsonSink<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            JsonSink::Count(n) => *n += buf.len(),
            JsonSink::Hash(h) => sha2::Digest::update(*h, buf),
            JsonSink::Keep(kept, limit) => {
                let n = buf.len().min(*limit - kept.len());
                if n == 0 && !buf.is_empty() {
                    return Err(std::io::ErrorKind::WriteZero.into());
                }
                kept.extend_from_slice(&buf[..n]);
                return Ok(n);
            }
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What a fingerprint covers: the rule id, the subject, the path, and the values before
/// and after (as compact JSON); `policy::legacy_fingerprint` hashes the same parts.
pub(crate) fn fingerprint_parts(
    code: &str,
    subject: &str,
    path: Option<&str>,
    before: &Option<Value>,
    after: &Option<Value>,
) -> [String; 5] {
    let json = |v: &Option<Value>| {
        v.as_ref()
            .map(|v| serde_json::to_string(v).unwrap_or_default())
            .unwrap_or_default()
    };
    [
        code.to_string(),
        subject.to_string(),
        path.unwrap_or("").to_string(),
        json(before),
        json(after),
    ]
}

/// Sort as reports show them: severity, then subject, then path, then code.
pub fn sort(changes: &mut [Change]) {
    changes.sort_by(|a, b| {
        a.severity
            .cmp(&b.severity)
            .then_with(|| a.subject.cmp(&b.subject))
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.code.cmp(&b.code))
            .then_with(|| a.fingerprint.cmp(&b.fingerprint))
    });
}

/// The overall result: the most severe change (`None` when nothing matters).
pub fn required_bump(changes: &[Change]) -> Severity {
    changes
        .iter()
        .map(|c| c.severity)
        .min()
        .unwrap_or(Severity::None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message's value and a fingerprint are written only as far as they need, and
    /// are what the whole value's compact JSON gives.
    #[test]
    fn values_are_shown_and_hashed_as_their_whole_json() {
        use sha2::{Digest, Sha256};
        let whole = |v: &Value| {
            let s = serde_json::to_string(v).unwrap();
            match s.chars().count() > 80 {
                true => format!("{}...", s.chars().take(77).collect::<String>()),
                false => s,
            }
        };
        let mut values = vec![
            Value::Null,
            serde_json::json!([]),
            serde_json::json!(vec![0; 40]),
            serde_json::json!(vec![0; 41]),
            serde_json::json!(vec![0; 100_000]),
            serde_json::json!({"a": "é".repeat(200), "b": [1.5, -2]}),
        ];
        for n in (75..90).chain([200]) {
            // 200: cut by the sink inside a character of three bytes.
            values.push(Value::String("€".repeat(n)));
            values.push(Value::String("x".repeat(n)));
        }
        for v in &values {
            assert_eq!(compact(v), whole(v), "{v}");
        }
        for (before, after) in [
            (None, None),
            (Some(&values[4]), Some(&values[5])),
            (None, Some(&values[2])),
        ] {
            let (before, after) = (before.cloned(), after.cloned());
            let mut h = Sha256::new();
            for part in fingerprint_parts("c", "tool:t", Some("p"), &before, &after) {
                h.update((part.len() as u64).to_le_bytes());
                h.update(part.as_bytes());
            }
            let expected: String = h.finalize()[..16]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(
                fingerprint("c", "tool:t", Some("p"), &before, &after),
                expected
            );
        }
    }

    #[test]
    fn long_texts_are_shown_around_where_they_differ() {
        // Short: whole, as JSON strings.
        assert_eq!(
            text_pair("a\"b", "c"),
            (r#""a\"b""#.into(), r#""c""#.into())
        );
        let head = "Fetch a page and return it as markdown, following redirects, with a timeout; ";
        let (b, a) = text_pair(
            &format!("{head}the model's name is sent."),
            &format!("{head}the cookies are sent too."),
        );
        assert_eq!(b, "\"…with a timeout; the model's name is sent.\"");
        assert_eq!(a, "\"…with a timeout; the cookies are sent too.\"");
        // A long difference is cut at its end; any text, any length, never panics.
        let (b, a) = text_pair(&"x".repeat(500), &"y".repeat(3));
        assert!(b.starts_with("\"xxx") && b.ends_with("…\"") && b.chars().count() < 90);
        assert_eq!(a, "\"yyy\"");
        for (x, y) in [
            ("", &"é".repeat(100)[..]),
            (&"ab".repeat(60)[..], &"ab".repeat(61)[..]),
        ] {
            let _ = text_pair(x, y);
            let _ = text_pair(y, x);
        }
    }
}
