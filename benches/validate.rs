//! Criterion benchmark of `protocol::sampling::validate_request` for 2025-11-25: a large request
//! (200 messages, 50 tool round trips `tool_use` → `tool_result`) and a small one (TV-S14's three
//! messages) for comparison. Run: `cargo bench --bench validate`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_consent::protocol::era::Era;
use mcp_consent::protocol::sampling::validate_request;
use serde_json::{Value, json};

fn caps() -> Value {
    json!({"sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}})
}

fn tools() -> Value {
    json!([{
        "name": "get_weather",
        "description": "Get weather",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }])
}

/// 200 messages: 50 × (user text, assistant `tool_use`, user `tool_result`, assistant text).
fn large_request() -> Value {
    let mut messages = Vec::with_capacity(200);
    for i in 0..50 {
        let id = format!("call_{i}");
        messages.push(json!({"role": "user", "content": {"type": "text", "text": format!("What is the weather in city {i}?")}}));
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": "Let me look that up."},
            {"type": "tool_use", "id": id, "name": "get_weather", "input": {"city": format!("city {i}")}},
        ]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "toolUseId": id, "content": [{"type": "text", "text": "18°C, light rain"}], "isError": false},
        ]}));
        messages.push(json!({"role": "assistant", "content": {"type": "text", "text": format!("It is 18°C in city {i}.")}}));
    }
    json!({
        "messages": messages,
        "maxTokens": 1000,
        "systemPrompt": "You are a weather assistant.",
        "tools": tools(),
        "toolChoice": {"mode": "auto"},
    })
}

fn small_request() -> Value {
    json!({
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Weather?"}},
            {"role": "assistant", "content": {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}},
            {"role": "user", "content": {"type": "tool_result", "toolUseId": "call_1", "content": [{"type": "text", "text": "18°C"}], "isError": false}},
        ],
        "maxTokens": 200,
        "tools": tools(),
        "toolChoice": {"mode": "none"},
    })
}

fn bench_validate(c: &mut Criterion) {
    let caps = caps();
    for (name, params) in [
        (
            "validate_request/large_200_messages_50_round_trips",
            large_request(),
        ),
        ("validate_request/small_3_messages", small_request()),
    ] {
        // Benchmark the accepting path: a refused request would stop early and measure nothing.
        assert!(
            validate_request(Era::V2025_11_25, &caps, &params).is_ok(),
            "{name}: the benchmark request must be valid"
        );
        c.bench_function(name, |b| {
            b.iter(|| validate_request(Era::V2025_11_25, black_box(&caps), black_box(&params)));
        });
    }
}

criterion_group!(benches, bench_validate);
criterion_main!(benches);
