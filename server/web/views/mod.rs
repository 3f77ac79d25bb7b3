//! View models the page templates render, and the parsing of what the person typed: built
//! from questions, reviews and forms, never touching HTTP.

pub mod diff;
pub mod form;
pub mod problem;
pub mod prompt;
pub mod review;
pub mod sampling;
pub mod spend;
pub mod summary;
pub mod text;
pub mod tool_call;
pub mod url;

/// The last value of `key` in submitted form pairs (a repeated field counts once, as the last).
pub fn last<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}
