//! Why a question is person-only, told to the person on the question page and to a script in
//! the API's 403: every URL question is; a form is when it looks like it asks for a secret
//! (naming each listed word that matched and where, so a false alarm can be told from a real
//! request) or when `forms_person_only` makes every form so.

use super::audience::{HintPlace, SecretHint, secret_hints};
use crate::protocol::elicitation::FormSchema;

/// Why a question is person-only, for the page and the API's 403.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PersonOnly {
    /// Every URL question is for the person (the click is their consent).
    UrlQuestion,
    /// Every tool call is the person's to approve: an agent must not approve its own calls.
    ToolCall,
    /// The form looks like it asks for a secret, here.
    Secret(Vec<SecretHint>),
    /// The request itself asks for the person's answer
    /// ([`super::audience::PERSON_ONLY_META`]), as mcp-consent's own consent questions do.
    Asked,
    /// No word matched: `forms_person_only` makes every form person-only.
    EveryForm,
}

impl PersonOnly {
    /// Why the form question with `params` (as sent, judged by `era`) is person-only.
    pub fn of_form(era: crate::protocol::era::Era, params: &serde_json::Value) -> PersonOnly {
        if super::audience::asks_for_a_person(params) {
            return PersonOnly::Asked;
        }
        let message = params["message"].as_str().unwrap_or_default();
        let hints = FormSchema::parse(era, &params["requestedSchema"])
            .map(|schema| secret_hints(message, &schema))
            .unwrap_or_default();
        if hints.is_empty() {
            PersonOnly::EveryForm
        } else {
            PersonOnly::Secret(hints)
        }
    }

    /// The reason in English (the API's 403), naming each matched word and its place.
    pub fn describe(&self) -> String {
        match self {
            PersonOnly::UrlQuestion => "URL questions are always for a person".to_owned(),
            PersonOnly::ToolCall => {
                "tool calls are approved by a person: an agent must not approve its own calls"
                    .to_owned()
            }
            PersonOnly::EveryForm => "forms_person_only makes every form person-only".to_owned(),
            PersonOnly::Asked => "the request asks for a person's answer".to_owned(),
            PersonOnly::Secret(hints) => {
                let found: Vec<String> = hints
                    .iter()
                    .map(|h| {
                        let place = match &h.place {
                            HintPlace::Message => "the message".to_owned(),
                            HintPlace::FieldName(f) => format!("the name of field {f:?}"),
                            HintPlace::FieldTitle(f) => format!("the title of field {f:?}"),
                            HintPlace::FieldDescription(f) => {
                                format!("the description of field {f:?}")
                            }
                            HintPlace::Choice(f) => format!("a choice of field {f:?}"),
                        };
                        format!("{:?} in {place}", h.word)
                    })
                    .collect();
                format!(
                    "the form looks like it asks for a secret: {}",
                    found.join("; ")
                )
            }
        }
    }
}

impl PersonOnly {
    /// Why `question` is person-only (`None` when it is not).
    pub fn of(question: &super::question::Question) -> Option<PersonOnly> {
        use crate::domain::{Audience, Kind};
        if question.audience != Audience::Human {
            return None;
        }
        Some(match question.kind {
            Kind::Form => PersonOnly::of_form(question.era, &question.request),
            Kind::ToolCall => PersonOnly::ToolCall,
            _ => PersonOnly::UrlQuestion,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::era::Era;
    use serde_json::json;

    #[test]
    fn the_reason_names_the_word_and_the_field() {
        let params = json!({"mode": "form", "message": "Pick a colour",
            "requestedSchema": {"type": "object", "properties": {
                "c": {"type": "string", "description": "do not give us your pin"}}}});
        let why = PersonOnly::of_form(Era::V2025_11_25, &params);
        assert_eq!(
            why.describe(),
            r#"the form looks like it asks for a secret: "pin" in the description of field "c""#
        );
        let harmless = json!({"message": "Name?", "requestedSchema": {"type": "object",
            "properties": {"n": {"type": "string"}}}});
        assert_eq!(
            PersonOnly::of_form(Era::V2025_11_25, &harmless),
            PersonOnly::EveryForm
        );
    }

    #[test]
    fn a_request_asking_for_a_person_says_so() {
        let asked = json!({"message": "May we?", "requestedSchema": {"type": "object",
            "properties": {}}, "_meta": {"io.github.mcp-consent/personOnly": true}});
        assert_eq!(
            PersonOnly::of_form(Era::V2025_11_25, &asked),
            PersonOnly::Asked
        );
        assert_eq!(
            PersonOnly::Asked.describe(),
            "the request asks for a person's answer"
        );
        assert!(super::super::audience::asks_for_a_person(&asked));
        let not_asked =
            json!({"message": "May we?", "_meta": {"io.github.mcp-consent/personOnly": "yes"}});
        assert!(!super::super::audience::asks_for_a_person(&not_asked));
    }
}
