//! What a lint rule and a finding are: levels, targets, the closed set of predicates.

use serde::Deserialize;

use crate::path::Path;
use crate::subject::Subject;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
    Info,
    None,
}

impl Level {
    pub fn word(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Info => "info",
            Level::None => "none",
        }
    }

    pub fn parse(s: &str) -> Option<Level> {
        [Level::Error, Level::Warning, Level::Info, Level::None]
            .into_iter()
            .find(|l| l.word() == s)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum Target {
    #[serde(rename = "tool")]
    Tool,
    #[serde(rename = "tool.param")]
    ToolParam,
    #[serde(rename = "prompt")]
    Prompt,
    #[serde(rename = "prompt.arg")]
    PromptArg,
    #[serde(rename = "resource")]
    Resource,
    #[serde(rename = "template")]
    Template,
    #[serde(rename = "schema")]
    Schema,
    /// The server's own fields (name, title, version, instructions).
    #[serde(rename = "server")]
    Server,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Predicate {
    Missing,
    TooLong,
    DuplicateKey,
    InvalidName,
    NotObject,
    RequiredNotInProperties,
    EnumEmpty,
    EnumDuplicate,
    RefUnresolved,
    ArrayMissingItems,
    TypeMissing,
    /// A schema node's `default` that the node itself rejects (proven by the validator).
    DefaultInvalid,
    /// A UI resource (MCP Apps `_meta.ui`) asks for sandbox permissions, or lets its app
    /// reach any origin (a `*` in a `csp` domain list).
    UiReach,
    /// A tool's `x-mcp-header` declarations are invalid (clients drop the tool).
    McpHeaderInvalid,
    /// The server's version is the version of the SDK it is built with (`list`: the
    /// SDK versions, `name version` lines, from `[lists]`).
    SdkVersion,
    /// Across the configured servers: one tool (or prompt) name served by two or more.
    NameCollision,
    /// A text field (`fields`) holds a control, bidi, zero-width or tag character.
    HiddenCharacters,
    /// A text field (`fields`) contains a phrase of the word list `list` (case and
    /// whitespace ignored, invisible characters removed).
    Contains,
    /// Two names that differ only by confusable characters (the `list` of pairs) or
    /// case, or by invisible characters.
    ConfusableNames,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LintRule {
    pub id: String,
    pub level: Level,
    pub target: Target,
    pub predicate: Predicate,
    pub field: Option<String>,
    pub max: Option<u64>,
    /// The text fields a hidden_characters or contains predicate reads.
    pub fields: Option<Vec<String>>,
    /// The `[lists]` entry a contains or confusable_names predicate uses.
    pub list: Option<String>,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub code: String,
    pub level: Level,
    pub subject: Subject,
    /// What the reports show: a schema path (`inputSchema.properties.e`), or for a
    /// parameter the parameter itself, nested ones dotted (`limit`, `options.limit`).
    pub path: Option<Path>,
    /// Where the finding is in the element, when that differs from `path`
    /// (`inputSchema.properties.limit`): lockfile lines are anchored there.
    pub at: Option<Path>,
    pub message: String,
}
