//! Checking one answered value against its field, and the whole content against the schema
//! with the JSON Schema validator (docs/protocol.md §3).

use serde_json::{Value, json};

use super::schema::{FieldKind, TextFormat};
use crate::protocol::FieldError;

pub(super) fn check_value(kind: &FieldKind, value: &Value) -> Result<(), String> {
    match kind {
        FieldKind::Text {
            min_length,
            max_length,
            format,
            ..
        } => {
            let s = value.as_str().ok_or("must be a string")?;
            let len = s.chars().count() as u64;
            if min_length.is_some_and(|m| len < m) {
                return Err(format!(
                    "must be at least {} characters",
                    min_length.unwrap_or_default()
                ));
            }
            if max_length.is_some_and(|m| len > m) {
                return Err(format!(
                    "must be at most {} characters",
                    max_length.unwrap_or_default()
                ));
            }
            if let Some(f) = format {
                check_format(*f, s)?;
            }
            Ok(())
        }
        FieldKind::Number {
            integer,
            minimum,
            maximum,
            ..
        } => {
            let n = value.as_number().ok_or("must be a number")?;
            if *integer && !(n.is_i64() || n.is_u64()) {
                return Err("must be a whole number".into());
            }
            let x = n.as_f64().ok_or("must be a number")?;
            if let Some(min) = minimum
                && x < *min
            {
                return Err(format!("must be at least {min}"));
            }
            if let Some(max) = maximum
                && x > *max
            {
                return Err(format!("must be at most {max}"));
            }
            Ok(())
        }
        FieldKind::Boolean { .. } => value
            .as_bool()
            .map(|_| ())
            .ok_or_else(|| "must be true or false".into()),
        FieldKind::Select { options, .. } => {
            let s = value.as_str().ok_or("must be a string")?;
            if options.iter().any(|o| o.value == s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not one of the options"))
            }
        }
        FieldKind::MultiSelect {
            options,
            min_items,
            max_items,
            ..
        } => {
            let items = value.as_array().ok_or("must be a list of options")?;
            let mut chosen = std::collections::HashSet::new();
            for item in items {
                if !chosen.insert(item.as_str()) {
                    return Err("an option is chosen twice".into());
                }
                let s = item.as_str().ok_or("must be a list of strings")?;
                if !options.iter().any(|o| o.value == s) {
                    return Err(format!("{s:?} is not one of the options"));
                }
            }
            let n = items.len() as u64;
            if let Some(min) = min_items
                && n < *min
            {
                return Err(format!("choose at least {min}"));
            }
            if let Some(max) = max_items
                && n > *max
            {
                return Err(format!("choose at most {max}"));
            }
            Ok(())
        }
    }
}

fn check_format(format: TextFormat, s: &str) -> Result<(), String> {
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
        Err(match format {
            TextFormat::Email => "must be an email address".into(),
            TextFormat::Uri => "must be an absolute URI".into(),
            TextFormat::Date => "must be a date (YYYY-MM-DD)".into(),
            TextFormat::DateTime => "must be a date and time (RFC 3339)".into(),
        })
    }
}

/// Runs a JSON Schema validator (formats on) over the content; errors name the property from
/// the instance path.
pub(super) fn json_schema_errors(schema: &Value, content: &Value) -> Vec<FieldError> {
    let validator = match jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
    {
        Ok(v) => v,
        Err(e) => {
            return vec![FieldError::whole(format!(
                "requestedSchema cannot be compiled: {e}"
            ))];
        }
    };
    validator
        .iter_errors(content)
        .map(|e| {
            let path = e.instance_path().to_string();
            let field = path
                .trim_start_matches('/')
                .split('/')
                .next()
                .unwrap_or_default()
                .to_owned();
            FieldError::new(field, e.to_string())
        })
        .collect()
}
