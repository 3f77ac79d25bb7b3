//! Judging one JSON-RPC line by its envelope, without building the whole value.
//!
//! The proxy must decide for every line a server sends whether a host could take it as a
//! sampling or elicitation request (docs/protocol.md G17, "fail closed" in docs/design.md
//! §proxy). [`Envelope::parse`] reads only the top-level members; nested members stay borrowed
//! raw text, so nesting of any depth is accepted (serde_json skips raw values without
//! recursion) and nothing large is copied. What serde_json refuses (invalid UTF-8, lone
//! surrogate escapes, `NaN`, duplicate envelope members, trailing data) is
//! [`Judged::Unjudgeable`]: the caller drops it rather than guess what a more lenient host
//! parser would make of it.
//!
//! [`scan_id`] is the fallback for a line that could not be judged: a byte scanner that finds
//! the top-level `"id"` so the request it answered can be failed instead of left waiting. It
//! never decides that a line is safe to forward.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::members::Members;
pub use super::members::has_folded_member;
use super::request_key::{RequestKey, UnsafeId, key_text};

/// One message, as far as routing needs it. Raw members are the JSON text of their values,
/// borrowed from the line (already judged valid JSON).
#[derive(Debug, Clone)]
pub struct Envelope<'a> {
    /// `id` (absent for notifications; JSON `null` is kept as a present `null`).
    pub id: Option<&'a str>,
    /// `method`, for requests and notifications.
    pub method: Option<Cow<'a, str>>,
    /// `params`, raw.
    pub params: Option<&'a str>,
    /// `result`, raw.
    pub result: Option<&'a str>,
    /// `error`, raw.
    pub error: Option<&'a str>,
    /// `result` or `error` was given as JSON `null` (which [`Envelope::result`] and
    /// [`Envelope::error`] read as absent): such a message answers nothing validly, yet a
    /// reader that goes by which members are present takes it for a response.
    pub null_answer: bool,
    /// The head of an object `result` ([`super::mrtr::RESULT_MEMBERS`]) when it was read in
    /// the same pass as the line; `None` otherwise (no object `result`, or a line serde_json
    /// decided): then read it from `result`.
    pub result_head: Option<Members<'a, 3>>,
}

/// What one line is, for the proxy.
#[derive(Debug)]
pub enum Judged<'a> {
    /// A JSON object with a readable envelope.
    Message(Envelope<'a>),
    /// A JSON array: a batch (2025-03-26 and before); each element must be judged on its own.
    Batch(Vec<&'a RawValue>),
    /// Not JSON serde_json accepts, or JSON that is neither an object nor an array.
    Unjudgeable,
}

impl<'a> Envelope<'a> {
    /// Judges one line (without its trailing newline, though surrounding whitespace is fine),
    /// in one pass over it.
    pub fn parse(line: &'a [u8]) -> Judged<'a> {
        let Ok(text) = std::str::from_utf8(line) else {
            return Judged::Unjudgeable;
        };
        match text.trim_start().as_bytes().first() {
            Some(b'{') => match Members::read_with_head(
                text,
                &ENVELOPE_MEMBERS,
                RESULT,
                &super::mrtr::RESULT_MEMBERS,
            ) {
                Ok((members, result_head)) => Envelope::from_members(&members, result_head)
                    .map_or(Judged::Unjudgeable, Judged::Message),
                Err(_) => Judged::Unjudgeable,
            },
            Some(b'[') => match serde_json::from_str::<Vec<&'a RawValue>>(text) {
                Ok(items) => Judged::Batch(items),
                Err(_) => Judged::Unjudgeable,
            },
            _ => Judged::Unjudgeable,
        }
    }

    /// The envelope from its members; `None` when `method` is not a string.
    fn from_members(m: &Members<'a, 6>, result_head: Option<Members<'a, 3>>) -> Option<Self> {
        let method = match m.get(METHOD) {
            None => None,
            Some(raw) => Some(match plain_string(raw) {
                Some(plain) => Cow::Borrowed(plain),
                // Escapes in the name (or not a string): decoded into an owned string.
                None => Cow::Owned(serde_json::from_str::<String>(raw).ok()?),
            }),
        };
        // A JSON `null` reads as absent; an explicit `"id": null` on a request must stay
        // visible (a request with a null id is invalid, not a notification).
        let id = m
            .get(ID)
            .or_else(|| (method.is_some() && m.is_null(ID)).then_some(NULL_ID));
        Some(Envelope {
            id,
            method,
            params: m.get(PARAMS),
            result: m.get(RESULT),
            error: m.get(ERROR),
            null_answer: m.is_null(RESULT) || m.is_null(ERROR),
            result_head,
        })
    }

    /// The key of the id ([`RequestKey::of_raw`]); `None` for a message without one.
    pub fn key(&self) -> Option<Result<RequestKey, UnsafeId>> {
        self.id.map(RequestKey::of_raw)
    }

    /// The key of `params.requestId` (of a `notifications/cancelled`); `None` when the params
    /// name none or cannot be read by exact names.
    pub fn cancelled_request(&self) -> Option<Result<RequestKey, UnsafeId>> {
        let members = Members::read(self.params?, &["requestId"]).ok()?;
        members.get(0).map(RequestKey::of_raw)
    }

    /// `method` as a plain string slice.
    pub fn method(&self) -> Option<&str> {
        self.method.as_deref()
    }

    /// A response (no method, an id, and a result or an error).
    pub fn is_response(&self) -> bool {
        self.method.is_none()
            && self.id.is_some()
            && (self.result.is_some() || self.error.is_some())
    }

    /// A valid response: no method, an id, and exactly one of a result or an error, neither
    /// given as `null`.
    pub fn is_valid_response(&self) -> bool {
        self.is_response() && self.result.is_some() != self.error.is_some() && !self.null_answer
    }
}

/// The text of a JSON string given as valid JSON text, when it has no escapes (then it is the
/// text between the quotes); `None` for anything else.
fn plain_string(raw: &str) -> Option<&str> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains('\\')).then_some(inner)
}

/// The id `null`, for a request that spelled it out.
const NULL_ID: &str = "null";

/// The member names of the envelope, and the index of each.
pub const ENVELOPE_MEMBERS: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];
const ID: usize = 1;
const METHOD: usize = 2;
const PARAMS: usize = 3;
const RESULT: usize = 4;
const ERROR: usize = 5;

/// Finds the raw text of the top-level `"id"` member of a line that may not be valid JSON
/// (invalid UTF-8, non-finite numbers, lone surrogates elsewhere in it). Used only to tell the
/// waiting side which request a dropped line concerned. Returns the canonical id text (see
/// [`key_text`]) for an id the proxy keys requests by, `None` for any other.
pub fn scan_id(line: &[u8]) -> Option<String> {
    let mut scanner = IdScanner::default();
    scanner.feed(line);
    scanner.finish()
}

/// A streaming form of [`scan_id`], for lines too long to hold: feed it the line in pieces.
#[derive(Debug, Default)]
pub struct IdScanner {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// The current top-level string (a key, while `expect_key`), collected while short.
    text: Vec<u8>,
    /// At depth 1, the next string is a key.
    expect_key: bool,
    /// The last top-level key was `id`, and its value is being read.
    reading_id: bool,
    /// The value of `id` as read so far.
    id: Vec<u8>,
    found: Option<Vec<u8>>,
}

/// The longest id text kept (longer ids are not identified).
const MAX_ID: usize = 256;

impl IdScanner {
    /// Feeds the next piece of the line.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.step(b);
        }
    }

    fn step(&mut self, b: u8) {
        if self.in_string {
            self.step_in_string(b);
        } else {
            self.step_between_strings(b);
        }
    }

    /// A byte inside a string: kept when it belongs to the `id` value or a top-level key.
    fn step_in_string(&mut self, b: u8) {
        if self.reading_id && self.id.len() <= MAX_ID {
            self.id.push(b);
        } else if self.depth == 1 && self.expect_key && self.text.len() <= MAX_ID {
            self.text.push(b);
        }
        if self.escaped {
            self.escaped = false;
        } else if b == b'\\' {
            self.escaped = true;
        } else if b == b'"' {
            self.in_string = false;
            if self.reading_id {
                self.end_id();
            } else if self.depth == 1 && self.expect_key {
                self.text.pop();
                self.expect_key = false;
            }
        }
    }

    /// A byte outside strings: structure (nesting, keys and members) and bare `id` values.
    fn step_between_strings(&mut self, b: u8) {
        match b {
            b'"' => {
                self.in_string = true;
                if self.reading_id {
                    self.id.push(b);
                } else if self.depth == 1 && self.expect_key {
                    self.text.clear();
                }
            }
            b'{' | b'[' => {
                if self.reading_id {
                    // An object or array id is not a JSON-RPC id.
                    self.reading_id = false;
                    self.id.clear();
                }
                self.depth += 1;
                if self.depth == 1 {
                    self.expect_key = b == b'{';
                }
            }
            b'}' | b']' => {
                if self.reading_id {
                    self.end_id();
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if self.depth == 1 && !self.expect_key => {
                if self.text == b"id" {
                    self.reading_id = true;
                    self.id.clear();
                }
                self.text.clear();
            }
            b',' if self.depth == 1 => {
                if self.reading_id {
                    self.end_id();
                }
                self.expect_key = true;
            }
            _ if self.reading_id && !b.is_ascii_whitespace() && self.id.len() <= MAX_ID => {
                self.id.push(b);
            }
            _ => {}
        }
    }

    fn end_id(&mut self) {
        self.reading_id = false;
        if !self.id.is_empty() && self.id.len() <= MAX_ID {
            // The first `id` member wins; a duplicated id makes the line ambiguous anyway.
            if self.found.is_none() {
                self.found = Some(std::mem::take(&mut self.id));
            }
        }
        self.id.clear();
    }

    /// The id found, canonical (see [`key_text`]), if it is one the proxy keys requests by.
    pub fn finish(mut self) -> Option<String> {
        if self.reading_id {
            self.end_id();
        }
        let raw = String::from_utf8(self.found?).ok()?;
        key_text(&raw).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(line: &str) -> Envelope<'_> {
        match Envelope::parse(line.as_bytes()) {
            Judged::Message(m) => m,
            other => panic!("not a message: {other:?}"),
        }
    }

    #[test]
    fn reads_the_envelope_of_any_depth() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{}1{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let m = message(&deep);
        assert_eq!(m.key(), Some(RequestKey::of_raw("7")));
        assert!(m.is_response());
    }

    #[test]
    fn escaped_member_names_are_decoded_like_hosts_do() {
        let m = message(r#"{"m\u0065thod":"sampling/createMessage","id":1}"#);
        assert_eq!(m.method(), Some("sampling/createMessage"));
    }

    #[test]
    fn what_serde_json_refuses_cannot_be_judged() {
        for line in [
            br#"{"method":"ping","method":"sampling/createMessage","id":1}"#.to_vec(),
            br#"{"id":1,"result":{"x":NaN}}"#.to_vec(),
            br#"{"id":1,"method":"sampling/createMessage\ud800"}"#.to_vec(),
            b"{\"id\":1,\"result\":\"\xff\"}".to_vec(),
            br#"{"id":1} trailing"#.to_vec(),
            b"not json".to_vec(),
            b"42".to_vec(),
            b"".to_vec(),
        ] {
            assert!(
                matches!(Envelope::parse(&line), Judged::Unjudgeable),
                "{:?}",
                String::from_utf8_lossy(&line)
            );
        }
    }

    /// Inside a member the envelope does not read, text is kept raw and not judged (a lone
    /// surrogate escape there changes nothing a host routes by); only UTF-8 is checked.
    #[test]
    fn nested_content_is_kept_raw() {
        let m = message(r#"{"id":1,"result":{"x":"\ud800"}}"#);
        assert!(m.is_response());
    }

    /// Go's decoder matches member names case-insensitively (and folds `ſ`, `K`): a line
    /// with such a twin cannot be judged by exact names.
    #[test]
    fn case_folded_twins_of_envelope_members_cannot_be_judged() {
        for line in [
            r#"{"jsonrpc":"2.0","id":"t7","method":"ping","METHOD":"sampling/createMessage"}"#,
            r#"{"jsonrpc":"2.0","id":"t8","Method":"elicitation/create"}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"re\u{17f}ult\":{}}",
        ] {
            assert!(
                matches!(Envelope::parse(line.as_bytes()), Judged::Unjudgeable),
                "{line}"
            );
        }
        assert!(!has_folded_member(
            r#"{"method":"x","extra":1}"#,
            &ENVELOPE_MEMBERS
        ));
    }

    #[test]
    fn a_result_head_is_read_with_the_line() {
        let asking = message(
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"inputRequests":{"a":{}},"requestState":"s"}}"#,
        );
        let head = asking.result_head.expect("read in the same pass");
        assert_eq!(head.get(1), Some(r#"{"a":{}}"#));
        assert!(crate::protocol::mrtr::head_asks_for_input(Ok(&head)));
        let plain = message(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#);
        assert!(!crate::protocol::mrtr::head_asks_for_input(Ok(&plain
            .result_head
            .expect("read"))));
        // Not an object, or left to serde_json (an escaped key): no head; the caller reads it.
        assert!(message(r#"{"id":3,"result":5}"#).result_head.is_none());
        assert!(
            message(r#"{"id":4,"result":{"\u0069nputRequests":{}}}"#)
                .result_head
                .is_none()
        );
    }

    #[test]
    fn a_null_id_stays_visible() {
        let m = message(r#"{"jsonrpc":"2.0","id":null,"method":"sampling/createMessage"}"#);
        assert_eq!(m.id, Some("null"));
        assert_eq!(m.key(), Some(Err(UnsafeId::Null)));
    }

    /// JSON-RPC readers that go by which members are present (the Java SDK's) take a `null`
    /// `result` or `error` for a response: it is marked, and is not a valid one.
    #[test]
    fn a_null_result_or_error_is_marked_and_not_a_valid_response() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
        ] {
            assert!(!message(line).is_valid_response(), "{line}");
        }
        assert!(message(r#"{"id":1,"result":null}"#).null_answer);
        assert!(message(r#"{"id":1,"result":{}}"#).is_valid_response());
        assert!(message(r#"{"id":1,"error":{"code":1,"message":"x"}}"#).is_valid_response());
    }

    #[test]
    fn batches_are_split() {
        let Judged::Batch(items) = Envelope::parse(br#"[{"id":1,"result":{}}, {"method":"x"}]"#)
        else {
            panic!("not a batch");
        };
        assert_eq!(items.len(), 2);
    }

    #[test]
    fn the_scanner_finds_the_top_level_id_in_broken_lines() {
        assert_eq!(
            scan_id(b"{\"result\":{\"id\":9,\"x\":NaN},\"jsonrpc\":\"2.0\",\"id\":3}").as_deref(),
            Some("3")
        );
        assert_eq!(
            scan_id(b"{\"jsonrpc\":\"2.0\", \"id\" : \"a\\\"b\", \"result\":\"\xff\"}").as_deref(),
            Some(r#""a\"b""#)
        );
        assert_eq!(scan_id(br#"{"result":{"id":9}}"#), None);
        assert_eq!(scan_id(br#"{"id":{"x":1}}"#), None);
        // Only ids the proxy keys requests by: no request in flight has another.
        assert_eq!(scan_id(b"{\"id\":-0,\"x\":NaN}"), None);
        assert_eq!(
            scan_id(b"{\"id\":\"\\u0061\",\"x\":NaN}").as_deref(),
            Some(r#""a""#)
        );
    }

    #[test]
    fn the_scanner_works_in_pieces() {
        let line = br#"{"jsonrpc":"2.0","result":{"big":"xxxxxxxx"},"id":42}"#;
        let mut s = IdScanner::default();
        for chunk in line.chunks(3) {
            s.feed(chunk);
        }
        assert_eq!(s.finish().as_deref(), Some("42"));
    }
}
