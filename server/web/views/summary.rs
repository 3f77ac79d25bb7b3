//! What the person answered, in the words the form showed them: labels and chosen titles for
//! the confirm page, and what they typed when a question went away while they were answering.

use super::sampling::pretty;
use crate::broker::Kind;
use crate::broker::Question;
use crate::i18n::I18n;
use crate::protocol::elicitation::Choice;
use crate::protocol::elicitation::FieldKind;
use crate::protocol::elicitation::FormSchema;
use serde_json::Map;
use serde_json::Value;

/// One answered field as the person reads it.
pub struct SummaryRow {
    /// The field's title (else its property name).
    pub label: String,
    /// What is sent, in the form's words: option titles, "yes"/"no", the text as typed.
    pub value: String,
    /// False when the field is left out of `content` (not answered).
    pub sent: bool,
}

/// Every field of `schema` with what `content` sends for it, in the schema's order.
pub fn content_summary(
    i18n: &I18n,
    schema: &FormSchema,
    content: &Map<String, Value>,
) -> Vec<SummaryRow> {
    schema
        .fields
        .iter()
        .map(|f| {
            let value = content.get(&f.name);
            SummaryRow {
                label: f.label().to_owned(),
                value: value.map(|v| shown(i18n, &f.kind, v)).unwrap_or_default(),
                sent: value.is_some(),
            }
        })
        .collect()
}

/// A sent value in the form's words ("yes"/"no" in the page's language).
fn shown(i18n: &I18n, kind: &FieldKind, v: &Value) -> String {
    let title = |options: &[Choice], s: &str| {
        options
            .iter()
            .find(|o| o.value == s)
            .map_or_else(|| s.to_owned(), |o| o.title.clone())
    };
    match (kind, v) {
        (FieldKind::Boolean { .. }, Value::Bool(b)) => i18n.t(if *b { "yes" } else { "no" }),
        (FieldKind::Select { options, .. }, Value::String(s)) => title(options, s),
        (FieldKind::MultiSelect { options, .. }, Value::Array(items)) => {
            let titles: Vec<String> = items
                .iter()
                .map(|i| title(options, i.as_str().unwrap_or_default()))
                .collect();
            if titles.is_empty() {
                i18n.t("summary-none-chosen")
            } else {
                titles.join(", ")
            }
        }
        (_, Value::String(s)) => s.clone(),
        (_, other) => other.to_string(),
    }
}

/// What the person typed into a question page's form (`pairs` as submitted), as labelled rows
/// to show back when the question went away before it could be sent. Form fields by their
/// labels (raw text, not validated); a sampling answer's text or JSON as typed.
pub fn typed_summary(i18n: &I18n, q: &Question, pairs: &[(String, String)]) -> Vec<SummaryRow> {
    let typed = |key: &str| -> String {
        pairs
            .iter()
            .filter(|(k, v)| k == key && !v.is_empty())
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let row = |label: String, value: String| SummaryRow {
        label,
        sent: !value.is_empty(),
        value,
    };
    match q.kind {
        Kind::Form => match q.form_schema() {
            Ok(schema) => schema
                .fields
                .iter()
                .map(|f| row(f.label().to_owned(), typed(&format!("field.{}", f.name))))
                .filter(|r| r.sent)
                .collect(),
            Err(_) => Vec::new(),
        },
        Kind::Sampling => [
            (i18n.t("summary-response-text"), "text"),
            (i18n.t("summary-model-name"), "model"),
            ("CreateMessageResult".to_owned(), "resultJson"),
        ]
        .into_iter()
        .map(|(label, key)| row(label, typed(key)))
        .filter(|r| r.sent)
        .collect(),
        Kind::Url | Kind::ToolCall => Vec::new(),
    }
}

/// A prompt edit the person was saving (`systemPrompt`, `text.<message>.<block>` as posted to
/// `/revise`), as rows to show back when the question went away before it could be saved.
pub fn typed_revision(i18n: &I18n, pairs: &[(String, String)]) -> Vec<SummaryRow> {
    pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .filter_map(|(k, v)| {
            let label = if k == "systemPrompt" {
                i18n.t("sampling-system-prompt")
            } else {
                // Counted from 1, as the page's message list and edit boxes count.
                let (m, b) = k.strip_prefix("text.")?.split_once('.')?;
                let (m, b): (usize, usize) = (m.parse().ok()?, b.parse().ok()?);
                i18n.msg("summary-block")
                    .arg("message", m + 1)
                    .arg("block", b + 1)
                    .to_string()
            };
            Some(SummaryRow {
                label,
                value: v.clone(),
                sent: true,
            })
        })
        .collect()
}

/// The confirmed `result` a person was about to send (`/send`), as rows to show back: a form's
/// content by its labels, a sampling result as its JSON.
pub fn result_summary(i18n: &I18n, q: &Question, result: &Value) -> Vec<SummaryRow> {
    match (q.kind, result.get("content"), q.form_schema()) {
        (Kind::Form, Some(Value::Object(content)), Ok(schema)) => {
            content_summary(i18n, &schema, content)
                .into_iter()
                .filter(|r| r.sent)
                .collect()
        }
        _ => vec![SummaryRow {
            label: i18n.t("summary-your-answer"),
            value: pretty(result),
            sent: true,
        }],
    }
}
