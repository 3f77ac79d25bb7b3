//! Property tests for `protocol::sampling`: generated 2025-11-25 message histories (text, tool
//! round trips answered fully, partly, with an unknown id, mixed with text, or not at all,
//! duplicate `tool_use` ids) are judged by `validate_request` exactly as by an independent
//! oracle restating SA13–SA15 and the unique-id rule; and arbitrary JSON never makes
//! `validate_request` or `validate_result` panic.

use std::collections::{BTreeSet, HashSet};

use mcp_consent::protocol::era::Era;
use mcp_consent::protocol::jsonrpc::codes::INVALID_PARAMS;
use mcp_consent::protocol::sampling::{validate_request, validate_result};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const ERAS: [Era; 3] = [Era::V2025_06_18, Era::V2025_11_25, Era::V2026_07_28];

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 512,
        // A failure prints the shrunk input; no regression files in the source tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Message histories and the oracle.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Block {
    Text,
    ToolUse(String),
    ToolResult(String),
}

#[derive(Debug, Clone)]
struct Msg {
    role: Role,
    blocks: Vec<Block>,
    /// A message of one block is sent as the bare block rather than a one-element array.
    bare: bool,
}

impl Msg {
    fn tool_use_ids(&self) -> impl Iterator<Item = &str> {
        self.blocks.iter().filter_map(|b| match b {
            Block::ToolUse(id) => Some(id.as_str()),
            _ => None,
        })
    }

    fn tool_result_ids(&self) -> impl Iterator<Item = &str> {
        self.blocks.iter().filter_map(|b| match b {
            Block::ToolResult(id) => Some(id.as_str()),
            _ => None,
        })
    }

    fn only_tool_results(&self) -> bool {
        !self.blocks.is_empty()
            && self
                .blocks
                .iter()
                .all(|b| matches!(b, Block::ToolResult(_)))
    }

    fn to_json(&self) -> Value {
        let blocks: Vec<Value> = self
            .blocks
            .iter()
            .map(|b| match b {
                Block::Text => json!({"type": "text", "text": "hello"}),
                Block::ToolUse(id) => {
                    json!({"type": "tool_use", "id": id, "name": "get_weather", "input": {"city": "Paris"}})
                }
                Block::ToolResult(id) => json!({
                    "type": "tool_result",
                    "toolUseId": id,
                    "content": [{"type": "text", "text": "18°C"}],
                }),
            })
            .collect();
        let content = match blocks.as_slice() {
            [one] if self.bare => one.clone(),
            _ => Value::Array(blocks),
        };
        let role = match self.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        json!({"role": role, "content": content})
    }
}

/// SA13–SA15 and the unique-id rule, stated directly over the history:
/// - `tool_use` ids are unique across the history;
/// - an assistant message with `tool_use` is immediately followed by a user message made only
///   of `tool_result`s whose ids are exactly that message's `tool_use` ids (no next message at
///   all is unbalanced too);
/// - a `tool_result` appears nowhere else: its message holds only `tool_result`s and comes right
///   after an assistant message with `tool_use`.
fn oracle(history: &[Msg]) -> bool {
    let uses: Vec<&str> = history.iter().flat_map(Msg::tool_use_ids).collect();
    if uses.iter().collect::<HashSet<_>>().len() != uses.len() {
        return false;
    }
    for (i, msg) in history.iter().enumerate() {
        let used: BTreeSet<&str> = msg.tool_use_ids().collect();
        if !used.is_empty() {
            let Some(next) = history.get(i + 1) else {
                return false;
            };
            let answered: BTreeSet<&str> = next.tool_result_ids().collect();
            if next.role != Role::User || !next.only_tool_results() || answered != used {
                return false;
            }
        }
        if msg.tool_result_ids().next().is_some() {
            let after_tool_use = i > 0 && history[i - 1].tool_use_ids().next().is_some();
            if !msg.only_tool_results() || !after_tool_use {
                return false;
            }
        }
    }
    true
}

/// How the user message after an assistant `tool_use` turns out.
#[derive(Debug, Clone, Copy)]
enum Answer {
    /// Every id answered (in some order).
    All,
    /// One id left out (a message with no block at all if there was only one).
    MissingOne,
    /// Every id answered plus one more, possibly unknown.
    Extra,
    /// Every id answered plus a text block in the same message.
    Mixed,
    /// No user reply: whatever segment comes next follows the `tool_use` directly.
    Nothing,
}

#[derive(Debug, Clone)]
enum Segment {
    UserText,
    AssistantText,
    RoundTrip {
        ids: Vec<u8>,
        with_text: bool,
        answer: Answer,
        rotate: usize,
        extra: u8,
        text_first: bool,
    },
    /// A user `tool_result` message with no `tool_use` before it (unless one happens to be).
    StrayResult(u8),
}

fn id(n: u8) -> String {
    format!("t{n}")
}

fn segment() -> impl Strategy<Value = Segment> {
    let answer = prop_oneof![
        6 => Just(Answer::All),
        1 => Just(Answer::MissingOne),
        1 => Just(Answer::Extra),
        1 => Just(Answer::Mixed),
        1 => Just(Answer::Nothing),
    ];
    prop_oneof![
        3 => Just(Segment::UserText),
        2 => Just(Segment::AssistantText),
        // Ids from a small pool so that duplicates across and within messages happen.
        5 => (
            prop::collection::vec(0u8..12, 1..=3),
            any::<bool>(),
            answer,
            any::<usize>(),
            0u8..14,
            any::<bool>(),
        )
            .prop_map(|(ids, with_text, answer, rotate, extra, text_first)| Segment::RoundTrip {
                ids,
                with_text,
                answer,
                rotate,
                extra,
                text_first,
            }),
        1 => (0u8..14).prop_map(Segment::StrayResult),
    ]
}

fn history() -> impl Strategy<Value = Vec<Msg>> {
    (
        prop::collection::vec(segment(), 0..10),
        prop::collection::vec(any::<bool>(), 40),
    )
        .prop_map(|(segments, bare)| {
            let mut msgs = Vec::new();
            let msg = |role, blocks| Msg {
                role,
                blocks,
                bare: false,
            };
            for segment in segments {
                match segment {
                    Segment::UserText => msgs.push(msg(Role::User, vec![Block::Text])),
                    Segment::AssistantText => msgs.push(msg(Role::Assistant, vec![Block::Text])),
                    Segment::StrayResult(n) => {
                        msgs.push(msg(Role::User, vec![Block::ToolResult(id(n))]));
                    }
                    Segment::RoundTrip {
                        ids,
                        with_text,
                        answer,
                        rotate,
                        extra,
                        text_first,
                    } => {
                        let mut uses: Vec<Block> =
                            ids.iter().map(|&n| Block::ToolUse(id(n))).collect();
                        if with_text {
                            uses.insert(0, Block::Text);
                        }
                        msgs.push(msg(Role::Assistant, uses));
                        let mut results: Vec<Block> =
                            ids.iter().map(|&n| Block::ToolResult(id(n))).collect();
                        let n = results.len();
                        results.rotate_left(rotate % n);
                        match answer {
                            Answer::All => {}
                            Answer::MissingOne => {
                                results.remove(rotate % n);
                            }
                            Answer::Extra => results.push(Block::ToolResult(id(extra))),
                            Answer::Mixed if text_first => results.insert(0, Block::Text),
                            Answer::Mixed => results.push(Block::Text),
                            Answer::Nothing => continue,
                        }
                        msgs.push(msg(Role::User, results));
                    }
                }
            }
            for (m, bare) in msgs.iter_mut().zip(bare) {
                m.bare = bare;
            }
            msgs
        })
}

fn params_for(history: &[Msg]) -> Value {
    json!({
        "messages": history.iter().map(Msg::to_json).collect::<Vec<_>>(),
        "maxTokens": 100,
        "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}],
    })
}

fn caps() -> Value {
    json!({"sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}})
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn tool_balance_matches_the_oracle(history in history()) {
        let params = params_for(&history);
        let verdict = validate_request(Era::V2025_11_25, &caps(), &params);
        prop_assert_eq!(
            verdict.is_ok(),
            oracle(&history),
            "validator said {:?} for {}",
            verdict,
            params
        );
        if let Err(e) = verdict {
            prop_assert_eq!(e.code, INVALID_PARAMS);
        }
    }
}

/// The generator must reach both verdicts often, or the property above proves little.
#[test]
fn histories_cover_valid_and_invalid() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    let mut runner = TestRunner::deterministic();
    let strategy = history();
    let (mut valid, mut invalid, mut with_tools) = (0, 0, 0);
    for _ in 0..500 {
        let h = strategy.new_tree(&mut runner).unwrap().current();
        if oracle(&h) {
            valid += 1;
            if h.iter().any(|m| m.tool_use_ids().next().is_some()) {
                with_tools += 1;
            }
        } else {
            invalid += 1;
        }
    }
    assert!(
        valid >= 50 && invalid >= 50 && with_tools >= 25,
        "valid {valid} (with tool use {with_tools}), invalid {invalid}"
    );
}

// ---------------------------------------------------------------------------------------------
// Arbitrary JSON.

const KEYS: &[&str] = &[
    "messages",
    "maxTokens",
    "role",
    "content",
    "type",
    "text",
    "data",
    "mimeType",
    "id",
    "name",
    "input",
    "toolUseId",
    "isError",
    "structuredContent",
    "tools",
    "toolChoice",
    "mode",
    "inputSchema",
    "modelPreferences",
    "hints",
    "costPriority",
    "speedPriority",
    "intelligencePriority",
    "systemPrompt",
    "temperature",
    "stopSequences",
    "metadata",
    "includeContext",
    "model",
    "stopReason",
    "sampling",
    "context",
];

const WORDS: &[&str] = &[
    "user",
    "assistant",
    "system",
    "text",
    "image",
    "audio",
    "tool_use",
    "tool_result",
    "resource_link",
    "resource",
    "toolUse",
    "endTurn",
    "none",
    "auto",
    "required",
    "thisServer",
    "allServers",
    "object",
    "t1",
    "",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(KEYS).prop_map(str::to_owned),
        1 => "[a-zA-Z_]{0,6}",
    ]
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        // NaN and infinities become null, as serde_json does.
        any::<f64>().prop_map(Value::from),
        (-2.0f64..2.0).prop_map(Value::from),
        prop::sample::select(WORDS).prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A content block: a known or odd `type` plus arbitrary other fields.
fn arb_block() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(WORDS),
        prop::collection::vec((key(), arb_json()), 0..4),
    )
        .prop_map(|(ty, fields)| {
            let mut obj: Map<String, Value> = fields.into_iter().collect();
            obj.insert("type".into(), ty.into());
            Value::Object(obj)
        })
}

/// Request params that get past the outer checks, so the per-message and per-block paths are
/// reached with arbitrary content.
fn near_params() -> impl Strategy<Value = Value> {
    let content = prop_oneof![
        arb_block(),
        prop::collection::vec(arb_block(), 0..4).prop_map(Value::Array),
        arb_json(),
    ];
    let message = (prop::sample::select(WORDS), content)
        .prop_map(|(role, content)| json!({"role": role, "content": content}));
    (
        prop::collection::vec(message, 0..5),
        prop::collection::vec((key(), arb_json()), 0..3),
    )
        .prop_map(|(messages, extra)| {
            let mut obj = Map::new();
            obj.insert("messages".into(), Value::Array(messages));
            obj.insert("maxTokens".into(), 100.into());
            obj.extend(extra);
            Value::Object(obj)
        })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_json_never_panics(
        caps in arb_json(),
        params in arb_json(),
        request in arb_json(),
        result in arb_json(),
    ) {
        for era in ERAS {
            if let Err(e) = validate_request(era, &caps, &params) {
                prop_assert_eq!(e.code, INVALID_PARAMS);
            }
            let _ = validate_result(era, &request, &result);
        }
    }

    #[test]
    fn arbitrary_messages_and_results_never_panic(
        params in near_params(),
        result in (prop::sample::select(WORDS), arb_block(), arb_json()).prop_map(
            |(role, block, model)| json!({"role": role, "content": block, "model": model, "stopReason": "toolUse"})
        ),
    ) {
        for era in ERAS {
            if let Err(e) = validate_request(era, &caps(), &params) {
                prop_assert_eq!(e.code, INVALID_PARAMS);
            }
            if let Err(errors) = validate_result(era, &params, &result) {
                prop_assert!(!errors.is_empty());
            }
        }
    }
}
