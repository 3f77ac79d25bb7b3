//! The key a JSON-RPC request is tracked by while it is in flight, and which ids the proxy
//! tracks at all.
//!
//! MCP allows a request id that is a string or an integer, never null
//! (d:2025-11-25/basic/index.mdx §Requests). Servers compare ids by the value
//! their JSON reader gives them, and readers differ: Python reads `-0` as the integer `0`,
//! JavaScript reads `5.0` and `5e0` as `5` and rounds integers beyond 2^53, both read the
//! escapes `"\ud800"` and `"\uD800"` as the same lone surrogate. Were the proxy to key such
//! ids apart, two requests one server takes for one id would both pass its "no id twice in
//! flight" check, and the server's answer (its round, the person's consent) to one would be
//! taken for the other. So the proxy keys only ids every reader reads alike ([`RequestKey::of_raw`]):
//! an integer written plainly within ±(2^53 − 1), keyed by its value, or a string of valid
//! Unicode, keyed by its decoded value (so `"\u0061"` and `"a"` are one key, and `1` and
//! `"1"` two). Any other id is [`UnsafeId`]: the request is refused, never passed on.
//!
//! Ids the proxy writes itself (its retries) are told apart by their prefix, here and nowhere
//! else.

use std::fmt;
use std::ops::Deref;

use serde_json::Value;
use serde_json::value::RawValue;

/// The start of every id the proxy gives a request of its own (the text inside the quotes).
const OWN_ID_PREFIX: &str = "mcp-consent-";

/// The largest integer every JSON reader holds exactly (JavaScript's
/// `Number.MAX_SAFE_INTEGER`, 2^53 − 1).
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Why an id is not one the proxy keys requests by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UnsafeId {
    /// `null`: no request of MCP's has it.
    #[error("null")]
    Null,
    /// A number with a fraction, an exponent, or `-0`: readers disagree on which integer, if
    /// any, it is.
    #[error("a number not written as a plain integer (a fraction, an exponent or -0)")]
    NotPlainInteger,
    /// An integer JavaScript readers round to another.
    #[error("an integer beyond ±(2^53 - 1), which some servers round to another")]
    BeyondSafeInteger,
    /// A string whose escapes do not decode to valid Unicode (a lone surrogate).
    #[error("a string that is not valid Unicode (a lone surrogate escape such as \\ud800)")]
    NotUnicode,
    /// An object, an array or a boolean.
    #[error("neither a string nor an integer")]
    NotStringOrInteger,
}

/// A request id as the canonical JSON text of its value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RequestKey(String);

impl RequestKey {
    /// The key of an id given as raw JSON text.
    ///
    /// # Errors
    /// [`UnsafeId`] when it is not an id every server reads as the same one.
    pub fn of_raw(raw: &str) -> Result<Self, UnsafeId> {
        key_text(raw).map(RequestKey)
    }

    /// The key of an id already in canonical text (as the envelope's id scanner returns it).
    pub fn canonical(text: String) -> Self {
        RequestKey(text)
    }

    /// The key of an id given as a JSON value (the same key [`RequestKey::of_raw`] gives its
    /// text).
    ///
    /// # Errors
    /// [`UnsafeId`] as for [`RequestKey::of_raw`].
    pub fn of_value(id: &Value) -> Result<Self, UnsafeId> {
        match id {
            Value::String(_) => Ok(RequestKey(id.to_string())),
            Value::Number(n) => match n.as_i64() {
                Some(i) if i.abs() <= MAX_SAFE_INTEGER => Ok(RequestKey(i.to_string())),
                Some(_) => Err(UnsafeId::BeyondSafeInteger),
                None if n.is_u64() => Err(UnsafeId::BeyondSafeInteger),
                None => Err(UnsafeId::NotPlainInteger),
            },
            Value::Null => Err(UnsafeId::Null),
            Value::Bool(_) | Value::Array(_) | Value::Object(_) => {
                Err(UnsafeId::NotStringOrInteger)
            }
        }
    }

    /// A fresh id of the proxy's own, for a request it sends the server itself.
    pub fn proxy_own() -> Self {
        RequestKey(Value::String(format!("{OWN_ID_PREFIX}{}", uuid::Uuid::now_v7())).to_string())
    }

    /// Whether the id is one the proxy gave a request of its own.
    pub fn is_proxy_own(&self) -> bool {
        self.0
            .strip_prefix('"')
            .is_some_and(|inner| inner.starts_with(OWN_ID_PREFIX))
    }

    /// The id as raw JSON, to write it back into a message.
    pub fn to_raw(&self) -> Option<Box<RawValue>> {
        RawValue::from_string(self.0.clone()).ok()
    }

    /// The id as a JSON value (`null` when its text is not JSON).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }

    /// The canonical text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The canonical text of an id given as raw JSON text (surrounding whitespace ignored): a
/// plain integer as it is, a string re-serialised from its decoded value (one without escapes
/// or control characters is that already, and needs no parse).
///
/// # Errors
/// [`UnsafeId`] for any other id, and for text that is not one JSON value.
pub fn key_text(raw: &str) -> Result<String, UnsafeId> {
    let raw = raw.trim_matches([' ', '\t', '\n', '\r']);
    match raw.as_bytes().first() {
        Some(b'"') => {
            let plain = raw.len() >= 2
                && raw.ends_with('"')
                && !raw[1..raw.len() - 1]
                    .bytes()
                    .any(|b| b == b'\\' || b == b'"' || b < 0x20);
            if plain {
                return Ok(raw.to_owned());
            }
            // serde_json refuses a lone surrogate escape, which every reader that takes it
            // reads alike whatever the case of its hex digits.
            let decoded: String = serde_json::from_str(raw).map_err(|_| UnsafeId::NotUnicode)?;
            Ok(Value::String(decoded).to_string())
        }
        Some(b'-' | b'0'..=b'9') => plain_integer(raw).map(str::to_owned),
        _ if raw == "null" => Err(UnsafeId::Null),
        _ => Err(UnsafeId::NotStringOrInteger),
    }
}

/// `raw` when it is an integer written plainly (`-?(0|[1-9][0-9]*)`, not `-0`) within
/// ±[`MAX_SAFE_INTEGER`].
fn plain_integer(raw: &str) -> Result<&str, UnsafeId> {
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    let plain = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && raw != "-0";
    if !plain {
        return Err(UnsafeId::NotPlainInteger);
    }
    match raw.parse::<i64>() {
        Ok(n) if n.abs() <= MAX_SAFE_INTEGER => Ok(raw),
        _ => Err(UnsafeId::BeyondSafeInteger),
    }
}

impl Deref for RequestKey {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RequestKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proxy_tells_its_own_ids_from_the_hosts() {
        let own = RequestKey::proxy_own();
        assert!(own.is_proxy_own());
        assert!(own.to_raw().is_some());
        assert!(
            !RequestKey::of_raw("\"mcp-consent\"")
                .unwrap()
                .is_proxy_own()
        );
        assert!(!RequestKey::of_raw("7").unwrap().is_proxy_own());
        assert_ne!(RequestKey::of_raw("1"), RequestKey::of_raw("\"1\""));
    }

    /// Two spellings of one id are one key, by its text or by its value.
    #[test]
    fn spellings_of_one_id_are_one_key() {
        for (raw, key) in [
            ("7", "7"),
            ("-12", "-12"),
            ("0", "0"),
            (" 3 ", "3"),
            (r#""a""#, r#""a""#),
            (r#""\u0061""#, r#""a""#),
            (r#""\/""#, r#""/""#),
            (r#""\ud83d\ude00""#, "\"\u{1f600}\""),
            (r#""\uD83D\uDE00""#, "\"\u{1f600}\""),
            (r#""a\"b""#, r#""a\"b""#),
            ("9007199254740991", "9007199254740991"),
            ("-9007199254740991", "-9007199254740991"),
        ] {
            let by_text = RequestKey::of_raw(raw).unwrap();
            assert_eq!(by_text.as_str(), key, "{raw}");
            let value: Value = serde_json::from_str(raw).unwrap();
            assert_eq!(RequestKey::of_value(&value).unwrap(), by_text, "{raw}");
        }
    }

    /// Ids that some server reads as another id are no key at all, by text or by value.
    #[test]
    fn ids_a_server_may_read_as_another_are_refused() {
        for (raw, why) in [
            ("-0", UnsafeId::NotPlainInteger),
            ("5.0", UnsafeId::NotPlainInteger),
            ("5e0", UnsafeId::NotPlainInteger),
            ("-1E3", UnsafeId::NotPlainInteger),
            ("1.5", UnsafeId::NotPlainInteger),
            ("-0.0", UnsafeId::NotPlainInteger),
            ("9007199254740992", UnsafeId::BeyondSafeInteger),
            ("-9007199254740993", UnsafeId::BeyondSafeInteger),
            ("12345678901234567890", UnsafeId::BeyondSafeInteger),
            (
                "123456789012345678901234567890",
                UnsafeId::BeyondSafeInteger,
            ),
            (r#""\ud800""#, UnsafeId::NotUnicode),
            (r#""\uD800""#, UnsafeId::NotUnicode),
            (r#""x\udc00""#, UnsafeId::NotUnicode),
            ("null", UnsafeId::Null),
            ("true", UnsafeId::NotStringOrInteger),
            ("{}", UnsafeId::NotStringOrInteger),
            ("[1]", UnsafeId::NotStringOrInteger),
            ("", UnsafeId::NotStringOrInteger),
        ] {
            assert_eq!(RequestKey::of_raw(raw), Err(why), "{raw}");
            if let Ok(value) = serde_json::from_str::<Value>(raw) {
                assert!(RequestKey::of_value(&value).is_err(), "{raw}");
            }
        }
    }
}
