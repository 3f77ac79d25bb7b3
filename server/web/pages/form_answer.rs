//! The answer a submitted page form stands for, by kind: the leaf both the answer page and the
//! tool-call page read, so neither imports the other's parsing.

use serde_json::Value;

use crate::broker::{Kind, Question};
use crate::domain::Action;
use crate::protocol::{FieldError, Problem};
use crate::web::views::last;
use crate::web::views::sampling::SamplingInput;
use crate::web::views::tool_call::edited_arguments;
use crate::wire::Answer;

/// The button a question's form was sent with (its `action` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageAction {
    /// "Review and send…" (or "Allow once" on a tool call).
    Accept,
    /// "Decline".
    Decline,
    /// "Cancel".
    Cancel,
    /// "Back" from the confirm page: the form again, as submitted.
    Edit,
}

impl PageAction {
    /// The `action` of submitted form pairs; `None` when it is absent or no button's.
    pub fn of(pairs: &[(String, String)]) -> Option<PageAction> {
        last(pairs, "action").and_then(PageAction::named)
    }

    /// The button named `value`; `None` for no button's.
    pub fn named(value: &str) -> Option<PageAction> {
        match value {
            "accept" => Some(PageAction::Accept),
            "decline" => Some(PageAction::Decline),
            "cancel" => Some(PageAction::Cancel),
            "edit" => Some(PageAction::Edit),
            _ => None,
        }
    }
}

/// The answer a submitted review form stands for.
pub fn answer_from_form(
    q: &Question,
    pairs: &[(String, String)],
) -> Result<Answer, Vec<FieldError>> {
    match q.kind {
        Kind::Form => {
            let schema = q.form_schema().map_err(|e| {
                vec![FieldError::whole(Problem::Schema {
                    detail: e.to_string(),
                })]
            })?;
            let content = schema.content_from_form(pairs)?;
            Ok(Answer {
                action: Action::Accept,
                content: Some(Value::Object(content)),
                result: None,
                arguments: None,
                grant: None,
            })
        }
        Kind::Sampling => Ok(Answer {
            action: Action::Accept,
            content: None,
            result: Some(SamplingInput::from_pairs(pairs).answer()?),
            arguments: None,
            grant: None,
        }),
        Kind::Url => Ok(Answer {
            action: Action::Accept,
            content: None,
            result: None,
            arguments: None,
            grant: None,
        }),
        Kind::ToolCall => Ok(Answer {
            action: Action::Accept,
            content: None,
            result: None,
            arguments: edited_arguments(q, pairs)?,
            grant: last(pairs, "grant").and_then(grant_span),
        }),
    }
}

/// A grant button's value.
pub fn grant_span(value: &str) -> Option<crate::wire::GrantSpan> {
    match value {
        "hour" => Some(crate::wire::GrantSpan::Hour),
        "day" => Some(crate::wire::GrantSpan::Day),
        "always" => Some(crate::wire::GrantSpan::Always),
        _ => None,
    }
}
