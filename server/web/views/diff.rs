//! Line diffs of a prompt edit against the server's original request, as the request review
//! shows them: which text blocks (and the system prompt) the person changed, line by line.

use similar::{ChangeTag, TextDiff};

use serde_json::Value;

/// Unchanged lines shown around each change; longer unchanged runs collapse into a gap.
const CONTEXT_LINES: usize = 2;

/// How one line of a diff relates to the original.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineChange {
    /// In both the original and the edit.
    Same,
    /// In the server's original only.
    Removed,
    /// In the edit only.
    Added,
    /// Unchanged lines left out (the template shows an ellipsis).
    Gap,
}

/// One rendered line.
pub struct DiffLine {
    pub change: LineChange,
    /// The line without its line break.
    pub text: String,
}

/// The diff of one edited text: the system prompt (`message` is `None`) or the text block
/// `block` of message `message`.
pub struct BlockDiff {
    pub message: Option<(usize, usize)>,
    pub lines: Vec<DiffLine>,
}

impl BlockDiff {
    /// Whether this is the system prompt's diff.
    pub fn is_system(&self) -> bool {
        self.message.is_none()
    }

    /// The message index (0 for the system prompt).
    pub fn message_index(&self) -> usize {
        self.message.map_or(0, |(m, _)| m)
    }

    /// The block index (0 for the system prompt).
    pub fn block_index(&self) -> usize {
        self.message.map_or(0, |(_, b)| b)
    }
}

/// The texts of `params` a person may edit: the system prompt (`None`) and each text block
/// by (message, block), in order.
pub fn editable_texts(params: &Value) -> Vec<(Option<(usize, usize)>, String)> {
    let mut out = Vec::new();
    if let Some(sp) = params.get("systemPrompt").and_then(Value::as_str) {
        out.push((None, sp.to_owned()));
    }
    if let Some(messages) = params.get("messages").and_then(Value::as_array) {
        for (m, message) in messages.iter().enumerate() {
            let blocks: Vec<&Value> = match message.get("content") {
                Some(Value::Array(items)) => items.iter().collect(),
                Some(b) => vec![b],
                None => Vec::new(),
            };
            for (b, block) in blocks.iter().enumerate() {
                if let Some(text) = block
                    .get("text")
                    .and_then(Value::as_str)
                    .filter(|_| block["type"] == "text")
                {
                    out.push((Some((m, b)), text.to_owned()));
                }
            }
        }
    }
    out
}

/// The diffs of every editable text that differs between the server's `original` params and
/// the `current` revision's (a removed system prompt diffs against the empty text).
pub fn prompt_diffs(original: &Value, current: &Value) -> Vec<BlockDiff> {
    let before = editable_texts(original);
    let after = editable_texts(current);
    let mut keys: Vec<Option<(usize, usize)>> = before.iter().map(|(k, _)| *k).collect();
    for (k, _) in &after {
        if !keys.contains(k) {
            keys.push(*k);
        }
    }
    let text_of = |texts: &[(Option<(usize, usize)>, String)], key| {
        texts
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, t)| t.clone())
            .unwrap_or_default()
    };
    keys.into_iter()
        .filter_map(|key| {
            let (old, new) = (text_of(&before, key), text_of(&after, key));
            (old != new).then(|| BlockDiff {
                message: key,
                lines: line_diff(&old, &new),
            })
        })
        .collect()
}

/// A line diff of `old` → `new` with [`CONTEXT_LINES`] of context around each change.
pub fn line_diff(old: &str, new: &str) -> Vec<DiffLine> {
    // Every line ends with a line break here, so that a last line without one is not shown as
    // changed when only a line was added after it.
    let terminated = |t: &str| {
        if t.is_empty() || t.ends_with('\n') {
            t.to_owned()
        } else {
            format!("{t}\n")
        }
    };
    let (old, new) = (terminated(old), terminated(new));
    let diff = TextDiff::from_lines(&old, &new);
    let mut lines = Vec::new();
    for (i, group) in diff.grouped_ops(CONTEXT_LINES).iter().enumerate() {
        if i > 0 {
            lines.push(DiffLine {
                change: LineChange::Gap,
                text: String::new(),
            });
        }
        for op in group {
            for change in diff.iter_changes(op) {
                lines.push(DiffLine {
                    change: match change.tag() {
                        ChangeTag::Equal => LineChange::Same,
                        ChangeTag::Delete => LineChange::Removed,
                        ChangeTag::Insert => LineChange::Added,
                    },
                    text: change.value().trim_end_matches(['\n', '\r']).to_owned(),
                });
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_changed_line_is_removed_then_added_with_context() {
        let lines = line_diff("a\nb\nc\n", "a\nB\nc\n");
        let got: Vec<(LineChange, &str)> =
            lines.iter().map(|l| (l.change, l.text.as_str())).collect();
        assert_eq!(
            got,
            [
                (LineChange::Same, "a"),
                (LineChange::Removed, "b"),
                (LineChange::Added, "B"),
                (LineChange::Same, "c"),
            ]
        );
    }

    #[test]
    fn a_line_added_after_an_unterminated_last_line_leaves_that_line_unchanged() {
        let lines = line_diff("Paris?", "Paris?\nIn Celsius.");
        let got: Vec<(LineChange, &str)> =
            lines.iter().map(|l| (l.change, l.text.as_str())).collect();
        assert_eq!(
            got,
            [
                (LineChange::Same, "Paris?"),
                (LineChange::Added, "In Celsius.")
            ]
        );
    }

    #[test]
    fn only_edited_blocks_get_a_diff() {
        let original = json!({"systemPrompt": "Be brief.", "messages": [
            {"role": "user", "content": {"type": "text", "text": "Hi"}},
            {"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}
        ]});
        let mut current = original.clone();
        current["messages"][1]["content"][1]["text"] = json!("TWO");
        let diffs = prompt_diffs(&original, &current);
        assert_eq!(diffs.len(), 1);
        assert_eq!(diffs[0].message, Some((1, 1)));
        assert!(prompt_diffs(&original, &original).is_empty());
        current.as_object_mut().map(|o| o.remove("systemPrompt"));
        assert!(prompt_diffs(&original, &current)[0].is_system());
    }
}
