//! Running a sampling request on a configured model and turning the answer into a
//! `CreateMessageResult`.
//!
//! Both provider kinds go through the `genai` crate (one maintained client for OpenAI-compatible
//! chat completions and Anthropic Messages, with custom base URLs, tools, tool choice, images,
//! stop reasons and usage), addressed with an explicit [`genai::ServiceTarget`] so the model
//! name is never guessed into another provider. The request is mapped as follows
//! (MCP 2025-11-25 schema.ts `CreateMessageRequestParams`, `SamplingMessage`):
//!
//! | MCP | OpenAI chat completions | Anthropic Messages |
//! |---|---|---|
//! | `systemPrompt` | `system` message | `system` |
//! | `text` block | text part | `text` block |
//! | `image` block (user) | `image_url` data URL | `image` base64 source |
//! | `audio` block (user) | `input_audio` | refused: [`ProviderError::Unsupported`] |
//! | `tool_use` (assistant) | `tool_calls[]` (`arguments` = JSON text) | `tool_use` block |
//! | `tool_result` (user) | `role: "tool"` message per result; its text blocks joined (else `structuredContent` as JSON); images/audio refused | `tool_result` block with `is_error` and text/image content |
//! | `tools[]` (`name`, `description`, `inputSchema`) | `tools[].function` (`parameters`) | `tools[]` (`input_schema`) |
//! | `toolChoice.mode` auto/required/none | `tool_choice` auto/required/none | `tool_choice` auto/any/none |
//! | `maxTokens`, `temperature`, `stopSequences` | `max_tokens` (`max_completion_tokens` for gpt-5/o-series), `temperature`, `stop` | `max_tokens`, `temperature`, `stop_sequences` |
//!
//! `metadata` and `includeContext` are not sent (the spec lets the client ignore them, SA7,
//! SA23). API keys come from the environment variable the model's `api_key_env` names; a model
//! without one (a local server) is sent the placeholder key `no-key`. Nothing here logs
//! prompts, keys or responses, and errors carry no request or response text beyond the
//! provider's own short error message.

use std::collections::HashSet;
use std::sync::Arc;

use genai::adapter::AdapterKind;
use genai::chat::{
    Binary, ChatMessage, ChatOptions, ChatRequest, ChatRole, ContentPart, CustomPart,
    MessageContent, StopReason, Tool, ToolCall, ToolChoice, ToolResponse,
};
use genai::resolver::{AuthData, Endpoint};
use genai::{ModelIden, ServiceTarget};
use serde_json::{Value, json};

use super::catalog::{ModelConfig, ProviderKind};

/// Key sent to models without `api_key_env` (local servers ignore it).
pub const NO_KEY: &str = "no-key";
/// Longest provider error message kept in a [`ProviderError::Status`], in characters.
const MAX_ERROR_MESSAGE: usize = 300;

/// A model's answer as a `CreateMessageResult`, with usage and cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// `CreateMessageResult` (MCP 2025-11-25 schema.ts): `role: "assistant"`, `content` (one
    /// `text` block, or an array of `text`/`tool_use` blocks with unique ids), `model` (as the
    /// provider reports it, else the configured id) and `stopReason` (`endTurn`, `maxTokens`,
    /// `stopSequence`, `toolUse`, or the provider's own string for anything else, e.g.
    /// `content_filter`). Passes `protocol::sampling::validate_result` for the request.
    pub result: Value,
    /// Input tokens the provider reported (0 when it reported none).
    pub input_tokens: u64,
    /// Output tokens the provider reported (0 when it reported none).
    pub output_tokens: u64,
    /// Whether the provider reported usage at all.
    pub usage_reported: bool,
    /// Cost in USD from the reported usage and the model's prices.
    pub cost_usd: f64,
}

/// Why a completion failed. Messages name the model and never carry prompt or response text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// The environment variable named by `api_key_env` is unset or empty.
    #[error("model {model:?}: environment variable {env} holding its API key is not set")]
    MissingKey {
        /// Model id.
        model: String,
        /// The variable name.
        env: String,
    },
    /// The request could not be sent or the connection failed (DNS, refused, TLS, timeout).
    #[error("model {model:?}: cannot reach the provider: {message}")]
    Transport {
        /// Model id.
        model: String,
        /// The transport error.
        message: String,
    },
    /// The provider answered with a non-success HTTP status.
    #[error("model {model:?}: the provider answered HTTP {status}: {message}")]
    Status {
        /// Model id.
        model: String,
        /// HTTP status code.
        status: u16,
        /// The provider's error message (`error.message` of its JSON body, cut to 300
        /// characters), or the status reason.
        message: String,
    },
    /// The provider answered 2xx with a body that is not a completion.
    #[error("model {model:?}: unparseable provider response: {message}")]
    Unparseable {
        /// Model id.
        model: String,
        /// What was wrong.
        message: String,
    },
    /// The request holds content this provider kind cannot take (e.g. audio for Anthropic).
    #[error("model {model:?}: {message}")]
    Unsupported {
        /// Model id.
        model: String,
        /// What cannot be sent.
        message: String,
    },
}

type KeyLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Runs completions; holds one HTTP client (connection pool) for all models.
#[derive(Clone)]
pub struct Providers {
    client: genai::Client,
    key_lookup: KeyLookup,
}

impl std::fmt::Debug for Providers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Providers").finish_non_exhaustive()
    }
}

impl Providers {
    /// Providers reading API keys from the process environment.
    ///
    /// # Errors
    /// [`ProviderError::Transport`] when the HTTP client cannot be built (TLS setup).
    pub fn new() -> Result<Providers, ProviderError> {
        Self::with_key_lookup(|name| std::env::var(name).ok())
    }

    /// Providers reading API keys through `lookup` (given the variable name), for tests and
    /// embedding.
    ///
    /// # Errors
    /// [`ProviderError::Transport`] when the HTTP client cannot be built.
    pub fn with_key_lookup(
        lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Result<Providers, ProviderError> {
        let client = genai::Client::builder()
            .build()
            .map_err(|e| ProviderError::Transport {
                model: String::new(),
                message: e.to_string(),
            })?;
        Ok(Providers {
            client,
            key_lookup: Arc::new(lookup),
        })
    }

    /// Runs validated `sampling/createMessage` `params` on `model` (see the module docs for
    /// the mapping) and returns the `CreateMessageResult` with usage and cost.
    ///
    /// # Errors
    /// [`ProviderError::MissingKey`], [`ProviderError::Unsupported`] before anything is sent;
    /// [`ProviderError::Transport`], [`ProviderError::Status`],
    /// [`ProviderError::Unparseable`] from the call.
    pub async fn complete(
        &self,
        model: &ModelConfig,
        params: &Value,
    ) -> Result<Completion, ProviderError> {
        let key = match &model.api_key_env {
            Some(env) => (self.key_lookup)(env)
                .filter(|k| !k.is_empty())
                .ok_or_else(|| ProviderError::MissingKey {
                    model: model.id.clone(),
                    env: env.clone(),
                })?,
            None => NO_KEY.to_owned(),
        };
        let (request, options) = to_chat_request(model, params)?;
        let adapter = match model.provider {
            ProviderKind::Openai => AdapterKind::OpenAI,
            ProviderKind::Anthropic => AdapterKind::Anthropic,
        };
        let target = ServiceTarget {
            endpoint: Endpoint::from_owned(model.normalized_base_url()),
            auth: AuthData::from_single(key),
            model: ModelIden::new(adapter, model.id.as_str()),
        };
        let response = self
            .client
            .exec_chat(target, request, Some(&options))
            .await
            .map_err(|e| map_error(&model.id, e))?;
        from_chat_response(model, response)
    }
}

fn unsupported(model: &ModelConfig, message: impl Into<String>) -> ProviderError {
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
fn to_chat_request(
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
fn from_chat_response(
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
        Some(StopReason::Completed(_)) | None => "endTurn".to_owned(),
        Some(StopReason::MaxTokens(_)) => "maxTokens".to_owned(),
        Some(StopReason::StopSequence(_)) => "stopSequence".to_owned(),
        Some(StopReason::ToolCall(_)) => "toolUse".to_owned(),
        Some(other) => other.raw().to_owned(),
    };
    if stop_reason == "toolUse" && !has_tool_use {
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

/// The provider's `error.message` (OpenAI and Anthropic both use it), cut short.
fn provider_message(body: &str, fallback: &str) -> String {
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.get("error")
                .and_then(|e| e.get("message").or(Some(e)))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| fallback.to_owned());
    message.chars().take(MAX_ERROR_MESSAGE).collect()
}

fn map_error(model: &str, error: genai::Error) -> ProviderError {
    use genai::webc::Error as WebError;
    let model = model.to_owned();
    let web = |model: String, e: WebError| match e {
        WebError::ResponseFailedStatus { status, body, .. } => ProviderError::Status {
            model,
            status: status.as_u16(),
            message: provider_message(&body, status.canonical_reason().unwrap_or("error")),
        },
        WebError::ResponseFailedNotJson { content_type, .. } => ProviderError::Unparseable {
            model,
            message: format!("response content type {content_type:?} is not JSON"),
        },
        WebError::ResponseFailedInvalidJson { .. } => ProviderError::Unparseable {
            model,
            message: "response body is not valid JSON".to_owned(),
        },
        WebError::Reqwest(e) => match e.status() {
            Some(status) => ProviderError::Status {
                model,
                status: status.as_u16(),
                message: status.canonical_reason().unwrap_or("error").to_owned(),
            },
            None => ProviderError::Transport {
                model,
                message: e.without_url().to_string(),
            },
        },
        other => ProviderError::Unparseable {
            model,
            message: other.to_string(),
        },
    };
    match error {
        genai::Error::HttpError { status, body, .. } => ProviderError::Status {
            model,
            status: status.as_u16(),
            message: provider_message(&body, status.canonical_reason().unwrap_or("error")),
        },
        genai::Error::WebModelCall { webc_error, .. }
        | genai::Error::WebAdapterCall { webc_error, .. } => web(model, webc_error),
        genai::Error::RequiresApiKey { .. }
        | genai::Error::NoAuthData { .. }
        | genai::Error::NoAuthResolver { .. } => ProviderError::MissingKey {
            model,
            env: String::new(),
        },
        // These variants' Display may include the request payload: keep only a category.
        genai::Error::ChatResponseGeneration { cause, .. } => ProviderError::Unparseable {
            model,
            message: cause.chars().take(MAX_ERROR_MESSAGE).collect(),
        },
        genai::Error::NoChatResponse { .. }
        | genai::Error::InvalidJsonResponseElement { .. }
        | genai::Error::SerdeJson(_)
        | genai::Error::JsonValueExt(_)
        | genai::Error::ChatResponse { .. } => ProviderError::Unparseable {
            model,
            message: "the response is not a chat completion".to_owned(),
        },
        genai::Error::MessageContentTypeNotSupported { cause, .. } => ProviderError::Unsupported {
            model,
            message: cause.to_owned(),
        },
        other => ProviderError::Transport {
            model,
            message: other.to_string().chars().take(MAX_ERROR_MESSAGE).collect(),
        },
    }
}
