//! Criterion benchmark of the proxy's judgement of one line: `protocol::envelope::Envelope::parse`
//! on a small notification (~190 B), a 64 KB one and a 10 MB `tools/list` result, the shapes
//! the pass-through rows of `benches/limits` send; and, for comparison, each notification with
//! its first member name escaped (`"\u006asonrpc"`), which the proxy's own reader hands to
//! serde_json at its first name, so that one is serde_json's reading of the same line.
//! Run: `cargo bench --bench envelope`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_consent::protocol::envelope::{Envelope, Judged};

/// A notification padded to `len` bytes (as `benches/limits` sends it).
fn notification(len: usize) -> String {
    let head = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"bench","data":""#;
    let tail = "\"}}\n";
    let pad = len.saturating_sub(head.len() + tail.len());
    format!("{head}{}{tail}", "x".repeat(pad))
}

/// A `tools/list` result of about `len` bytes.
fn tools_list(len: usize) -> String {
    let tool = r#"{"name":"tool","description":"A tool that does a thing, described at length.","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}"#;
    let count = len / (tool.len() + 1);
    let tools = vec![tool; count].join(",");
    format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{tools}]}}}}"#)
}

fn bench_envelope(c: &mut Criterion) {
    let mut group = c.benchmark_group("envelope");
    let by_serde = |line: String| line.replacen("\"jsonrpc\"", "\"\\u006asonrpc\"", 1);
    for (name, line) in [
        ("notification 190 B", notification(190)),
        (
            "notification 190 B, by serde_json",
            by_serde(notification(190)),
        ),
        ("notification 64 KB", notification(64 * 1024)),
        (
            "notification 64 KB, by serde_json",
            by_serde(notification(64 * 1024)),
        ),
        ("tools/list 10 MB", tools_list(10 * 1024 * 1024)),
    ] {
        let line = line.into_bytes();
        // Each must be a message, so that the time is a whole reading (not an early refusal).
        assert!(
            matches!(Envelope::parse(&line), Judged::Message(_)),
            "{name}"
        );
        group.throughput(Throughput::Bytes(line.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| matches!(Envelope::parse(black_box(&line)), Judged::Message(_)));
        });
    }
    group.finish();
}

criterion_group!(benches, bench_envelope);
criterion_main!(benches);
