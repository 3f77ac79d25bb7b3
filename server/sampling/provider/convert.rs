//! The mapping between MCP sampling and `genai` chat requests and responses (the table in
//! the parent module's documentation): content blocks, tool use and results, tool choice, stop
//! reasons and usage.

use super::*;
use crate::domain::StopReason as Stop;

pub(super) fn unsupported(model: &ModelConfig, message: impl Into<String>) -> ProviderError {
    ProviderError::Unsupported {
        model: model.id.clone(),
        message: message.into(),
    }
}

fn blocks_of(content: &Value) -> Vec<&Value> {
    match content {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    }
}

fn str_field<'a>(block: &'a Value, key: &str) -> &'a str {
    block.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// Maps MCP params to a genai request and options.
pub(super) fn to_chat_request(
    model: &ModelConfig,
    params: &Value,
) -> Result<(ChatRequest, ChatOptions), ProviderError> {
    let messages = params
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|message| chat_message(model, message))
        .collect::<Result<Vec<_>, _>>()?;
    let mut request = ChatRequest::new(messages);
    if let Some(system) = params.get("systemPrompt").and_then(Value::as_str) {
        request = request.with_system(system);
    }
    let tools = tools_of(params);
    if !tools.is_empty() {
        request = request.with_tools(tools);
    }
    let options = options_of(params, request.tools.is_some());
    Ok((request, options))
}

/// One MCP sampling message as a chat message; a message of tool results is its own kind.
fn chat_message(model: &ModelConfig, message: &Value) -> Result<ChatMessage, ProviderError> {
    let role = str_field(message, "role");
    let blocks = message.get("content").map(blocks_of).unwrap_or_default();
    if blocks.iter().any(|b| str_field(b, "type") == "tool_result") {
        return tool_results_message(model, &blocks);
    }
    let parts = blocks
        .into_iter()
        .map(|block| content_part(model, role, block))
        .collect::<Result<Vec<_>, _>>()?;
    let role = if role == "assistant" {
        ChatRole::Assistant
    } else {
        ChatRole::User
    };
    Ok(ChatMessage::new(role, MessageContent::from_parts(parts)))
}

/// One content block of a message from `role`; what the provider cannot take is refused.
fn content_part(
    model: &ModelConfig,
    role: &str,
    block: &Value,
) -> Result<ContentPart, ProviderError> {
    Ok(match str_field(block, "type") {
        "text" => ContentPart::Text(str_field(block, "text").to_owned()),
        t @ ("image" | "audio") => {
            if role != "user" {
                return Err(unsupported(
                    model,
                    format!("{t} blocks in assistant messages cannot be sent"),
                ));
            }
            if t == "audio" && model.provider == ProviderKind::Anthropic {
                return Err(unsupported(
                    model,
                    "Anthropic Messages does not accept audio input",
                ));
            }
            ContentPart::Binary(Binary::from_base64(
                str_field(block, "mimeType"),
                str_field(block, "data"),
                None,
            ))
        }
        "tool_use" => ContentPart::ToolCall(ToolCall {
            call_id: str_field(block, "id").to_owned(),
            fn_name: str_field(block, "name").to_owned(),
            fn_arguments: block.get("input").cloned().unwrap_or_else(|| json!({})),
            thought_signatures: None,
        }),
        other => {
            return Err(unsupported(
                model,
                format!("content type {other:?} cannot be sent"),
            ));
        }
    })
}

/// The request's `tools`, as the provider's tool definitions.
fn tools_of(params: &Value) -> Vec<Tool> {
    params
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| {
            let mut tool = Tool::new(str_field(t, "name"));
            if let Some(d) = t.get("description").and_then(Value::as_str) {
                tool = tool.with_description(d);
            }
            tool.with_schema(
                t.get("inputSchema")
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "object"})),
            )
        })
        .collect()
}

/// The run's options: `maxTokens`, `temperature`, `stopSequences`, and (with tools) the
/// `toolChoice` mode; usage, content and tool calls are captured.
fn options_of(params: &Value, has_tools: bool) -> ChatOptions {
    let max_tokens = params
        .get("maxTokens")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .min(u64::from(u32::MAX));
    let mut options = ChatOptions::default()
        .with_max_tokens(u32::try_from(max_tokens).unwrap_or(u32::MAX))
        .with_capture_usage(true)
        .with_capture_content(true)
        .with_capture_tool_calls(true);
    if let Some(t) = params.get("temperature").and_then(Value::as_f64) {
        options = options.with_temperature(t);
    }
    if let Some(stops) = params.get("stopSequences").and_then(Value::as_array) {
        let stops: Vec<String> = stops
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        if !stops.is_empty() {
            options = options.with_stop_sequences(stops);
        }
    }
    let mode = params
        .get("toolChoice")
        .and_then(|c| c.get("mode"))
        .and_then(Value::as_str);
    let choice = match mode {
        Some("required") if has_tools => Some(ToolChoice::Required),
        Some("none") if has_tools => Some(ToolChoice::None),
        Some("auto") if has_tools => Some(ToolChoice::Auto),
        _ => None,
    };
    if let Some(choice) = choice {
        options = options.with_tool_choice(choice);
    }
    options
}

/// A user message of `tool_result` blocks (MCP SA13: only tool results).
fn tool_results_message(
    model: &ModelConfig,
    blocks: &[&Value],
) -> Result<ChatMessage, ProviderError> {
    match model.provider {
        ProviderKind::Openai => {
            let responses = blocks
                .iter()
                .map(|block| openai_tool_response(model, block))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(ChatMessage::new(
                ChatRole::Tool,
                MessageContent::from_parts(responses),
            ))
        }
        ProviderKind::Anthropic => {
            let parts = blocks
                .iter()
                .map(|block| anthropic_tool_result(model, block))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(ChatMessage::new(
                ChatRole::User,
                MessageContent::from_parts(parts),
            ))
        }
    }
}

/// The inner content blocks of a `tool_result` block.
fn inner_blocks(block: &Value) -> impl Iterator<Item = &Value> {
    block
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The text of an embedded `resource` block (empty when it holds none).
fn resource_text(inner: &Value) -> &str {
    inner
        .get("resource")
        .and_then(|r| r.get("text"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// One `tool_result` block as an OpenAI-compatible tool message part: text only.
fn openai_tool_response(model: &ModelConfig, block: &Value) -> Result<ContentPart, ProviderError> {
    let mut texts = Vec::new();
    for inner in inner_blocks(block) {
        match str_field(inner, "type") {
            "text" => texts.push(str_field(inner, "text").to_owned()),
            "resource" => texts.push(resource_text(inner).to_owned()),
            "resource_link" => texts.push(str_field(inner, "uri").to_owned()),
            other => {
                return Err(unsupported(
                    model,
                    format!("OpenAI-compatible tool messages carry text only, not {other:?}"),
                ));
            }
        }
    }
    if texts.is_empty()
        && let Some(sc) = block.get("structuredContent")
    {
        texts.push(sc.to_string());
    }
    Ok(ContentPart::ToolResponse(ToolResponse::new(
        str_field(block, "toolUseId"),
        texts.join("\n"),
    )))
}

/// One `tool_result` block as an Anthropic Messages `tool_result` part (text and images).
fn anthropic_tool_result(model: &ModelConfig, block: &Value) -> Result<ContentPart, ProviderError> {
    let mut content = Vec::new();
    for inner in inner_blocks(block) {
        content.push(match str_field(inner, "type") {
            "text" => json!({"type": "text", "text": str_field(inner, "text")}),
            "image" => json!({"type": "image", "source": {
                "type": "base64",
                "media_type": str_field(inner, "mimeType"),
                "data": str_field(inner, "data"),
            }}),
            "resource" => json!({"type": "text", "text": resource_text(inner)}),
            "resource_link" => json!({"type": "text", "text": str_field(inner, "uri")}),
            other => {
                return Err(unsupported(
                    model,
                    format!("Anthropic tool results cannot carry {other:?}"),
                ));
            }
        });
    }
    if content.is_empty()
        && let Some(sc) = block.get("structuredContent")
    {
        content.push(json!({"type": "text", "text": sc.to_string()}));
    }
    let mut result = json!({
        "type": "tool_result",
        "tool_use_id": str_field(block, "toolUseId"),
        "content": content,
    });
    if block.get("isError").and_then(Value::as_bool) == Some(true) {
        result["is_error"] = Value::Bool(true);
    }
    Ok(ContentPart::Custom(CustomPart {
        model_iden: None,
        data: result,
    }))
}

/// Maps a genai response to a `CreateMessageResult`.
pub(super) fn from_chat_response(
    model: &ModelConfig,
    response: genai::chat::ChatResponse,
) -> Result<Completion, ProviderError> {
    let unparseable = |message: String| ProviderError::Unparseable {
        model: model.id.clone(),
        message,
    };
    let mut blocks = Vec::new();
    let mut seen = HashSet::new();
    for (n, part) in response.content.into_parts().into_iter().enumerate() {
        match part {
            ContentPart::Text(text) => blocks.push(json!({"type": "text", "text": text})),
            ContentPart::ToolCall(call) => {
                blocks.push(tool_use_block(call, n, &mut seen).map_err(unparseable)?);
            }
            // Reasoning, signatures and provider-specific parts are not part of the result.
            _ => {}
        }
    }
    let has_tool_use = blocks.iter().any(|b| b["type"] == "tool_use");
    let stop_reason = stop_reason_of(response.stop_reason.as_ref());
    if stop_reason == Stop::ToolUse.as_str() && !has_tool_use {
        return Err(unparseable(
            "the provider stopped for a tool call but sent none".to_owned(),
        ));
    }
    let content = match blocks.len() {
        0 => json!({"type": "text", "text": ""}),
        1 if !has_tool_use => blocks.remove(0),
        _ => Value::Array(blocks),
    };
    let reported = response.provider_model_iden.model_name.to_string();
    let model_name = if reported.trim().is_empty() {
        model.id.clone()
    } else {
        reported
    };
    let usage = &response.usage;
    let tokens = |t: Option<i32>| t.and_then(|t| u64::try_from(t).ok()).unwrap_or(0);
    let (input_tokens, output_tokens) =
        (tokens(usage.prompt_tokens), tokens(usage.completion_tokens));
    Ok(Completion {
        result: json!({
            "role": "assistant",
            "content": content,
            "model": model_name,
            "stopReason": stop_reason,
        }),
        input_tokens,
        output_tokens,
        usage_reported: usage.prompt_tokens.is_some() || usage.completion_tokens.is_some(),
        cost_usd: input_tokens as f64 * model.input_usd_per_mtok / 1e6
            + output_tokens as f64 * model.output_usd_per_mtok / 1e6,
    })
}

/// The `tool_use` block of the `n`th part, a tool call; its id made unique among `seen` (MCP:
/// each tool_use is answered once; local servers sometimes send none or repeat them). The
/// error says why its arguments are not a JSON object.
fn tool_use_block(call: ToolCall, n: usize, seen: &mut HashSet<String>) -> Result<Value, String> {
    let not_an_object = || {
        format!(
            "tool call {:?} has arguments that are not a JSON object",
            call.fn_name
        )
    };
    let input = match &call.fn_arguments {
        Value::Object(o) => Value::Object(o.clone()),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(o)) => Value::Object(o),
            _ => return Err(not_an_object()),
        },
        Value::Null => json!({}),
        _ => return Err(not_an_object()),
    };
    let mut id = call.call_id.clone();
    if id.is_empty() || seen.contains(&id) {
        id = format!("call_{n}");
        while seen.contains(&id) {
            id.push('_');
        }
    }
    seen.insert(id.clone());
    Ok(json!({"type": "tool_use", "id": id, "name": call.fn_name, "input": input}))
}

/// The MCP `stopReason` of the provider's stop reason (`endTurn` when it gave none).
fn stop_reason_of(reason: Option<&StopReason>) -> String {
    match reason {
        Some(StopReason::Completed(_)) | None => Stop::EndTurn.as_str().to_owned(),
        Some(StopReason::MaxTokens(_)) => Stop::MaxTokens.as_str().to_owned(),
        Some(StopReason::StopSequence(_)) => Stop::StopSequence.as_str().to_owned(),
        Some(StopReason::ToolCall(_)) => Stop::ToolUse.as_str().to_owned(),
        Some(other) => other.raw().to_owned(),
    }
}
