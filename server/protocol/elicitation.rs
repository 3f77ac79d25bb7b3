//! `elicitation/create`: which requests may open a question (mode against capabilities, the
//! form subset of `requestedSchema`) and which `ElicitResult`s may be sent back (content valid
//! against `requestedSchema`, defaults applied to omitted fields). Pure functions, no I/O.
//!
//! Rules and sources: `docs/protocol.md` §3 (MCP 2025-06-18 and 2025-11-25
//! `client/elicitation.mdx`; `schema.ts` `ElicitRequest`, `PrimitiveSchemaDefinition`,
//! `ElicitResult`).

use serde_json::{Map, Number, Value, json};

use super::era::Era;
use super::jsonrpc::{RpcError, Violation};
use super::{FieldError, capabilities, url_safety};

/// The two elicitation modes (2025-11-25 §Elicitation Requests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// In-band form described by `requestedSchema`.
    Form,
    /// Out-of-band URL the person opens (2025-11-25 only as a JSON-RPC request).
    Url,
}

/// An `elicitation/create` request that passed validation.
#[derive(Debug, Clone)]
pub enum Request {
    /// Form mode with its parsed schema.
    Form {
        /// `message` shown to the person.
        message: String,
        /// The parsed `requestedSchema`.
        schema: FormSchema,
    },
    /// URL mode.
    Url {
        /// `message` shown to the person.
        message: String,
        /// `url` exactly as sent.
        url: String,
        /// `elicitationId` (2025-11-25: required; opaque).
        elicitation_id: Option<String>,
    },
}

impl Request {
    /// The mode of this request.
    pub fn mode(&self) -> Mode {
        match self {
            Request::Form { .. } => Mode::Form,
            Request::Url { .. } => Mode::Url,
        }
    }
}

/// Validates `elicitation/create` params against the era and the forwarded capabilities.
///
/// A missing `mode` means form (2025-11-25 EC7). A mode the client did not declare is refused
/// (EC5). Form mode needs `requestedSchema` within the form subset (§3.2); URL mode needs `url`
/// and, in 2025-11-25, `elicitationId` (EU1).
///
/// # Errors
/// A `-32602` [`RpcError`] naming the problem (for schemas, the property).
pub fn validate_request(
    era: Era,
    client_capabilities: &Value,
    params: &Value,
) -> Result<Request, RpcError> {
    let params = params
        .as_object()
        .ok_or_else(|| RpcError::invalid_params("params must be an object"))?;
    let message = match params.get("message") {
        Some(Value::String(m)) => m.clone(),
        Some(_) => return Err(RpcError::invalid_params("message must be a string")),
        None => return Err(RpcError::invalid_params("message is required")),
    };
    let mode = match params.get("mode") {
        None => Mode::Form,
        Some(Value::String(m)) if m == "form" => Mode::Form,
        Some(Value::String(m)) if m == "url" && era.has_elicitation_modes() => Mode::Url,
        Some(Value::String(m)) => {
            return Err(RpcError::invalid_params(format!(
                "elicitation mode {m:?} does not exist in {era}"
            )));
        }
        Some(_) => return Err(RpcError::invalid_params("mode must be a string")),
    };
    let declared = if era.has_elicitation_modes() {
        capabilities::elicitation_mode(
            client_capabilities,
            if mode == Mode::Form { "form" } else { "url" },
        )
    } else {
        client_capabilities
            .get("elicitation")
            .is_some_and(Value::is_object)
    };
    if !declared {
        let name = if mode == Mode::Form { "form" } else { "url" };
        return Err(RpcError::invalid_params(format!(
            "elicitation mode {name} was not declared by the client"
        ))
        .because(Violation::Capability));
    }
    match mode {
        Mode::Form => {
            let schema = params.get("requestedSchema").ok_or_else(|| {
                RpcError::invalid_params("requestedSchema is required in form mode")
            })?;
            let schema = FormSchema::parse(era, schema).map_err(RpcError::invalid_params)?;
            Ok(Request::Form { message, schema })
        }
        Mode::Url => {
            let url = match params.get("url") {
                Some(Value::String(u)) => u.clone(),
                Some(_) => return Err(RpcError::invalid_params("url must be a string")),
                None => return Err(RpcError::invalid_params("url is required in url mode")),
            };
            // Only https/http URLs are ever offered to the person; anything else (javascript:,
            // file:, data:, …) is refused before a question opens.
            url_safety::review(&url).map_err(|e| {
                let violation = match e {
                    url_safety::UrlError::SchemeNotAllowed(_) => Violation::Scheme,
                    _ => Violation::Shape,
                };
                RpcError::invalid_params(e.to_string()).because(violation)
            })?;
            let elicitation_id = match params.get("elicitationId") {
                // 2026-07-28 removed `elicitationId` and the completion notification (EU8):
                // the outcome arrives by the retried request, so an id is not kept.
                Some(_) if era >= Era::V2026_07_28 => None,
                Some(Value::String(id)) => Some(id.clone()),
                Some(_) => return Err(RpcError::invalid_params("elicitationId must be a string")),
                None if era == Era::V2025_11_25 => {
                    return Err(RpcError::invalid_params(
                        "elicitationId is required in url mode",
                    ));
                }
                None => None,
            };
            Ok(Request::Url {
                message,
                url,
                elicitation_id,
            })
        }
    }
}

/// A `requestedSchema` parsed into the form subset: a flat object of primitive properties.
#[derive(Debug, Clone, PartialEq)]
pub struct FormSchema {
    /// Properties in the order the server listed them.
    pub fields: Vec<Field>,
    /// The schema exactly as sent (kept for JSON Schema validation, `$schema` included).
    pub raw: Value,
}

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
            return Err(vec![FieldError::whole("content must be an object")]);
        };
        let mut errors = Vec::new();
        for key in obj.keys() {
            if self.field(key).is_none() {
                errors.push(FieldError::new(
                    key.clone(),
                    "not a field of requestedSchema",
                ));
            }
        }
        for field in &self.fields {
            match obj.get(&field.name) {
                None if field.required => {
                    errors.push(FieldError::new(field.name.clone(), "required"))
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
                            None if *integer => errors.push(FieldError::new(
                                field.name.clone(),
                                "must be a whole number",
                            )),
                            None => {
                                errors.push(FieldError::new(field.name.clone(), "must be a number"))
                            }
                        }
                    }
                }
                FieldKind::Boolean { .. } => {
                    if let Some(v) = last {
                        content.insert(field.name.clone(), Value::Bool(v == "true"));
                    }
                }
                FieldKind::MultiSelect { .. } => {
                    if !values.is_empty() {
                        let chosen = values
                            .iter()
                            .filter(|v| !v.is_empty())
                            .map(|v| Value::String((*v).to_owned()))
                            .collect();
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

/// Builds the `ElicitResult` for an accepted form: defaults applied, then validated.
///
/// # Errors
/// As [`FormSchema::validate_content`].
pub fn accept_form(schema: &FormSchema, content: &Value) -> Result<Value, Vec<FieldError>> {
    let mut content = content
        .as_object()
        .cloned()
        .ok_or_else(|| vec![FieldError::whole("content must be an object")])?;
    schema.apply_defaults(&mut content);
    let content = Value::Object(content);
    schema.validate_content(&content)?;
    Ok(json!({ "action": "accept", "content": content }))
}

/// The `ElicitResult` for `decline` or `cancel`: no content (2025-11-25 §Response Actions).
pub fn refusal(action: &str) -> Value {
    json!({ "action": action })
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
        Some("string") if obj.contains_key("enum") => {
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
        Some("string") | None if obj.contains_key("oneOf") => {
            if !rich {
                return Err(format!(
                    "titled single-select (oneOf) does not exist in {era}"
                ));
            }
            select(titled_choices(&obj["oneOf"], "oneOf")?, obj.get("default"))
        }
        Some("string") => {
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
            let (min_length, max_length) =
                (opt_u64(prop, "minLength")?, opt_u64(prop, "maxLength")?);
            ordered(min_length, max_length, "minLength", "maxLength")?;
            Ok(FieldKind::Text {
                format,
                min_length,
                max_length,
                default,
            })
        }
        Some(t @ ("number" | "integer")) => {
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
                return Err(
                    "arrays are only allowed as multi-selects (items with enum or anyOf)".into(),
                );
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
        Some("object") => Err("nested objects are outside the form subset".into()),
        Some(t) => Err(format!("type {t:?} is outside the form subset")),
        None => Err("a property needs a type".into()),
    }
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

fn check_value(kind: &FieldKind, value: &Value) -> Result<(), String> {
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
fn json_schema_errors(schema: &Value, content: &Value) -> Vec<FieldError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tv_e02() -> Value {
        json!({"type":"object","properties":{"email":{"type":"string","format":"email","default":"a@b.co"},"age":{"type":"integer","minimum":18,"maximum":130,"default":30},"news":{"type":"boolean","default":false},"color":{"type":"string","oneOf":[{"const":"#FF0000","title":"Red"},{"const":"#0000FF","title":"Blue"}],"default":"#FF0000"},"tags":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","enum":["a","b","c"]},"default":["a"]}},"required":["email"]})
    }

    #[test]
    fn every_primitive_type_parses_in_2025_11_25_but_not_2025_06_18() {
        let s = FormSchema::parse(Era::V2025_11_25, &tv_e02()).unwrap();
        assert_eq!(s.fields.len(), 5);
        assert!(s.field("email").unwrap().required);
        let err = FormSchema::parse(Era::V2025_06_18, &tv_e02()).unwrap_err();
        assert!(err.contains("color"), "{err}");
    }

    #[test]
    fn defaults_fill_omitted_fields() {
        let s = FormSchema::parse(Era::V2025_11_25, &tv_e02()).unwrap();
        let r = accept_form(&s, &json!({"age": 40})).unwrap();
        assert_eq!(r["content"]["email"], "a@b.co");
        assert_eq!(r["content"]["age"], 40);
        assert_eq!(r["content"]["tags"], json!(["a"]));
    }

    #[test]
    fn nested_object_is_refused_naming_the_property() {
        let e = FormSchema::parse(
            Era::V2025_11_25,
            &json!({"type":"object","properties":{"addr":{"type":"object","properties":{"city":{"type":"string"}}}}}),
        )
        .unwrap_err();
        assert!(e.contains("\"addr\""), "{e}");
    }
}
