//! The classification tables (`rules/*.toml`), embedded in the binary and parsed once.
//!
//! A row says: when comparator C reports event E on keyword K (or on field F of a
//! surface element), the change has code ID, this severity for input and for output,
//! and this message. The walker in `diff/` knows how to compare; these tables alone
//! decide what a difference means. Adding a row for an existing comparator needs no Rust.
//!
//! - `model`: the row and its vocabulary (severity, direction, comparator and events,
//!   scope, certainty, overrides, message templates);
//! - `load`: the embedded tables, parsed and validated at start-up;
//! - `index`: lookup by event, by id and by former id (aliases), and severities.

mod index;
mod load;
mod model;

pub use index::{Binding, Former, Rules};
pub use load::{structural, TABLES};
pub use model::{
    render_message, Certainty, Comparator, Condition, Direction, Override, Retired, Rule, Scope,
    Severity, ANY_KEYWORD, EXTENSION_KEYWORD, WALK_KEYWORD,
};
