//! A sampling request as the page shows it (messages, blocks, parameters) and the person's answer form.

use super::last;
use crate::broker::Question;
use crate::domain::IncludeContext;
use crate::domain::StopReason;
use crate::protocol::FieldError;
use crate::protocol::Problem;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

/// The content block types the page renders each in its own way (MCP 2025-11-25
/// `SamplingMessageContentBlock`); anything else is shown as JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// `text`
    Text,
    /// `image`
    Image,
    /// `audio`
    Audio,
    /// `tool_use`
    ToolUse,
    /// `tool_result`
    ToolResult,
    /// Any other `type`.
    Other,
}

impl BlockKind {
    /// The kind of a block with this `type`.
    pub fn parse(kind: &str) -> BlockKind {
        match kind {
            "text" => BlockKind::Text,
            "image" => BlockKind::Image,
            "audio" => BlockKind::Audio,
            "tool_use" => BlockKind::ToolUse,
            "tool_result" => BlockKind::ToolResult,
            _ => BlockKind::Other,
        }
    }
}

/// One content block of a sampling message as rendered.
pub struct BlockView {
    pub kind: BlockKind,
    pub text: String,
    pub mime: String,
    /// `data:` URI for images and audio (only `image/*` / `audio/*` MIME types).
    pub data_uri: String,
    pub name: String,
    pub id: String,
    pub json: String,
    pub is_error: bool,
}

pub struct MessageView {
    pub role: String,
    pub blocks: Vec<BlockView>,
}

pub struct SamplingView {
    pub system_prompt: Option<String>,
    pub messages: Vec<MessageView>,
    pub max_tokens: String,
    pub temperature: String,
    pub stop_sequences: Vec<String>,
    pub hints: Vec<String>,
    /// `modelPreferences.costPriority` as sent, `–` when absent (so for the other two).
    pub cost_priority: String,
    pub speed_priority: String,
    pub intelligence_priority: String,
    pub include_context: IncludeContext,
    pub tools: Vec<(String, String, String)>,
    pub tool_choice: String,
    pub metadata: String,
}

pub fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

pub fn is_safe_mime(mime: &str, family: &str) -> bool {
    mime.strip_prefix(family).is_some_and(|rest| {
        !rest.is_empty()
            && rest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

pub fn block_view(block: &Value) -> BlockView {
    let s = |k: &str| {
        block
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let kind = s("type");
    let mime = s("mimeType");
    let data_uri = match kind.as_str() {
        "image" if is_safe_mime(&mime, "image/") => format!("data:{mime};base64,{}", s("data")),
        "audio" if is_safe_mime(&mime, "audio/") => format!("data:{mime};base64,{}", s("data")),
        _ => String::new(),
    };
    let json = match kind.as_str() {
        "tool_use" => pretty(block.get("input").unwrap_or(&Value::Null)),
        "tool_result" => pretty(block.get("content").unwrap_or(&Value::Null)),
        "text" | "image" | "audio" => String::new(),
        _ => pretty(block),
    };
    BlockView {
        text: s("text"),
        mime,
        data_uri,
        name: s("name"),
        id: if kind == "tool_result" {
            s("toolUseId")
        } else {
            s("id")
        },
        json,
        is_error: block
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        kind: BlockKind::parse(&kind),
    }
}

/// A priority of `modelPreferences` as sent (JSON), `–` when absent.
fn priority(v: Option<&Value>) -> String {
    v.map_or_else(|| "–".to_owned(), Value::to_string)
}

pub fn sampling_view(q: &Question) -> SamplingView {
    let p = &q.request;
    let f = |v: Option<&Value>| v.map(|x| x.to_string()).unwrap_or_default();
    let prefs = p.get("modelPreferences");
    // Checked when the question was opened (one of the three words, or absent).
    let include_context = p
        .get("includeContext")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or(IncludeContext::None);
    SamplingView {
        system_prompt: p
            .get("systemPrompt")
            .and_then(Value::as_str)
            .map(str::to_owned),
        messages: message_views(p),
        max_tokens: f(p.get("maxTokens")),
        temperature: f(p.get("temperature")),
        stop_sequences: p
            .get("stopSequences")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        hints: prefs
            .and_then(|pr| pr.get("hints"))
            .and_then(Value::as_array)
            .map(|hs| {
                hs.iter()
                    .filter_map(|h| h.get("name")?.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        cost_priority: priority(prefs.and_then(|pr| pr.get("costPriority"))),
        speed_priority: priority(prefs.and_then(|pr| pr.get("speedPriority"))),
        intelligence_priority: priority(prefs.and_then(|pr| pr.get("intelligencePriority"))),
        include_context,
        tools: tool_views(p),
        tool_choice: p.get("toolChoice").map(pretty).unwrap_or_default(),
        metadata: p.get("metadata").map(pretty).unwrap_or_default(),
    }
}

/// The request's messages, each with its role and blocks.
fn message_views(params: &Value) -> Vec<MessageView> {
    params
        .get("messages")
        .and_then(Value::as_array)
        .map(|ms| {
            ms.iter()
                .map(|m| MessageView {
                    role: m
                        .get("role")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    blocks: match m.get("content") {
                        Some(Value::Array(items)) => items.iter().map(block_view).collect(),
                        Some(b) => vec![block_view(b)],
                        None => Vec::new(),
                    },
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The request's tools as (name, description, pretty input schema).
fn tool_views(params: &Value) -> Vec<(String, String, String)> {
    let text = |t: &Value, key: &str| {
        t.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    params
        .get("tools")
        .and_then(Value::as_array)
        .map(|ts| {
            ts.iter()
                .map(|t| {
                    (
                        text(t, "name"),
                        text(t, "description"),
                        pretty(t.get("inputSchema").unwrap_or(&Value::Null)),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

impl SamplingView {
    /// The server asked for context to be added (which is never done; the page says so).
    pub fn context_requested(&self) -> bool {
        self.include_context != IncludeContext::None
    }
}

/// The model name the answer form starts with: the person wrote the response, so the form says
/// so; it is an editable field, not something added behind their back.
pub const PERSON_MODEL: &str = "human-written";

/// What the person typed into the sampling answer form.
pub struct SamplingInput {
    pub text: String,
    pub model: String,
    pub stop_reason: String,
    /// The "answer as JSON" textarea, when that form was used.
    pub json: Option<String>,
}

impl SamplingInput {
    pub fn from_pairs(pairs: &[(String, String)]) -> SamplingInput {
        SamplingInput {
            text: last(pairs, "text").unwrap_or_default().to_owned(),
            model: last(pairs, "model").unwrap_or_default().trim().to_owned(),
            stop_reason: last(pairs, "stopReason")
                .unwrap_or(StopReason::EndTurn.as_str())
                .to_owned(),
            json: (last(pairs, "mode") == Some("json"))
                .then(|| last(pairs, "resultJson").unwrap_or_default().to_owned()),
        }
    }

    /// The answer this input stands for.
    pub fn answer(&self) -> Result<Value, Vec<FieldError>> {
        match &self.json {
            Some(text) => serde_json::from_str(text).map_err(|e| {
                vec![FieldError::new(
                    "result",
                    Problem::InvalidJson {
                        detail: e.to_string(),
                    },
                )]
            }),
            None => Ok(self.result()),
        }
    }

    /// The `CreateMessageResult` this input stands for; nothing is added beyond what the form
    /// shows (role assistant and a text block are the form's own fields).
    pub fn result(&self) -> Value {
        let mut r = Map::new();
        r.insert("role".into(), json!("assistant"));
        r.insert("content".into(), json!({"type": "text", "text": self.text}));
        r.insert("model".into(), json!(self.model));
        if !self.stop_reason.is_empty() {
            r.insert("stopReason".into(), json!(self.stop_reason));
        }
        Value::Object(r)
    }
}
