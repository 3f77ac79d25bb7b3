//! The sampling test vectors of `docs/protocol.md` §7 (TV-S01..TV-S20) run against
//! `protocol::sampling::validate_request` / `validate_result`, as one table, plus named cases
//! for the two `-32602` messages of 2025-11-25 §Error Handling and for a result without `role`
//! and `model`.
//!
//! Each row's JSON is copied verbatim from the spec file. A vector that names no revision is run
//! in every era up to 2025-11-25 (2025-06-18 and 2025-11-25); one that names 2025-11-25 only in
//! that era; one whose expectation differs by era (TV-S03, TV-S19) has one row per era. Not
//! here: TV-S16 (the `-1` reply) and TV-S21 (cancellation) are about replies and the question
//! lifecycle, not validation; TV-S22 is 2026-07-28 MRTR.

use mcp_consent::protocol::era::Era;
use mcp_consent::protocol::jsonrpc::codes::INVALID_PARAMS;
use mcp_consent::protocol::sampling::{
    TOOL_RESULT_MISSING, TOOL_RESULTS_MIXED, validate_request, validate_result,
};
use serde_json::{Value, json};

/// Capabilities the vectors assume unless they say otherwise (spec §7 preamble).
const DEFAULT_CAPS: &str = r#"{"sampling":{"tools":{}},"elicitation":{"form":{},"url":{}}}"#;
/// TV-S07's client declared only `sampling: {}`.
const CAPS_WITHOUT_TOOLS: &str = r#"{"sampling":{}}"#;

const ALL: &[Era] = &[Era::V2025_06_18, Era::V2025_11_25];
const V06_18: &[Era] = &[Era::V2025_06_18];
const V11_25: &[Era] = &[Era::V2025_11_25];

const TV_S01: &str = r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"maxTokens":100}}"#;
const TV_S02: &str = r#"{"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}}"#;
const TV_S03: &str = r#"{"role":"user","content":[{"type":"text","text":"Describe:"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]}"#;
const TV_S04: &str = r#"{"messages":[{"role":"system","content":{"type":"text","text":"be terse"}}],"maxTokens":10}"#;
const TV_S05: &str = r#"{"messages":[{"role":"user","content":{"type":"image","data":"iVBORw0KGgo="}}],"maxTokens":10}"#;
const TV_S06: &str = r#"{"messages":[{"role":"user","content":{"type":"text","text":"x"}}],"maxTokens":10,"modelPreferences":{"costPriority":1.5}}"#;
const TV_S07: &str = r#"{"messages":[{"role":"user","content":{"type":"text","text":"weather?"}}],"maxTokens":100,"tools":[{"name":"get_weather","inputSchema":{"type":"object"}}]}"#;
const TV_S08: &str = r#"{"messages":[{"role":"user","content":{"type":"text","text":"Weather in Paris?"}}],"maxTokens":1000,"tools":[{"name":"get_weather","description":"Get weather","inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}],"toolChoice":{"mode":"required"}}"#;
const TV_S09: &str = r#"{"messages":[{"role":"user","content":{"type":"text","text":"x"}}],"maxTokens":10,"tools":[{"name":"t","inputSchema":{"type":"object"}}],"toolChoice":{"mode":"any"}}"#;
const TV_S10: &str = r#"{"messages":[{"role":"user","content":{"type":"text","text":"Weather?"}},{"role":"assistant","content":{"type":"tool_use","id":"call_123","name":"get_weather","input":{"city":"Paris"}}},{"role":"user","content":[{"type":"text","text":"Here are the results:"},{"type":"tool_result","toolUseId":"call_123","content":[{"type":"text","text":"18°C"}]}]}],"maxTokens":100,"tools":[{"name":"get_weather","inputSchema":{"type":"object"}}]}"#;
const TV_S11: &str = r#"{"messages":[{"role":"user","content":{"type":"text","text":"Paris and London?"}},{"role":"assistant","content":[{"type":"tool_use","id":"call_abc123","name":"get_weather","input":{"city":"Paris"}},{"type":"tool_use","id":"call_def456","name":"get_weather","input":{"city":"London"}}]},{"role":"user","content":[{"type":"tool_result","toolUseId":"call_abc123","content":[{"type":"text","text":"18°C"}]}]}],"maxTokens":100,"tools":[{"name":"get_weather","inputSchema":{"type":"object"}}]}"#;
const TV_S12: &str = r#"{"messages":[{"role":"user","content":{"type":"text","text":"Weather?"}},{"role":"assistant","content":{"type":"tool_use","id":"call_123","name":"get_weather","input":{}}},{"role":"user","content":{"type":"tool_result","toolUseId":"call_zzz","content":[{"type":"text","text":"18°C"}]}}],"maxTokens":50,"tools":[{"name":"get_weather","inputSchema":{"type":"object"}}]}"#;
const TV_S13: &str = r#"{"messages":[{"role":"user","content":{"type":"text","text":"Weather?"}},{"role":"assistant","content":{"type":"tool_use","id":"call_1","name":"get_weather","input":{}}},{"role":"user","content":{"type":"text","text":"never mind"}}],"maxTokens":50,"tools":[{"name":"get_weather","inputSchema":{"type":"object"}}]}"#;
const TV_S14: &str = r#"{"messages":[{"role":"user","content":{"type":"text","text":"Weather?"}},{"role":"assistant","content":{"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Paris"}}},{"role":"user","content":{"type":"tool_result","toolUseId":"call_1","content":[{"type":"text","text":"18°C"}],"isError":false}}],"maxTokens":200,"tools":[{"name":"get_weather","inputSchema":{"type":"object"}}],"toolChoice":{"mode":"none"}}"#;
const TV_S15: &str = r#"{"messages":[{"role":"user","content":{"type":"text","text":"x"}}],"maxTokens":10,"includeContext":"allServers"}"#;
const TV_S17: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"Paris."},"model":"claude-3-sonnet-20240307","stopReason":"endTurn"}}"#;
const TV_S18: &str =
    r#"{"role":"assistant","content":{"type":"text","text":"Paris."},"stopReason":"endTurn"}"#;
const TV_S19: &str = r#"{"role":"assistant","content":[{"type":"tool_use","id":"call_abc123","name":"get_weather","input":{"city":"Paris"}},{"type":"tool_use","id":"call_def456","name":"get_weather","input":{"city":"London"}}],"model":"m","stopReason":"toolUse"}"#;
const TV_S20: &str = r#"{"role":"assistant","content":{"type":"text","text":"…"},"model":"m","stopReason":"contentFiltered"}"#;

/// What a vector's JSON is, and so which validator it goes to.
#[derive(Debug, Clone, Copy)]
enum Input {
    /// A whole `sampling/createMessage` request: its `params` go to `validate_request`.
    Envelope(&'static str),
    /// `CreateMessageRequestParams` for `validate_request`.
    Params(&'static str),
    /// One `SamplingMessage`: sent as the only message of `{"messages":[…],"maxTokens":100}`.
    Message(&'static str),
    /// A whole response: its `result` goes to `validate_result`, answering [`ANSWERED`].
    ResultEnvelope(&'static str),
    /// A `CreateMessageResult` for `validate_result`, answering [`ANSWERED`].
    Result(&'static str),
}

/// The request the result vectors answer: TV-S08, which offers tools (so TV-S19's `tool_use`
/// answer is allowed where the era has tool use at all).
const ANSWERED: &str = TV_S08;

#[derive(Debug, Clone, Copy)]
enum Expect {
    /// The request is accepted with nothing to report to the reviewer.
    Valid,
    /// The request is accepted, and the reviewer is told this `includeContext` was ignored.
    ValidContextIgnored(&'static str),
    /// `-32602` with exactly this message (the spec's own wording).
    InvalidExact(&'static str),
    /// `-32602` whose message names the violated rule by containing this text (`None`: the
    /// spec only asks for an error).
    Invalid(Option<&'static str>),
    /// The result is refused with an error on this result field.
    ResultRefused(&'static str),
}

struct Vector {
    id: &'static str,
    eras: &'static [Era],
    caps: &'static str,
    input: Input,
    expect: Expect,
}

const fn v(id: &'static str, eras: &'static [Era], input: Input, expect: Expect) -> Vector {
    Vector {
        id,
        eras,
        caps: DEFAULT_CAPS,
        input,
        expect,
    }
}

const VECTORS: &[Vector] = &[
    v("TV-S01", ALL, Input::Envelope(TV_S01), Expect::Valid),
    v(
        "TV-S02",
        ALL,
        Input::Envelope(TV_S02),
        Expect::Invalid(Some("maxTokens")),
    ),
    v(
        "TV-S03",
        V06_18,
        Input::Message(TV_S03),
        Expect::Invalid(Some("single block")),
    ),
    v("TV-S03", V11_25, Input::Message(TV_S03), Expect::Valid),
    v(
        "TV-S04",
        ALL,
        Input::Params(TV_S04),
        Expect::Invalid(Some("\"system\"")),
    ),
    v(
        "TV-S05",
        ALL,
        Input::Params(TV_S05),
        Expect::Invalid(Some("mimeType")),
    ),
    v(
        "TV-S06",
        ALL,
        Input::Params(TV_S06),
        Expect::Invalid(Some("costPriority")),
    ),
    Vector {
        id: "TV-S07",
        eras: V11_25,
        caps: CAPS_WITHOUT_TOOLS,
        input: Input::Params(TV_S07),
        expect: Expect::Invalid(Some("sampling.tools")),
    },
    v("TV-S08", V11_25, Input::Params(TV_S08), Expect::Valid),
    v(
        "TV-S09",
        ALL,
        Input::Params(TV_S09),
        Expect::Invalid(Some("toolChoice.mode")),
    ),
    v(
        "TV-S10",
        V11_25,
        Input::Params(TV_S10),
        Expect::InvalidExact(TOOL_RESULTS_MIXED),
    ),
    v(
        "TV-S11",
        V11_25,
        Input::Params(TV_S11),
        Expect::InvalidExact(TOOL_RESULT_MISSING),
    ),
    v(
        "TV-S12",
        V11_25,
        Input::Params(TV_S12),
        Expect::Invalid(None),
    ),
    v(
        "TV-S13",
        V11_25,
        Input::Params(TV_S13),
        Expect::InvalidExact(TOOL_RESULT_MISSING),
    ),
    v("TV-S14", V11_25, Input::Params(TV_S14), Expect::Valid),
    v(
        "TV-S15",
        ALL,
        Input::Params(TV_S15),
        Expect::ValidContextIgnored("allServers"),
    ),
    v("TV-S17", ALL, Input::ResultEnvelope(TV_S17), Expect::Valid),
    v(
        "TV-S18",
        ALL,
        Input::Result(TV_S18),
        Expect::ResultRefused("model"),
    ),
    v(
        "TV-S19",
        V06_18,
        Input::Result(TV_S19),
        Expect::ResultRefused("content"),
    ),
    v("TV-S19", V11_25, Input::Result(TV_S19), Expect::Valid),
    v("TV-S20", ALL, Input::Result(TV_S20), Expect::Valid),
];

fn parse(id: &str, text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{id}: the vector is not JSON: {e}"))
}

/// Runs one vector in one era; `Err` says how the outcome differs from the expectation.
fn check(vector: &Vector, era: Era) -> Result<(), String> {
    let caps = parse(vector.id, vector.caps);
    let request = |params: Value| validate_request(era, &caps, &params);
    let outcome = match vector.input {
        Input::Envelope(text) => {
            Outcome::Request(request(parse(vector.id, text)["params"].clone()))
        }
        Input::Params(text) => Outcome::Request(request(parse(vector.id, text))),
        Input::Message(text) => Outcome::Request(request(
            json!({"messages": [parse(vector.id, text)], "maxTokens": 100}),
        )),
        Input::ResultEnvelope(text) => Outcome::Result(validate_result(
            era,
            &parse(vector.id, ANSWERED),
            &parse(vector.id, text)["result"],
        )),
        Input::Result(text) => Outcome::Result(validate_result(
            era,
            &parse(vector.id, ANSWERED),
            &parse(vector.id, text),
        )),
    };
    let ok = match (&outcome, vector.expect) {
        (Outcome::Request(Ok(f)), Expect::Valid) => f.include_context_ignored.is_none(),
        (Outcome::Request(Ok(f)), Expect::ValidContextIgnored(value)) => {
            f.include_context_ignored.as_deref() == Some(value)
        }
        (Outcome::Request(Err(e)), Expect::InvalidExact(message)) => {
            e.code == INVALID_PARAMS && e.message == message
        }
        (Outcome::Request(Err(e)), Expect::Invalid(names)) => {
            e.code == INVALID_PARAMS && names.is_none_or(|n| e.message.contains(n))
        }
        (Outcome::Result(Ok(())), Expect::Valid) => true,
        (Outcome::Result(Err(errors)), Expect::ResultRefused(field)) => {
            errors.iter().any(|e| e.field == field)
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{} ({era}): expected {:?}, got {outcome:?}",
            vector.id, vector.expect
        ))
    }
}

#[derive(Debug)]
enum Outcome {
    Request(
        Result<
            mcp_consent::protocol::sampling::RequestFindings,
            mcp_consent::protocol::jsonrpc::RpcError,
        >,
    ),
    Result(Result<(), Vec<mcp_consent::protocol::FieldError>>),
}

#[test]
fn spec_sampling_vectors() {
    let failures: Vec<String> = VECTORS
        .iter()
        .flat_map(|vector| vector.eras.iter().map(move |&era| check(vector, era)))
        .filter_map(Result::err)
        .collect();
    assert!(
        failures.is_empty(),
        "{} of the sampling vectors failed:\n{}",
        failures.len(),
        failures.join("\n")
    );

    // Every vector up to 2025-11-25 that maps to a validator call has a row.
    let mut ids: Vec<&str> = VECTORS.iter().map(|v| v.id).collect();
    ids.dedup();
    let wanted: Vec<String> = (1..=20)
        .filter(|n| *n != 16)
        .map(|n| format!("TV-S{n:02}"))
        .collect();
    assert_eq!(
        ids, wanted,
        "the table must hold each vector once, in order"
    );
}

/// Tools offered, so the capability rule (SA5) holds and only the tool balance is judged.
fn with_tools(messages: Value) -> Value {
    json!({
        "messages": messages,
        "maxTokens": 100,
        "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}],
    })
}

fn default_caps() -> Value {
    parse("default capabilities", DEFAULT_CAPS)
}

#[test]
fn tool_use_answered_by_plain_text_is_tool_result_missing() {
    let params = with_tools(json!([
        {"role": "user", "content": {"type": "text", "text": "Weather?"}},
        {"role": "assistant", "content": {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}},
        {"role": "user", "content": {"type": "text", "text": "thanks"}},
    ]));
    let err = validate_request(Era::V2025_11_25, &default_caps(), &params).unwrap_err();
    assert_eq!(err.code, INVALID_PARAMS);
    assert_eq!(err.message, "Tool result missing in request");
}

#[test]
fn tool_result_with_text_in_one_user_message_is_mixed() {
    let params = with_tools(json!([
        {"role": "user", "content": {"type": "text", "text": "Weather?"}},
        {"role": "assistant", "content": {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}},
        {"role": "user", "content": [
            {"type": "tool_result", "toolUseId": "t1", "content": [{"type": "text", "text": "18°C"}]},
            {"type": "text", "text": "also this"},
        ]},
    ]));
    let err = validate_request(Era::V2025_11_25, &default_caps(), &params).unwrap_err();
    assert_eq!(err.code, INVALID_PARAMS);
    assert_eq!(err.message, "Tool results mixed with other content");
}

#[test]
fn result_without_role_and_model_is_refused_naming_both() {
    let request = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi?"}}], "maxTokens": 10});
    for era in [Era::V2025_06_18, Era::V2025_11_25] {
        let errors = validate_result(
            era,
            &request,
            &json!({"content": {"type": "text", "text": "hi"}}),
        )
        .unwrap_err();
        for field in ["role", "model"] {
            assert!(
                errors
                    .iter()
                    .any(|e| e.field == field && e.message.contains(field)),
                "{era}: no error naming {field}: {errors:?}"
            );
        }
        assert!(
            errors
                .iter()
                .all(|e| e.field == "role" || e.field == "model"),
            "{era}: the content is fine, only role and model are missing: {errors:?}"
        );
    }
}
