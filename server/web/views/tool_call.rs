//! What the page shows about a tool call: the tool, what the server claims about it (marked as
//! claims), the arguments rendered readably (strings as text, URLs with their registrable
//! domain emphasised, the rest as JSON), and the edit box.

use super::last;
use super::sampling::pretty;
use super::url::{UrlPiece, any_hidden, inline_code_points, pieces, text_pieces, url_view};
use crate::broker::Question;
use crate::i18n::I18n;
use crate::protocol::FieldError;
use crate::protocol::invisible::escaped_json;
use serde_json::Value;
use serde_json::json;

/// One argument as shown.
pub struct ArgumentView {
    /// The argument's name in pieces, each invisible character shown by its code point.
    pub name: Vec<UrlPiece>,
    /// Its value (a string as it is, anything else as pretty JSON) in pieces, each invisible
    /// character shown by its code point, line feeds and tabs by a mark and the break.
    pub value: Vec<UrlPiece>,
    /// The name or the value holds invisible characters (a warning says so).
    pub hidden: bool,
    /// When the value is an http(s) URL: its host split for emphasis (subdomain, registrable).
    pub url: Option<(String, String)>,
}

/// The tool-call part of a question page.
pub struct ToolCallView {
    /// The tool's name, each invisible character written as its code point (`U+E0100`): the
    /// heading is one message, so the name is text in it.
    pub tool: String,
    /// The server's `description` of the tool (a claim).
    pub description: String,
    /// The server's annotations (claims), name and value.
    pub annotations: Vec<(String, String)>,
    /// The arguments, in the call's order.
    pub arguments: Vec<ArgumentView>,
    /// The edit box's text: what the person typed last, else the arguments as pretty JSON with
    /// every invisible character written as a JSON escape (`\u2028`: the same value, seen).
    pub arguments_json: String,
    /// The proxy saw the tool's `inputSchema` (edits are checked against it).
    pub schema_seen: bool,
    /// The call came with the API token over TCP, not from a proxy on this computer (which
    /// asks through the owner-only socket): a proxy given `--broker URL`, or anyone holding
    /// the token, so the page says so before the person allows or grants anything.
    pub over_tcp: bool,
}

/// The view of a tool-call question; `input` is what the person submitted last (kept).
pub fn tool_call_view(
    i18n: &I18n,
    q: &Question,
    input: Option<&[(String, String)]>,
) -> ToolCallView {
    let arguments = q
        .request
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let info = q.tool_info.clone().unwrap_or_default();
    let annotations = info
        .annotations
        .as_ref()
        .and_then(Value::as_object)
        .map(|a| {
            a.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let shown = arguments
        .as_object()
        .map(|args| {
            args.iter()
                .map(|(name, value)| {
                    let text = value.as_str().map_or_else(|| pretty(value), str::to_owned);
                    let value = text_pieces(&text);
                    let name = pieces(name);
                    ArgumentView {
                        hidden: any_hidden(&name) || any_hidden(&value),
                        name,
                        value,
                        url: url_parts(i18n, &text),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    ToolCallView {
        tool: inline_code_points(q.tool.as_deref().unwrap_or_default()),
        description: info.description.clone().unwrap_or_default(),
        annotations,
        arguments: shown,
        arguments_json: input
            .and_then(|pairs| last(pairs, "arguments"))
            .map_or_else(
                || escaped_json(&pretty(&arguments)).into_owned(),
                str::to_owned,
            ),
        schema_seen: info.input_schema.is_some(),
        over_tcp: q.opened_via == Some(crate::domain::Via::Token),
    }
}

/// The host of an http(s) URL split as URL questions show it, for emphasis.
fn url_parts(i18n: &I18n, text: &str) -> Option<(String, String)> {
    if !(text.starts_with("https://") || text.starts_with("http://")) {
        return None;
    }
    let view = url_view(i18n, text, "");
    (!view.registrable.is_empty()).then_some((view.subdomain, view.registrable))
}

/// The arguments a submitted tool-call form sends: `None` when the edit box still holds the
/// call's own arguments (the call goes as it was shown), else the edited object.
///
/// # Errors
/// A [`FieldError`] on `arguments` when the text is not JSON.
pub fn edited_arguments(
    q: &Question,
    pairs: &[(String, String)],
) -> Result<Option<Value>, Vec<FieldError>> {
    let Some(text) = last(pairs, "arguments") else {
        return Ok(None);
    };
    let edited: Value = serde_json::from_str(text).map_err(|e| {
        vec![FieldError::rule(
            "arguments",
            format!("the arguments are not valid JSON: {e}"),
        )]
    })?;
    // A number a JSON value cannot hold as typed would reach the server rounded.
    if crate::protocol::exact::has_inexact_number(text.as_bytes()) {
        return Err(vec![FieldError::rule(
            "arguments",
            "a number in the arguments cannot be sent exactly as typed (too many digits); write it as a string if the tool takes one",
        )]);
    }
    let shown = q
        .request
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    Ok((edited != shown).then_some(edited))
}
