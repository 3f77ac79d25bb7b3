//! Spawning the service on a temporary state directory and talking to it like its clients do.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use std::sync::Arc;

use mcp_consent::app::Application;
use mcp_consent::clock::{Clock, SystemClock};
use mcp_consent::config::Config;
use mcp_consent::notify::Notifier;
use mcp_consent::reload::Reloader;
use reqwest::{Client, Response, StatusCode};
use serde_json::{Value, json};

/// Polls `check` every 50 ms until it gives `Some`, for at most `timeout`; `None` when time
/// ran out (the caller panics with what it waited for). The one way tests wait for something
/// that happens in another process or task.
pub async fn eventually<T, F, Fut>(timeout: Duration, mut check: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(found) = check().await {
            return Some(found);
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A running service on `127.0.0.1:0` with its own state directory.
pub struct TestApp {
    pub base: String,
    pub token: String,
    pub client: Client,
    pub state: PathBuf,
    pub handle: mcp_consent::app::ServiceHandle,
    /// Swaps a new config in, as SIGHUP does.
    pub reloader: Reloader,
    _tmp: Option<tempfile::TempDir>,
}

/// A client that keeps cookies and never follows redirects (tests look at each response).
pub fn http_client() -> Client {
    Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

pub async fn spawn_app() -> TestApp {
    spawn_with(Config::default()).await
}

pub async fn spawn_with(config: Config) -> TestApp {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let mut app = spawn_on(config, &state).await;
    app._tmp = Some(tmp);
    app
}

/// Starts a service on an existing state directory (for restart tests).
pub async fn spawn_on(config: Config, state: &Path) -> TestApp {
    spawn_parts(config, state, Arc::new(SystemClock), None).await
}

/// Starts a service reading the time from `clock` and showing notifications through
/// `notifier`.
pub async fn spawn_with_parts(
    config: Config,
    clock: Arc<dyn Clock>,
    notifier: Option<Arc<dyn Notifier>>,
) -> TestApp {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let mut app = spawn_parts(config, &state, clock, notifier).await;
    app._tmp = Some(tmp);
    app
}

async fn spawn_parts(
    config: Config,
    state: &Path,
    clock: Arc<dyn Clock>,
    notifier: Option<Arc<dyn Notifier>>,
) -> TestApp {
    let app = Application::build_with(&config, state.to_path_buf(), "127.0.0.1:0", clock, notifier)
        .await
        .unwrap();
    let base = format!("http://{}", app.addr());
    let handle = app.handle();
    let reloader = app.reloader().clone();
    tokio::spawn(app.run_until_stopped());
    let token = std::fs::read_to_string(state.join("api-token"))
        .unwrap()
        .trim()
        .to_owned();
    TestApp {
        base,
        token,
        client: http_client(),
        state: state.to_path_buf(),
        handle,
        reloader,
        _tmp: None,
    }
}

impl TestApp {
    pub async fn stop(&self) {
        self.handle.stop(true).await;
    }

    pub async fn post_json(&self, path: &str, body: &Value) -> Response {
        self.client
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await
            .unwrap()
    }

    pub async fn get(&self, path: &str) -> Response {
        self.client
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap()
    }

    /// Opens a question; returns (status, body).
    pub async fn open(
        &self,
        request: Value,
        capabilities: Value,
        version: &str,
    ) -> (StatusCode, Value) {
        let res = self
            .post_json(
                "/api/v1/requests",
                &json!({
                    "server": "test-server",
                    "session": "s1",
                    "tool": "demo",
                    "protocolVersion": version,
                    "clientCapabilities": capabilities,
                    "request": request,
                }),
            )
            .await;
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// Opens a question that must be accepted for review; returns its id.
    pub async fn open_ok(&self, request: Value) -> String {
        let (status, body) = self.open(request, full_caps(), "2025-11-25").await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().unwrap().to_owned()
    }

    pub async fn answer(&self, id: &str, answer: Value) -> (StatusCode, Value) {
        let res = self
            .post_json(&format!("/api/v1/questions/{id}/answer"), &answer)
            .await;
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// Long-polls the response; returns (status, body).
    pub async fn response(&self, id: &str, wait: u64) -> (StatusCode, Value) {
        let res = self
            .get(&format!("/api/v1/requests/{id}/response?wait={wait}"))
            .await;
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    pub async fn question(&self, id: &str) -> Value {
        self.get(&format!("/api/v1/questions/{id}"))
            .await
            .json()
            .await
            .unwrap()
    }

    /// The HTML of page `path` as `browser` gets it.
    pub async fn html(&self, browser: &Client, path: &str) -> String {
        browser
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    /// The full view of a question as the logged-in `browser` sees it (human questions too).
    pub async fn question_as(&self, browser: &Client, id: &str) -> Value {
        browser
            .get(format!("{}/api/v1/questions/{id}", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// `POST /api/v1/login-links` with the token over the owner-only socket, as
    /// `mcp-consent login` asks (the only door that makes one).
    pub async fn create_login_link(&self) -> Response {
        self.post_json_over_socket("/api/v1/login-links", &json!({}))
            .await
    }

    /// `POST path` with the token over the owner-only socket (the door of the proxies and the
    /// CLI on this machine; `post_json` goes over TCP).
    pub async fn post_json_over_socket(&self, path: &str, body: &Value) -> Response {
        Client::builder()
            .unix_socket(self.state.join("broker/api.sock"))
            .build()
            .unwrap()
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await
            .unwrap()
    }

    /// `GET path` with the token over the owner-only socket.
    pub async fn get_over_socket(&self, path: &str) -> Response {
        Client::builder()
            .unix_socket(self.state.join("broker/api.sock"))
            .build()
            .unwrap()
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap()
    }

    /// Logs `client` in through a one-time link, as `mcp-consent login` + a browser do.
    pub async fn login(&self) -> Client {
        let res = self.create_login_link().await;
        assert_eq!(res.status(), StatusCode::CREATED);
        let url = res.json::<Value>().await.unwrap()["url"]
            .as_str()
            .unwrap()
            .to_owned();
        let browser = http_client();
        let res = browser.get(&url).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::SEE_OTHER);
        browser
    }
}

/// The id of the first question that `list` (a request for
/// `/api/v1/questions?state=pending`, with its credentials) returns, once there is one.
pub async fn first_pending_id(list: impl Fn() -> reqwest::RequestBuilder) -> String {
    eventually(Duration::from_secs(10), || async {
        let res: Value = list().send().await.unwrap().json().await.unwrap();
        Some(
            res["questions"].as_array()?.first()?["id"]
                .as_str()?
                .to_owned(),
        )
    })
    .await
    .expect("a question was opened")
}

/// The base URL a `mcp-consent serve` child prints on its first stdout line
/// (`listening on http://…`).
pub async fn listening_on(child: &mut tokio::process::Child) -> String {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    line.strip_prefix("listening on ")
        .expect("the first line names the address")
        .to_owned()
}

/// Capabilities the proxy forwards for 2025-11-25.
pub fn full_caps() -> Value {
    json!({"sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}})
}

pub fn sampling_request(id: i64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "sampling/createMessage",
        "params": {"messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": 100}})
}

pub fn form_request(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": {
        "message": "Profile",
        "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string", "minLength": 2},
            "age": {"type": "integer", "minimum": 18, "maximum": 130, "default": 30},
            "color": {"type": "string", "oneOf": [{"const": "#f00", "title": "Red"}, {"const": "#00f", "title": "Blue"}], "default": "#f00"}
        }, "required": ["name"]}}})
}

/// Extracts `name="csrf" value="…"` from a page.
pub fn csrf_of(html: &str) -> String {
    let marker = "name=\"csrf\" value=\"";
    let start = html.find(marker).expect("page has a csrf field") + marker.len();
    html[start..].split('"').next().unwrap().to_owned()
}

/// An error and each of its causes, joined as the binary reports them (`a: b: c`).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Makes `path` owner-only (0600), as a secret file the config names must be.
pub fn owner_only(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}
