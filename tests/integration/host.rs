//! The host's side of the stdio proxy, shared by the proxy, boundary, lifecycle and doors
//! tests: the real binary between a test "host" and a scripted server (`fake_server.py`), and
//! waits on the questions it opens.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::helpers::*;

pub(crate) const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"test-host","version":"0"}}}"#;

pub(crate) fn init_result(version: &str) -> Value {
    json!({"send": {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": version, "capabilities": {}, "serverInfo": {"name": "fake", "version": "0"}}}})
}

pub(crate) struct Proxy {
    pub(crate) child: Child,
    pub(crate) stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Proxy {
    pub(crate) fn start(state: &Path, broker: Option<&str>, script: Value) -> Proxy {
        Proxy::start_with_env(state, broker, script, &[])
    }

    /// [`Proxy::start`] with these variables set in the proxy's environment.
    pub(crate) fn start_with_env(
        state: &Path,
        broker: Option<&str>,
        script: Value,
        env: &[(&str, &Path)],
    ) -> Proxy {
        let dir = tempfile::tempdir().unwrap();
        let script_file = dir.path().join("script.json");
        std::fs::write(&script_file, script.to_string()).unwrap();
        let log = dir.path().join("server.log");
        std::fs::write(&log, "").unwrap();
        let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/fake_server.py");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-consent"));
        cmd.env_remove("MCP_CONSENT_BROKER")
            .arg("proxy")
            .arg("--state-dir")
            .arg(state)
            .args(["--name", "fake"])
            .envs(env.iter().copied());
        if let Some(b) = broker {
            cmd.args(["--broker", b]);
        }
        cmd.arg("--")
            .arg("python3")
            .arg(&fake)
            .arg(&script_file)
            .arg(&log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Proxy {
            child,
            stdin,
            stdout,
            log,
            _dir: dir,
        }
    }

    /// Sends the host's `initialize` and returns the answer line.
    pub(crate) async fn initialize(&mut self) -> String {
        self.send(INIT).await;
        self.recv().await
    }

    /// [`Proxy::initialize`], then the host's `notifications/initialized`.
    pub(crate) async fn initialized(&mut self) {
        self.initialize().await;
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
    }

    /// The server's process id, as `fake_server.py` logs it for `{"pid": true}`.
    pub(crate) fn server_pid(&self) -> i32 {
        self.server_log()
            .iter()
            .find_map(|l| l.strip_prefix("pid ").map(|p| p.parse().unwrap()))
            .expect("the script logs the server's pid")
    }

    /// Waits for the proxy to exit, with the host's stdin still open.
    pub(crate) async fn wait(&mut self) -> std::process::ExitStatus {
        self.child.wait().await.unwrap()
    }

    pub(crate) async fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Sends raw bytes as one line (for lines that are not valid UTF-8).
    pub(crate) async fn send_bytes(&mut self, line: &[u8]) {
        self.stdin.write_all(line).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    pub(crate) async fn recv(&mut self) -> String {
        tokio::time::timeout(Duration::from_secs(20), self.stdout.next_line())
            .await
            .expect("a line from the proxy in time")
            .unwrap()
            .expect("the proxy is still running")
    }

    pub(crate) fn server_log(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Whether the server has received a line containing `needle` (after a flush, an absence
    /// is observed, not guessed).
    pub(crate) fn server_got(&self, needle: &str) -> bool {
        self.server_log().iter().any(|l| l.contains(needle))
    }

    /// Waits until the server has received a line containing `needle`.
    pub(crate) async fn server_received(&self, needle: &str) -> String {
        eventually(Duration::from_secs(20), || async {
            self.server_log().into_iter().find(|l| l.contains(needle))
        })
        .await
        .unwrap_or_else(|| {
            panic!(
                "the server never received {needle:?}; log: {:?}",
                self.server_log()
            )
        })
    }
}

/// The pending questions, as the token lists them.
pub(crate) async fn pending_questions(app: &TestApp) -> Value {
    app.get("/api/v1/questions?state=pending")
        .await
        .json()
        .await
        .unwrap()
}

pub(crate) async fn pending_question(app: &TestApp) -> Value {
    eventually(Duration::from_secs(20), || async {
        pending_questions(app).await["questions"]
            .as_array()?
            .first()
            .cloned()
    })
    .await
    .expect("no question was opened")
}

pub(crate) async fn state_becomes(app: &TestApp, id: &str, state: &str) {
    let reached = eventually(Duration::from_secs(20), || async {
        (app.question(id).await["state"] == state).then_some(())
    })
    .await;
    if reached.is_none() {
        panic!(
            "question {id} never became {state}: {}",
            app.question(id).await
        );
    }
}
