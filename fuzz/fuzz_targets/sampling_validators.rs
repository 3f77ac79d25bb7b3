//! Fuzz target: any JSON input goes through `validate_request` in every era (with and without
//! `sampling.tools`, as params and, when it is an array, as the `messages` of otherwise valid
//! params) and through `validate_result` against fixed requests with and without tools. The
//! validators must never panic, and a refused request is always `-32602`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_consent::protocol::era::Era;
use mcp_consent::protocol::jsonrpc::codes::INVALID_PARAMS;
use mcp_consent::protocol::sampling::{validate_request, validate_result};
use serde_json::{Value, json};

const ERAS: [Era; 3] = [Era::V2025_06_18, Era::V2025_11_25, Era::V2026_07_28];

fn request(era: Era, caps: &Value, params: &Value) {
    if let Err(e) = validate_request(era, caps, params) {
        assert_eq!(e.code, INVALID_PARAMS, "{e:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let caps = [
        json!({"sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}}),
        json!({"sampling": {}}),
    ];
    let tools = json!([{"name": "get_weather", "inputSchema": {"type": "object"}}]);
    let as_messages = input
        .is_array()
        .then(|| json!({"messages": input.clone(), "maxTokens": 100, "tools": tools.clone()}));
    // TV-S08 (offers tools) and TV-S01 (none), as the requests a result answers.
    let answered = [
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}}],
               "maxTokens": 1000, "tools": tools, "toolChoice": {"mode": "required"}}),
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
               "maxTokens": 100}),
    ];
    for era in ERAS {
        for caps in &caps {
            request(era, caps, &input);
            if let Some(params) = &as_messages {
                request(era, caps, params);
            }
        }
        for req in &answered {
            let _ = validate_result(era, req, &input);
        }
    }
});
