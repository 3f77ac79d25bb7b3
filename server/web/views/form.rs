//! Form fields of an elicitation as the page renders them, with values and errors.

use super::problem;
use crate::i18n::Arg;
use crate::i18n::I18n;
use crate::protocol::elicitation::FieldKind;
use crate::protocol::elicitation::FormSchema;
use crate::protocol::elicitation::TextFormat;
use serde_json::Value;

/// One choice of a select or multi-select as rendered.
pub struct OptionView {
    pub value: String,
    pub title: String,
    pub selected: bool,
}

/// One form field as rendered.
pub struct FieldView {
    /// `field.<name>`.
    pub input: String,
    pub name: String,
    pub label: String,
    pub description: String,
    pub required: bool,
    /// Which input renders it.
    pub control: Control,
    pub value: String,
    pub checked: bool,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub step: &'static str,
    pub minlength: Option<u64>,
    pub maxlength: Option<u64>,
    pub hint: String,
    pub options: Vec<OptionView>,
    pub error: String,
}

/// The input a form field is rendered as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// `<input type="text">`.
    Text,
    /// `<input type="email">`.
    Email,
    /// `<input type="url">`.
    Url,
    /// `<input type="date">`.
    Date,
    /// A text input with an RFC 3339 hint (browsers have no zoned date-time input).
    DateTime,
    /// `<input type="number">`.
    Number,
    /// A checkbox (required, or with a default: unchecked sends `false`).
    Boolean,
    /// Three radio buttons, "not answered" / yes / no, for an optional boolean without a
    /// default: a checkbox cannot tell "left alone" from "no", and an untouched field must be
    /// left out, not sent as `false`. `value` is `""`, `"true"` or `"false"`.
    OptionalBoolean,
    /// A single-choice `<select>`.
    Select,
    /// A set of checkboxes.
    Multi,
}

/// Builds the field views from the schema, with values from the person's submission when
/// re-rendering after an error, else from the schema's defaults; hints in `i18n`'s language.
pub fn field_views(
    i18n: &I18n,
    schema: &FormSchema,
    input: Option<&[(String, String)]>,
    errors: &[problem::Shown],
) -> Vec<FieldView> {
    schema
        .fields
        .iter()
        .map(|f| {
            let input_name = format!("field.{}", f.name);
            let submitted: Option<Vec<&str>> = input.map(|pairs| {
                pairs
                    .iter()
                    .filter(|(k, _)| *k == input_name)
                    .map(|(_, v)| v.as_str())
                    .collect()
            });
            let default = f.default_value();
            let scalar = match &submitted {
                Some(values) => values.last().map(|v| (*v).to_owned()).unwrap_or_default(),
                None => match &default {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Number(n)) => n.to_string(),
                    _ => String::new(),
                },
            };
            let mut view = FieldView {
                input: input_name.clone(),
                name: f.name.clone(),
                label: f.label().to_owned(),
                description: f.description.clone().unwrap_or_default(),
                required: f.required,
                control: Control::Text,
                value: scalar.clone(),
                checked: false,
                min: None,
                max: None,
                step: "any",
                minlength: None,
                maxlength: None,
                hint: String::new(),
                options: Vec::new(),
                error: errors
                    .iter()
                    .filter(|e| e.field == f.name)
                    .map(|e| e.message.clone())
                    .collect::<Vec<_>>()
                    .join("; "),
            };
            match &f.kind {
                FieldKind::Text {
                    format,
                    min_length,
                    max_length,
                    ..
                } => {
                    view.control = match format {
                        Some(TextFormat::Email) => Control::Email,
                        Some(TextFormat::Uri) => Control::Url,
                        Some(TextFormat::Date) => Control::Date,
                        Some(TextFormat::DateTime) => Control::DateTime,
                        None => Control::Text,
                    };
                    if *format == Some(TextFormat::DateTime) {
                        view.hint = i18n.t("form-hint-datetime");
                    }
                    view.minlength = *min_length;
                    view.maxlength = *max_length;
                }
                FieldKind::Number {
                    integer,
                    minimum,
                    maximum,
                    ..
                } => {
                    view.control = Control::Number;
                    view.step = if *integer { "1" } else { "any" };
                    view.min = *minimum;
                    view.max = *maximum;
                    let prefix = if *integer {
                        "form-hint-integer"
                    } else {
                        "form-hint"
                    };
                    view.hint = match (minimum, maximum) {
                        (Some(a), Some(b)) => i18n
                            .msg(&format!("{prefix}-range"))
                            .arg("min", Arg::from(*a))
                            .arg("max", Arg::from(*b))
                            .to_string(),
                        (Some(a), None) => i18n
                            .msg(&format!("{prefix}-min"))
                            .arg("min", Arg::from(*a))
                            .to_string(),
                        (None, Some(b)) => i18n
                            .msg(&format!("{prefix}-max"))
                            .arg("max", Arg::from(*b))
                            .to_string(),
                        (None, None) if *integer => i18n.t("form-hint-integer"),
                        (None, None) => String::new(),
                    };
                }
                FieldKind::Boolean { default: None } if !f.required => {
                    view.control = Control::OptionalBoolean;
                }
                FieldKind::Boolean { default } => {
                    view.control = Control::Boolean;
                    view.checked = match &submitted {
                        Some(values) => values.last() == Some(&"true"),
                        None => default.unwrap_or(false),
                    };
                }
                FieldKind::Select { options, .. } => {
                    view.control = Control::Select;
                    view.options = options
                        .iter()
                        .map(|o| OptionView {
                            value: o.value.clone(),
                            title: o.title.clone(),
                            selected: o.value == scalar,
                        })
                        .collect();
                }
                FieldKind::MultiSelect {
                    options,
                    min_items,
                    max_items,
                    default,
                } => {
                    view.control = Control::Multi;
                    let chosen: Vec<String> = match &submitted {
                        Some(values) => values.iter().map(|v| (*v).to_owned()).collect(),
                        None => default.clone().unwrap_or_default(),
                    };
                    view.options = options
                        .iter()
                        .map(|o| OptionView {
                            value: o.value.clone(),
                            title: o.title.clone(),
                            selected: chosen.contains(&o.value),
                        })
                        .collect();
                    view.hint = match (min_items, max_items) {
                        (Some(a), Some(b)) => i18n
                            .msg("form-hint-choose-range")
                            .arg("min", a)
                            .arg("max", b)
                            .to_string(),
                        (Some(a), None) => {
                            i18n.msg("form-hint-choose-min").arg("min", a).to_string()
                        }
                        (None, Some(b)) => {
                            i18n.msg("form-hint-choose-max").arg("max", b).to_string()
                        }
                        (None, None) => String::new(),
                    };
                }
            }
            view
        })
        .collect()
}
