//! The vocabulary of the form subset: one property ([`Field`]), its primitive type with its
//! constraints ([`FieldKind`]), string formats and select choices. Types only, so both the
//! parser ([`super::schema`]) and the value check ([`super::check`]) stand on it.

use serde_json::{Number, Value};

/// One property of a form.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Property name (the key in `content`).
    pub name: String,
    /// `title`, if given.
    pub title: Option<String>,
    /// `description`, if given.
    pub description: Option<String>,
    /// Listed in `required`.
    pub required: bool,
    /// Type and constraints.
    pub kind: FieldKind,
}

impl Field {
    /// The label to show: the title, else the property name.
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }

    /// The `default`, as the JSON value that would be sent.
    pub fn default_value(&self) -> Option<Value> {
        match &self.kind {
            FieldKind::Text { default, .. } => default.clone().map(Value::String),
            FieldKind::Number { default, .. } => default.clone().map(Value::Number),
            FieldKind::Boolean { default } => default.map(Value::Bool),
            FieldKind::Select { default, .. } => default.clone().map(Value::String),
            FieldKind::MultiSelect { default, .. } => default
                .clone()
                .map(|d| Value::Array(d.into_iter().map(Value::String).collect())),
        }
    }
}

/// `format` values of `StringSchema` (2025-06-18+ `schema.ts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    /// `email`
    Email,
    /// `uri`
    Uri,
    /// `date` (RFC 3339 full-date)
    Date,
    /// `date-time` (RFC 3339 date-time)
    DateTime,
}

/// The primitive schemas of the form subset (2025-11-25 `PrimitiveSchemaDefinition`).
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// `StringSchema`.
    Text {
        /// `format`, if any.
        format: Option<TextFormat>,
        /// `minLength` in characters.
        min_length: Option<u64>,
        /// `maxLength` in characters.
        max_length: Option<u64>,
        /// `default` (2025-11-25+; tolerated earlier).
        default: Option<String>,
    },
    /// `NumberSchema` with `type` `number` or `integer`.
    Number {
        /// `type: "integer"`.
        integer: bool,
        /// `minimum`, inclusive.
        minimum: Option<f64>,
        /// `maximum`, inclusive.
        maximum: Option<f64>,
        /// `default`.
        default: Option<Number>,
    },
    /// `BooleanSchema`.
    Boolean {
        /// `default`.
        default: Option<bool>,
    },
    /// Single-select: untitled `enum`, titled `oneOf` of `{const, title}`, or legacy `enumNames`.
    Select {
        /// The choices, in order.
        options: Vec<Choice>,
        /// `default`, one of the option values.
        default: Option<String>,
    },
    /// Multi-select: `type: "array"` whose `items` is an untitled `enum` or titled `anyOf`.
    MultiSelect {
        /// The choices, in order.
        options: Vec<Choice>,
        /// `minItems`.
        min_items: Option<u64>,
        /// `maxItems`.
        max_items: Option<u64>,
        /// `default`, option values.
        default: Option<Vec<String>>,
    },
}

/// One choice of a select: the value sent (`const`/enum entry) and the label shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// What is sent.
    pub value: String,
    /// What is shown (the title, else the value).
    pub title: String,
}
