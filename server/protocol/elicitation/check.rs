//! Checking one answered value against its field, and the whole content against the schema
//! with the JSON Schema validator (docs/protocol.md §3).

use jsonschema::error::ValidationErrorKind;
use serde_json::{Value, json};

use super::field::{Choice, FieldKind, TextFormat};
use crate::protocol::{FieldError, Problem};

pub(super) fn check_value(kind: &FieldKind, value: &Value) -> Result<(), Problem> {
    match kind {
        FieldKind::Text {
            min_length,
            max_length,
            format,
            ..
        } => check_text(value, *min_length, *max_length, *format),
        FieldKind::Number {
            integer,
            minimum,
            maximum,
            ..
        } => check_number(value, *integer, *minimum, *maximum),
        FieldKind::Boolean { .. } => value.as_bool().map(|_| ()).ok_or(Problem::NotBoolean),
        FieldKind::Select { options, .. } => {
            let s = value.as_str().ok_or(Problem::NotAString)?;
            check_option(options, s)
        }
        FieldKind::MultiSelect {
            options,
            min_items,
            max_items,
            ..
        } => check_choices(value, options, *min_items, *max_items),
    }
}

/// A string of a length within the bounds, in its format when one is given.
fn check_text(
    value: &Value,
    min_length: Option<u64>,
    max_length: Option<u64>,
    format: Option<TextFormat>,
) -> Result<(), Problem> {
    let s = value.as_str().ok_or(Problem::NotAString)?;
    let len = s.chars().count() as u64;
    check_bounds(
        len,
        min_length,
        max_length,
        |min| Problem::TooShort { min },
        |max| Problem::TooLong { max },
    )?;
    if let Some(f) = format {
        check_format(f, s)?;
    }
    Ok(())
}

/// A number (whole when `integer`) within the bounds.
fn check_number(
    value: &Value,
    integer: bool,
    minimum: Option<f64>,
    maximum: Option<f64>,
) -> Result<(), Problem> {
    let n = value.as_number().ok_or(Problem::NotANumber)?;
    if integer && !(n.is_i64() || n.is_u64()) {
        return Err(Problem::NotWhole);
    }
    let x = n.as_f64().ok_or(Problem::NotANumber)?;
    check_bounds(
        x,
        minimum,
        maximum,
        |min| Problem::BelowMinimum { min },
        |max| Problem::AboveMaximum { max },
    )
}

/// `s` is one of the options' values.
fn check_option(options: &[Choice], s: &str) -> Result<(), Problem> {
    if options.iter().any(|o| o.value == s) {
        Ok(())
    } else {
        Err(Problem::NotAnOption {
            value: s.to_owned(),
        })
    }
}

/// A list of distinct option values, as many as the bounds allow.
fn check_choices(
    value: &Value,
    options: &[Choice],
    min_items: Option<u64>,
    max_items: Option<u64>,
) -> Result<(), Problem> {
    let items = value.as_array().ok_or(Problem::NotAList)?;
    let mut chosen = std::collections::HashSet::new();
    for item in items {
        if !chosen.insert(item.as_str()) {
            return Err(Problem::ChosenTwice);
        }
        let s = item.as_str().ok_or(Problem::NotAListOfStrings)?;
        check_option(options, s)?;
    }
    check_bounds(
        items.len() as u64,
        min_items,
        max_items,
        |min| Problem::TooFewChosen { min },
        |max| Problem::TooManyChosen { max },
    )
}

/// `x` is at least `min` and at most `max` (each when given), else the problem for the bound
/// it crosses.
fn check_bounds<T: PartialOrd + Copy>(
    x: T,
    min: Option<T>,
    max: Option<T>,
    below: impl FnOnce(T) -> Problem,
    above: impl FnOnce(T) -> Problem,
) -> Result<(), Problem> {
    if let Some(min) = min
        && x < min
    {
        return Err(below(min));
    }
    if let Some(max) = max
        && x > max
    {
        return Err(above(max));
    }
    Ok(())
}

fn check_format(format: TextFormat, s: &str) -> Result<(), Problem> {
    let schema = match format {
        TextFormat::Email => json!({"type": "string", "format": "email"}),
        TextFormat::Uri => json!({"type": "string", "format": "uri"}),
        TextFormat::Date => json!({"type": "string", "format": "date"}),
        TextFormat::DateTime => json!({"type": "string", "format": "date-time"}),
    };
    let ok = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .map(|v| v.is_valid(&json!(s)))
        .unwrap_or(false);
    if ok {
        Ok(())
    } else {
        Err(Problem::Format(format))
    }
}

/// Runs a JSON Schema validator (formats on) over the content; errors name the property from
/// the instance path (a missing one: the property it names). A finding of a kind our own
/// checks know becomes that [`Problem`] (the API keeps the validator's sentence); any other
/// is a [`Problem::Schema`] with it.
pub(crate) fn json_schema_errors(schema: &Value, content: &Value) -> Vec<FieldError> {
    let validator = match jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
    {
        Ok(v) => v,
        Err(e) => {
            return vec![FieldError::whole(Problem::Schema {
                detail: format!("requestedSchema cannot be compiled: {e}"),
            })];
        }
    };
    validator
        .iter_errors(content)
        .map(|e| {
            let path = e.instance_path().to_string();
            let mut field = path
                .trim_start_matches('/')
                .split('/')
                .next()
                .unwrap_or_default()
                .to_owned();
            let detail = e.to_string();
            if let ValidationErrorKind::Required { property } = e.kind()
                && let Some(p) = property.as_str()
            {
                field = p.to_owned();
            }
            let problem = typed(e.kind(), e.instance()).unwrap_or(Problem::Schema {
                detail: detail.clone(),
            });
            FieldError {
                field,
                message: detail,
                problem,
            }
        })
        .collect()
}

/// The typed problem of a validator finding, when there is one.
fn typed(kind: &ValidationErrorKind, instance: &Value) -> Option<Problem> {
    Some(match kind {
        ValidationErrorKind::Required { .. } => Problem::Required,
        ValidationErrorKind::MinLength { limit } => Problem::TooShort { min: *limit },
        ValidationErrorKind::MaxLength { limit } => Problem::TooLong { max: *limit },
        ValidationErrorKind::Minimum { limit } => Problem::BelowMinimum {
            min: limit.as_f64()?,
        },
        ValidationErrorKind::Maximum { limit } => Problem::AboveMaximum {
            max: limit.as_f64()?,
        },
        ValidationErrorKind::MinItems { limit } => Problem::TooFewChosen { min: *limit },
        ValidationErrorKind::MaxItems { limit } => Problem::TooManyChosen { max: *limit },
        ValidationErrorKind::UniqueItems => Problem::ChosenTwice,
        ValidationErrorKind::AdditionalProperties { .. } => Problem::UnknownField,
        ValidationErrorKind::Enum { .. } => Problem::NotAnOption {
            value: instance.as_str()?.to_owned(),
        },
        ValidationErrorKind::Format { format } => Problem::Format(match format.as_str() {
            "email" => TextFormat::Email,
            "uri" => TextFormat::Uri,
            "date" => TextFormat::Date,
            "date-time" => TextFormat::DateTime,
            _ => return None,
        }),
        _ => return None,
    })
}
