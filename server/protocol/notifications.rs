//! The notifications the proxy writes itself, as lines.

use serde_json::{Value, json};

use super::method::Method;

/// A `notifications/cancelled` line for the request `id`.
pub fn cancelled_line(id: &Value, reason: &str) -> Vec<u8> {
    line(
        Method::Cancelled,
        json!({"requestId": id, "reason": reason}),
    )
}

/// A `notifications/progress` line.
pub fn progress_line(token: &Value, progress: u64, message: &str) -> Vec<u8> {
    line(
        Method::Progress,
        json!({"progressToken": token, "progress": progress, "message": message}),
    )
}

fn line(method: Method, params: Value) -> Vec<u8> {
    let note = json!({
        "jsonrpc": "2.0",
        "method": method.name().unwrap_or_default(),
        "params": params,
    });
    let mut line = note.to_string().into_bytes();
    line.push(b'\n');
    line
}
