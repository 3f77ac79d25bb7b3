//! Extra request headers for a remote server (`--header 'Name: value'`, `--env-header
//! 'Name=ENVVAR'`), with `${VAR}` in values taken from the environment so that secrets stay out
//! of the host's configuration file. Values are marked sensitive: they never appear in debug
//! output or logs.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::HttpError;

/// Headers the transport sets itself; a `--header` may not replace them.
const RESERVED: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "host",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
];

/// Builds the header map from `--header` and `--env-header` arguments, reading variables
/// through `env` (the process environment in production).
///
/// # Errors
/// [`HttpError::Header`] naming the argument (never the value) when it is malformed, names a
/// header the transport sets itself, or refers to an unset variable.
pub fn build(
    headers: &[String],
    env_headers: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<HeaderMap, HttpError> {
    let mut map = HeaderMap::new();
    for arg in headers {
        let (name, value) = arg
            .split_once(':')
            .ok_or_else(|| bad(arg, "expected 'Name: value'"))?;
        let value = expand(value.trim(), env).map_err(|var| {
            bad(
                name,
                &format!("the environment variable {var} is not set (or not UTF-8)"),
            )
        })?;
        insert(&mut map, name.trim(), &value)?;
    }
    for arg in env_headers {
        let (name, var) = arg
            .split_once('=')
            .ok_or_else(|| bad(arg, "expected 'Name=ENVVAR'"))?;
        let value = env(var.trim()).ok_or_else(|| {
            bad(
                name,
                &format!(
                    "the environment variable {} is not set (or not UTF-8)",
                    var.trim()
                ),
            )
        })?;
        insert(&mut map, name.trim(), &value)?;
    }
    Ok(map)
}

fn bad(name: &str, why: &str) -> HttpError {
    // Only the part before the separator is named: the value may be a secret.
    let name = name.split([':', '=']).next().unwrap_or_default().trim();
    HttpError::Header {
        name: name.to_owned(),
        why: why.to_owned(),
    }
}

fn insert(map: &mut HeaderMap, name: &str, value: &str) -> Result<(), HttpError> {
    let header = HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| bad(name, "not a valid header name"))?;
    // `Mcp-Param-*` mirror a tool's arguments; a fixed value would contradict the body.
    if RESERVED.contains(&header.as_str()) || header.as_str().starts_with("mcp-param-") {
        return Err(bad(name, "set by mcp-consent itself"));
    }
    let mut value = HeaderValue::from_str(value)
        .map_err(|_| bad(name, "the value has characters a header cannot carry"))?;
    value.set_sensitive(true);
    map.append(header, value);
    Ok(())
}

/// Replaces every `${VAR}` in `value` by the variable's value; `$$` is a literal `$`, any other
/// `$` stays as it is. The name of the first unset variable is the error.
fn expand(value: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(inner) = after.strip_prefix('{')
            && let Some(end) = inner.find('}')
        {
            let var = &inner[..end];
            out.push_str(&env(var).ok_or_else(|| var.to_owned())?);
            rest = &inner[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_owned())
    }

    #[test]
    fn expands_variables_and_marks_values_sensitive() {
        let map = build(
            &[
                "Authorization: Bearer ${TOKEN}".into(),
                "X-Cost: $$5 $x".into(),
            ],
            &["X-Api-Key=TOKEN".into()],
            &env,
        )
        .unwrap();
        assert_eq!(map["authorization"], "Bearer s3cret");
        assert_eq!(map["x-cost"], "$5 $x");
        assert_eq!(map["x-api-key"], "s3cret");
        assert!(map["authorization"].is_sensitive());
        assert!(!format!("{map:?}").contains("s3cret"));
    }

    #[test]
    fn unset_variable_and_bad_forms_are_named_without_the_value() {
        let e = build(&["Authorization: Bearer ${NOPE} tail".into()], &[], &env).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("Authorization") && text.contains("NOPE"),
            "{text}"
        );
        assert!(!text.contains("Bearer"), "{text}");
        assert!(build(&["no colon".into()], &[], &env).is_err());
        assert!(build(&[], &["X-Key=UNSET".into()], &env).is_err());
        for reserved in ["Mcp-Session-Id: x", "Mcp-Method: x", "Mcp-Param-Region: x"] {
            let e = build(&[reserved.into()], &[], &env).unwrap_err();
            assert!(e.to_string().contains("mcp-consent itself"), "{reserved}");
        }
    }
}
