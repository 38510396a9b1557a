//! A small regular-expression engine for JSON Schema `pattern`, used only to decide and
//! build witnesses. It understands the common ECMA-262 subset (literals, `.`, classes
//! and ranges, `\d \w \s` and their negations, anchors, groups, alternation, greedy and
//! lazy quantifiers, counted repetition) and says "unknown" for anything else
//! (backreferences, lookaround, word boundaries, flags): a witness is then not built,
//! never guessed. Matching is a Pike VM over a compiled program, so its cost is linear
//! in the input times the program size, whatever the pattern. A program's size counts
//! its instructions and the ranges of its classes, each class stored once.
//!
//! Two patterns are compared by the strings they match (`relation`): both programs run
//! as subset automata in step, over the parts of the alphabet their classes tell apart,
//! searching breadth-first for a shortest string one matches and the other does not.
//! A step budget bounds the search; past it the answer is "unknown".

/// A parsed pattern, or `None` when it uses a feature outside the subset.
pub struct Pattern {
    prog: Vec<Inst>,
    ast: Node,
    /// Every character class, once: instructions and nodes name them by index, so a
    /// class repeated a thousand times is stored once (a 50,000-character class under
    /// `{1000}` would otherwise be copied per repetition).
    classes: Vec<Class>,
}

#[derive(Clone, Debug)]
enum Node {
    /// One character of the class with this index in `classes`.
    Char(usize),
    Start,
    End,
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat(Box<Node>, u32, Option<u32>),
}

/// A set of characters: sorted, disjoint, non-adjacent ranges (a negated class is
/// stored as its complement).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Class {
    ranges: Vec<(char, char)>,
    /// Written negated (`[^"]`, `.`, `\S`): a sample prefers a plain character to the
    /// first of its ranges.
    common: bool,
}

/// The characters a sample or a witness prefers, in order.
const PREFERRED: [char; 8] = ['a', 'Z', '0', '_', '-', ' ', '!', '\u{e9}'];

fn next_char(c: u32) -> u32 {
    if c == 0xD7FF {
        0xE000
    } else {
        c + 1
    }
}

/// Sort and merge `ranges` (adjacent ones too, across the surrogate gap).
fn normalise(mut ranges: Vec<(char, char)>) -> Vec<(char, char)> {
    ranges.sort_unstable();
    let mut out: Vec<(char, char)> = Vec::with_capacity(ranges.len().min(64));
    for (a, b) in ranges {
        match out.last_mut() {
            Some(last) if (a as u32) <= next_char(last.1 as u32) => {
                if b > last.1 {
                    last.1 = b;
                }
            }
            _ => out.push((a, b)),
        }
    }
    out
}

/// Every character that is in none of `ranges` (normalised).
fn complement(ranges: &[(char, char)]) -> Vec<(char, char)> {
    let mut out = Vec::new();
    let mut from = 0u32;
    let mut push = |a: u32, b: u32| {
        // Skip the surrogates, which are no `char`.
        let a = if (0xD800..=0xDFFF).contains(&a) {
            0xE000
        } else {
            a
        };
        let b = if (0xD800..=0xDFFF).contains(&b) {
            0xD7FF
        } else {
            b
        };
        if let (Some(x), Some(y)) = (char::from_u32(a), char::from_u32(b)) {
            if x <= y {
                out.push((x, y));
            }
        }
    };
    for &(a, b) in ranges {
        if (a as u32) > from {
            push(from, a as u32 - 1);
        }
        from = b as u32 + 1;
    }
    if from <= char::MAX as u32 {
        push(from, char::MAX as u32);
    }
    out
}

impl Class {
    fn new(ranges: Vec<(char, char)>, negated: bool) -> Class {
        let ranges = normalise(ranges);
        Class {
            ranges: if negated { complement(&ranges) } else { ranges },
            common: negated,
        }
    }
    fn one(c: char) -> Class {
        Class {
            ranges: vec![(c, c)],
            common: false,
        }
    }
    fn contains(&self, c: char) -> bool {
        // The last range starting at or before `c`.
        let i = self.ranges.partition_point(|r| r.0 <= c);
        i > 0 && c <= self.ranges[i - 1].1
    }
    /// A character in the class (the `variant`th range's first), preferring plain
    /// letters and digits.
    fn sample(&self, variant: usize) -> Option<char> {
        if !self.common {
            return self
                .ranges
                .get(variant % self.ranges.len().max(1))
                .map(|r| r.0);
        }
        PREFERRED.into_iter().find(|&c| self.contains(c))
    }
}

/// The size of a program: its instructions plus the ranges of its classes, each class
/// counted once.
const MAX_PROGRAM: usize = 20_000;
const MAX_REPEAT: u32 = 1_000;

#[derive(Clone, Copy, Debug)]
enum Inst {
    /// A character of the class with this index.
    Char(usize),
    Split(usize, usize),
    Jmp(usize),
    Start,
    End,
    Match,
}

/// `\d`, `\w`, `\s` and their negations (ECMA-262 without the `u` flag: ASCII digits
/// and word characters, Unicode white space).
fn class_escape(c: char) -> Option<Class> {
    let digit = vec![('0', '9')];
    let word = vec![('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')];
    let space = vec![
        ('\t', '\r'),
        (' ', ' '),
        ('\u{a0}', '\u{a0}'),
        ('\u{1680}', '\u{1680}'),
        ('\u{2000}', '\u{200a}'),
        ('\u{2028}', '\u{2029}'),
        ('\u{202f}', '\u{202f}'),
        ('\u{205f}', '\u{205f}'),
        ('\u{3000}', '\u{3000}'),
        ('\u{feff}', '\u{feff}'),
    ];
    let (ranges, negated) = match c {
        'd' => (digit, false),
        'D' => (digit, true),
        'w' => (word, false),
        'W' => (word, true),
        's' => (space, false),
        'S' => (space, true),
        _ => return None,
    };
    Some(Class::new(ranges, negated))
}

/// The character a simple escape stands for (`\.` is `.`, `\n` a newline).
fn literal_escape(c: char) -> Option<char> {
    match c {
        'n' => Some('\n'),
        't' => Some('\t'),
        'r' => Some('\r'),
        'f' => Some('\u{c}'),
        'v' => Some('\u{b}'),
        '0' => Some('\0'),
        c if c.is_ascii_punctuation() => Some(c),
        _ => None,
    }
}

struct Parser<'a> {
    s: &'a [char],
    i: usize,
    classes: Vec<Class>,
    known: std::collections::HashMap<Class, usize>,
    /// The ranges of `classes`, counted against the program budget.
    ranges: usize,
}

impl Parser<'_> {
    /// The index of `class` in the table, adding it when new; `None` past the budget.
    fn intern(&mut self, class: Class) -> Option<Node> {
        if let Some(&i) = self.known.get(&class) {
            return Some(Node::Char(i));
        }
        self.ranges += class.ranges.len().max(1);
        if self.ranges > MAX_PROGRAM {
            return None;
        }
        let i = self.classes.len();
        self.classes.push(class.clone());
        self.known.insert(class, i);
        Some(Node::Char(i))
    }

    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn alt(&mut self, depth: usize) -> Option<Node> {
        if depth > 64 {
            return None;
        }
        let mut branches = vec![self.concat(depth)?];
        while self.peek() == Some('|') {
            self.i += 1;
            branches.push(self.concat(depth)?);
        }
        Some(if branches.len() == 1 {
            branches.pop()?
        } else {
            Node::Alt(branches)
        })
    }

    fn concat(&mut self, depth: usize) -> Option<Node> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom(depth)?;
            let atom = self.quantified(atom)?;
            items.push(atom);
        }
        Some(Node::Concat(items))
    }

    fn quantified(&mut self, atom: Node) -> Option<Node> {
        let (min, max) = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => {
                let rest: String = self.s[self.i..].iter().take(24).collect();
                let end = rest.find('}')?;
                let body = &rest[1..end];
                // ECMA-262 bounds are decimal digits only: `{+2}` or `{ 2}` is no
                // quantifier (Rust's `parse` would take `+2` as 2).
                let count = |d: &str| -> Option<u32> {
                    if d.is_empty() || !d.bytes().all(|b| b.is_ascii_digit()) {
                        return None;
                    }
                    d.parse().ok()
                };
                let (lo, hi) = match body.split_once(',') {
                    None => {
                        let n = count(body)?;
                        (n, Some(n))
                    }
                    Some((a, "")) => (count(a)?, None),
                    Some((a, b)) => (count(a)?, Some(count(b)?)),
                };
                if lo > MAX_REPEAT || hi.is_some_and(|h| h > MAX_REPEAT || h < lo) {
                    return None;
                }
                self.i += end;
                (lo, hi)
            }
            _ => return Some(atom),
        };
        self.i += 1;
        if self.peek() == Some('?') {
            self.i += 1; // lazy: the same set of matches
        }
        if matches!(self.peek(), Some('*' | '+' | '?' | '{')) {
            return None; // possessive or stacked quantifiers: not ECMA
        }
        if matches!(atom, Node::Start | Node::End) {
            return None;
        }
        Some(Node::Repeat(Box::new(atom), min, max))
    }

    fn atom(&mut self, depth: usize) -> Option<Node> {
        let c = self.peek()?;
        self.i += 1;
        let class = match c {
            '^' => return Some(Node::Start),
            '$' => return Some(Node::End),
            '.' => Class::new(
                vec![('\n', '\n'), ('\r', '\r'), ('\u{2028}', '\u{2029}')],
                true,
            ),
            '(' => {
                if self.peek() == Some('?') {
                    if self.s.get(self.i + 1) == Some(&':') {
                        self.i += 2;
                    } else {
                        return None; // lookaround or named group
                    }
                }
                let inner = self.alt(depth + 1)?;
                if self.peek() != Some(')') {
                    return None;
                }
                self.i += 1;
                return Some(inner);
            }
            '[' => self.class()?,
            '\\' => {
                let e = self.peek()?;
                self.i += 1;
                if let Some(class) = class_escape(e) {
                    class
                } else if e == 'u' {
                    Class::one(self.unicode()?)
                } else if e.is_ascii_digit() && e != '0' {
                    return None; // a backreference
                } else {
                    Class::one(literal_escape(e)?)
                }
            }
            ')' | '*' | '+' | '?' | '{' | '}' | ']' | '|' => return None,
            c => Class::one(c),
        };
        self.intern(class)
    }

    fn unicode(&mut self) -> Option<char> {
        let hex: String = self.s.get(self.i..self.i + 4)?.iter().collect();
        self.i += 4;
        char::from_u32(u32::from_str_radix(&hex, 16).ok()?)
    }

    /// A class after its `[`. As in ECMA-262, `]` right after `[` or `[^` closes it:
    /// `[]` matches nothing and `[^]` any character.
    fn class(&mut self) -> Option<Class> {
        let mut ranges = Vec::new();
        let negated = self.peek() == Some('^');
        if negated {
            self.i += 1;
        }
        let mut common = negated;
        loop {
            let c = self.peek()?;
            self.i += 1;
            if c == ']' {
                let mut class = Class::new(ranges, negated);
                class.common = common;
                return Some(class);
            }
            let lo = if c == '\\' {
                let e = self.peek()?;
                self.i += 1;
                if let Some(esc) = class_escape(e) {
                    // `[\D_]`: the union of the escape's characters and the rest.
                    common |= esc.common;
                    ranges.extend(esc.ranges);
                    continue;
                }
                if e == 'u' {
                    self.unicode()?
                } else if e == 'b' {
                    '\u{8}'
                } else {
                    literal_escape(e)?
                }
            } else {
                c
            };
            if self.peek() == Some('-') && self.s.get(self.i + 1).is_some_and(|&n| n != ']') {
                self.i += 1;
                let mut hi = self.peek()?;
                self.i += 1;
                if hi == '\\' {
                    let e = self.peek()?;
                    self.i += 1;
                    hi = if e == 'u' {
                        self.unicode()?
                    } else {
                        literal_escape(e)?
                    };
                }
                if hi < lo {
                    return None;
                }
                ranges.push((lo, hi));
            } else if ranges.last() != Some(&(lo, lo)) {
                // (A run of one character, `[aaaa…]`, is one range before sorting.)
                ranges.push((lo, lo));
            }
        }
    }
}

/// Compile `node` onto `prog`; `None` once `prog` and the classes' `ranges` together
/// pass the budget.
fn compile(node: &Node, prog: &mut Vec<Inst>, ranges: usize) -> Option<()> {
    if prog.len() + ranges > MAX_PROGRAM {
        return None;
    }
    match node {
        Node::Char(c) => prog.push(Inst::Char(*c)),
        Node::Start => prog.push(Inst::Start),
        Node::End => prog.push(Inst::End),
        Node::Concat(items) => {
            for n in items {
                compile(n, prog, ranges)?;
            }
        }
        Node::Alt(branches) => {
            let mut jumps = Vec::new();
            for (k, b) in branches.iter().enumerate() {
                if k + 1 < branches.len() {
                    let split = prog.len();
                    prog.push(Inst::Split(split + 1, 0));
                    compile(b, prog, ranges)?;
                    jumps.push(prog.len());
                    prog.push(Inst::Jmp(0));
                    let next = prog.len();
                    prog[split] = Inst::Split(split + 1, next);
                } else {
                    compile(b, prog, ranges)?;
                }
            }
            let end = prog.len();
            for j in jumps {
                prog[j] = Inst::Jmp(end);
            }
        }
        Node::Repeat(n, min, max) => {
            for _ in 0..*min {
                compile(n, prog, ranges)?;
            }
            match max {
                None => {
                    let split = prog.len();
                    prog.push(Inst::Split(split + 1, 0));
                    compile(n, prog, ranges)?;
                    prog.push(Inst::Jmp(split));
                    let end = prog.len();
                    prog[split] = Inst::Split(split + 1, end);
                }
                Some(max) => {
                    let mut splits = Vec::new();
                    for _ in *min..*max {
                        splits.push(prog.len());
                        prog.push(Inst::Split(0, 0));
                        compile(n, prog, ranges)?;
                    }
                    let end = prog.len();
                    for s in splits {
                        prog[s] = Inst::Split(s + 1, end);
                    }
                }
            }
        }
    }
    Some(())
}

impl Pattern {
    pub fn parse(pattern: &str) -> Option<Pattern> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut p = Parser {
            s: &chars,
            i: 0,
            classes: Vec::new(),
            known: std::collections::HashMap::new(),
            ranges: 0,
        };
        let ast = p.alt(0)?;
        if p.i != chars.len() {
            return None;
        }
        let mut prog = Vec::new();
        compile(&ast, &mut prog, p.ranges)?;
        prog.push(Inst::Match);
        Some(Pattern {
            prog,
            ast,
            classes: p.classes,
        })
    }

    /// Whether the pattern matches anywhere in `s` (JSON Schema patterns are not
    /// anchored); `None` when deciding would take more than a few million steps (a
    /// long server-supplied string against a large pattern): undecided, never slow.
    pub fn matches(&self, s: &str) -> Option<bool> {
        const MAX_WORK: usize = 4_000_000;
        if s.len().saturating_mul(self.prog.len()) > MAX_WORK {
            return None;
        }
        Some(self.is_match(s))
    }

    fn is_match(&self, s: &str) -> bool {
        let chars: Vec<char> = s.chars().collect();
        let n = self.prog.len();
        let mut current: Vec<usize> = Vec::new();
        let mut on = vec![usize::MAX; n];
        for pos in 0..=chars.len() {
            // A match may start at every position.
            self.add(&mut current, &mut on, 0, pos, chars.len(), pos);
            if current
                .iter()
                .any(|&pc| matches!(self.prog[pc], Inst::Match))
            {
                return true;
            }
            let Some(&c) = chars.get(pos) else { break };
            let mut next = Vec::new();
            let mut on_next = vec![usize::MAX; n];
            for &pc in &current {
                if let Inst::Char(class) = self.prog[pc] {
                    if self.classes[class].contains(c) {
                        self.add(
                            &mut next,
                            &mut on_next,
                            pc + 1,
                            pos + 1,
                            chars.len(),
                            pos + 1,
                        );
                    }
                }
            }
            current = next;
            on = on_next;
        }
        false
    }

    fn add(
        &self,
        list: &mut Vec<usize>,
        on: &mut [usize],
        pc: usize,
        pos: usize,
        len: usize,
        mark: usize,
    ) {
        let mut stack = vec![pc];
        while let Some(pc) = stack.pop() {
            if on[pc] == mark {
                continue;
            }
            on[pc] = mark;
            match &self.prog[pc] {
                Inst::Jmp(t) => stack.push(*t),
                Inst::Split(a, b) => {
                    stack.push(*b);
                    stack.push(*a);
                }
                Inst::Start => {
                    if pos == 0 {
                        stack.push(pc + 1);
                    }
                }
                Inst::End => {
                    if pos == len {
                        stack.push(pc + 1);
                    }
                }
                Inst::Char(_) | Inst::Match => list.push(pc),
            }
        }
    }

    /// A few strings the pattern matches: the shortest reading, each alternative,
    /// each repetition once more.
    pub fn samples(&self) -> Vec<String> {
        let mut out = Vec::new();
        for variant in 0..6 {
            let mut s = String::new();
            if sample(&self.ast, &self.classes, variant, &mut s, 0) && !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }
}

fn sample(node: &Node, classes: &[Class], variant: usize, out: &mut String, depth: usize) -> bool {
    if depth > 64 || out.len() > 4096 {
        return false;
    }
    match node {
        Node::Start | Node::End => true,
        Node::Char(c) => match classes[*c].sample(variant) {
            Some(ch) => {
                out.push(ch);
                true
            }
            None => false,
        },
        Node::Concat(items) => items
            .iter()
            .all(|n| sample(n, classes, variant, out, depth + 1)),
        Node::Alt(branches) => sample(
            &branches[variant % branches.len()],
            classes,
            variant,
            out,
            depth + 1,
        ),
        Node::Repeat(n, min, max) => {
            let extra = u32::from(variant % 2 == 1 && max.is_none_or(|m| m > *min));
            (0..min + extra).all(|_| sample(n, classes, variant, out, depth + 1))
        }
    }
}

// --- inclusion: is every string one pattern matches matched by another? --------------

/// How the strings two patterns match compare (JSON Schema `pattern`: a match anywhere
/// in the string).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Relation {
    /// The same strings, written differently.
    Equal,
    /// The new pattern matches every string the old one does, and more (the string is
    /// one the new matches and the old does not).
    Wider(String),
    /// The new pattern matches only strings the old one does, and fewer (the string is
    /// one the old matches and the new does not).
    Narrower(String),
    /// Each matches a string the other does not (old only, new only).
    Neither(String, String),
    /// Not decided: a pattern outside the engine, or past the step budget.
    Unknown,
}

/// Steps (program positions visited) one inclusion test may take: past it, undecided.
pub const MAX_INCLUSION_STEPS: usize = 2_000_000;

/// How `new` compares with `old`, by the strings each matches.
pub fn relation(old: &str, new: &str) -> Relation {
    let (Some(a), Some(b)) = (Pattern::parse(old), Pattern::parse(new)) else {
        return Relation::Unknown;
    };
    let lost = a.difference(&b, MAX_INCLUSION_STEPS);
    let gained = b.difference(&a, MAX_INCLUSION_STEPS);
    match (lost, gained) {
        (Some(None), Some(None)) => Relation::Equal,
        (Some(None), Some(Some(w))) => Relation::Wider(w),
        (Some(Some(w)), Some(None)) => Relation::Narrower(w),
        (Some(Some(x)), Some(Some(y))) => Relation::Neither(x, y),
        _ => Relation::Unknown,
    }
}

/// Where a pattern is after reading part of a string: the program positions waiting
/// for a character or for the end (`$`), or `All` once it has matched (a match
/// anywhere: whatever follows matches too).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Set {
    All,
    At(Vec<u32>),
}

/// Marks for a closure, reused between closures.
struct Scratch {
    mark: Vec<u32>,
    generation: u32,
}

impl Scratch {
    fn new(n: usize) -> Scratch {
        Scratch {
            mark: vec![0; n],
            generation: 0,
        }
    }
    fn next(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.generation = 1;
        }
    }
    /// Whether `pc` is newly visited in this generation.
    fn visit(&mut self, pc: usize) -> bool {
        let fresh = self.mark[pc] != self.generation;
        self.mark[pc] = self.generation;
        fresh
    }
}

impl Pattern {
    /// The positions reached from `seeds` without reading a character: `All` when
    /// one matches. `at_start`: `^` holds here; `at_end`: `$` holds (no character
    /// follows), otherwise `$` positions wait in the set.
    fn closure(
        &self,
        seeds: &[usize],
        (at_start, at_end): (bool, bool),
        scratch: &mut Scratch,
        steps: &mut usize,
    ) -> Set {
        scratch.next();
        let mut out = Vec::new();
        let mut stack: Vec<usize> = seeds.iter().rev().copied().collect();
        while let Some(pc) = stack.pop() {
            *steps += 1;
            if !scratch.visit(pc) {
                continue;
            }
            match self.prog[pc] {
                Inst::Jmp(t) => stack.push(t),
                Inst::Split(x, y) => {
                    stack.push(y);
                    stack.push(x);
                }
                Inst::Start if at_start => stack.push(pc + 1),
                Inst::Start => {}
                Inst::End if at_end => stack.push(pc + 1),
                Inst::End | Inst::Char(_) => out.push(pc as u32),
                Inst::Match => return Set::All,
            }
        }
        out.sort_unstable();
        Set::At(out)
    }

    /// Whether a string that ends here is matched.
    fn accepting(
        &self,
        set: &Set,
        at_start: bool,
        scratch: &mut Scratch,
        steps: &mut usize,
    ) -> bool {
        match set {
            Set::All => true,
            Set::At(pcs) => {
                let ends: Vec<usize> = pcs
                    .iter()
                    .filter(|&&pc| matches!(self.prog[pc as usize], Inst::End))
                    .map(|&pc| pc as usize + 1)
                    .collect();
                !ends.is_empty()
                    && self.closure(&ends, (at_start, true), scratch, steps) == Set::All
            }
        }
    }

    /// Where the pattern is after reading `c` from `set`. A match may also start
    /// after `c`, so the program's entry is a seed too.
    fn step(&self, set: &Set, c: char, scratch: &mut Scratch, steps: &mut usize) -> Set {
        let Set::At(pcs) = set else {
            return Set::All;
        };
        let mut seeds: Vec<usize> = Vec::new();
        for &pc in pcs {
            *steps += 1;
            if let Inst::Char(k) = self.prog[pc as usize] {
                if self.classes[k].contains(c) {
                    seeds.push(pc as usize + 1);
                }
            }
        }
        seeds.push(0);
        self.closure(&seeds, (false, false), scratch, steps)
    }

    /// A shortest string `self` matches and `other` does not: `Some(None)` when there
    /// is none (every string `self` matches, `other` matches too), `None` when
    /// deciding takes more than `max_steps`. The two patterns are run as subset
    /// automata in step over one alphabet: the characters split where any class of
    /// either begins or ends, one character standing for each part.
    pub fn difference(&self, other: &Pattern, max_steps: usize) -> Option<Option<String>> {
        let mut steps = 0usize;
        let symbols = alphabet(&[self, other], &mut steps, max_steps)?;
        let (mut sa, mut sb) = (
            Scratch::new(self.prog.len()),
            Scratch::new(other.prog.len()),
        );
        type Key = (Set, Set, bool);
        let first: Key = (
            self.closure(&[0], (true, false), &mut sa, &mut steps),
            other.closure(&[0], (true, false), &mut sb, &mut steps),
            true,
        );
        let mut states: Vec<Key> = vec![first.clone()];
        let mut parent: Vec<Option<(usize, char)>> = vec![None];
        let mut seen: std::collections::HashMap<Key, usize> =
            std::collections::HashMap::from([(first, 0)]);
        let mut next = 0;
        while next < states.len() {
            if steps > max_steps {
                return None;
            }
            let i = next;
            next += 1;
            let (a, b, at_start) = states[i].clone();
            if self.accepting(&a, at_start, &mut sa, &mut steps)
                && !other.accepting(&b, at_start, &mut sb, &mut steps)
            {
                let mut out = Vec::new();
                let mut k = i;
                while let Some((p, c)) = parent[k] {
                    out.push(c);
                    k = p;
                }
                return Some(Some(out.into_iter().rev().collect()));
            }
            // Nothing `other` rejects from here, or nothing more `self` matches.
            if b == Set::All || a == Set::At(Vec::new()) {
                continue;
            }
            for &c in &symbols {
                let na = self.step(&a, c, &mut sa, &mut steps);
                let nb = other.step(&b, c, &mut sb, &mut steps);
                let key = (na, nb, false);
                if let Set::At(v) = &key.0 {
                    steps += v.len();
                }
                if let Set::At(v) = &key.1 {
                    steps += v.len();
                }
                if !seen.contains_key(&key) {
                    seen.insert(key.clone(), states.len());
                    states.push(key);
                    parent.push(Some((i, c)));
                }
                if steps > max_steps {
                    return None;
                }
            }
        }
        Some(None)
    }
}

/// One character for each part of the alphabet no class of `patterns` tells apart,
/// the plainest first (a witness reads better as `a` than as U+0000).
fn alphabet(patterns: &[&Pattern], steps: &mut usize, max_steps: usize) -> Option<Vec<char>> {
    let classes: Vec<&Class> = patterns.iter().flat_map(|p| p.classes.iter()).collect();
    let mut cuts: Vec<u32> = vec![0];
    for c in &classes {
        for &(a, b) in &c.ranges {
            cuts.push(a as u32);
            cuts.push(next_char(b as u32));
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts.retain(|&c| c <= char::MAX as u32);
    // Each interval, with the classes it is in: intervals in the same classes are one
    // part of the alphabet.
    let mut parts: std::collections::HashMap<Vec<bool>, (u8, char)> =
        std::collections::HashMap::new();
    for (k, &lo) in cuts.iter().enumerate() {
        let hi = cuts.get(k + 1).map_or(char::MAX as u32, |&n| n - 1);
        let Some(pick) = plainest(lo, hi) else {
            continue; // the surrogates: no character
        };
        *steps += classes.len();
        if *steps > max_steps {
            return None;
        }
        let sig: Vec<bool> = classes.iter().map(|c| c.contains(pick.1)).collect();
        let best = parts.entry(sig).or_insert(pick);
        if pick < *best {
            *best = pick;
        }
    }
    let mut out: Vec<(u8, char)> = parts.into_values().collect();
    out.sort_unstable();
    Some(out.into_iter().map(|p| p.1).collect())
}

/// The plainest character in `lo..=hi` and its rank (lower is plainer): a preferred
/// one, a letter or digit, printable ASCII, anything but a control, then the first.
fn plainest(lo: u32, hi: u32) -> Option<(u8, char)> {
    let within = |c: char| (lo..=hi).contains(&(c as u32));
    if let Some(i) = PREFERRED.iter().position(|&c| within(c)) {
        return Some((i as u8, PREFERRED[i]));
    }
    for (rank, (a, b)) in [
        (10, ('a', 'z')),
        (10, ('A', 'Z')),
        (10, ('0', '9')),
        (11, ('!', '~')),
        (12, ('\u{a1}', char::MAX)),
    ] {
        let from = lo.max(a as u32);
        if from <= hi.min(b as u32) {
            let from = if (0xD800..=0xDFFF).contains(&from) {
                0xE000
            } else {
                from
            };
            if let Some(c) = char::from_u32(from).filter(|&c| within(c)) {
                return Some((rank, c));
            }
        }
    }
    let lo = if (0xD800..=0xDFFF).contains(&lo) {
        0xE000
    } else {
        lo
    };
    char::from_u32(lo).filter(|&c| within(c)).map(|c| (13, c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        Pattern::parse(p).unwrap().matches(s).unwrap()
    }

    #[test]
    fn the_common_subset_matches_like_ecma() {
        assert!(m("^[a-z]+$", "abc"));
        assert!(!m("^[a-z]+$", "ab1"));
        assert!(m("b", "abc"));
        assert!(m("^\\d{3}-\\d{4}$", "555-1234"));
        assert!(!m("^\\d{3}-\\d{4}$", "555-12345"));
        assert!(m("^(foo|bar)?baz$", "baz"));
        assert!(m("^(?:a|b)*c$", "ababc"));
        assert!(m("^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$", "a@example.com"));
        assert!(!m("^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$", "a@example"));
        assert!(m("^$", ""));
        assert!(m("x*", ""));
    }

    #[test]
    fn features_outside_the_subset_are_refused() {
        for p in [
            "(?=a)", "\\1", "(?<n>a)", "a{2000}", "\\bword", "a**", "a{+2}", "a{1,+2}", "a{ 2}",
        ] {
            assert!(Pattern::parse(p).is_none(), "{p}");
        }
    }

    #[test]
    fn ecma_empty_and_full_classes() {
        // `[]` matches nothing, `[^]` any character (a line terminator too).
        for s in ["", "]", "a", "[]"] {
            assert!(!m("[]", s), "[] ~ {s:?}");
            assert!(!m("a[]", s), "a[] ~ {s:?}");
        }
        assert!(m("^a[]?b$", "ab"));
        assert!(m("^[^]$", "\n"));
        assert!(m("^[^]{2}$", "]x"));
        assert!(!m("^[^]$", ""));
        assert!(!m("^[^]$", "ab"));
        assert!(m("^[^]*$", "\u{2028}\r"));
        assert!(Pattern::parse("[]").unwrap().samples().is_empty());
        assert_eq!(Pattern::parse("^[^]$").unwrap().samples(), ["a"]);
    }

    #[test]
    fn negated_escapes_join_a_class() {
        assert!(m("^[\\D_]+$", "a_b"));
        assert!(!m("^[\\D_]+$", "a1"));
        assert!(m("^[^\\d\\s]$", "x"));
        assert!(!m("^[^\\d\\s]$", "1"));
        assert!(!m("^[^\\d\\s]$", " "));
    }

    #[test]
    fn a_class_is_stored_once_and_counted_against_the_budget() {
        // A 50,000-character class repeated 19,000 times: one class, one range.
        let hostile = format!("(?:[{}]{{1000}}){{19}}", "a".repeat(50_000));
        let p = Pattern::parse(&hostile).unwrap();
        assert_eq!(p.classes.len(), 1);
        assert_eq!(p.classes[0].ranges, [('a', 'a')]);
        assert_eq!(p.matches(&"a".repeat(100)), Some(false));
        // 25,000 disjoint ranges are past the budget on their own: refused.
        let wide: String = (0..25_000u32)
            .filter_map(|i| char::from_u32(0x4e00 + 2 * i))
            .collect();
        assert!(Pattern::parse(&format!("[{wide}]")).is_none());
        // Within the budget alone, but not with 19,000 instructions beside them.
        let some: String = (0..2_000u32)
            .filter_map(|i| char::from_u32(0x4e00 + 2 * i))
            .collect();
        assert!(Pattern::parse(&format!("[{some}]")).is_some());
        assert!(Pattern::parse(&format!("(?:[{some}]{{1000}}){{19}}")).is_none());
    }

    #[test]
    fn inclusion_is_decided_with_a_witness() {
        use Relation::*;
        let r = relation;
        // The same strings, written differently.
        for (a, b) in [
            ("[0-9]", "\\d"),
            ("a|b", "[ab]"),
            ("^(?:a|b)+$", "^[ab][ab]*$"),
            ("x", "x+"),
            ("x", ".*x"),
            ("^a{2,3}$", "^aaa?$"),
            ("[^]", "[\\s\\S]"),
            ("[]", "^[]"),
            ("^a{2}$", "^a{02}$"),
        ] {
            assert_eq!(r(a, b), Equal, "{a} vs {b}");
        }
        // Widened and narrowed, each with a string that proves it.
        assert_eq!(r("^[a-z]+$", "^[a-z0-9]+$"), Wider("0".into()));
        assert_eq!(r("^[a-z0-9]+$", "^[a-z]+$"), Narrower("0".into()));
        assert_eq!(r("^a", "a"), Wider("Za".into()));
        assert_eq!(r("a", "^a$"), Narrower("aa".into()));
        assert_eq!(r("^a$", "^b$"), Neither("a".into(), "b".into()));
        assert_eq!(r("", "^$"), Narrower("a".into()));
        assert_eq!(r("[]", "x"), Wider("x".into()));
        // Outside the engine, or past the budget: undecided.
        assert_eq!(r("(?=a)", "a"), Unknown);
        assert_eq!(r("^.*a.{18}$", "^.*a.{17}$"), Unknown);
    }

    #[test]
    fn witnesses_prove_what_they_claim() {
        for (a, b) in [
            ("^[a-z]+$", "^[a-z0-9]+$"),
            ("^\\d{3}-\\d{4}$", "^\\d{3}-?\\d{4}$"),
            ("^[^@\\s]+@[^@\\s]+$", "^[^@]+@[^@]+$"),
            ("^v[0-9]+(\\.[0-9]+)*$", "^v[0-9]+(\\.[0-9]+){0,2}$"),
            ("^\\S*$", "^[^\\n]*$"),
            ("^.$", "^[^]$"),
        ] {
            let (pa, pb) = (Pattern::parse(a).unwrap(), Pattern::parse(b).unwrap());
            for (x, y) in [(&pa, &pb), (&pb, &pa)] {
                if let Some(Some(w)) = x.difference(y, MAX_INCLUSION_STEPS) {
                    assert_eq!(x.matches(&w), Some(true), "{a} {b} {w:?}");
                    assert_eq!(y.matches(&w), Some(false), "{a} {b} {w:?}");
                }
            }
        }
    }

    #[test]
    fn a_huge_pattern_is_undecided_quickly() {
        let hostile = format!("(?:[{}]{{1000}}){{19}}", "a".repeat(50_000));
        let other = format!("(?:[{}b]{{1000}}){{19}}", "a".repeat(50_000));
        let t = std::time::Instant::now();
        let _ = relation(&hostile, &other);
        assert!(t.elapsed() < std::time::Duration::from_secs(20));
    }

    #[test]
    fn samples_match_their_pattern() {
        for p in [
            "^[a-z]+$",
            "^\\d{3}-\\d{4}$",
            "^(foo|bar)?baz$",
            "^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$",
            "^v[0-9]+(\\.[0-9]+)*$",
        ] {
            let pat = Pattern::parse(p).unwrap();
            let s = pat.samples();
            assert!(!s.is_empty(), "{p}");
            for x in s {
                assert_eq!(pat.matches(&x), Some(true), "{p} !~ {x:?}");
            }
        }
    }
}
