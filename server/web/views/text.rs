//! Server text as the pages show it: invisible text-direction characters found and named, the
//! one-line preview of a question, and times as a person reads them (relative, local).

use chrono::{DateTime, Local, SecondsFormat, Utc};

use crate::broker::Kind;
use crate::broker::Question;
use crate::i18n::I18n;
use crate::protocol::invisible;
use serde_json::Value;

/// Whether `c` is an invisible character that changes the order text is displayed in: the
/// embeddings and overrides U+202A–U+202E, the isolates U+2066–U+2069, the marks U+200E/U+200F
/// and the Arabic letter mark U+061C (Unicode UAX #9, explicit formatting characters). A server
/// can use them to make its text look like something it is not (e.g. `exe.pdf` shown as
/// `fdp.exe`), and an unterminated override would also reorder the page's own words after it.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Whether `c` is hidden in server text: any invisible character
/// ([`crate::protocol::invisible::is_invisible`]) but the line feeds and tabs of multi-line
/// text, which the pages show as breaks.
fn hides(c: char) -> bool {
    invisible::is_invisible(c) && !invisible::is_layout(c)
}

/// Where server text holds invisible characters (bidi controls, zero-width characters,
/// variation selectors, tag characters, controls, …), as "place (U+202E, …)" lines: `server name`, `tool`,
/// then each string or key of the request by its JSON path (`message`,
/// `requestedSchema/properties/x/title`, …). At most [`MAX_PLACES`] places.
pub fn bidi_places(i18n: &I18n, server: &str, tool: Option<&str>, request: &Value) -> Vec<String> {
    let mut places = Vec::new();
    note(&i18n.t("bidi-place-server"), server, &mut places);
    if let Some(t) = tool {
        note(&i18n.t("bidi-place-tool"), t, &mut places);
    }
    walk(
        request,
        String::new(),
        &i18n.t("bidi-place-request"),
        &mut places,
    );
    places.truncate(MAX_PLACES);
    places
}

/// The most places [`bidi_places`] names.
pub const MAX_PLACES: usize = 8;

fn note(place: &str, text: &str, places: &mut Vec<String>) {
    let mut found: Vec<String> = text
        .chars()
        .filter(|c| hides(*c))
        .map(invisible::code_point)
        .collect();
    if found.is_empty() || places.len() >= MAX_PLACES {
        return;
    }
    found.dedup();
    // The place itself may be server text (a property name): shown with its invisible
    // characters made visible, so the list cannot be reordered or hidden by what it reports.
    let shown: String = place
        .chars()
        .map(|c| {
            if invisible::is_invisible(c) {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect();
    places.push(format!("{shown} ({})", found.join(", ")));
}

/// Notes the invisible characters of every string and key under `v`; `whole` names a top-level string.
fn walk(v: &Value, path: String, whole: &str, places: &mut Vec<String>) {
    let at = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}/{key}")
        }
    };
    match v {
        Value::String(s) => note(if path.is_empty() { whole } else { &path }, s, places),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, at(&i.to_string()), whole, places);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                note(&at(k), k, places);
                walk(item, at(k), whole, places);
            }
        }
        _ => {}
    }
}

/// The longest preview, in characters (an ellipsis marks a cut).
pub const PREVIEW_CHARS: usize = 90;

/// A one-line preview of what a question asks: the first non-empty line of a form or URL
/// question's `message`, or of a sampling question's first text block (else its system
/// prompt), cut to [`PREVIEW_CHARS`], each invisible character written as its code point.
/// Plain text; the template escapes it.
pub fn preview(q: &Question) -> String {
    let text = match q.kind {
        Kind::Form | Kind::Url => q.request.get("message").and_then(Value::as_str),
        Kind::ToolCall => q.request.get("name").and_then(Value::as_str),
        Kind::Sampling => {
            first_text(&q.request).or_else(|| q.request.get("systemPrompt").and_then(Value::as_str))
        }
    }
    .unwrap_or_default();
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    // Invisible characters as `[U+…]`: a preview cannot hide what the question asks.
    let line =
        super::url::inline_code_points(&line.split_whitespace().collect::<Vec<_>>().join(" "));
    if line.chars().count() > PREVIEW_CHARS {
        let cut: String = line.chars().take(PREVIEW_CHARS - 1).collect();
        format!("{}…", cut.trim_end())
    } else {
        line
    }
}

fn first_text(request: &Value) -> Option<&str> {
    request
        .get("messages")?
        .as_array()?
        .iter()
        .flat_map(|m| match m.get("content") {
            Some(Value::Array(blocks)) => blocks.iter().collect::<Vec<_>>(),
            Some(block) => vec![block],
            None => Vec::new(),
        })
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .find_map(|b| b.get("text").and_then(Value::as_str))
}

/// A point in time as the pages show it: relative words as the text ("3 min ago", "in 2 h",
/// in the page's language: [`Moment::relative`]), `local` (the service's local time zone,
/// which is the person's: the service runs per user) as its tooltip, `iso` (RFC 3339, whole
/// seconds) for `<time datetime>`.
pub struct Moment {
    /// RFC 3339 UTC to the second, e.g. `2026-12-01T10:45:00Z`.
    pub iso: String,
    /// Local date and time to the minute with the UTC offset, e.g. `2026-12-01 11:45 +01:00`
    /// (numeric, the same in every language).
    pub local: String,
    /// Seconds from the moment the page was made (negative: past); `None` for a time out of
    /// range.
    pub offset: Option<i64>,
}

impl Moment {
    /// The moment relative to the page's time, in words of `i18n`'s language.
    pub fn relative(&self, i18n: &I18n) -> String {
        match self.offset {
            Some(s) => i18n.relative(s),
            None => i18n.t("time-unknown"),
        }
    }
}

/// `t` as a [`Moment`] seen at `now`.
pub fn moment(t: DateTime<Utc>, now: DateTime<Utc>) -> Moment {
    Moment {
        iso: t.to_rfc3339_opts(SecondsFormat::Secs, true),
        local: t
            .with_timezone(&Local)
            .format("%Y-%m-%d %H:%M %:z")
            .to_string(),
        offset: Some(t.signed_duration_since(now).num_seconds()),
    }
}

/// A moment from milliseconds since the epoch (the store's unit); "unknown time" when out of
/// chrono's range (only a corrupt row could hold such a value).
pub fn moment_ms(ms: i64, now: DateTime<Utc>) -> Moment {
    DateTime::from_timestamp_millis(ms).map_or_else(
        || Moment {
            iso: String::new(),
            local: format!("{ms} ms since 1970"),
            offset: None,
        },
        |t| moment(t, now),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bidi_controls_are_found_with_their_place() {
        let request = json!({"message": "invoice\u{202E}fdp.exe", "requestedSchema": {"properties": {"a\u{2067}": {}}}});
        let places = bidi_places(&I18n::default(), "srv\u{200F}", None, &request);
        assert_eq!(
            places,
            vec![
                "server name (U+200F)",
                "message (U+202E)",
                "requestedSchema/properties/a\u{FFFD} (U+2067)"
            ]
        );
        assert!(
            bidi_places(
                &I18n::default(),
                "plain",
                Some("t"),
                &json!({"message": "שלום"})
            )
            .is_empty()
        );
    }

    #[test]
    fn every_invisible_character_is_found_but_the_lines_of_a_message() {
        let request = json!({"message": "two\nlines\twith a tab", "x": "a\u{E0100}\u{1b}\u{2028}"});
        let places = bidi_places(&I18n::default(), "srv", Some("t\u{E0041}"), &request);
        assert_eq!(
            places,
            vec!["tool (U+E0041)", "x (U+E0100, U+001B, U+2028)"]
        );
    }
}
