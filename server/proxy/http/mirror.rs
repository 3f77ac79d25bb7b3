//! The request metadata headers of Streamable HTTP (2026-07-28 `basic/transports/streamable-http`
//! §Request Metadata, SEP-2243): `Mcp-Method` (and `Mcp-Name` for `tools/call`, `prompts/get`,
//! `resources/read`) mirrored from the body of every POSTed request or notification, and on a
//! 2026-07-28 `tools/call` one `Mcp-Param-{Name}` header per argument the server designated with
//! `x-mcp-header` in the tool's `inputSchema`. The designations are learnt from the server's
//! `tools/list` results as they pass; a tool whose designations break the spec's constraints is
//! taken out of the list the host sees (the HTTP client MUST exclude it, §Schema Extension) and a
//! call to it is refused before it is sent. Values that are not plain header-safe ASCII travel
//! in the spec's `=?base64?…?=` form (§Value Encoding).

use std::sync::{Mutex, PoisonError};

use base64::Engine as _;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};

use super::super::tool_table::{Page, ToolTable};
use crate::protocol::era::Era;

/// `Mcp-Method`: the request's `method`.
pub(super) const METHOD: &str = "mcp-method";
/// `Mcp-Name`: `params.name` or `params.uri`.
pub(super) const NAME: &str = "mcp-name";
/// The prefix of a designated parameter's header.
pub(super) const PARAM_PREFIX: &str = "mcp-param-";
/// The schema keyword naming a parameter's header.
const X_MCP_HEADER: &str = "x-mcp-header";
const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";
/// The largest integer a designated parameter may carry (2^53 - 1, §Schema Extension).
const SAFE_INTEGER: i64 = (1 << 53) - 1;
/// Schema keywords whose subschemas are not "statically reachable": a designation under one of
/// them makes the tool invalid.
const UNREACHABLE: &[&str] = &[
    "items",
    "prefixItems",
    "contains",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "patternProperties",
    "dependentSchemas",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "$defs",
    "definitions",
];

/// One designated parameter: where its value is in `arguments`, and its header.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Designation {
    path: Vec<String>,
    header: HeaderName,
}

/// What the proxy knows of one tool's headers.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ToolHeaders {
    /// Valid; these parameters are mirrored.
    Mirrored(Vec<Designation>),
    /// Excluded from the host's list; the reason.
    Rejected(String),
}

/// Why a message may not be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "defines the tool {tool:?} with an invalid x-mcp-header ({reason}); the proxy does not call it"
)]
pub(super) struct RejectedTool {
    tool: String,
    reason: String,
}

impl ToolHeaders {
    /// About how many bytes it holds, for the table's bound.
    fn size(&self) -> usize {
        match self {
            ToolHeaders::Mirrored(d) => d
                .iter()
                .map(|d| d.header.as_str().len() + d.path.iter().map(String::len).sum::<usize>())
                .sum(),
            ToolHeaders::Rejected(reason) => reason.len(),
        }
    }
}

/// The `x-mcp-header` designations of one remote server's tools, by tool name, from its latest
/// listing (a first page replaces them, bounded as the session's tools are).
#[derive(Default)]
pub(super) struct Tools {
    known: Mutex<ToolTable<ToolHeaders>>,
}

/// Whether a message's `_meta` protocol version is 2026-07-28 or later.
pub(super) fn is_modern(meta_version: Option<&str>) -> bool {
    meta_version
        .and_then(|v| Era::for_revision(v).ok())
        .is_some_and(|e| e >= Era::V2026_07_28)
}

/// The standard headers of a message with `method` and `params`.
pub(super) fn standard(method: &str, params: Option<&Value>) -> HeaderMap {
    let mut map = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(method) {
        map.insert(METHOD, v);
    }
    let source = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return map,
    };
    if let Some(name) = params.and_then(|p| p.get(source)).and_then(Value::as_str)
        && let Ok(v) = HeaderValue::from_str(&encode(name))
    {
        map.insert(NAME, v);
    }
    map
}

/// A header value as the spec encodes it: as it is when it is visible ASCII and spaces with no
/// space at either end, else `=?base64?{UTF-8 in Base64}?=` (also for a plain value that looks
/// like that form, so it cannot be misread).
pub(super) fn encode(value: &str) -> String {
    let looks_encoded = value.starts_with(SENTINEL_PREFIX) && value.ends_with(SENTINEL_SUFFIX);
    let plain = !value.is_empty()
        && value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ')
        && !looks_encoded;
    if plain {
        value.to_owned()
    } else {
        let b64 = base64::engine::general_purpose::STANDARD.encode(value.as_bytes());
        format!("{SENTINEL_PREFIX}{b64}{SENTINEL_SUFFIX}")
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Tools {
    /// The `Mcp-Param-*` headers of a 2026-07-28 `tools/call` with `params`. A tool not (yet)
    /// seen in `tools/list` gets none (the spec's cold-cache case: the server may refuse it).
    ///
    /// # Errors
    /// [`RejectedTool`] when the tool was excluded for an invalid designation.
    pub(super) fn params(&self, params: Option<&Value>) -> Result<HeaderMap, RejectedTool> {
        let mut map = HeaderMap::new();
        let Some(tool) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
            return Ok(map);
        };
        let designations = match lock(&self.known).get(tool) {
            None => return Ok(map),
            Some(ToolHeaders::Rejected(reason)) => {
                return Err(RejectedTool {
                    tool: tool.to_owned(),
                    reason: reason.clone(),
                });
            }
            Some(ToolHeaders::Mirrored(d)) => d.clone(),
        };
        let arguments = params.and_then(|p| p.get("arguments"));
        for d in designations {
            let value = d
                .path
                .iter()
                .try_fold(arguments, |node, key| node.map(|n| n.get(key)))
                .flatten();
            if let Some(text) = value.and_then(primitive)
                && let Ok(v) = HeaderValue::from_str(&encode(&text))
            {
                map.insert(d.header, v);
            }
        }
        Ok(map)
    }

    /// Learns the tools of one `tools/list` response `body` (a JSON-RPC response line), the
    /// `page` of its listing, and returns it without the tools it rejects; `None` when it
    /// passes unchanged (no rejected tool, or not a result with a `tools` array).
    pub(super) fn learn(&self, body: &[u8], page: Page) -> Option<Vec<u8>> {
        let mut response: Map<String, Value> = serde_json::from_slice(body).ok()?;
        let tools = response
            .get_mut("result")
            .and_then(|r| r.get_mut("tools"))
            .and_then(Value::as_array_mut)?;
        let mut learnt = Vec::new();
        let mut rejected = false;
        tools.retain(|tool| {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                return true;
            };
            let headers = match scan(tool.get("inputSchema").unwrap_or(&Value::Null)) {
                Ok(d) => ToolHeaders::Mirrored(d),
                Err(reason) => {
                    tracing::warn!(
                        tool = name,
                        "remote server: tool excluded from tools/list: {reason}"
                    );
                    ToolHeaders::Rejected(reason)
                }
            };
            let keep = matches!(headers, ToolHeaders::Mirrored(_));
            rejected |= !keep;
            let size = headers.size();
            learnt.push((name.to_owned(), headers, size));
            keep
        });
        lock(&self.known).record(page, learnt);
        if !rejected {
            return None;
        }
        serde_json::to_vec(&response).ok()
    }
}

/// A designated argument as header text: strings as they are, integers in decimal, booleans
/// as `true`/`false`; anything else (null, absent, another type) has no header.
fn primitive(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => n
            .as_i64()
            .filter(|i| i.abs() <= SAFE_INTEGER)
            .map(|i| i.to_string()),
        _ => None,
    }
}

/// The designations of an `inputSchema`, or the first constraint one breaks (2026-07-28
/// `server/tools` §x-mcp-header): a non-empty token, on a `string`/`integer`/`boolean`
/// property reached from the root through `properties` only, unique ignoring case.
fn scan(schema: &Value) -> Result<Vec<Designation>, String> {
    let mut found = Vec::new();
    visit(schema, &mut Vec::new(), true, &mut found)?;
    Ok(found)
}

fn visit(
    node: &Value,
    path: &mut Vec<String>,
    reachable: bool,
    found: &mut Vec<Designation>,
) -> Result<(), String> {
    let Some(schema) = node.as_object() else {
        return Ok(());
    };
    let at = || {
        if path.is_empty() {
            "the schema root".to_owned()
        } else {
            format!("property {}", path.join("."))
        }
    };
    if let Some(raw) = schema.get(X_MCP_HEADER) {
        if !reachable || path.is_empty() {
            return Err(format!("{} is not reached through properties alone", at()));
        }
        let name = raw
            .as_str()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| format!("{}: the header name is empty or not a string", at()))?;
        if !name.bytes().all(is_tchar) {
            return Err(format!("{}: {name:?} is not an HTTP token", at()));
        }
        if !matches!(
            schema.get("type").and_then(Value::as_str),
            Some("string" | "integer" | "boolean")
        ) {
            return Err(format!(
                "{}: only string, integer and boolean parameters may be mirrored",
                at()
            ));
        }
        let header = HeaderName::from_bytes(format!("{PARAM_PREFIX}{name}").as_bytes())
            .map_err(|_| format!("{}: {name:?} is not an HTTP token", at()))?;
        if found.iter().any(|d| d.header == header) {
            return Err(format!("{name:?} names two parameters (ignoring case)"));
        }
        found.push(Designation {
            path: path.clone(),
            header,
        });
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (key, child) in properties {
            path.push(key.clone());
            let result = visit(child, path, reachable, found);
            path.pop();
            result?;
        }
    }
    for keyword in UNREACHABLE {
        let sub: Vec<&Value> = match schema.get(*keyword) {
            None => continue,
            Some(Value::Array(branches)) => branches.iter().collect(),
            Some(Value::Object(o))
                if matches!(
                    *keyword,
                    "patternProperties" | "dependentSchemas" | "$defs" | "definitions"
                ) =>
            {
                o.values().collect()
            }
            Some(other) => vec![other],
        };
        for branch in sub {
            visit(branch, path, false, found)?;
        }
    }
    Ok(())
}

/// RFC 9110 §5.6.2 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_encoded_as_the_spec_table_shows() {
        assert_eq!(encode("us-west1"), "us-west1");
        assert_eq!(encode("us west 1"), "us west 1");
        assert_eq!(encode("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            encode("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(encode("\tindented"), "=?base64?CWluZGVudGVk?=");
    }

    #[test]
    fn standard_headers_name_the_method_and_the_target() {
        let call = standard("tools/call", Some(&json!({"name": "get_weather"})));
        assert_eq!(call[METHOD], "tools/call");
        assert_eq!(call[NAME], "get_weather");
        let read = standard("resources/read", Some(&json!({"uri": "file:///a b/é.txt"})));
        assert_eq!(read[NAME], encode("file:///a b/é.txt"));
        assert!(read[NAME].to_str().unwrap().starts_with(SENTINEL_PREFIX));
        let list = standard("tools/list", None);
        assert_eq!(list[METHOD], "tools/list");
        assert!(list.get(NAME).is_none());
    }

    fn listed(tools: Value) -> (Tools, Option<Value>) {
        let t = Tools::default();
        let body = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}});
        let out = t
            .learn(&serde_json::to_vec(&body).unwrap(), Page::First)
            .map(|b| serde_json::from_slice(&b).unwrap());
        (t, out)
    }

    fn tool(name: &str, properties: Value) -> Value {
        json!({"name": name, "inputSchema": {"type": "object", "properties": properties}})
    }

    #[test]
    fn designated_arguments_become_param_headers_and_absent_or_null_ones_do_not() {
        let (tools, out) = listed(json!([tool(
            "sql",
            json!({
                "region": {"type": "string", "x-mcp-header": "Region"},
                "priority": {"type": "integer", "x-mcp-header": "Priority"},
                "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
                "where": {"type": "object", "properties": {
                    "zone": {"type": "string", "x-mcp-header": "Zone"}}},
                "query": {"type": "string"}
            })
        )]));
        assert_eq!(out, None, "a valid list passes unchanged");
        let h = tools
            .params(Some(&json!({"name": "sql", "arguments": {
                "region": "Hello, 世界", "priority": 42, "verbose": null,
                "where": {"zone": "z1"}, "query": "SELECT 1"}})))
            .unwrap();
        assert_eq!(h["mcp-param-region"], "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(h["mcp-param-priority"], "42");
        assert_eq!(h["mcp-param-zone"], "z1");
        assert!(h.get("mcp-param-verbose").is_none());
        assert!(h.get("mcp-param-query").is_none());
        assert_eq!(h.len(), 3);
        let unknown = tools.params(Some(&json!({"name": "other", "arguments": {}})));
        assert_eq!(unknown.unwrap().len(), 0);
    }

    #[test]
    fn invalid_designations_take_the_tool_out_and_its_calls_are_refused() {
        let bad = [
            tool(
                "empty",
                json!({"v": {"type": "string", "x-mcp-header": ""}}),
            ),
            tool(
                "object",
                json!({"v": {"type": "object", "x-mcp-header": "V"}}),
            ),
            tool(
                "number",
                json!({"v": {"type": "number", "x-mcp-header": "V"}}),
            ),
            tool("untyped", json!({"v": {"x-mcp-header": "V"}})),
            tool(
                "twice",
                json!({"a": {"type": "string", "x-mcp-header": "MyField"},
                       "b": {"type": "string", "x-mcp-header": "myfield"}}),
            ),
            tool(
                "space",
                json!({"v": {"type": "string", "x-mcp-header": "My Region"}}),
            ),
            tool(
                "colon",
                json!({"v": {"type": "string", "x-mcp-header": "A:B"}}),
            ),
            tool(
                "accent",
                json!({"v": {"type": "string", "x-mcp-header": "Région"}}),
            ),
            tool(
                "tab",
                json!({"v": {"type": "string", "x-mcp-header": "A\t1"}}),
            ),
            tool(
                "items",
                json!({"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "V"}}}),
            ),
            tool(
                "oneof",
                json!({"v": {"oneOf": [{"type": "string", "x-mcp-header": "V"}]}}),
            ),
        ];
        let mut all = vec![tool(
            "valid_tool",
            json!({"region": {"type": "string", "x-mcp-header": "Region"}}),
        )];
        all.extend(bad.iter().cloned());
        let (tools, out) = listed(Value::Array(all));
        let kept: Vec<&str> = out.as_ref().unwrap()["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(kept, ["valid_tool"]);
        for t in &bad {
            let name = t["name"].as_str().unwrap();
            let refused = tools.params(Some(&json!({"name": name, "arguments": {"v": "x"}})));
            assert!(refused.is_err(), "{name}");
        }
        assert!(
            tools
                .params(Some(&json!({"name": "valid_tool", "arguments": {}})))
                .is_ok()
        );
    }

    #[test]
    fn a_new_first_page_replaces_what_was_learnt() {
        let (tools, _) = listed(json!([
            tool("bad", json!({"v": {"type": "object", "x-mcp-header": "V"}})),
            tool(
                "city",
                json!({"c": {"type": "string", "x-mcp-header": "City"}})
            ),
        ]));
        let relist = |tools: &Tools, listed: Value, page| {
            let body = json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": listed}});
            tools.learn(&serde_json::to_vec(&body).unwrap(), page)
        };
        let call = |name: &str| json!({"name": name, "arguments": {"c": "Paris"}});
        let more = json!([tool("more", json!({}))]);
        relist(&tools, more, Page::Next);
        assert!(
            tools.params(Some(&call("bad"))).is_err(),
            "a later page adds to what was learnt"
        );
        assert_eq!(tools.params(Some(&call("city"))).map(|h| h.len()), Ok(1));
        relist(&tools, json!([tool("other", json!({}))]), Page::First);
        assert_eq!(
            tools.params(Some(&call("bad"))).map(|h| h.len()),
            Ok(0),
            "a tool no longer listed is not known (the cold-cache case)"
        );
        assert_eq!(tools.params(Some(&call("city"))).map(|h| h.len()), Ok(0));
    }

    #[test]
    fn only_2026_07_28_and_later_messages_are_modern() {
        assert!(is_modern(Some("2026-07-28")));
        assert!(is_modern(Some("2027-01-01")));
        assert!(!is_modern(Some("2025-11-25")));
        assert!(!is_modern(Some("draft")));
        assert!(!is_modern(None));
    }
}
