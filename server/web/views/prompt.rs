//! The prompt as the request review's edit boxes show it: one box per text block, labelled the
//! way the request's message list is numbered (from 1, with the role), sized to the text, and
//! the blocks that are not text (tool uses and tool results, images, audio) named read-only so
//! no message is silently left out.

use crate::i18n::Arg;
use crate::i18n::I18n;
use serde_json::Value;

/// The fewest and most rows an edit box gets (the browser scrolls past the most).
const MIN_ROWS: usize = 4;
const MAX_ROWS: usize = 24;
/// The characters a box shows on one line before the text wraps, for sizing.
const LINE_CHARS: usize = 72;

/// One block of the prompt in the request review.
pub struct PromptBox {
    /// The form field (`text.<message>.<block>`, counted from 0 as the wire counts) of an
    /// editable text block; empty for a block shown read-only.
    pub name: String,
    /// "Message 2 (assistant), block 1": counted from 1, as the request's list above.
    pub label: String,
    /// The text (editable) or what the block is (read-only: `tool_result for call_1`).
    pub text: String,
    /// The box's height in rows, from the text's length.
    pub rows: usize,
}

impl PromptBox {
    /// Whether the person can edit this block here.
    pub fn editable(&self) -> bool {
        !self.name.is_empty()
    }
}

/// Rows for a box holding `text`: its lines, long ones counted as they wrap, plus one to type in.
pub fn rows_for(text: &str) -> usize {
    let lines: usize = text
        .lines()
        .map(|l| l.chars().count().div_ceil(LINE_CHARS).max(1))
        .sum();
    (lines + 1).clamp(MIN_ROWS, MAX_ROWS)
}

/// The label of block `block` of message `message` (both from 0) whose role is `role`.
pub fn block_label(i18n: &I18n, message: usize, role: &str, block: usize) -> String {
    i18n.msg("review-block-label")
        .arg("message", message + 1)
        .arg("role", i18n.word("role", &role))
        .arg("block", block + 1)
        .to_string()
}

/// Every block of every message of `params`, in order: text blocks editable, others read-only.
pub fn prompt_boxes(i18n: &I18n, params: &Value) -> Vec<PromptBox> {
    let Some(messages) = params.get("messages").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (m, message) in messages.iter().enumerate() {
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let blocks: Vec<&Value> = match message.get("content") {
            Some(Value::Array(items)) => items.iter().collect(),
            Some(b) => vec![b],
            None => Vec::new(),
        };
        for (b, block) in blocks.iter().enumerate() {
            let label = block_label(i18n, m, role, b);
            let kind = block
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or_default();
            match block.get("text").and_then(Value::as_str) {
                Some(text) if kind == "text" => out.push(PromptBox {
                    name: format!("text.{m}.{b}"),
                    label,
                    rows: rows_for(text),
                    text: text.to_owned(),
                }),
                _ => {
                    let id = block
                        .get("id")
                        .or_else(|| block.get("toolUseId"))
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    out.push(PromptBox {
                        name: String::new(),
                        label,
                        text: if id.is_empty() {
                            i18n.msg("review-block-fixed").arg("kind", kind).to_string()
                        } else {
                            i18n.msg("review-block-fixed-id")
                                .arg("kind", kind)
                                .arg("id", Arg::server(id))
                                .to_string()
                        },
                        rows: 0,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn boxes_count_from_one_with_the_role_and_keep_tool_messages() {
        let params = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "Weather?"}},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "w", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "toolUseId": "call_1", "content": []}]},
        ]});
        let boxes = prompt_boxes(&I18n::default(), &params);
        let labels: Vec<&str> = boxes.iter().map(|b| b.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Message 1 (user), block 1",
                "Message 2 (assistant), block 1",
                "Message 3 (user), block 1"
            ]
        );
        assert_eq!(boxes[0].name, "text.0.0");
        assert!(!boxes[1].editable() && !boxes[2].editable());
        assert!(boxes[2].text.contains("call_1"), "{}", boxes[2].text);
    }

    #[test]
    fn long_text_gets_a_taller_box() {
        assert_eq!(rows_for("short"), MIN_ROWS);
        assert_eq!(rows_for(&"line\n".repeat(10)), 11);
        assert_eq!(rows_for(&"x".repeat(72 * 30)), MAX_ROWS);
    }
}
