//! Form fields of an elicitation as the page renders them, with values and errors.

use super::problem;
use crate::i18n::Arg;
use crate::i18n::I18n;
use crate::protocol::elicitation::FormSchema;
use crate::protocol::elicitation::TextFormat;
use crate::protocol::elicitation::{Choice, Field, FieldKind};
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
        .map(|f| field_view(i18n, f, input, errors))
        .collect()
}

/// One field's view: what every control shows, then what its kind adds.
fn field_view(
    i18n: &I18n,
    f: &Field,
    input: Option<&[(String, String)]>,
    errors: &[problem::Shown],
) -> FieldView {
    let input_name = format!("field.{}", f.name);
    let submitted: Option<Vec<&str>> = input.map(|pairs| submitted_values(pairs, &input_name));
    let scalar = match &submitted {
        Some(values) => values.last().map(|v| (*v).to_owned()).unwrap_or_default(),
        None => match &f.default_value() {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => String::new(),
        },
    };
    let mut view = base_view(f, input_name, scalar.clone(), errors);
    match &f.kind {
        FieldKind::Text {
            format,
            min_length,
            max_length,
            ..
        } => {
            view.control = text_control(*format);
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
            view.hint = number_hint(i18n, *integer, *minimum, *maximum);
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
            view.options = option_views(options, |value| value == scalar);
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
            view.options = option_views(options, |value| chosen.iter().any(|c| c == value));
            view.hint = choose_hint(i18n, *min_items, *max_items);
        }
    }
    view
}

/// The values submitted for one input (several for a multi-select).
fn submitted_values<'p>(pairs: &'p [(String, String)], input_name: &str) -> Vec<&'p str> {
    pairs
        .iter()
        .filter(|(k, _)| *k == input_name)
        .map(|(_, v)| v.as_str())
        .collect()
}

/// What every control shows: the field's names, its value and its errors, as a text input.
fn base_view(f: &Field, input: String, value: String, errors: &[problem::Shown]) -> FieldView {
    FieldView {
        input,
        name: f.name.clone(),
        label: f.label().to_owned(),
        description: f.description.clone().unwrap_or_default(),
        required: f.required,
        control: Control::Text,
        value,
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
    }
}

/// The input a text field's format asks for.
fn text_control(format: Option<TextFormat>) -> Control {
    match format {
        Some(TextFormat::Email) => Control::Email,
        Some(TextFormat::Uri) => Control::Url,
        Some(TextFormat::Date) => Control::Date,
        Some(TextFormat::DateTime) => Control::DateTime,
        None => Control::Text,
    }
}

/// A number field's hint: its bounds, or that it takes whole numbers.
fn number_hint(i18n: &I18n, integer: bool, minimum: Option<f64>, maximum: Option<f64>) -> String {
    let prefix = if integer {
        "form-hint-integer"
    } else {
        "form-hint"
    };
    match (minimum, maximum) {
        (Some(a), Some(b)) => i18n
            .msg(&format!("{prefix}-range"))
            .arg("min", Arg::from(a))
            .arg("max", Arg::from(b))
            .to_string(),
        (Some(a), None) => i18n
            .msg(&format!("{prefix}-min"))
            .arg("min", Arg::from(a))
            .to_string(),
        (None, Some(b)) => i18n
            .msg(&format!("{prefix}-max"))
            .arg("max", Arg::from(b))
            .to_string(),
        (None, None) if integer => i18n.t("form-hint-integer"),
        (None, None) => String::new(),
    }
}

/// A multi-select's hint: how many choices it takes.
fn choose_hint(i18n: &I18n, min_items: Option<u64>, max_items: Option<u64>) -> String {
    match (min_items, max_items) {
        (Some(a), Some(b)) => i18n
            .msg("form-hint-choose-range")
            .arg("min", a)
            .arg("max", b)
            .to_string(),
        (Some(a), None) => i18n.msg("form-hint-choose-min").arg("min", a).to_string(),
        (None, Some(b)) => i18n.msg("form-hint-choose-max").arg("max", b).to_string(),
        (None, None) => String::new(),
    }
}

/// The options of a select or multi-select, each selected when `selected` says so.
fn option_views(options: &[Choice], selected: impl Fn(&str) -> bool) -> Vec<OptionView> {
    options
        .iter()
        .map(|o| OptionView {
            value: o.value.clone(),
            title: o.title.clone(),
            selected: selected(&o.value),
        })
        .collect()
}
