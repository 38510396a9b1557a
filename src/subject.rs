//! What a change or a lint finding is about: an element (`tool:search`) or the server
//! itself (`server`). Below `diff` and `lint`, which both name their subjects by it.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use crate::elements::Kind;

/// The kind of thing a change is about: an element kind, or the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SubjectKind {
    Element(Kind),
    Server,
}

/// A change's subject: an element by kind and key, or the server (whose key is empty).
/// Written `tool:search` and `server`; that form is what reports show, fingerprints
/// cover and `[[ignore]] subject` globs match.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Subject {
    pub kind: SubjectKind,
    pub key: String,
}

impl Subject {
    pub fn element(kind: Kind, key: &str) -> Subject {
        Subject {
            kind: SubjectKind::Element(kind),
            key: key.to_string(),
        }
    }

    pub fn server() -> Subject {
        Subject {
            kind: SubjectKind::Server,
            key: String::new(),
        }
    }

    /// The element's kind and key (`None` for the server).
    pub fn element_key(&self) -> Option<(Kind, &str)> {
        match self.kind {
            SubjectKind::Element(k) => Some((k, &self.key)),
            SubjectKind::Server => None,
        }
    }

    /// `tool`, `resource`, `template`, `prompt` or `server`.
    pub fn word(&self) -> &'static str {
        match self.kind {
            SubjectKind::Element(k) => k.word(),
            SubjectKind::Server => "server",
        }
    }

    /// The bytes of the written form, in order (to compare without writing it).
    fn written(&self) -> impl Iterator<Item = u8> + '_ {
        let sep: &[u8] = match self.kind {
            SubjectKind::Element(_) => b":",
            SubjectKind::Server => b"",
        };
        self.word()
            .bytes()
            .chain(sep.iter().copied())
            .chain(self.key.bytes())
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            SubjectKind::Element(k) => write!(f, "{}:{}", k.word(), self.key),
            SubjectKind::Server => f.write_str("server"),
        }
    }
}

impl FromStr for Subject {
    type Err = ();

    /// The inverse of `Display`.
    fn from_str(s: &str) -> Result<Subject, ()> {
        if s == "server" {
            return Ok(Subject::server());
        }
        let (word, key) = s.split_once(':').ok_or(())?;
        Ok(Subject::element(Kind::from_word(word).ok_or(())?, key))
    }
}

/// Subjects order as their written form does (reports sort by it).
impl Ord for Subject {
    fn cmp(&self, other: &Subject) -> Ordering {
        self.written().cmp(other.written())
    }
}

impl PartialOrd for Subject {
    fn partial_cmp(&self, other: &Subject) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Serialised as its written form.
impl serde::Serialize for Subject {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_round_trip_and_order_as_written() {
        let all = [
            Subject::server(),
            Subject::element(Kind::Tool, "a:b"),
            Subject::element(Kind::Tool, ""),
            Subject::element(Kind::Resource, "file:///x"),
            Subject::element(Kind::Template, "db://{t}"),
            Subject::element(Kind::Prompt, "名前"),
        ];
        for a in &all {
            assert_eq!(a.to_string().parse::<Subject>(), Ok(a.clone()));
            for b in &all {
                assert_eq!(a.cmp(b), a.to_string().cmp(&b.to_string()), "{a} {b}");
            }
        }
    }
}
