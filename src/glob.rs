//! Glob patterns for `[[ignore]]` entries: globset's syntax, without its regex engine.
//!
//! DESIGN §5 says the `subject`, `path` and `code` of an ignore are "globset patterns".
//! The globset crate compiles every pattern to a regex, and that regex stack
//! (regex-automata, regex-syntax, aho-corasick) was ~630 KB of a 2.3 MB stdio-only
//! binary, to match a handful of short strings. This module parses the same syntax with
//! the same options as `globset::Glob::new` and matches by simulating all positions at
//! once, so a pattern costs O(pattern × subject) and never backtracks.
//!
//! The syntax (globset's defaults: `*` and `?` cross `/`, case-sensitive, `\` escapes):
//! - `?` one character, `*` any run of characters;
//! - `**` at the start, `/**` at the end and `/**/` inside are the recursive forms
//!   (`**/x` matches `x` and `a/b/x`); any other `**` is two `*`;
//! - `[abc]`, `[a-z]`, `[!a-z]` / `[^a-z]`, `[[:alpha:]]` (ASCII POSIX classes); a `]`
//!   or `-` first is literal, a `-` last is literal;
//! - `{a,b,c}` alternatives, nestable up to 100 deep; an empty alternative is dropped,
//!   as in globset (`x{,y}` matches only `xy`);
//! - `\c` is the character `c`.
//!
//! It is tested against globset itself (a dev-dependency) on generated patterns and
//! subjects, in `tests/glob.rs`. One deliberate difference: globset matches bytes, so
//! its `?` matches one byte of a multi-byte character; here `?` matches one character.

use std::fmt;

/// A compiled pattern.
#[derive(Clone, Debug)]
pub struct Glob {
    tokens: Vec<Token>,
}

/// Why a pattern does not parse; the text is globset's, so messages stay the same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlobError {
    UnclosedClass,
    InvalidRange(char, char),
    UnopenedAlternates,
    UnclosedAlternates,
    TooManyNestedAlternates,
    DanglingEscape,
}

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GlobError::UnclosedClass => f.write_str("unclosed character class; missing ']'"),
            GlobError::InvalidRange(a, b) => write!(f, "invalid range; '{a}' > '{b}'"),
            GlobError::UnopenedAlternates => {
                f.write_str("unopened alternate group; missing '{' (maybe escape '}' with '[}]'?)")
            }
            GlobError::UnclosedAlternates => {
                f.write_str("unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)")
            }
            GlobError::TooManyNestedAlternates => f.write_str("alternate groups nested too deeply"),
            GlobError::DanglingEscape => f.write_str("dangling '\\'"),
        }
    }
}

impl std::error::Error for GlobError {}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Literal(char),
    /// `?`
    Any,
    /// `*`
    ZeroOrMore,
    /// `**/` at the start: nothing, or anything ending in `/`.
    RecursivePrefix,
    /// `/**` at the end: `/` then anything.
    RecursiveSuffix,
    /// `/**/` inside: `/`, or `/` anything `/`.
    RecursiveZeroOrMore,
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    Alternates(Vec<Vec<Token>>),
}

/// Alternatives nested deeper than this are refused (globset's limit).
const MAX_ALTERNATES_DEPTH: usize = 100;

impl Glob {
    /// Parses a pattern, with the meaning `globset::Glob::new` gives it.
    pub fn new(pattern: &str) -> Result<Glob, GlobError> {
        let mut p = Parser {
            chars: pattern.chars().peekable(),
            prev: None,
            cur: None,
            stack: Vec::new(),
            branches: vec![Vec::new()],
        };
        p.parse()?;
        if p.branches.len() > 1 {
            return Err(GlobError::UnclosedAlternates);
        }
        Ok(Glob {
            tokens: p.branches.pop().unwrap_or_default(),
        })
    }

    /// Whether the whole of `subject` matches.
    pub fn is_match(&self, subject: &str) -> bool {
        // A pattern that is only `**` (or `**/`) matches everything.
        if self.tokens == [Token::RecursivePrefix] {
            return true;
        }
        let s: Vec<char> = subject.chars().collect();
        let mut start = vec![false; s.len() + 1];
        start[0] = true;
        advance(&self.tokens, &s, start)[s.len()]
    }
}

/// Every position reachable after `tokens`, from the positions in `set`.
fn advance(tokens: &[Token], s: &[char], mut set: Vec<bool>) -> Vec<bool> {
    let n = s.len();
    for token in tokens {
        let Some(first) = set.iter().position(|&b| b) else {
            return set;
        };
        let mut out = vec![false; n + 1];
        match token {
            Token::Literal(c) => one_char(&set, s, &mut out, |x| x == *c),
            Token::Any => one_char(&set, s, &mut out, |_| true),
            Token::Class { negated, ranges } => one_char(&set, s, &mut out, |x| {
                ranges.iter().any(|&(a, b)| a <= x && x <= b) != *negated
            }),
            Token::ZeroOrMore => out[first..].iter_mut().for_each(|b| *b = true),
            Token::RecursivePrefix => {
                out.copy_from_slice(&set);
                for q in first..n {
                    if s[q] == '/' {
                        out[q + 1] = true;
                    }
                }
            }
            Token::RecursiveSuffix => {
                if let Some(p) = (first..n).find(|&p| set[p] && s[p] == '/') {
                    out[p + 1..].iter_mut().for_each(|b| *b = true);
                }
            }
            Token::RecursiveZeroOrMore => {
                // `/` from any position; `/ anything /` from the first `/` reached.
                one_char(&set, s, &mut out, |x| x == '/');
                if let Some(p) = (first..n).find(|&p| set[p] && s[p] == '/') {
                    for q in p + 1..n {
                        if s[q] == '/' {
                            out[q + 1] = true;
                        }
                    }
                }
            }
            Token::Alternates(branches) => {
                let live: Vec<&Vec<Token>> = branches.iter().filter(|b| !is_void(b)).collect();
                if live.is_empty() {
                    continue;
                }
                for branch in live {
                    let reached = advance(branch, s, set.clone());
                    for (o, r) in out.iter_mut().zip(reached) {
                        *o |= r;
                    }
                }
            }
        }
        set = out;
    }
    set
}

fn one_char(set: &[bool], s: &[char], out: &mut [bool], ok: impl Fn(char) -> bool) {
    for (p, &c) in s.iter().enumerate() {
        if set[p] && ok(c) {
            out[p + 1] = true;
        }
    }
}

/// A branch that globset compiles to nothing: empty, or only groups of such branches.
/// globset drops these alternatives (its `empty_alternates` option is off).
fn is_void(tokens: &[Token]) -> bool {
    tokens
        .iter()
        .all(|t| matches!(t, Token::Alternates(bs) if bs.iter().all(|b| is_void(b))))
}

struct Parser<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    prev: Option<char>,
    cur: Option<char>,
    /// For each open `{`, the index in `branches` of its first alternative.
    stack: Vec<usize>,
    /// The alternatives being built; tokens go to the last one.
    branches: Vec<Vec<Token>>,
}

impl Parser<'_> {
    fn bump(&mut self) -> Option<char> {
        self.prev = self.cur;
        self.cur = self.chars.next();
        self.cur
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }

    fn push(&mut self, t: Token) {
        if let Some(branch) = self.branches.last_mut() {
            branch.push(t);
        }
    }

    fn parse(&mut self) -> Result<(), GlobError> {
        while let Some(c) = self.bump() {
            match c {
                '?' => self.push(Token::Any),
                '*' => self.star(),
                '[' => self.class()?,
                '{' => {
                    if self.stack.len() >= MAX_ALTERNATES_DEPTH {
                        return Err(GlobError::TooManyNestedAlternates);
                    }
                    self.stack.push(self.branches.len());
                    self.branches.push(Vec::new());
                }
                '}' => {
                    let start = self.stack.pop().ok_or(GlobError::UnopenedAlternates)?;
                    let alts = self.branches.split_off(start);
                    self.push(Token::Alternates(alts));
                }
                ',' if !self.stack.is_empty() => self.branches.push(Vec::new()),
                '\\' => {
                    let c = self.bump().ok_or(GlobError::DanglingEscape)?;
                    self.push(Token::Literal(c));
                }
                c => self.push(Token::Literal(c)),
            }
        }
        Ok(())
    }

    /// After a `*`: one star, two stars, or one of the recursive forms.
    fn star(&mut self) {
        let prev = self.prev;
        if self.peek() != Some('*') {
            return self.push(Token::ZeroOrMore);
        }
        self.bump();
        let two_stars = |p: &mut Self| {
            p.push(Token::ZeroOrMore);
            p.push(Token::ZeroOrMore);
        };
        let branch_empty = self.branches.last().is_none_or(|b| b.is_empty());
        if branch_empty {
            if self.peek().is_some_and(|c| c != '/') {
                two_stars(self);
            } else {
                self.push(Token::RecursivePrefix);
                self.bump();
            }
            return;
        }
        if prev != Some('/')
            && (self.branches.len() <= 1 || (prev != Some(',') && prev != Some('{')))
        {
            return two_stars(self);
        }
        let is_suffix = match self.peek() {
            None => {
                self.bump();
                true
            }
            Some(',') | Some('}') if self.branches.len() >= 2 => true,
            Some('/') => {
                self.bump();
                false
            }
            _ => return two_stars(self),
        };
        let last = self.branches.last_mut().and_then(|b| b.pop());
        self.push(match last {
            Some(Token::RecursivePrefix) => Token::RecursivePrefix,
            Some(Token::RecursiveSuffix) => Token::RecursiveSuffix,
            _ if is_suffix => Token::RecursiveSuffix,
            _ => Token::RecursiveZeroOrMore,
        });
    }

    /// After a `[`: a character class up to its `]`.
    fn class(&mut self) -> Result<(), GlobError> {
        let negated = matches!(self.peek(), Some('!') | Some('^'));
        if negated {
            self.bump();
        }
        let mut ranges: Vec<(char, char)> = Vec::new();
        let mut first = true;
        let mut in_range = false;
        let extend = |ranges: &mut Vec<(char, char)>, c: char| -> Result<(), GlobError> {
            let last = ranges.last_mut().ok_or(GlobError::UnclosedClass)?;
            last.1 = c;
            if last.1 < last.0 {
                return Err(GlobError::InvalidRange(last.0, last.1));
            }
            Ok(())
        };
        loop {
            let c = self.bump().ok_or(GlobError::UnclosedClass)?;
            match c {
                ']' if !first => break,
                '-' if !first => {
                    if in_range {
                        extend(&mut ranges, '-')?;
                        in_range = false;
                    } else {
                        in_range = true;
                    }
                }
                '[' if !in_range && self.peek() == Some(':') => {
                    match self.posix_class() {
                        Some(r) => ranges.extend_from_slice(r),
                        None => ranges.push(('[', '[')),
                    }
                    in_range = false;
                }
                c => {
                    if in_range {
                        extend(&mut ranges, c)?;
                    } else {
                        ranges.push((c, c));
                    }
                    in_range = false;
                }
            }
            first = false;
        }
        if in_range {
            ranges.push(('-', '-'));
        }
        self.push(Token::Class { negated, ranges });
        Ok(())
    }

    /// After `[` with `:` next: `[:name:]`. A malformed one is rewound (and the `[`
    /// is literal); a well-formed one with an unknown name is consumed and gives
    /// nothing, as in globset.
    fn posix_class(&mut self) -> Option<&'static [(char, char)]> {
        let saved = (self.chars.clone(), self.prev, self.cur);
        self.bump();
        let mut name = String::new();
        loop {
            match self.bump() {
                Some(':') if self.peek() == Some(']') => {
                    self.bump();
                    return posix_ranges(&name);
                }
                Some(c) if c.is_ascii_lowercase() && name.len() < 8 => name.push(c),
                _ => {
                    (self.chars, self.prev, self.cur) = saved;
                    return None;
                }
            }
        }
    }
}

fn posix_ranges(name: &str) -> Option<&'static [(char, char)]> {
    Some(match name {
        "alnum" => &[('0', '9'), ('A', 'Z'), ('a', 'z')],
        "alpha" => &[('A', 'Z'), ('a', 'z')],
        "blank" => &[('\t', '\t'), (' ', ' ')],
        "cntrl" => &[('\x00', '\x1f'), ('\x7f', '\x7f')],
        "digit" => &[('0', '9')],
        "graph" => &[('!', '~')],
        "lower" => &[('a', 'z')],
        "print" => &[(' ', '~')],
        "punct" => &[('!', '/'), (':', '@'), ('[', '`'), ('{', '~')],
        "space" => &[('\t', '\r'), (' ', ' ')],
        "upper" => &[('A', 'Z')],
        "xdigit" => &[('0', '9'), ('A', 'F'), ('a', 'f')],
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        Glob::new(p).unwrap().is_match(s)
    }

    #[test]
    fn basics() {
        assert!(m("tool:internal_*", "tool:internal_debug"));
        assert!(!m("tool:internal_*", "tool:public"));
        assert!(m("tool:?", "tool:a"));
        assert!(!m("tool:?", "tool:ab"));
        assert!(m("{tool,prompt}:x", "prompt:x"));
        assert!(m("[!a]b", "cb"));
        assert!(!m("[!a]b", "ab"));
        assert!(m("a\\*", "a*"));
        assert!(!m("a\\*", "ab"));
        assert!(m("**", "anything/at/all"));
        assert!(m("**/x", "x"));
        assert!(m("**/x", "a/b/x"));
        assert!(m("a/**", "a/b"));
        assert!(!m("a/**", "a"));
        assert!(m("a/**/b", "a/b"));
        assert!(m("a/**/b", "a/x/y/b"));
        assert!(m("x{,y}", "xy"));
        assert!(!m("x{,y}", "x"));
        assert!(m("?", "é"));
    }

    #[test]
    fn errors() {
        assert_eq!(Glob::new("[oops").unwrap_err(), GlobError::UnclosedClass);
        assert_eq!(
            Glob::new("[z-a]").unwrap_err(),
            GlobError::InvalidRange('z', 'a')
        );
        assert_eq!(Glob::new("{a").unwrap_err(), GlobError::UnclosedAlternates);
        assert_eq!(Glob::new("a}").unwrap_err(), GlobError::UnopenedAlternates);
        assert_eq!(Glob::new("a\\").unwrap_err(), GlobError::DanglingEscape);
        let deep = "{".repeat(101);
        assert_eq!(
            Glob::new(&deep).unwrap_err(),
            GlobError::TooManyNestedAlternates
        );
    }
}
