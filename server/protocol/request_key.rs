//! The key a JSON-RPC request is tracked by while it is in flight: its id as canonical JSON
//! text ([`super::envelope::id_key`]), so `1` and `"1"` are different requests and two
//! spellings of one id are the same. Ids the proxy writes itself (its retries) are told apart by
//! their prefix, here and nowhere else.

use std::fmt;
use std::ops::Deref;

use serde_json::Value;
use serde_json::value::RawValue;

use super::envelope::id_key;

/// The start of every id the proxy gives a request of its own (the text inside the quotes).
const OWN_ID_PREFIX: &str = "mcp-consent-";

/// A request id as canonical JSON text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RequestKey(String);

impl RequestKey {
    /// The key of an id given as raw JSON text (valid JSON: canonicalised).
    pub fn of_raw(raw: &str) -> Self {
        RequestKey(id_key(raw))
    }

    /// The key of an id already in canonical text (as the envelope's id scanner returns it).
    pub fn canonical(text: String) -> Self {
        RequestKey(text)
    }

    /// The key of an id given as a JSON value.
    pub fn of_value(id: &Value) -> Self {
        RequestKey(id.to_string())
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

    /// Whether the id is `null`.
    pub fn is_null(&self) -> bool {
        self.0 == "null"
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
        assert!(!RequestKey::of_raw("\"mcp-consent\"").is_proxy_own());
        assert!(!RequestKey::of_raw("7").is_proxy_own());
        assert_eq!(
            RequestKey::of_raw("1.0e0"),
            RequestKey::of_value(&serde_json::json!(1.0))
        );
        assert_ne!(RequestKey::of_raw("1"), RequestKey::of_raw("\"1\""));
    }
}
