//! The MCP wire model and the trust boundary: which requests may open a question and which
//! answers may become responses. Pure functions, no I/O, nothing else of ours imported.

pub mod binding;
pub mod elicitation;
pub mod envelope;
pub mod era;
pub mod exact;
pub mod invisible;
pub mod jsonrpc;
pub mod local_host;
pub mod lookalike;
pub mod members;
pub mod method;
pub mod mrtr;
pub mod notifications;
pub mod request_key;
pub mod sampling;
mod scan;
pub mod twins;
pub mod url_safety;

use serde::Serialize;

/// One problem with a proposed answer, as the API's 422 body reports it
/// (`{"field": "…", "message": "…"}`; `field` is empty when it concerns the whole answer).
/// The pages translate [`FieldError::problem`]; the API sends [`FieldError::message`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldError {
    /// The answer field concerned (a `requestedSchema` property, or `role`, `model`, …).
    pub field: String,
    /// What is wrong, in English words for the API (the problem's `Display`, or the JSON
    /// Schema validator's own sentence for a problem mapped from it).
    pub message: String,
    /// What is wrong, typed, so a page can say it in its language.
    #[serde(skip)]
    pub problem: Problem,
}

impl FieldError {
    /// A problem with one field.
    pub fn new(field: impl Into<String>, problem: Problem) -> Self {
        Self {
            field: field.into(),
            message: problem.to_string(),
            problem,
        }
    }

    /// A problem with the answer as a whole.
    pub fn whole(problem: Problem) -> Self {
        Self::new("", problem)
    }

    /// A rule of the protocol the answer breaks, in English (see [`Problem::Rule`]).
    pub fn rule(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(
            field,
            Problem::Rule {
                detail: detail.into(),
            },
        )
    }
}

/// What is wrong with one answered value (or the answer as a whole). `Display` is the English
/// sentence of the API's 422 body; the pages render each variant from the catalogues, with the
/// parameters as arguments.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    /// A `required` field is missing.
    #[error("required")]
    Required,
    /// Not a string where the field is text or a single choice.
    #[error("must be a string")]
    NotAString,
    /// Shorter than `minLength` (characters).
    #[error("must be at least {min} characters")]
    TooShort {
        /// `minLength`.
        min: u64,
    },
    /// Longer than `maxLength` (characters).
    #[error("must be at most {max} characters")]
    TooLong {
        /// `maxLength`.
        max: u64,
    },
    /// Not a number.
    #[error("must be a number")]
    NotANumber,
    /// Not a whole number where the field is an `integer`.
    #[error("must be a whole number")]
    NotWhole,
    /// Below `minimum`.
    #[error("must be at least {min}")]
    BelowMinimum {
        /// `minimum`.
        min: f64,
    },
    /// Above `maximum`.
    #[error("must be at most {max}")]
    AboveMaximum {
        /// `maximum`.
        max: f64,
    },
    /// Not `true` or `false`.
    #[error("must be true or false")]
    NotBoolean,
    /// A form's yes/no choice posted something else.
    #[error("must be yes, no or not answered")]
    NotYesNo,
    /// A value that is not one of the field's options (the value as sent).
    #[error("{value:?} is not one of the options")]
    NotAnOption {
        /// The value given.
        value: String,
    },
    /// A multi-select value that is not a list.
    #[error("must be a list of options")]
    NotAList,
    /// A multi-select list holding something other than strings.
    #[error("must be a list of strings")]
    NotAListOfStrings,
    /// An option chosen twice in a multi-select.
    #[error("an option is chosen twice")]
    ChosenTwice,
    /// Fewer options chosen than `minItems`.
    #[error("choose at least {min}")]
    TooFewChosen {
        /// `minItems`.
        min: u64,
    },
    /// More options chosen than `maxItems`.
    #[error("choose at most {max}")]
    TooManyChosen {
        /// `maxItems`.
        max: u64,
    },
    /// Text not in the field's `format`.
    #[error("{}", format_message(*.0))]
    Format(elicitation::TextFormat),
    /// `content` (or a result) that is not a JSON object.
    #[error("content must be an object")]
    NotAnObject,
    /// A key that is not a property of `requestedSchema`.
    #[error("not a field of requestedSchema")]
    UnknownField,
    /// Text that does not parse as JSON (serde_json's English detail).
    #[error("not valid JSON: {detail}")]
    InvalidJson {
        /// What the parser said.
        detail: String,
    },
    /// A JSON Schema validator finding with no typed counterpart (its English detail).
    #[error("{detail}")]
    Schema {
        /// What the validator said.
        detail: String,
    },
    /// A rule of the protocol's shapes the answer breaks (a sampling result's `role`,
    /// `model`, content, …), in English: it names protocol fields, which stay English.
    #[error("{detail}")]
    Rule {
        /// The rule, in English.
        detail: String,
    },
}

fn format_message(format: elicitation::TextFormat) -> &'static str {
    match format {
        elicitation::TextFormat::Email => "must be an email address",
        elicitation::TextFormat::Uri => "must be an absolute URI",
        elicitation::TextFormat::Date => "must be a date (YYYY-MM-DD)",
        elicitation::TextFormat::DateTime => "must be a date and time (RFC 3339)",
    }
}

/// Reading `ClientCapabilities` as forwarded to the server (MCP 2025-11-25 `schema.ts`
/// `ClientCapabilities`).
pub mod capabilities {
    use serde_json::Value;

    /// `sampling.tools` was declared (2025-11-25 SA4).
    pub fn sampling_tools(caps: &Value) -> bool {
        caps.pointer("/sampling/tools")
            .is_some_and(Value::is_object)
    }

    /// `sampling.context` was declared (2025-11-25 SA6).
    pub fn sampling_context(caps: &Value) -> bool {
        caps.pointer("/sampling/context")
            .is_some_and(Value::is_object)
    }

    /// `sampling` was declared at all.
    pub fn sampling(caps: &Value) -> bool {
        caps.get("sampling").is_some_and(Value::is_object)
    }

    /// Whether elicitation in `mode` (`form` or `url`) was declared. An empty `elicitation`
    /// object means form only (2025-11-25 `client/elicitation.mdx` §Capabilities, EC2).
    pub fn elicitation_mode(caps: &Value, mode: &str) -> bool {
        let Some(elicitation) = caps.get("elicitation").and_then(Value::as_object) else {
            return false;
        };
        let declares_modes = elicitation.contains_key("form") || elicitation.contains_key("url");
        if declares_modes {
            elicitation.get(mode).is_some_and(Value::is_object)
        } else {
            mode == "form"
        }
    }
}
