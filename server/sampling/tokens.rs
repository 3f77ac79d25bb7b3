//! Estimated input tokens of a `sampling/createMessage` request for one model, with a label
//! saying how the number was obtained, so pages and receipts can say "estimated".
//!
//! OpenAI-style model ids (`gpt-4o*`, `gpt-4.1*`, `gpt-5*`, `gpt-oss*`, `o1*`, `o3*`, `o4*`,
//! `chatgpt-4o*`) are counted with the `o200k_base` BPE, `gpt-4*`/`gpt-3.5*` with
//! `cl100k_base` (the `tiktoken-rs` crate, whose BPE files are compiled into the binary: nothing
//! is downloaded). Every other model is estimated as ⌈characters / 4⌉. Images and audio are
//! not tokenized: each block counts a fixed [`MEDIA_BLOCK_TOKENS`], and the label says so.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tiktoken_rs::CoreBPE;

/// Tokens counted for each image or audio block (a rough, provider-independent estimate).
pub const MEDIA_BLOCK_TOKENS: u64 = 1_000;
/// Tokens counted per message for role and framing (OpenAI cookbook's figure for chat models).
pub const PER_MESSAGE_TOKENS: u64 = 4;

/// How an input-token count was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenMethod {
    /// Counted with the `o200k_base` BPE (tiktoken).
    TiktokenO200kBase,
    /// Counted with the `cl100k_base` BPE (tiktoken).
    TiktokenCl100kBase,
    /// Estimated as ⌈characters / 4⌉: no tokenizer for this model family.
    CharsDiv4,
}

impl TokenMethod {
    /// A short label for pages: `"tiktoken o200k_base"`, `"tiktoken cl100k_base"` or
    /// `"estimate: characters / 4"`.
    pub fn label(self) -> &'static str {
        match self {
            TokenMethod::TiktokenO200kBase => "tiktoken o200k_base",
            TokenMethod::TiktokenCl100kBase => "tiktoken cl100k_base",
            TokenMethod::CharsDiv4 => "estimate: characters / 4",
        }
    }
}

/// An input-token estimate for one model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenEstimate {
    /// Estimated input tokens (system prompt, messages, tool definitions, per-message framing).
    pub tokens: u64,
    /// How the text was counted.
    pub method: TokenMethod,
    /// Number of image/audio blocks counted at [`MEDIA_BLOCK_TOKENS`] each.
    pub media_blocks: u64,
}

/// The tokenizer family for a model id (case-insensitive prefix match).
pub fn method_for(model_id: &str) -> TokenMethod {
    let id = model_id.to_ascii_lowercase();
    let o200k = [
        "gpt-4o",
        "gpt-4.1",
        "gpt-4.5",
        "gpt-5",
        "gpt-oss",
        "chatgpt-4o",
        "o1",
        "o3",
        "o4",
    ];
    let usable = |m: TokenMethod| bpe(m).is_some();
    if o200k.iter().any(|p| id.starts_with(p)) && usable(TokenMethod::TiktokenO200kBase) {
        TokenMethod::TiktokenO200kBase
    } else if (id.starts_with("gpt-4") || id.starts_with("gpt-3.5"))
        && usable(TokenMethod::TiktokenCl100kBase)
    {
        TokenMethod::TiktokenCl100kBase
    } else {
        TokenMethod::CharsDiv4
    }
}

fn bpe(method: TokenMethod) -> Option<&'static CoreBPE> {
    static O200K: OnceLock<Option<CoreBPE>> = OnceLock::new();
    static CL100K: OnceLock<Option<CoreBPE>> = OnceLock::new();
    match method {
        TokenMethod::TiktokenO200kBase => O200K
            .get_or_init(|| tiktoken_rs::o200k_base().ok())
            .as_ref(),
        TokenMethod::TiktokenCl100kBase => CL100K
            .get_or_init(|| tiktoken_rs::cl100k_base().ok())
            .as_ref(),
        TokenMethod::CharsDiv4 => None,
    }
}

/// Counts `text` with `method`.
pub fn count_text(method: TokenMethod, text: &str) -> u64 {
    match bpe(method) {
        Some(bpe) => bpe.encode_ordinary(text).len() as u64,
        None => (text.chars().count() as u64).div_ceil(4),
    }
}

/// Estimates the input tokens of validated `sampling/createMessage` params for `model_id`:
/// `systemPrompt`, every text block (including inside `tool_result`), `tool_use` inputs and
/// `structuredContent` as compact JSON, tool definitions (name, description, `inputSchema`
/// JSON), [`PER_MESSAGE_TOKENS`] per message, and [`MEDIA_BLOCK_TOKENS`] per image/audio
/// block. Deterministic; never fails (unexpected shapes count as nothing).
pub fn estimate_input_tokens(params: &Value, model_id: &str) -> TokenEstimate {
    let method = method_for(model_id);
    let mut text = String::new();
    let mut media_blocks = 0u64;
    let mut messages = 0u64;
    if let Some(s) = params.get("systemPrompt").and_then(Value::as_str) {
        text.push_str(s);
        text.push('\n');
        messages += 1;
    }
    for message in params
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        messages += 1;
        if let Some(content) = message.get("content") {
            collect_blocks(content, &mut text, &mut media_blocks);
        }
    }
    for tool in params
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for key in ["name", "description"] {
            if let Some(s) = tool.get(key).and_then(Value::as_str) {
                text.push_str(s);
                text.push('\n');
            }
        }
        if let Some(schema) = tool.get("inputSchema") {
            text.push_str(&schema.to_string());
            text.push('\n');
        }
    }
    let tokens = count_text(method, &text)
        + messages * PER_MESSAGE_TOKENS
        + media_blocks * MEDIA_BLOCK_TOKENS;
    TokenEstimate {
        tokens,
        method,
        media_blocks,
    }
}

fn collect_blocks(content: &Value, text: &mut String, media: &mut u64) {
    let blocks: Vec<&Value> = match content {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(s) = block.get("text").and_then(Value::as_str) {
                    text.push_str(s);
                    text.push('\n');
                }
            }
            Some("image" | "audio") => *media += 1,
            Some("tool_use") => {
                if let Some(s) = block.get("name").and_then(Value::as_str) {
                    text.push_str(s);
                }
                if let Some(input) = block.get("input") {
                    text.push_str(&input.to_string());
                }
                text.push('\n');
            }
            Some("tool_result") => {
                if let Some(inner) = block.get("content") {
                    collect_blocks(inner, text, media);
                }
                if let Some(sc) = block.get("structuredContent") {
                    text.push_str(&sc.to_string());
                    text.push('\n');
                }
            }
            Some("resource") => {
                if let Some(s) = block
                    .get("resource")
                    .and_then(|r| r.get("text"))
                    .and_then(Value::as_str)
                {
                    text.push_str(s);
                    text.push('\n');
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn picks_the_tokenizer_by_family() {
        assert_eq!(method_for("gpt-4o-mini"), TokenMethod::TiktokenO200kBase);
        assert_eq!(method_for("o3-mini"), TokenMethod::TiktokenO200kBase);
        assert_eq!(method_for("gpt-4-turbo"), TokenMethod::TiktokenCl100kBase);
        assert_eq!(method_for("claude-sonnet-4"), TokenMethod::CharsDiv4);
        assert_eq!(method_for("llama3.2"), TokenMethod::CharsDiv4);
    }

    #[test]
    fn counts_real_tokens_and_labels_estimates() {
        // "hello world" is two tokens in both BPEs.
        assert_eq!(count_text(TokenMethod::TiktokenO200kBase, "hello world"), 2);
        assert_eq!(
            count_text(TokenMethod::TiktokenCl100kBase, "hello world"),
            2
        );
        assert_eq!(count_text(TokenMethod::CharsDiv4, "hello world"), 3);
        let params = json!({"maxTokens": 5, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hello world"},
                                         {"type": "image", "data": "AA==", "mimeType": "image/png"}]}]});
        let e = estimate_input_tokens(&params, "gpt-4o");
        assert_eq!(e.method, TokenMethod::TiktokenO200kBase);
        assert_eq!(e.media_blocks, 1);
        // "hello world\n" = 3 tokens, + 4 framing + 1000 media.
        assert_eq!(e.tokens, 3 + PER_MESSAGE_TOKENS + MEDIA_BLOCK_TOKENS);
        assert_eq!(e.method.label(), "tiktoken o200k_base");
    }
}
