//! One host `tools/call` as the person sees it: what it names, the digest that binds a consent
//! to it, its arguments checked against the tool's `inputSchema`, and the `CallToolResult` the
//! host gets when the call is refused (MCP `tools/call`, `CallToolResult.isError`:
//! d:2025-11-25/server/tools.mdx §Error Handling — a tool error the model can read and act on).

use std::borrow::Cow;
use std::collections::HashMap;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::protocol::FieldError;

/// The `_meta` key of the refusal note the proxy adds beside the text content of a result it
/// makes itself. A host may read it; none needs to.
pub const REFUSAL_META: &str = "io.github.mcp-consent/refusal";

/// The `_meta` key of the authorization denial envelope (the draft SEP-2643 shape, `reason`
/// `insufficient_authorization`: the person's approval is missing) on a call refused for want of
/// consent. Additive: a host that does not know the draft reads the text.
pub const AUTHORIZATION_META: &str = "authorization";

/// SEP-2643's one `reason`: the failure is an authorization denial.
const INSUFFICIENT_AUTHORIZATION: &str = "insufficient_authorization";

/// A `tools/call`'s params as shown: the tool's name and its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// `params.name`.
    pub name: String,
    /// `params.arguments` (an object; `{}` when absent).
    pub arguments: Value,
}

/// Why a `tools/call` cannot be a question.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// `params.name` is missing or not a non-empty string.
    #[error("tools/call needs params.name, a non-empty string")]
    NoName,
    /// `params.arguments` is present and not an object.
    #[error("tools/call params.arguments must be an object")]
    ArgumentsNotAnObject,
}

impl ToolCall {
    /// Reads a `tools/call`'s params.
    ///
    /// # Errors
    /// [`CallError`] when the name or the arguments are not of the schema's types.
    pub fn from_params(params: &Value) -> Result<ToolCall, CallError> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or(CallError::NoName)?
            .to_owned();
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => json!({}),
            Some(Value::Object(a)) => Value::Object(a.clone()),
            Some(_) => return Err(CallError::ArgumentsNotAnObject),
        };
        Ok(ToolCall { name, arguments })
    }

    /// The call's identity: SHA-256 (hex) of the RFC 8785 canonical JSON of
    /// `{"name", "arguments"}` (integers with all their digits). A consent given for one digest is used for no other call.
    pub fn digest(&self) -> String {
        digest(&json!({"name": self.name, "arguments": self.arguments}))
    }

    /// The digest of the arguments alone (what the audit keeps: never the arguments).
    pub fn arguments_digest(&self) -> String {
        digest(&self.arguments)
    }
}

/// [`ToolCall::arguments_digest`] of arguments given as their JSON text (`None`: absent, so
/// `{}`); text that is not JSON is digested as it is.
pub fn arguments_text_digest(arguments: Option<&str>) -> String {
    match arguments.map(serde_json::from_str::<Value>) {
        None | Some(Ok(Value::Null)) => digest(&json!({})),
        Some(Ok(value)) => digest(&value),
        Some(Err(_)) => hex::encode(Sha256::digest(arguments.unwrap_or_default())),
    }
}

/// SHA-256 (hex) of `value`'s canonical JSON, every integer digit kept
/// ([`crate::protocol::exact::canonical`]): two calls that differ never share a digest.
fn digest(value: &Value) -> String {
    hex::encode(Sha256::digest(crate::protocol::exact::canonical(value)))
}

/// What the server claimed about a tool in `tools/list`, kept by the proxy and shown to the
/// person as claims (the `toolInfo` of `POST /api/v1/requests`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `inputSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    /// `annotations` (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`,
    /// `title`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

impl ToolInfo {
    /// The annotations' hints, for rules that match on them.
    pub fn hints(&self) -> super::Hints {
        let hint = |name: &str| {
            self.annotations
                .as_ref()
                .and_then(|a| a.get(name))
                .and_then(Value::as_bool)
        };
        super::Hints {
            read_only: hint("readOnlyHint"),
            destructive: hint("destructiveHint"),
        }
    }
}

/// A tool as a `tools/list` result listed it: the entry's JSON text, kept as it came and read
/// only when a call of that tool is judged or asked about ([`ToolInfo::from_listed`]). A list
/// of thousands of tools is scanned once and never built into a tree.
pub type ListedTool = Box<RawValue>;

/// The tools a `tools/list` result (raw text) lists, by name, each as its [`ListedTool`]
/// text; entries without a string name are skipped, and a result that cannot be read gives
/// none.
pub fn listed_tools(result: &str) -> Vec<(String, ListedTool)> {
    #[derive(Deserialize)]
    struct List {
        #[serde(default)]
        tools: Vec<ListedTool>,
    }
    #[derive(Deserialize)]
    struct Named {
        name: String,
    }
    let Ok(list) = serde_json::from_str::<List>(result) else {
        return Vec::new();
    };
    list.tools
        .into_iter()
        .filter_map(|raw| {
            let named = serde_json::from_str::<Named>(raw.get()).ok()?;
            Some((named.name, raw))
        })
        .collect()
}

/// The hints a listed tool's entry claims, read without building its `inputSchema` (a schema of
/// many megabytes is only scanned): what [`ToolInfo::from_listed`] and [`ToolInfo::hints`]
/// give, except that a schema `from_listed` cannot build (nested past its limit, a number out
/// of range) does not hide the annotations. None for an entry that is not a tool object.
pub fn listed_hints(listed: &RawValue) -> super::Hints {
    // The members `from_listed` reads, so that an entry it refuses gives no hints here either.
    #[derive(Deserialize)]
    struct Listed<'a> {
        #[serde(default, borrow, rename = "description")]
        _description: Option<Cow<'a, str>>,
        #[serde(default, rename = "inputSchema")]
        _input_schema: Option<IgnoredAny>,
        #[serde(default, borrow)]
        annotations: Option<HashMap<String, &'a RawValue>>,
    }
    let Ok(Listed {
        annotations: Some(annotations),
        ..
    }) = serde_json::from_str::<Listed<'_>>(listed.get())
    else {
        return super::Hints::default();
    };
    let hint = |name: &str| {
        annotations
            .get(name)
            .and_then(|raw| serde_json::from_str::<bool>(raw.get()).ok())
    };
    super::Hints {
        read_only: hint("readOnlyHint"),
        destructive: hint("destructiveHint"),
    }
}

impl ToolInfo {
    /// What a listed tool's entry claims: its description, `inputSchema` and annotations;
    /// `None` when the entry is not a tool object.
    pub fn from_listed(listed: &RawValue) -> Option<ToolInfo> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Listed {
            #[serde(default)]
            description: Option<String>,
            #[serde(default)]
            input_schema: Option<Value>,
            #[serde(default)]
            annotations: Option<Value>,
        }
        let t = serde_json::from_str::<Listed>(listed.get()).ok()?;
        Some(ToolInfo {
            description: t.description,
            input_schema: t.input_schema,
            annotations: t.annotations,
        })
    }
}

/// Checks edited arguments: an object, valid against the tool's `inputSchema` when the proxy
/// saw one (any object otherwise).
///
/// # Errors
/// One [`FieldError`] per problem, naming the argument from the instance path.
pub fn check_arguments(schema: Option<&Value>, arguments: &Value) -> Result<(), Vec<FieldError>> {
    if !arguments.is_object() {
        return Err(vec![FieldError::rule(
            "arguments",
            "arguments must be a JSON object",
        )]);
    }
    let Some(schema) = schema else { return Ok(()) };
    let errors = crate::protocol::elicitation::json_schema_errors(schema, arguments);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Why the host gets a result the proxy made instead of the server's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A rule said `deny` (its name, as [`super::DecidedBy::name`]).
    Denied(String),
    /// The person declined (or cancelled).
    Declined,
    /// Nobody answered before the question's deadline.
    Expired,
    /// The consent service could not be reached while a rule said `ask`.
    Unreachable(String),
    /// The question could not be opened or its answer not used (the reason).
    Failed(String),
}

impl Refusal {
    fn reason(&self) -> &'static str {
        match self {
            Refusal::Denied(_) => "denied_by_rule",
            Refusal::Declined => "declined",
            Refusal::Expired => "expired",
            Refusal::Unreachable(_) => "consent_unreachable",
            Refusal::Failed(_) => "failed",
        }
    }

    /// The text a model reads: it was refused, by whom, and that it is not a fault of the tool.
    pub fn text(&self, server: &str, tool: &str) -> String {
        let what = format!("the call of tool \"{tool}\" on server \"{server}\"");
        match self {
            Refusal::Denied(rule) => format!(
                "Refused: the person's rules ({rule}) do not allow {what}. It was not sent to the server. Do not retry it; ask the person if it is needed."
            ),
            Refusal::Declined => {
                format!("Declined: the person declined {what}. It was not sent to the server.")
            }
            Refusal::Expired => format!(
                "Not sent: nobody approved {what} before its question expired. It was not sent to the server."
            ),
            Refusal::Unreachable(why) => format!(
                "Not sent: {what} needs the person's approval, and the mcp-consent service cannot be reached ({why}). It was not sent to the server."
            ),
            Refusal::Failed(why) => format!(
                "Not sent: {what} could not be put to the person ({why}). It was not sent to the server."
            ),
        }
    }

    /// Whether the call was refused for want of the person's consent (a rule, the person, no
    /// answer in time, no service to ask), as opposed to a call that could not be judged.
    fn for_want_of_consent(&self) -> bool {
        !matches!(self, Refusal::Failed(_))
    }

    /// The `CallToolResult` for the host: `isError: true`, the text, a note under
    /// [`REFUSAL_META`] and, when consent is what is missing, the SEP-2643 envelope under
    /// [`AUTHORIZATION_META`]; `resultType: "complete"` when the session speaks 2026-07-28
    /// (hosts of that revision refuse a result without it).
    pub fn result(&self, server: &str, tool: &str, complete: bool) -> Value {
        let mut result = json!({
            "content": [{"type": "text", "text": self.text(server, tool)}],
            "isError": true,
            "_meta": {REFUSAL_META: {"reason": self.reason(), "server": server, "tool": tool}},
        });
        if self.for_want_of_consent() {
            result["_meta"][AUTHORIZATION_META] = json!({"reason": INSUFFICIENT_AUTHORIZATION});
        }
        if complete {
            result["resultType"] = json!("complete");
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tools_list_is_kept_by_name_and_read_only_for_the_tool_asked_about() {
        let result = r#"{"tools":[{"name":"read","description":"Reads","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},{"description":"no name"},{"name":7},{"name":"odd","description":5},"not a tool"],"nextCursor":"c"}"#;
        let listed = listed_tools(result);
        let names: Vec<&str> = listed.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["read", "odd"]);
        let read = ToolInfo::from_listed(&listed[0].1).unwrap();
        assert_eq!(read.description.as_deref(), Some("Reads"));
        assert_eq!(read.input_schema, Some(json!({"type": "object"})));
        assert_eq!(read.hints().read_only, Some(true));
        // A claim of the wrong shape gives no claims at all, as if the tool were unlisted.
        assert!(ToolInfo::from_listed(&listed[1].1).is_none());
        assert_eq!(listed_hints(&listed[0].1), read.hints());
        assert_eq!(listed_hints(&listed[1].1), crate::tools::Hints::default());
        assert!(listed_tools(r#"{"tools":{}}"#).is_empty());
    }

    #[test]
    fn the_hints_are_read_without_building_the_schema() {
        // Nested past what serde_json builds into a tree: scanned only, so the hints are read.
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let entry = format!(
            r#"{{"name":"r","inputSchema":{{"x":{deep}}},"annotations":{{"readOnlyHint":false,"readOnlyHint":true,"destructiveHint":"no"}}}}"#
        );
        let listed = RawValue::from_string(entry).unwrap();
        assert!(ToolInfo::from_listed(&listed).is_none());
        let hints = listed_hints(&listed);
        assert_eq!((hints.read_only, hints.destructive), (Some(true), None));
        let plain = RawValue::from_string(r#"{"name":"r","annotations":7}"#.to_owned()).unwrap();
        assert_eq!(listed_hints(&plain), crate::tools::Hints::default());
    }

    #[test]
    fn a_call_is_read_and_its_digest_binds_name_and_arguments() {
        let call = ToolCall::from_params(&json!({"name": "delete_file", "arguments": {"path": "/a", "n": 1.50}, "_meta": {"progressToken": 1}})).unwrap();
        let same = ToolCall::from_params(
            &json!({"arguments": {"n": 1.5, "path": "/a"}, "name": "delete_file"}),
        )
        .unwrap();
        let other = ToolCall::from_params(
            &json!({"name": "delete_file", "arguments": {"path": "/b", "n": 1.5}}),
        )
        .unwrap();
        assert_eq!(call.digest(), same.digest());
        assert_ne!(call.digest(), other.digest());
        assert_ne!(call.arguments_digest(), call.digest());
        assert_eq!(
            ToolCall::from_params(&json!({"name": "t"}))
                .unwrap()
                .arguments,
            json!({})
        );
        assert_eq!(
            ToolCall::from_params(&json!({"name": ""})),
            Err(CallError::NoName)
        );
        assert_eq!(
            ToolCall::from_params(&json!({"name": "t", "arguments": [1]})),
            Err(CallError::ArgumentsNotAnObject)
        );
    }

    #[test]
    fn edited_arguments_are_checked_against_the_schema_and_name_the_field() {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
        assert!(check_arguments(Some(&schema), &json!({"path": "/a"})).is_ok());
        let errors = check_arguments(Some(&schema), &json!({"path": 3})).unwrap_err();
        assert_eq!(errors[0].field, "path");
        let errors = check_arguments(Some(&schema), &json!({})).unwrap_err();
        assert_eq!(errors[0].field, "path");
        assert!(check_arguments(None, &json!({"anything": [1]})).is_ok());
        assert!(check_arguments(None, &json!("x")).is_err());
    }

    #[test]
    fn a_refusal_is_a_tool_error_a_model_can_read() {
        let r = Refusal::Denied("tools.rules[1]".into()).result("github", "delete_repo", true);
        assert_eq!(r["isError"], true);
        assert_eq!(r["resultType"], "complete");
        let text = r["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("delete_repo") && text.contains("github") && text.contains("rules"));
        assert_eq!(r["_meta"][REFUSAL_META]["reason"], "denied_by_rule");
        assert_eq!(
            r["_meta"][AUTHORIZATION_META]["reason"],
            "insufficient_authorization"
        );
        let unjudged = Refusal::Failed("x".into()).result("s", "t", false);
        assert!(unjudged["_meta"].get(AUTHORIZATION_META).is_none());
        assert!(
            Refusal::Declined
                .result("s", "t", false)
                .get("resultType")
                .is_none()
        );
    }
}
