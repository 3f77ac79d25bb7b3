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
    let mut messages = Vec::new();
    for message in params
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = str_field(message, "role");
        let blocks = message.get("content").map(blocks_of).unwrap_or_default();
        let has_tool_results = blocks.iter().any(|b| str_field(b, "type") == "tool_result");
        if has_tool_results {
            messages.push(tool_results_message(model, &blocks)?);
            continue;
        }
        let mut parts: Vec<ContentPart> = Vec::new();
        for block in blocks {
            match str_field(block, "type") {
                "text" => parts.push(ContentPart::Text(str_field(block, "text").to_owned())),
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
                    parts.push(ContentPart::Binary(Binary::from_base64(
                        str_field(block, "mimeType"),
                        str_field(block, "data"),
                        None,
                    )));
                }
                "tool_use" => parts.push(ContentPart::ToolCall(ToolCall {
                    call_id: str_field(block, "id").to_owned(),
                    fn_name: str_field(block, "name").to_owned(),
                    fn_arguments: block.get("input").cloned().unwrap_or_else(|| json!({})),
                    thought_signatures: None,
                })),
                other => {
                    return Err(unsupported(
                        model,
                        format!("content type {other:?} cannot be sent"),
                    ));
                }
            }
        }
        let role = if role == "assistant" {
            ChatRole::Assistant
        } else {
            ChatRole::User
        };
        messages.push(ChatMessage::new(role, MessageContent::from_parts(parts)));
    }

    let mut request = ChatRequest::new(messages);
    if let Some(system) = params.get("systemPrompt").and_then(Value::as_str) {
        request = request.with_system(system);
    }
    if let Some(tools) = params.get("tools").and_then(Value::as_array) {
        let tools: Vec<Tool> = tools
            .iter()
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
            .collect();
        if !tools.is_empty() {
            request = request.with_tools(tools);
        }
    }

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
    if request.tools.is_some() {
        let mode = params
            .get("toolChoice")
            .and_then(|c| c.get("mode"))
            .and_then(Value::as_str);
        let choice = match mode {
            Some("required") => Some(ToolChoice::Required),
            Some("none") => Some(ToolChoice::None),
            Some("auto") => Some(ToolChoice::Auto),
            _ => None,
        };
        if let Some(choice) = choice {
            options = options.with_tool_choice(choice);
        }
    }
    Ok((request, options))
}

/// A user message of `tool_result` blocks (MCP SA13: only tool results).
fn tool_results_message(
    model: &ModelConfig,
    blocks: &[&Value],
) -> Result<ChatMessage, ProviderError> {
    match model.provider {
        ProviderKind::Openai => {
            let mut responses = Vec::new();
            for block in blocks {
                let mut texts = Vec::new();
                for inner in block
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match str_field(inner, "type") {
                        "text" => texts.push(str_field(inner, "text").to_owned()),
                        "resource" => texts.push(
                            inner
                                .get("resource")
                                .and_then(|r| r.get("text"))
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_owned(),
                        ),
                        "resource_link" => texts.push(str_field(inner, "uri").to_owned()),
                        other => {
                            return Err(unsupported(
                                model,
                                format!(
                                    "OpenAI-compatible tool messages carry text only, not {other:?}"
                                ),
                            ));
                        }
                    }
                }
                if texts.is_empty()
                    && let Some(sc) = block.get("structuredContent")
                {
                    texts.push(sc.to_string());
                }
                responses.push(ContentPart::ToolResponse(ToolResponse::new(
                    str_field(block, "toolUseId"),
                    texts.join("\n"),
                )));
            }
            Ok(ChatMessage::new(
                ChatRole::Tool,
                MessageContent::from_parts(responses),
            ))
        }
        ProviderKind::Anthropic => {
            let mut parts = Vec::new();
            for block in blocks {
                let mut content = Vec::new();
                for inner in block
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match str_field(inner, "type") {
                        "text" => {
                            content.push(json!({"type": "text", "text": str_field(inner, "text")}))
                        }
                        "image" => content.push(json!({"type": "image", "source": {
                            "type": "base64",
                            "media_type": str_field(inner, "mimeType"),
                            "data": str_field(inner, "data"),
                        }})),
                        "resource" => content.push(json!({"type": "text", "text": inner
                            .get("resource")
                            .and_then(|r| r.get("text"))
                            .and_then(Value::as_str)
                            .unwrap_or_default()})),
                        "resource_link" => {
                            content.push(json!({"type": "text", "text": str_field(inner, "uri")}))
                        }
                        other => {
                            return Err(unsupported(
                                model,
                                format!("Anthropic tool results cannot carry {other:?}"),
                            ));
                        }
                    }
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
                parts.push(ContentPart::Custom(CustomPart {
                    model_iden: None,
                    data: result,
                }));
            }
            Ok(ChatMessage::new(
                ChatRole::User,
                MessageContent::from_parts(parts),
            ))
        }
    }
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
                let input = match call.fn_arguments {
                    Value::Object(o) => Value::Object(o),
                    Value::String(s) => match serde_json::from_str::<Value>(&s) {
                        Ok(Value::Object(o)) => Value::Object(o),
                        _ => {
                            return Err(unparseable(format!(
                                "tool call {:?} has arguments that are not a JSON object",
                                call.fn_name
                            )));
                        }
                    },
                    Value::Null => json!({}),
                    _ => {
                        return Err(unparseable(format!(
                            "tool call {:?} has arguments that are not a JSON object",
                            call.fn_name
                        )));
                    }
                };
                // Ids must be unique (MCP: each tool_use answered once); local servers
                // sometimes send none or repeat them.
                let mut id = call.call_id;
                if id.is_empty() || seen.contains(&id) {
                    id = format!("call_{n}");
                    while seen.contains(&id) {
                        id.push('_');
                    }
                }
                seen.insert(id.clone());
                blocks.push(
                    json!({"type": "tool_use", "id": id, "name": call.fn_name, "input": input}),
                );
            }
            // Reasoning, signatures and provider-specific parts are not part of the result.
            _ => {}
        }
    }
    let has_tool_use = blocks.iter().any(|b| b["type"] == "tool_use");
    let stop_reason = match &response.stop_reason {
        Some(StopReason::Completed(_)) | None => Stop::EndTurn.as_str().to_owned(),
        Some(StopReason::MaxTokens(_)) => Stop::MaxTokens.as_str().to_owned(),
        Some(StopReason::StopSequence(_)) => Stop::StopSequence.as_str().to_owned(),
        Some(StopReason::ToolCall(_)) => Stop::ToolUse.as_str().to_owned(),
        Some(other) => other.raw().to_owned(),
    };
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
    let usage_reported = usage.prompt_tokens.is_some() || usage.completion_tokens.is_some();
    let input_tokens = usage
        .prompt_tokens
        .and_then(|t| u64::try_from(t).ok())
        .unwrap_or(0);
    let output_tokens = usage
        .completion_tokens
        .and_then(|t| u64::try_from(t).ok())
        .unwrap_or(0);
    let cost_usd = input_tokens as f64 * model.input_usd_per_mtok / 1e6
        + output_tokens as f64 * model.output_usd_per_mtok / 1e6;
    Ok(Completion {
        result: json!({
            "role": "assistant",
            "content": content,
            "model": model_name,
            "stopReason": stop_reason,
        }),
        input_tokens,
        output_tokens,
        usage_reported,
        cost_usd,
    })
}
