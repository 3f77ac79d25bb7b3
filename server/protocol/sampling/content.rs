//! The content of sampling messages and results: each message's role and blocks, and each
//! block by its type (`text`, `image`, `audio`, `tool_use`, `tool_result`), as the revision
//! allows. Rules and sources: `docs/protocol.md` §2 (`schema.ts` `SamplingMessage`,
//! `SamplingContent`, `ToolUseContent`, `ToolResultContent`).

use serde_json::Value;

use crate::protocol::era::Era;

/// One `SamplingMessage`: its `role` (`user` or `assistant`) and its content blocks, which
/// must fit the role (tool results from the user, tool uses from the assistant).
///
/// # Errors
/// A sentence naming what is wrong.
pub(super) fn validate_message(era: Era, message: &Value) -> Result<(), String> {
    let obj = message.as_object().ok_or("a message must be an object")?;
    let role = match obj.get("role").and_then(Value::as_str) {
        Some(r @ ("user" | "assistant")) => r,
        Some(r) => {
            return Err(format!(
                "role {r:?} is not allowed (only \"user\" or \"assistant\")"
            ));
        }
        None => return Err("role is required".into()),
    };
    let content = obj.get("content").ok_or("content is required")?;
    for block in content_blocks(era, content)? {
        validate_block(block)?;
        match (role, block_type(block)) {
            ("user", Some("tool_use")) => {
                return Err("tool_use blocks belong in assistant messages".into());
            }
            ("assistant", Some("tool_result")) => {
                return Err("tool_result blocks belong in user messages".into());
            }
            _ => {}
        }
    }
    Ok(())
}

/// The blocks of a `content` field, checked for the era's shape: 2025-06-18 takes one
/// text/image/audio block; 2025-11-25+ one block or an array and adds `tool_use`/`tool_result`.
///
/// # Errors
/// A sentence when the shape is not allowed in `era`.
pub(super) fn content_blocks(era: Era, content: &Value) -> Result<Vec<&Value>, String> {
    let blocks: Vec<&Value> = match content {
        Value::Object(_) => vec![content],
        Value::Array(items) if era.has_sampling_tools() => items.iter().collect(),
        Value::Array(_) => return Err(format!("content must be a single block in {era}")),
        _ => return Err("content must be a content block".into()),
    };
    for block in &blocks {
        match block_type(block) {
            Some("text" | "image" | "audio") => {}
            Some("tool_use" | "tool_result") if era.has_sampling_tools() => {}
            Some(t) => {
                return Err(format!(
                    "content type {t:?} is not allowed in sampling messages in {era}"
                ));
            }
            None => return Err("every content block needs a string type".into()),
        }
    }
    Ok(blocks)
}

/// A block's `type`, when it is a string.
pub(super) fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

fn require_str(block: &Value, key: &str, ty: &str) -> Result<(), String> {
    match block.get(key) {
        Some(Value::String(_)) => Ok(()),
        _ => Err(format!("{ty} content needs a string {key}")),
    }
}

/// An image/audio block: `data` is base64 and `mimeType` is of the block's family (`image/…`,
/// `audio/…`), so nothing else (e.g. `text/html`) travels as an image (2025-06-18+ `schema.ts`
/// `ImageContent`, `AudioContent`: "The base64-encoded image data").
fn validate_media(block: &Value, ty: &str) -> Result<(), String> {
    use base64::Engine;
    require_str(block, "data", ty)?;
    require_str(block, "mimeType", ty)?;
    let mime = block
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !mime.starts_with(&format!("{ty}/")) || mime.len() <= ty.len() + 1 {
        return Err(format!(
            "{ty} content needs an {ty}/* mimeType, not {mime:?}"
        ));
    }
    let data = block
        .get("data")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if base64::engine::general_purpose::STANDARD
        .decode(data)
        .is_err()
    {
        return Err(format!("{ty} content data is not valid base64"));
    }
    Ok(())
}

/// One content block by its `type`, with the members that type requires.
///
/// # Errors
/// A sentence naming the missing or ill-typed member, or an unknown type.
pub(super) fn validate_block(block: &Value) -> Result<(), String> {
    match block_type(block) {
        Some("text") => require_str(block, "text", "text"),
        Some(t @ ("image" | "audio")) => validate_media(block, t),
        Some("tool_use") => {
            require_str(block, "id", "tool_use")?;
            require_str(block, "name", "tool_use")?;
            if !block.get("input").is_some_and(Value::is_object) {
                return Err("tool_use content needs an object input".into());
            }
            Ok(())
        }
        Some("tool_result") => {
            require_str(block, "toolUseId", "tool_result")?;
            let inner = block
                .get("content")
                .and_then(Value::as_array)
                .ok_or("tool_result content needs a content array")?;
            for item in inner {
                match block_type(item) {
                    Some("text") => require_str(item, "text", "text")?,
                    Some(t @ ("image" | "audio")) => validate_media(item, t)?,
                    Some("resource_link" | "resource") => {}
                    _ => return Err("tool_result content holds an unknown block type".into()),
                }
            }
            if block.get("isError").is_some_and(|v| !v.is_boolean()) {
                return Err("tool_result isError must be a boolean".into());
            }
            if block
                .get("structuredContent")
                .is_some_and(|v| !v.is_object())
            {
                return Err("tool_result structuredContent must be an object".into());
            }
            Ok(())
        }
        _ => Err("unknown content type".into()),
    }
}
