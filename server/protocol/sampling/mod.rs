//! `sampling/createMessage`: validation of the request a server sends and of the
//! `CreateMessageResult` an answerer proposes. Pure functions, no I/O; every path that opens or
//! answers a sampling question (proxy, API, pages, CLI) goes through here.
//!
//! Rules and sources: `docs/protocol.md` §2 (MCP 2025-06-18 and 2025-11-25
//! `client/sampling.mdx`, `schema.ts` `CreateMessageRequestParams`, `SamplingMessage`,
//! `CreateMessageResult`).

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::era::Era;
use super::jsonrpc::{RpcError, Violation};
use super::{FieldError, capabilities};

mod content;

use content::{block_type, content_blocks, validate_block, validate_message};

/// Message of the `-32602` for an unanswered `tool_use` (2025-11-25 `client/sampling.mdx`
/// §Error Handling, verbatim).
pub const TOOL_RESULT_MISSING: &str = "Tool result missing in request";
/// Message of the `-32602` for a user message mixing `tool_result` with other blocks
/// (2025-11-25 §Error Handling list item).
pub const TOOL_RESULTS_MIXED: &str = "Tool results mixed with other content";

/// What the reviewer must be told about an accepted request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestFindings {
    /// `includeContext` asked for `thisServer`/`allServers` while the forwarded capabilities
    /// have no `sampling.context`: shown as requested and ignored, no context is added
    /// (2025-11-25 SA6/SA7).
    pub include_context_ignored: Option<String>,
}

/// Validates `sampling/createMessage` params against the era and the client capabilities as
/// forwarded to the server.
///
/// # Errors
/// A `-32602` [`RpcError`] whose message names the first violated rule: missing or malformed
/// `messages`, a role other than `user`/`assistant`, content illegal for the era, `maxTokens`
/// missing or not a positive integer, a priority outside [0, 1], `tools`/`toolChoice` without
/// `sampling.tools` (2025-11-25 SA5), [`TOOL_RESULTS_MIXED`] (SA13), [`TOOL_RESULT_MISSING`]
/// (SA14), a `toolUseId` matching no earlier `tool_use` (SA15) or a duplicate `tool_use` id.
pub fn validate_request(
    era: Era,
    client_capabilities: &Value,
    params: &Value,
) -> Result<RequestFindings, RpcError> {
    let params = params
        .as_object()
        .ok_or_else(|| RpcError::invalid_params("params must be an object"))?;
    let messages = validate_messages(era, params)?;
    validate_generation_fields(params)?;
    check_declared_capabilities(client_capabilities, params)?;
    validate_tool_fields(params)?;
    if era.has_sampling_tools() {
        check_tool_balance(messages)?;
    }
    Ok(RequestFindings {
        include_context_ignored: include_context_ignored(client_capabilities, params)?,
    })
}

/// `messages`: present, an array, every message legal for the era.
fn validate_messages(era: Era, params: &Map<String, Value>) -> Result<&[Value], RpcError> {
    let messages = params
        .get("messages")
        .ok_or_else(|| RpcError::invalid_params("messages is required"))?
        .as_array()
        .ok_or_else(|| RpcError::invalid_params("messages must be an array"))?;
    for (i, message) in messages.iter().enumerate() {
        validate_message(era, message)
            .map_err(|m| RpcError::invalid_params(format!("messages[{i}]: {m}")))?;
    }
    Ok(messages)
}

/// The fields that shape the generation: `maxTokens` (required), `modelPreferences`,
/// `systemPrompt`, `temperature`, `metadata`, `stopSequences`.
fn validate_generation_fields(params: &Map<String, Value>) -> Result<(), RpcError> {
    match params.get("maxTokens") {
        None => return Err(RpcError::invalid_params("maxTokens is required")),
        Some(v) if v.as_u64().is_some_and(|n| n > 0) => {}
        Some(_) => {
            return Err(RpcError::invalid_params(
                "maxTokens must be a positive integer",
            ));
        }
    }
    if let Some(prefs) = params.get("modelPreferences") {
        validate_model_preferences(prefs).map_err(RpcError::invalid_params)?;
    }
    check_optional(params, "systemPrompt", Value::is_string, "a string")?;
    check_optional(params, "temperature", Value::is_number, "a number")?;
    check_optional(params, "metadata", Value::is_object, "an object")?;
    if let Some(stops) = params.get("stopSequences")
        && !stops
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_string))
    {
        return Err(RpcError::invalid_params(
            "stopSequences must be an array of strings",
        ));
    }
    Ok(())
}

/// The client declared `sampling`, and `sampling.tools` when the request carries tools.
fn check_declared_capabilities(
    client_capabilities: &Value,
    params: &Map<String, Value>,
) -> Result<(), RpcError> {
    let tools_present = params.contains_key("tools") || params.contains_key("toolChoice");
    if !capabilities::sampling(client_capabilities) {
        // No code is given for undeclared sampling; -32601 follows the spec's roots analogue
        // ("Client does not support roots", docs/protocol.md §6 item 6).
        return Err(RpcError {
            code: super::jsonrpc::codes::METHOD_NOT_FOUND,
            message: "Client does not support sampling (the sampling capability was not declared)"
                .into(),
            data: None,
            violation: Violation::Capability,
        });
    }
    if tools_present && !capabilities::sampling_tools(client_capabilities) {
        return Err(RpcError::invalid_params(
            "tools/toolChoice sent but the client did not declare sampling.tools",
        )
        .because(Violation::Capability));
    }
    Ok(())
}

/// `tools` and `toolChoice`, when given, are well formed.
fn validate_tool_fields(params: &Map<String, Value>) -> Result<(), RpcError> {
    if let Some(tools) = params.get("tools") {
        validate_tools(tools).map_err(RpcError::invalid_params)?;
    }
    if let Some(choice) = params.get("toolChoice") {
        tool_choice_mode(choice).map_err(RpcError::invalid_params)?;
    }
    Ok(())
}

/// `includeContext`: one of the three values; `thisServer`/`allServers` without
/// `sampling.context` is returned to be shown as requested and ignored.
fn include_context_ignored(
    client_capabilities: &Value,
    params: &Map<String, Value>,
) -> Result<Option<String>, RpcError> {
    match params.get("includeContext") {
        None => Ok(None),
        Some(Value::String(s)) if s == "none" => Ok(None),
        // Not an error (2025-11-25 SA6/SA7): shown to the reviewer as requested and ignored.
        Some(Value::String(s))
            if (s == "thisServer" || s == "allServers")
                && !capabilities::sampling_context(client_capabilities) =>
        {
            Ok(Some(s.clone()))
        }
        Some(Value::String(s)) if s == "thisServer" || s == "allServers" => Ok(None),
        Some(_) => Err(RpcError::invalid_params(
            "includeContext must be one of none, thisServer, allServers",
        )),
    }
}

/// Validates a proposed `CreateMessageResult` for the request it answers.
///
/// Nothing is filled in on the answerer's behalf: `role`, `model` and `content` must be given.
/// `tool_use` content and `stopReason: "toolUse"` are legal only when the request carried
/// `tools` and its `toolChoice.mode` is not `none`; `toolUse` needs at least one `tool_use`
/// block (2025-11-25 `schema.ts` `CreateMessageResult`, `ToolChoice`).
///
/// # Errors
/// Every problem found, each with the result field it concerns (`role`, `model`, `content`,
/// `stopReason`, or empty for the whole result).
pub fn validate_result(era: Era, request: &Value, result: &Value) -> Result<(), Vec<FieldError>> {
    let Some(obj) = result.as_object() else {
        return Err(vec![FieldError::rule(
            "",
            "the result must be a JSON object",
        )]);
    };
    let mut errors = Vec::new();
    match obj.get("role").and_then(Value::as_str) {
        Some("user" | "assistant") => {}
        Some(_) => errors.push(FieldError::rule(
            "role",
            "role must be \"user\" or \"assistant\"",
        )),
        None => errors.push(FieldError::rule("role", "role is required")),
    }
    match obj.get("model") {
        Some(Value::String(m)) if !m.trim().is_empty() => {}
        Some(Value::String(_)) => errors.push(FieldError::rule("model", "model must not be empty")),
        Some(_) => errors.push(FieldError::rule("model", "model must be a string")),
        None => errors.push(FieldError::rule("model", "model is required")),
    }
    let blocks = result_content(era, obj.get("content"), &mut errors);
    let stop_reason = match obj.get("stopReason") {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => {
            errors.push(FieldError::rule(
                "stopReason",
                "stopReason must be a string",
            ));
            None
        }
    };

    check_tool_uses(request, &blocks, stop_reason, &mut errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The result's `content` blocks, each checked (none when `content` is missing or unreadable;
/// every problem goes to `errors`).
fn result_content<'a>(
    era: Era,
    content: Option<&'a Value>,
    errors: &mut Vec<FieldError>,
) -> Vec<&'a Value> {
    match content {
        None => {
            errors.push(FieldError::rule("content", "content is required"));
            Vec::new()
        }
        Some(content) => match content_blocks(era, content) {
            Ok(blocks) => {
                if blocks.is_empty() {
                    errors.push(FieldError::rule(
                        "content",
                        "content must hold at least one block",
                    ));
                }
                for block in &blocks {
                    if let Err(m) = validate_block(block) {
                        errors.push(FieldError::rule("content", m));
                    }
                    // The result is the model's turn: tool results come from the server's side.
                    if block_type(block) == Some("tool_result") {
                        errors.push(FieldError::rule(
                            "content",
                            "a result cannot hold tool_result blocks (those answer tool_use in the next request)",
                        ));
                    }
                }
                blocks
            }
            Err(m) => {
                errors.push(FieldError::rule("content", m));
                Vec::new()
            }
        },
    }
}

/// The result's `tool_use` blocks and `stopReason` against what the request offered: tools only
/// when offered and not refused by `toolChoice`, each naming an offered tool, ids unique.
fn check_tool_uses(
    request: &Value,
    blocks: &[&Value],
    stop_reason: Option<&str>,
    errors: &mut Vec<FieldError>,
) {
    let tool_uses: Vec<&Value> = blocks
        .iter()
        .copied()
        .filter(|b| block_type(b) == Some("tool_use"))
        .collect();
    let tools_allowed = request.get("tools").is_some()
        && request
            .get("toolChoice")
            .map(|c| tool_choice_mode(c).ok() != Some("none"))
            .unwrap_or(true);
    if !tool_uses.is_empty() && !tools_allowed {
        errors.push(FieldError::rule(
            "content",
            "tool_use content is only allowed when the request offered tools and toolChoice is not \"none\"",
        ));
    }
    if stop_reason == Some("toolUse") {
        if !tools_allowed {
            errors.push(FieldError::rule(
                "stopReason",
                "stopReason \"toolUse\" is only allowed when the request offered tools and toolChoice is not \"none\"",
            ));
        } else if tool_uses.is_empty() {
            errors.push(FieldError::rule(
                "stopReason",
                "stopReason \"toolUse\" needs at least one tool_use block",
            ));
        }
    }
    let offered: Vec<&str> = request
        .get("tools")
        .and_then(Value::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t.get("name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    if tools_allowed {
        for tu in &tool_uses {
            if let Some(name) = tu.get("name").and_then(Value::as_str)
                && !offered.contains(&name)
            {
                errors.push(FieldError::rule(
                    "content",
                    format!("tool_use names {name:?}, which the request did not offer"),
                ));
            }
        }
    }
    let mut seen = HashSet::new();
    for tu in &tool_uses {
        if let Some(id) = tu.get("id").and_then(Value::as_str)
            && !seen.insert(id)
        {
            errors.push(FieldError::rule(
                "content",
                format!("duplicate tool_use id {id:?}"),
            ));
        }
    }
}

fn check_optional(
    params: &Map<String, Value>,
    key: &str,
    ok: fn(&Value) -> bool,
    what: &str,
) -> Result<(), RpcError> {
    match params.get(key) {
        Some(v) if !ok(v) => Err(RpcError::invalid_params(format!("{key} must be {what}"))),
        _ => Ok(()),
    }
}

fn validate_model_preferences(prefs: &Value) -> Result<(), String> {
    let obj = prefs
        .as_object()
        .ok_or("modelPreferences must be an object")?;
    for key in ["costPriority", "speedPriority", "intelligencePriority"] {
        if let Some(v) = obj.get(key) {
            match v.as_f64() {
                Some(p) if (0.0..=1.0).contains(&p) => {}
                _ => {
                    return Err(format!(
                        "modelPreferences.{key} must be a number within [0, 1]"
                    ));
                }
            }
        }
    }
    if let Some(hints) = obj.get("hints") {
        let hints = hints
            .as_array()
            .ok_or("modelPreferences.hints must be an array")?;
        for hint in hints {
            let ok = hint
                .as_object()
                .is_some_and(|h| h.get("name").is_none_or(Value::is_string));
            if !ok {
                return Err(
                    "each modelPreferences hint must be an object with an optional string name"
                        .into(),
                );
            }
        }
    }
    Ok(())
}

fn validate_tools(tools: &Value) -> Result<(), String> {
    let tools = tools.as_array().ok_or("tools must be an array")?;
    for (i, tool) in tools.iter().enumerate() {
        if !tool.get("name").is_some_and(Value::is_string) {
            return Err(format!("tools[{i}] needs a string name"));
        }
        let schema_ok = tool
            .get("inputSchema")
            .and_then(Value::as_object)
            .is_some_and(|s| s.get("type").and_then(Value::as_str) == Some("object"));
        if !schema_ok {
            return Err(format!(
                "tools[{i}].inputSchema must be an object schema with type \"object\""
            ));
        }
    }
    Ok(())
}

/// The `toolChoice.mode`, defaulting to `auto` (2025-11-25 `schema.ts` `ToolChoice`).
fn tool_choice_mode(choice: &Value) -> Result<&str, String> {
    let obj = choice.as_object().ok_or("toolChoice must be an object")?;
    match obj.get("mode") {
        None => Ok("auto"),
        Some(Value::String(m)) if matches!(m.as_str(), "auto" | "required" | "none") => {
            Ok(m.as_str())
        }
        Some(_) => Err("toolChoice.mode must be one of auto, required, none".into()),
    }
}

/// SA13–SA15: tool results stand alone in their user message, every `tool_use` is answered by
/// the very next message, and every `toolUseId` answers a `tool_use` of the message before.
fn check_tool_balance(messages: &[Value]) -> Result<(), RpcError> {
    let mut all_ids = HashSet::new();
    // tool_use ids of the previous assistant message still waiting for their results.
    let mut open: Option<Vec<String>> = None;
    for message in messages {
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let blocks: Vec<&Value> = match message.get("content") {
            Some(Value::Array(items)) => items.iter().collect(),
            Some(block) => vec![block],
            None => Vec::new(),
        };
        let results: Vec<&str> = blocks
            .iter()
            .filter(|b| block_type(b) == Some("tool_result"))
            .filter_map(|b| b.get("toolUseId").and_then(Value::as_str))
            .collect();
        if role == "user" && !results.is_empty() && results.len() != blocks.len() {
            return Err(RpcError::invalid_params(TOOL_RESULTS_MIXED));
        }
        if let Some(waiting) = open.take() {
            if role != "user" || waiting.iter().any(|id| !results.contains(&id.as_str())) {
                return Err(RpcError::invalid_params(TOOL_RESULT_MISSING));
            }
            if let Some(stray) = results.iter().find(|r| !waiting.iter().any(|w| w == *r)) {
                return Err(RpcError::invalid_params(format!(
                    "toolUseId {stray:?} does not match a tool_use of the previous assistant message"
                )));
            }
            continue;
        }
        if let Some(stray) = results.first() {
            return Err(RpcError::invalid_params(format!(
                "toolUseId {stray:?} does not match a tool_use of the previous assistant message"
            )));
        }
        let uses: Vec<String> = blocks
            .iter()
            .filter(|b| block_type(b) == Some("tool_use"))
            .filter_map(|b| b.get("id").and_then(Value::as_str).map(str::to_owned))
            .collect();
        for id in &uses {
            if !all_ids.insert(id.clone()) {
                return Err(RpcError::invalid_params(format!(
                    "duplicate tool_use id {id:?}"
                )));
            }
        }
        if !uses.is_empty() {
            open = Some(uses);
        }
    }
    if open.is_some() {
        return Err(RpcError::invalid_params(TOOL_RESULT_MISSING));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn caps_tools() -> Value {
        json!({"sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}})
    }

    #[test]
    fn minimal_request_is_valid_in_every_era() {
        let p = json!({"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"maxTokens":100});
        for era in [Era::V2025_06_18, Era::V2025_11_25, Era::V2026_07_28] {
            assert!(validate_request(era, &caps_tools(), &p).is_ok());
        }
    }

    #[test]
    fn result_without_role_or_model_is_refused() {
        let req = json!({"messages":[],"maxTokens":1});
        let errs = validate_result(
            Era::V2025_11_25,
            &req,
            &json!({"content":{"type":"text","text":"hi"}}),
        )
        .unwrap_err();
        let fields: Vec<_> = errs.iter().map(|e| e.field.as_str()).collect();
        assert!(
            fields.contains(&"role") && fields.contains(&"model"),
            "{errs:?}"
        );
    }
}
