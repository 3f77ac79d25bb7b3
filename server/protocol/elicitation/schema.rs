//! The form subset of `requestedSchema` (docs/protocol.md §3): a flat object of primitive
//! properties, parsed per era, with defaults and whole-content validation.

use serde_json::{Map, Number, Value};

use super::check::{check_value, json_schema_errors};
use super::field::{Choice, Field, FieldKind, TextFormat};
use crate::protocol::era::Era;
use crate::protocol::{FieldError, Problem};

/// A `requestedSchema` parsed into the form subset: a flat object of primitive properties.
#[derive(Debug, Clone, PartialEq)]
pub struct FormSchema {
    /// Properties in the order the server listed them.
    pub fields: Vec<Field>,
    /// The schema exactly as sent (kept for JSON Schema validation, `$schema` included).
    pub raw: Value,
}

impl FormSchema {
    /// Parses `requestedSchema` into the form subset for the era.
    ///
    /// # Errors
    /// A message naming the offending property, e.g. `property "addr": nested objects are
    /// outside the form subset` (2025-11-25 §Requested Schema: "Only top-level properties are
    /// allowed, without nesting").
    pub fn parse(era: Era, schema: &Value) -> Result<FormSchema, String> {
        let obj = schema
            .as_object()
            .ok_or("requestedSchema must be an object")?;
        if obj.get("type").and_then(Value::as_str) != Some("object") {
            return Err("requestedSchema.type must be \"object\"".into());
        }
        if let Some(dialect) = obj.get("$schema") {
            let known = dialect.as_str().is_some_and(|d| {
                d.starts_with("https://json-schema.org/draft/2020-12/schema")
                    || d.starts_with("http://json-schema.org/draft-07/schema")
            });
            if !known {
                return Err(format!(
                    "unsupported JSON Schema dialect {dialect} (2020-12 is supported)"
                ));
            }
        }
        let props = match obj.get("properties") {
            Some(Value::Object(p)) => p,
            Some(_) => return Err("requestedSchema.properties must be an object".into()),
            None => return Err("requestedSchema.properties is required".into()),
        };
        let required: Vec<&str> = match obj.get("required") {
            None => Vec::new(),
            Some(Value::Array(r)) => r
                .iter()
                .map(|v| {
                    v.as_str()
                        .ok_or("requestedSchema.required must list property names")
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("requestedSchema.required must be an array".into()),
        };
        if let Some(unknown) = required.iter().find(|r| !props.contains_key(**r)) {
            return Err(format!(
                "required names {unknown:?}, which is not a property"
            ));
        }
        let mut fields = Vec::with_capacity(props.len());
        for (name, prop) in props {
            let kind = parse_kind(era, prop).map_err(|m| format!("property {name:?}: {m}"))?;
            fields.push(Field {
                name: name.clone(),
                title: prop.get("title").and_then(Value::as_str).map(str::to_owned),
                description: prop
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                required: required.contains(&name.as_str()),
                kind,
            });
        }
        Ok(FormSchema {
            fields,
            raw: schema.clone(),
        })
    }

    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Adds the `default` of every field the answer omitted (2025-11-25: "Clients that support
    /// defaults SHOULD pre-populate form fields with these values"; an omitted optional field
    /// with a default is sent with the default).
    pub fn apply_defaults(&self, content: &mut Map<String, Value>) {
        for field in &self.fields {
            if !content.contains_key(&field.name)
                && let Some(default) = field.default_value()
            {
                content.insert(field.name.clone(), default);
            }
        }
    }

    /// Checks `ElicitResult.content` of an accept against this schema: no unknown keys, every
    /// `required` key present, each value of its type (an `integer` is a whole number), within
    /// `minLength`/`maxLength`, `minimum`/`maximum`, `minItems`/`maxItems`, a member of its
    /// enum (for titled enums the `const`, not the title), and in its `format`; then the whole
    /// content against `requestedSchema` with a JSON Schema 2020-12 validator (ES9).
    ///
    /// # Errors
    /// Every problem found, each naming its property.
    pub fn validate_content(&self, content: &Value) -> Result<(), Vec<FieldError>> {
        let Some(obj) = content.as_object() else {
            return Err(vec![FieldError::whole(Problem::NotAnObject)]);
        };
        let mut errors = Vec::new();
        for key in obj.keys() {
            if self.field(key).is_none() {
                errors.push(FieldError::new(key.clone(), Problem::UnknownField));
            }
        }
        for field in &self.fields {
            match obj.get(&field.name) {
                None if field.required => {
                    errors.push(FieldError::new(field.name.clone(), Problem::Required))
                }
                None => {}
                Some(value) => {
                    if let Err(m) = check_value(&field.kind, value) {
                        errors.push(FieldError::new(field.name.clone(), m));
                    }
                }
            }
        }
        if errors.is_empty() {
            errors.extend(json_schema_errors(&self.raw, content));
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// Turns what a browser form submitted into `content`: `field.<name>` keys, last value wins
    /// for scalars, every non-empty value for multi-selects. Empty optional inputs are omitted.
    ///
    /// # Errors
    /// The fields whose text could not be read as their type (e.g. "abc" for a number).
    pub fn content_from_form(
        &self,
        pairs: &[(String, String)],
    ) -> Result<Map<String, Value>, Vec<FieldError>> {
        let mut content = Map::new();
        let mut errors = Vec::new();
        for field in &self.fields {
            let key = format!("field.{}", field.name);
            let values: Vec<&str> = pairs
                .iter()
                .filter(|(k, _)| *k == key)
                .map(|(_, v)| v.as_str())
                .collect();
            let last = values.last().copied();
            match &field.kind {
                FieldKind::Text { .. } | FieldKind::Select { .. } => {
                    if let Some(v) = last.filter(|v| !v.is_empty()) {
                        content.insert(field.name.clone(), Value::String(v.to_owned()));
                    }
                }
                FieldKind::Number { integer, .. } => {
                    if let Some(v) = last.map(str::trim).filter(|v| !v.is_empty()) {
                        match parse_number(v, *integer) {
                            Some(n) => {
                                content.insert(field.name.clone(), Value::Number(n));
                            }
                            None if *integer => {
                                errors.push(FieldError::new(field.name.clone(), Problem::NotWhole))
                            }
                            None => errors
                                .push(FieldError::new(field.name.clone(), Problem::NotANumber)),
                        }
                    }
                }
                // "" is the "not answered" choice of an optional boolean without a default:
                // left out, as the CLI leaves out what the person did not type.
                FieldKind::Boolean { .. } => match last {
                    Some("true") => {
                        content.insert(field.name.clone(), Value::Bool(true));
                    }
                    Some("false") => {
                        content.insert(field.name.clone(), Value::Bool(false));
                    }
                    Some("") | None => {}
                    Some(_) => errors.push(FieldError::new(field.name.clone(), Problem::NotYesNo)),
                },
                FieldKind::MultiSelect { .. } => {
                    let chosen: Vec<Value> = values
                        .iter()
                        .filter(|v| !v.is_empty())
                        .map(|v| Value::String((*v).to_owned()))
                        .collect();
                    // Nothing chosen in an optional multi-select is no answer ("none chosen"
                    // on the summary), not an empty list; a required one sends `[]` so its
                    // minimum is checked and reported.
                    if !values.is_empty() && (field.required || !chosen.is_empty()) {
                        content.insert(field.name.clone(), Value::Array(chosen));
                    }
                }
            }
        }
        if errors.is_empty() {
            Ok(content)
        } else {
            Err(errors)
        }
    }
}

fn parse_number(text: &str, integer: bool) -> Option<Number> {
    if integer {
        text.parse::<i64>().ok().map(Number::from)
    } else if let Ok(i) = text.parse::<i64>() {
        Some(Number::from(i))
    } else {
        text.parse::<f64>().ok().and_then(Number::from_f64)
    }
}

fn opt_u64(prop: &Value, key: &str) -> Result<Option<u64>, String> {
    match prop.get(key) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("{key} must be a non-negative integer")),
    }
}

fn opt_f64(prop: &Value, key: &str) -> Result<Option<f64>, String> {
    match prop.get(key) {
        None => Ok(None),
        Some(v) => v
            .as_f64()
            .map(Some)
            .ok_or_else(|| format!("{key} must be a number")),
    }
}

fn strings(value: &Value, what: &str) -> Result<Vec<String>, String> {
    value
        .as_array()
        .ok_or_else(|| format!("{what} must be an array of strings"))?
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{what} must be an array of strings"))
        })
        .collect()
}

/// `[{const, title}]` as used by titled single- (`oneOf`) and multi-selects (`anyOf`).
fn titled_choices(value: &Value, what: &str) -> Result<Vec<Choice>, String> {
    let items = value
        .as_array()
        .ok_or_else(|| format!("{what} must be an array"))?;
    items
        .iter()
        .map(|item| {
            let value = item.get("const").and_then(Value::as_str);
            let title = item.get("title").and_then(Value::as_str);
            match (value, title) {
                (Some(v), Some(t)) => Ok(Choice {
                    value: v.to_owned(),
                    title: t.to_owned(),
                }),
                _ => Err(format!("each {what} entry needs a string const and title")),
            }
        })
        .collect()
}

fn parse_kind(era: Era, prop: &Value) -> Result<FieldKind, String> {
    let obj = prop
        .as_object()
        .ok_or("a property schema must be an object")?;
    let ty = obj.get("type").and_then(Value::as_str);
    let rich = era.has_rich_enums();
    match ty {
        Some("string") if obj.contains_key("enum") => enum_select(obj),
        Some("string") | None if obj.contains_key("oneOf") => {
            if !rich {
                return Err(format!(
                    "titled single-select (oneOf) does not exist in {era}"
                ));
            }
            select(titled_choices(&obj["oneOf"], "oneOf")?, obj.get("default"))
        }
        Some("string") => text_kind(prop, obj),
        Some(t @ ("number" | "integer")) => number_kind(prop, obj, t),
        Some("boolean") => {
            let default = match obj.get("default") {
                None => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(_) => return Err("default must be a boolean".into()),
            };
            Ok(FieldKind::Boolean { default })
        }
        Some("array") => {
            if !rich {
                return Err(format!("multi-select (array) does not exist in {era}"));
            }
            multi_select(prop, obj)
        }
        Some("object") => Err("nested objects are outside the form subset".into()),
        Some(t) => Err(format!("type {t:?} is outside the form subset")),
        None => Err("a property needs a type".into()),
    }
}

/// An untitled single-select: `enum`, titled by the legacy `enumNames` when given.
fn enum_select(obj: &Map<String, Value>) -> Result<FieldKind, String> {
    let values = strings(&obj["enum"], "enum")?;
    let titles = match obj.get("enumNames") {
        Some(names) => {
            let names = strings(names, "enumNames")?;
            if names.len() != values.len() {
                return Err("enumNames must have one name per enum value".into());
            }
            names
        }
        None => values.clone(),
    };
    let options = values
        .into_iter()
        .zip(titles)
        .map(|(value, title)| Choice { value, title })
        .collect();
    select(options, obj.get("default"))
}

/// `StringSchema`: its format, lengths and default.
fn text_kind(prop: &Value, obj: &Map<String, Value>) -> Result<FieldKind, String> {
    let format = match obj.get("format").map(|f| f.as_str()) {
        None => None,
        Some(Some("email")) => Some(TextFormat::Email),
        Some(Some("uri")) => Some(TextFormat::Uri),
        Some(Some("date")) => Some(TextFormat::Date),
        Some(Some("date-time")) => Some(TextFormat::DateTime),
        Some(f) => {
            return Err(format!(
                "format {} is not one of email, uri, date, date-time",
                f.map_or_else(|| "(not a string)".to_owned(), |f| format!("{f:?}"))
            ));
        }
    };
    let default = match obj.get("default") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err("default must be a string".into()),
    };
    let (min_length, max_length) = (opt_u64(prop, "minLength")?, opt_u64(prop, "maxLength")?);
    ordered(min_length, max_length, "minLength", "maxLength")?;
    Ok(FieldKind::Text {
        format,
        min_length,
        max_length,
        default,
    })
}

/// `NumberSchema` of type `t` (`number` or `integer`): its bounds and default.
fn number_kind(prop: &Value, obj: &Map<String, Value>, t: &str) -> Result<FieldKind, String> {
    let integer = t == "integer";
    let default = match obj.get("default") {
        None => None,
        Some(Value::Number(n)) if !integer || n.is_i64() || n.is_u64() => Some(n.clone()),
        Some(_) => {
            return Err(format!(
                "default must be a{} {t}",
                if integer { "n" } else { "" }
            ));
        }
    };
    let (minimum, maximum) = (opt_f64(prop, "minimum")?, opt_f64(prop, "maximum")?);
    ordered(minimum, maximum, "minimum", "maximum")?;
    Ok(FieldKind::Number {
        integer,
        minimum,
        maximum,
        default,
    })
}

/// A multi-select (`type: "array"`): its options from `items`, its item counts and default.
fn multi_select(prop: &Value, obj: &Map<String, Value>) -> Result<FieldKind, String> {
    let items = obj
        .get("items")
        .and_then(Value::as_object)
        .ok_or("items must be an object")?;
    let options = if let Some(values) = items.get("enum") {
        if items.get("type").and_then(Value::as_str) != Some("string") {
            return Err("items of a multi-select must have type \"string\"".into());
        }
        strings(values, "items.enum")?
            .into_iter()
            .map(|v| Choice {
                title: v.clone(),
                value: v,
            })
            .collect()
    } else if let Some(any) = items.get("anyOf") {
        titled_choices(any, "items.anyOf")?
    } else {
        return Err("arrays are only allowed as multi-selects (items with enum or anyOf)".into());
    };
    let default = match obj.get("default") {
        None => None,
        Some(d) => {
            let d = strings(d, "default")?;
            if let Some(bad) = d
                .iter()
                .find(|v| !options.iter().any(|o: &Choice| &o.value == *v))
            {
                return Err(format!("default {bad:?} is not one of the options"));
            }
            Some(d)
        }
    };
    let (min_items, max_items) = (opt_u64(prop, "minItems")?, opt_u64(prop, "maxItems")?);
    ordered(min_items, max_items, "minItems", "maxItems")?;
    Ok(FieldKind::MultiSelect {
        options,
        min_items,
        max_items,
        default,
    })
}

/// A lower bound above its upper bound makes a field no answer can satisfy.
fn ordered<T: PartialOrd + std::fmt::Display>(
    low: Option<T>,
    high: Option<T>,
    lo: &str,
    hi: &str,
) -> Result<(), String> {
    match (low, high) {
        (Some(l), Some(h)) if l > h => Err(format!("{lo} {l} is greater than {hi} {h}")),
        _ => Ok(()),
    }
}

fn select(options: Vec<Choice>, default: Option<&Value>) -> Result<FieldKind, String> {
    let default = match default {
        None => None,
        Some(Value::String(d)) if options.iter().any(|o| &o.value == d) => Some(d.clone()),
        Some(d) => return Err(format!("default {d} is not one of the options")),
    };
    Ok(FieldKind::Select { options, default })
}
