//! What the proxy declares to the server on the host's behalf: the sampling and elicitation
//! capabilities it answers for, in `initialize` (2025-06-18, 2025-11-25) and in every
//! 2026-07-28 request's `_meta` (docs/protocol.md G16; docs/design.md §proxy).

use indexmap::IndexMap;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::protocol::era::Era;

/// The 2026-07-28 tasks extension's capability name (SEP-2663).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The capabilities to forward: adds what the proxy answers for and the host lacks. For
/// 2025-11-25 and later, `sampling.tools` and `elicitation.form`/`url`; before, plain
/// `sampling`/`elicitation` (sub-capabilities do not exist there). Never `sampling.context`
/// (the proxy cannot include context, so a host's is removed), and never
/// `tasks.requests.sampling`/`elicitation` (the proxy answers without tasks), and never the
/// tasks extension ([`TASKS_EXTENSION`]). Source: MCP
/// 2025-11-25 `schema.ts` `ClientCapabilities`; docs/design.md §proxy.
pub fn forward_capabilities(requested_version: &str, capabilities: &Value) -> Value {
    let mut caps = capabilities.as_object().cloned().unwrap_or_default();
    let modern = Era::for_revision(requested_version).is_ok_and(Era::has_elicitation_modes);
    let object = |v: &mut Value| {
        if !v.is_object() {
            *v = json!({});
        }
    };
    let sampling = caps.entry("sampling").or_insert_with(|| json!({}));
    object(sampling);
    if let Some(s) = sampling.as_object_mut() {
        s.remove("context");
        if modern {
            s.entry("tools").or_insert_with(|| json!({}));
        }
    }
    let elicitation = caps.entry("elicitation").or_insert_with(|| json!({}));
    object(elicitation);
    if let Some(e) = elicitation.as_object_mut()
        && modern
    {
        e.entry("form").or_insert_with(|| json!({}));
        e.entry("url").or_insert_with(|| json!({}));
    }
    if let Some(requests) = caps
        .get_mut("tasks")
        .and_then(|t| t.get_mut("requests"))
        .and_then(Value::as_object_mut)
    {
        requests.remove("sampling");
        requests.remove("elicitation");
    }
    // 2026-07-28's tasks extension lets a server's task ask for input through `tasks/get` and
    // `notifications/tasks`, answered by `tasks/update`: a path the proxy does not answer
    // through questions, so it is never offered to a server (and refused if used anyway:
    // see the judge).
    if let Some(extensions) = caps.get_mut("extensions").and_then(Value::as_object_mut) {
        extensions.remove(TASKS_EXTENSION);
    }
    Value::Object(caps)
}

/// An `initialize` line with its `params.capabilities` replaced by [`forward_capabilities`];
/// every other member keeps its exact text (numbers, escapes), only the whitespace between
/// members may change. Returns the line, the requested version and the forwarded capabilities.
pub(super) fn rewrite_initialize(line: &[u8]) -> Option<(Vec<u8>, String, Value)> {
    type Members = IndexMap<String, Box<RawValue>>;
    let mut top: Members = serde_json::from_slice(line).ok()?;
    let mut params: Members = serde_json::from_str(top.get("params")?.get()).ok()?;
    let version = params
        .get("protocolVersion")
        .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
        .unwrap_or_else(|| Era::V2025_06_18.as_str().to_owned());
    let declared: Value = match params.get("capabilities") {
        Some(raw) => serde_json::from_str(raw.get()).ok()?,
        None => Value::Null,
    };
    let caps = forward_capabilities(&version, &declared);
    params.insert(
        "capabilities".into(),
        RawValue::from_string(caps.to_string()).ok()?,
    );
    top.insert(
        "params".into(),
        RawValue::from_string(serde_json::to_string(&params).ok()?).ok()?,
    );
    let mut out = serde_json::to_vec(&top).ok()?;
    out.push(b'\n');
    Some((out, version, caps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modern_initialize_gets_sub_capabilities_and_loses_tasks_and_context() {
        let caps = json!({"roots": {}, "sampling": {"context": {}}, "tasks": {"requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}, "tools": {}}}});
        let out = forward_capabilities("2025-11-25", &caps);
        assert_eq!(out["sampling"], json!({"tools": {}}));
        assert_eq!(out["elicitation"], json!({"form": {}, "url": {}}));
        assert_eq!(out["tasks"]["requests"], json!({"tools": {}}));
        assert_eq!(out["roots"], json!({}));
    }

    #[test]
    fn the_tasks_extension_is_never_offered() {
        let caps =
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}, "x.example/other": {}}});
        let out = forward_capabilities("2026-07-28", &caps);
        assert_eq!(out["extensions"], json!({"x.example/other": {}}));
    }

    #[test]
    fn older_initialize_gets_plain_capabilities() {
        let out = forward_capabilities("2025-06-18", &json!({}));
        assert_eq!(out, json!({"sampling": {}, "elicitation": {}}));
    }

    #[test]
    fn mrtr_meta_gets_the_modern_shape() {
        let out = forward_capabilities("2026-07-28", &Value::Null);
        assert_eq!(
            out,
            json!({"sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}})
        );
    }
}
