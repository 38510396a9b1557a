//! Neutralising what a server says before it reaches a terminal, a CI log, a pull
//! request or an XML parser.
//!
//! A server under test may be hostile: its names, descriptions, versions, error texts
//! and stderr can hold terminal escape sequences, carriage returns that overwrite a
//! line, newlines that start a GitHub workflow command (`::add-mask::`), bidirectional
//! overrides that make text read differently from what it is (Trojan Source), or
//! markup that renders in a pull-request comment. Every text channel passes server
//! strings through one of these functions:
//!
//! - [`text`]: one line of plain text (human report, lint, stderr, errors, JUnit,
//!   workflow commands, SARIF messages). Risky characters become `\u{..}`.
//! - [`json`]: a serialized JSON document whose strings keep their exact values but
//!   never hold a raw risky character (they are written as `\uXXXX` escapes).
//! - [`code_span`] / [`inert`]: markdown where nothing a server wrote can render.
//! - [`xml`]: text that is well-formed XML 1.0 character data.

use std::borrow::Cow;

/// Characters never written raw where a person or a log parser reads text: C0 and C1
/// controls (newline, carriage return, ESC, DEL included), the bidirectional embedding,
/// override and isolate controls, line and paragraph separators, zero-width and
/// direction marks, the byte-order mark, interlinear annotation controls,
/// noncharacters U+FFFE/U+FFFF, and the invisible tag characters U+E0000–U+E007F.
pub fn risky(ch: char) -> bool {
    ch.is_control()
        || matches!(
            ch,
            '\u{061C}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{FFFE}'
                | '\u{FFFF}'
                | '\u{E0000}'..='\u{E007F}'
        )
}

/// One line of plain text: every [`risky`] character written as `\u{XXXX}`, so the
/// result holds no newline, no escape sequence and no bidi control. Nor a workflow
/// command a CI runner would act on: GitHub's runner reads `##[error ...]`,
/// `##[add-mask]...` anywhere in a line (the second `#` is written `\u{23}`), and
/// `::command::` at a line's start after blanks (the first `:` is written `\u{3a}`).
pub fn text(s: &str) -> Cow<'_, str> {
    let command = s.trim_start().starts_with("::");
    if !command && !s.contains("##[") && !s.chars().any(risky) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut leading = true;
    let mut chars = s.chars().peekable();
    while let Some(ch) = chars.next() {
        if risky(ch) {
            out.push_str(&format!("\\u{{{:x}}}", ch as u32));
        } else if leading && ch == ':' && command {
            out.push_str("\\u{3a}");
        } else if ch == '#' && out.ends_with('#') && chars.peek() == Some(&'[') {
            out.push_str("\\u{23}");
        } else {
            out.push(ch);
        }
        leading &= ch.is_whitespace();
    }
    Cow::Owned(out)
}

/// [`text`], cut to at most `max` characters (an ellipsis and the number of characters
/// left out mark the cut).
pub fn truncated(s: &str, max: usize) -> String {
    let t = text(s);
    let n = t.chars().count();
    if n <= max {
        return t.into_owned();
    }
    let kept: String = t.chars().take(max).collect();
    format!("{kept}… ({} more characters)", n - max)
}

/// A serialized JSON document with every [`risky`] character inside its strings
/// written as a `\uXXXX` escape (UTF-16 pairs above U+FFFF). The values are unchanged:
/// a JSON parser reads back exactly the same document. Risky characters can only occur
/// inside strings (JSON's own syntax is ASCII), so the whole text can be scanned.
/// `##[`, which a runner reads as a workflow command anywhere in a line, is written
/// `#\u0023[` (a report printed to a CI log carries the exact values, inert).
pub fn json(doc: String) -> String {
    if doc.contains("##[") {
        return json(doc.replace("##[", "#\\u0023["));
    }
    if !doc.chars().any(|c| risky(c) && c != '\n') {
        return doc;
    }
    let mut out = String::with_capacity(doc.len() + 16);
    for ch in doc.chars() {
        // Newlines between tokens are the pretty-printer's, not data (serde_json
        // writes a newline inside a string as `\n`).
        if risky(ch) && ch != '\n' {
            let mut buf = [0u16; 2];
            for unit in ch.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(ch);
        }
    }
    out
}

/// XML 1.0 character data (element text or an attribute value): markup characters as
/// entities, and [`text`]'s escaping, which also removes every character XML 1.0
/// forbids (C0 controls, U+FFFE, U+FFFF); lone surrogates cannot occur in a `&str`.
pub fn xml(s: &str) -> String {
    let t = text(s);
    let mut out = String::with_capacity(t.len());
    for ch in t.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// The longest run of `ch` in `s`.
pub fn longest_run(s: &str, ch: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in s.chars() {
        run = if c == ch { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// Markdown: `s` as an inline code span that nothing inside can close early, on one
/// line ([`text`]), at most `max` characters. Inside a code span nothing renders: no
/// HTML, image, link, autolink, @mention or issue reference. `table` escapes `|`, which
/// GitHub's table parser reads before the code span (`\|` renders as `|` there).
pub fn code_span(s: &str, max: usize, table: bool) -> String {
    let mut t = truncated(s, max);
    if table {
        t = t.replace('|', "\\|");
    }
    if t.is_empty() {
        return String::new();
    }
    let fence = "`".repeat(longest_run(&t, '`') + 1);
    // Padding lets a span start or end with a backtick or a space; one space on each
    // side is stripped when rendered.
    if t.starts_with(['`', ' ']) || t.ends_with(['`', ' ']) {
        format!("{fence} {t} {fence}")
    } else {
        format!("{fence}{t}{fence}")
    }
}

/// Whether `s` renders in markdown exactly as written, with nothing live: only
/// letters, digits, spaces and `,;()'-→—.` with no `www.`, nothing a renderer could
/// read as a link, mention, issue or commit reference (`GH-1`, a hex word of seven or
/// more characters), HTML, emphasis or a table cell border.
pub fn inert(s: &str) -> bool {
    let chars_ok = s.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                ' ' | ',' | ';' | '(' | ')' | '\'' | '-' | '.' | '→' | '—'
            )
    });
    if !chars_ok || s.is_empty() || s.starts_with(' ') || s.ends_with(' ') {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    if lower.contains("www.") || lower.contains("gh-") || lower.contains("..") {
        return false;
    }
    // Emoji shortcodes need `:`, which is not allowed; a commit SHA is a hex word.
    !s.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| w.len() >= 7 && w.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Markdown for a plain-text cell: as written when [`inert`], else a code span.
pub fn md_text(s: &str, max: usize, table: bool) -> String {
    if inert(s) && s.chars().count() <= max {
        s.to_string()
    } else {
        code_span(s, max, table)
    }
}

/// GitHub workflow-command escaping of a message: [`text`] first (so no newline can
/// end the command early and start another), then `%`, CR and LF as the runner expects.
pub fn workflow_data(s: &str) -> String {
    text(s)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// GitHub workflow-command escaping of a property value (also `:` and `,`).
pub fn workflow_property(s: &str) -> String {
    workflow_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_commands_are_neutralised_anywhere_a_runner_reads_them() {
        for (raw, want) in [
            (
                "y##[error file=src/app.js,line=1]x",
                "y#\\u{23}[error file=src/app.js,line=1]x",
            ),
            ("x##[add-mask]removed", "x#\\u{23}[add-mask]removed"),
            ("###[set-output name=a]b", "##\\u{23}[set-output name=a]b"),
            ("  ::error::x", "  \\u{3a}:error::x"),
            ("::add-mask::y", "\\u{3a}:add-mask::y"),
            ("a ::b", "a ::b"),
            ("#[x] ## [y]", "#[x] ## [y]"),
        ] {
            let got = text(raw);
            assert_eq!(got, want, "{raw}");
            assert!(!got.contains("##["), "{got}");
            assert!(!got.trim_start().starts_with("::"), "{got}");
        }
    }

    /// Whether `c` is allowed in an XML 1.0 document.
    fn xml_char(c: char) -> bool {
        matches!(c, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
    }

    #[test]
    fn text_escapes_controls_bidi_and_separators() {
        assert_eq!(text("a\nb"), "a\\u{a}b");
        assert_eq!(text("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert_eq!(text("x\u{202E}y\u{2066}"), "x\\u{202e}y\\u{2066}");
        assert_eq!(text("\u{2028}\u{85}\r"), "\\u{2028}\\u{85}\\u{d}");
        assert_eq!(text("\u{E0041}"), "\\u{e0041}");
        assert!(matches!(text("plain ü → ok"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_keeps_values_and_escapes_raw_characters() {
        let v = serde_json::json!({"k": "a\u{202E}b\u{85}\u{E0041}\u{2028}"});
        let s = json(serde_json::to_string_pretty(&v).unwrap());
        assert!(!s.chars().any(|c| risky(c) && c != '\n'), "{s}");
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
        // A workflow command a runner would read anywhere in the line: inert, exact.
        let v = serde_json::json!({"k": "x##[add-mask]y ###[error]z \\##[a]\u{2028}", "##[k]": 1});
        let s = json(serde_json::to_string_pretty(&v).unwrap());
        assert!(!s.contains("##["), "{s}");
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn code_spans_cannot_be_closed_early() {
        assert_eq!(code_span("a`b", 100, false), "``a`b``");
        assert_eq!(code_span("`a", 100, false), "`` `a ``");
        assert_eq!(code_span("a|b", 100, true), "`a\\|b`");
        assert!(code_span(&"x".repeat(50), 10, false).contains("… (40 more characters)"));
    }

    #[test]
    fn inert_text_is_only_plain_words() {
        assert!(inert("tool was removed"));
        assert!(inert("maxLength decreased from 10 to 5"));
        for live in [
            "<img src=x>",
            "@octocat",
            "[a](b)",
            "see www.evil.example",
            "fixes #1",
            "GH-12",
            "deadbeef0",
            "**bold**",
            "a|b",
            "http://x",
        ] {
            assert!(!inert(live), "{live}");
        }
    }

    #[test]
    fn xml_is_xml_1_0() {
        let s = xml("a\u{FFFE}\u{FFFF}\u{1}<&\"'>");
        assert!(s.chars().all(xml_char), "{s}");
        assert!(s.contains("&lt;&amp;&quot;&apos;&gt;"), "{s}");
    }
}
