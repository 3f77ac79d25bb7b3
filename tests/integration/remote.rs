//! `mcp-consent proxy --url` against a scripted HTTP server on loopback: the Streamable HTTP
//! headers and session, a server request on a POST event stream judged like a stdio one, and
//! bad input (a garbage body, an endless event, a redirect to another host), each a clear error
//! for the host's request.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::helpers::*;
use crate::host::{INIT, pending_question};

/// One request the scripted server received.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub method: String,
    /// The request target (path and query).
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What the scripted server does with a request.
pub(crate) enum Reply {
    Raw(String),
    EndlessEvent,
    /// A JSON reply whose body never ends.
    EndlessBody,
    /// Bytes written and the connection then held open (an event stream that stays).
    Open(String),
}

pub(crate) type Handler = dyn Fn(&Seen) -> Reply + Send + Sync;

/// A one-request-per-connection HTTP/1.1 server on 127.0.0.1.
pub(crate) async fn serve(handler: Arc<Handler>) -> (String, Arc<Mutex<Vec<Seen>>>) {
    serve_at("127.0.0.1:0", handler).await
}

/// [`serve`] on `addr`.
pub(crate) async fn serve_at(addr: &str, handler: Arc<Handler>) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind(addr).await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (handler, log) = (Arc::clone(&handler), Arc::clone(&log));
            tokio::spawn(async move { one(stream, &*handler, &log).await });
        }
    });
    (url, seen)
}

async fn one(mut stream: TcpStream, handler: &Handler, log: &Mutex<Vec<Seen>>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.unwrap_or(0) == 0 {
            return;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_string();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap().split(' ');
    let method = request_line.next().unwrap().to_owned();
    let target = request_line.next().unwrap_or("/").to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let len = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse::<usize>().unwrap());
    let mut body = vec![0u8; len];
    stream.read_exact(&mut body).await.unwrap();
    let seen = Seen {
        method,
        target,
        headers,
        body: String::from_utf8_lossy(&body).to_string(),
    };
    log.lock().unwrap().push(seen.clone());
    match handler(&seen) {
        Reply::Raw(raw) => {
            let _ = stream.write_all(raw.as_bytes()).await;
        }
        Reply::Open(raw) => {
            let _ = stream.write_all(raw.as_bytes()).await;
            std::future::pending::<()>().await;
        }
        Reply::EndlessEvent => {
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: ")
                .await;
            let chunk = vec![b'a'; 16 * 1024];
            while stream.write_all(&chunk).await.is_ok() {}
        }
        Reply::EndlessBody => {
            let _ = stream
                .write_all(b"HTTP/1.1 201 Created\r\ncontent-type: application/json\r\n\r\n{\"client_id\": \"")
                .await;
            let chunk = vec![b'a'; 16 * 1024];
            while stream.write_all(&chunk).await.is_ok() {}
        }
    }
}

pub(crate) fn json_reply(body: &Value, extra: &str) -> Reply {
    let body = body.to_string();
    Reply::Raw(format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra}connection: close\r\n\r\n{body}",
        body.len()
    ))
}

pub(crate) fn status(code: &str) -> Reply {
    Reply::Raw(format!(
        "HTTP/1.1 {code}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    ))
}

pub(crate) fn rpc(seen: &Seen) -> Value {
    serde_json::from_str(&seen.body).unwrap_or(Value::Null)
}

pub(crate) fn init_reply(seen: &Seen) -> Reply {
    json_reply(
        &json!({"jsonrpc": "2.0", "id": rpc(seen)["id"], "result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "scripted", "version": "0"}}}),
        "mcp-session-id: s-123\r\n",
    )
}

pub(crate) struct Host {
    pub child: Child,
    pub stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Host {
    pub fn start(state: &std::path::Path, url: &str, extra: &[&str]) -> Host {
        Host::start_env(state, url, extra, &[])
    }

    /// [`Host::start`] with `envs` set in the proxy's environment.
    pub fn start_env(
        state: &std::path::Path,
        url: &str,
        extra: &[&str],
        envs: &[(&str, &str)],
    ) -> Host {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-consent"))
            .env_remove("MCP_CONSENT_BROKER")
            .env("HTTP_PROXY", "http://127.0.0.1:9")
            .env("http_proxy", "http://127.0.0.1:9")
            .env("REMOTE_TEST_TOKEN", "t0ken")
            .envs(envs.iter().copied())
            .arg("proxy")
            .arg("--state-dir")
            .arg(state)
            .args(["--name", "remote", "--url", url])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Host {
            child,
            stdin,
            stdout,
        }
    }

    pub async fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    pub async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.stdout.next_line())
            .await
            .expect("a line from the proxy in time")
            .unwrap()
            .expect("the proxy is still running");
        serde_json::from_str(&line).unwrap()
    }
}

pub(crate) async fn wait_for(seen: &Mutex<Vec<Seen>>, what: impl Fn(&Seen) -> bool) -> Seen {
    for _ in 0..400 {
        if let Some(s) = seen.lock().unwrap().iter().find(|s| what(s)) {
            return s.clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "the server never received it; got {:?}",
        seen.lock().unwrap()
    );
}

#[tokio::test]
async fn a_remote_servers_sampling_request_becomes_a_question_and_the_session_is_kept() {
    let app = spawn_app().await;
    let handler: Arc<Handler> = Arc::new(|seen: &Seen| {
        let msg = rpc(seen);
        match (seen.method.as_str(), msg["method"].as_str()) {
            ("POST", Some("initialize")) => init_reply(seen),
            ("POST", Some("tools/call")) => {
                let ask = json!({"jsonrpc": "2.0", "id": 77, "method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}], "maxTokens": 10}});
                Reply::Raw(format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\nid: e1\nretry: 10\ndata:\n\nid: e2\ndata: {ask}\n\n"
                ))
            }
            ("GET", _) if seen.header("last-event-id") == Some("e2") => Reply::Raw(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}\n\n"
                    .into(),
            ),
            ("GET", _) => status("405 Method Not Allowed"),
            ("POST", _) => status("202 Accepted"),
            ("DELETE", _) => status("200 OK"),
            _ => status("400 Bad Request"),
        }
    });
    let (url, seen) = serve(handler).await;
    let mut host = Host::start(
        &app.state,
        &url,
        &["--header", "Authorization: Bearer ${REMOTE_TEST_TOKEN}"],
    );
    host.send(INIT).await;
    assert_eq!(host.recv().await["result"]["protocolVersion"], "2025-11-25");
    host.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    host.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{}}}"#,
    )
    .await;

    // The sampling request is a question, never a line to the host.
    let question = pending_question(&app).await;
    assert_eq!(question["server"], "remote");
    let id = question["id"].as_str().unwrap();
    let (code, _) = app
        .answer(id, json!({"action": "accept", "result": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}}))
        .await;
    assert!(code.is_success());
    let answered = wait_for(&seen, |s| s.body.contains("\"id\":77")).await;
    assert_eq!(rpc(&answered)["result"]["content"]["text"], "hi");
    // The POST stream ended before the answer: resumed with Last-Event-ID, and the host gets it.
    let result = host.recv().await;
    assert_eq!(result["id"], 2, "{result}");
    assert!(result.get("result").is_some(), "{result}");

    // Every request after initialize carried the session, the version and the header's value.
    let after: Vec<Seen> = seen.lock().unwrap().iter().skip(1).cloned().collect();
    for s in &after {
        assert_eq!(s.header("mcp-session-id"), Some("s-123"), "{s:?}");
        assert_eq!(
            s.header("mcp-protocol-version"),
            Some("2025-11-25"),
            "{s:?}"
        );
        assert_eq!(s.header("authorization"), Some("Bearer t0ken"), "{s:?}");
    }
    let post = after.iter().find(|s| s.method == "POST").unwrap();
    assert_eq!(
        post.header("accept"),
        Some("application/json, text/event-stream")
    );

    drop(host.stdin);
    let status = tokio::time::timeout(Duration::from_secs(10), host.child.wait()).await;
    assert!(status.is_ok(), "the proxy exits when the host leaves");
    wait_for(&seen, |s| {
        s.method == "DELETE" && s.header("mcp-session-id") == Some("s-123")
    })
    .await;
}

#[tokio::test]
async fn bad_replies_are_clear_errors_for_the_hosts_request() {
    let app = spawn_app().await;
    let (elsewhere, _) = serve(Arc::new(|_: &Seen| status("200 OK"))).await;
    let redirect = elsewhere.replace("127.0.0.1", "localhost");
    let handler: Arc<Handler> = Arc::new(move |seen: &Seen| {
        let msg = rpc(seen);
        match msg["method"].as_str() {
            Some("initialize") => init_reply(seen),
            Some("garbage") => Reply::Raw(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 9\r\nconnection: close\r\n\r\nnot json!".into(),
            ),
            Some("endless") => Reply::EndlessEvent,
            Some("redirect") => Reply::Raw(format!(
                "HTTP/1.1 307 Temporary Redirect\r\nlocation: {redirect}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )),
            _ => status("405 Method Not Allowed"),
        }
    });
    let (url, _) = serve(handler).await;
    let mut host = Host::start(&app.state, &url, &["--max-line-bytes", "65536"]);
    host.send(INIT).await;
    host.recv().await;
    for (id, method, expect) in [
        (11, "garbage", "not a JSON-RPC response"),
        (12, "endless", "over the line limit"),
        (13, "redirect", "redirect"),
    ] {
        host.send(&json!({"jsonrpc": "2.0", "id": id, "method": method}).to_string())
            .await;
        let reply = host.recv().await;
        assert_eq!(reply["id"], id, "{reply}");
        assert_eq!(reply["error"]["code"], -32603, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains(expect), "{method}: {message}");
        assert!(
            !message.contains("127.0.0.1"),
            "no URL in the error: {message}"
        );
    }
}

#[tokio::test]
async fn a_bad_header_argument_is_refused_without_its_value() {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-consent"))
        .env_remove("SECRET_THAT_IS_UNSET")
        .args(["proxy", "--url", "http://127.0.0.1:9/mcp", "--header"])
        .arg("Authorization: Bearer ${SECRET_THAT_IS_UNSET} sk-visible")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("SECRET_THAT_IS_UNSET"), "{err}");
    assert!(!err.contains("sk-visible"), "{err}");
}
