//! Notices to other devices as their receivers get them: a real HTTP receiver on loopback takes
//! the webhook (checking its HMAC), ntfy and Slack requests; each holds the server, the kind, the
//! tool and the link, and nothing of the request. A failing or hanging channel neither delays
//! nor fails the question, and is counted in `mcp_consent_notifications_failed_total{channel}`.
//! Config errors and unusable secret files name the channel; `mcp-consent notify test` reports
//! what each channel answered and exits non-zero naming the ones that failed.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use hmac::{Hmac, Mac};
use mcp_consent::app::Application;
use mcp_consent::config::Config;
use serde_json::{Value, json};
use sha2::Sha256;

use crate::helpers::*;

const MARKER: &str = "marker-c41n-zz";

/// One request a receiver got.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    /// Everything the receiver saw, as text (to look for the marker).
    fn everything(&self) -> String {
        format!(
            "{} {:?} {}",
            self.path,
            self.headers,
            String::from_utf8_lossy(&self.body)
        )
    }
}

/// A local HTTP receiver: records every request; `/slow` never answers, `/fail` answers 500.
struct Receiver {
    base: String,
    got: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    async fn start() -> Receiver {
        let got: Arc<Mutex<Vec<Received>>> = Arc::default();
        let kept = got.clone();
        let server = HttpServer::new(move || {
            let kept = kept.clone();
            App::new().default_service(web::to(move |req: HttpRequest, body: web::Bytes| {
                let kept = kept.clone();
                async move {
                    let path = req.path().to_owned();
                    kept.lock().unwrap().push(Received {
                        path: path.clone(),
                        headers: req
                            .headers()
                            .iter()
                            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_owned()))
                            .collect(),
                        body: body.to_vec(),
                    });
                    match path.as_str() {
                        "/slow" => {
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                            HttpResponse::Ok().finish()
                        }
                        "/fail" => HttpResponse::InternalServerError().body("broken"),
                        _ => HttpResponse::Ok().body("ok"),
                    }
                }
            }))
        })
        .workers(1)
        .bind("127.0.0.1:0")
        .unwrap();
        let addr = server.addrs()[0];
        tokio::spawn(server.run());
        Receiver {
            base: format!("http://{addr}"),
            got,
        }
    }

    fn on(&self, path: &str) -> Vec<Received> {
        self.got
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.path == path)
            .cloned()
            .collect()
    }

    async fn wait_for(&self, path: &str) -> Received {
        eventually(Duration::from_secs(10), || async {
            self.on(path).into_iter().next()
        })
        .await
        .unwrap_or_else(|| panic!("nothing arrived at {path}"))
    }
}

/// Writes an owner-only secret file (with a trailing newline, as editors leave it).
fn secret_file(dir: &Path, name: &str, secret: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("{secret}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path.display().to_string()
}

/// Opens a form question from `weather` under tool `forecast` whose message and schema carry
/// [`MARKER`]; returns its id and how long the opening took.
async fn open_marked(app: &TestApp) -> (String, Duration) {
    let started = Instant::now();
    let res = app
        .post_json(
            "/api/v1/requests",
            &json!({
                "server": "weather",
                "session": "s1",
                "tool": "forecast",
                "protocolVersion": "2025-11-25",
                "clientCapabilities": full_caps(),
                "request": {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {
                    "message": format!("Your city {MARKER}"),
                    "requestedSchema": {"type": "object", "properties": {
                        "city": {"type": "string", "title": MARKER, "default": MARKER}}}}},
            }),
        )
        .await;
    let took = started.elapsed();
    assert_eq!(res.status(), reqwest::StatusCode::CREATED);
    let id = res.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    (id, took)
}

fn config(text: &str) -> Config {
    Config::parse(&format!(
        "[notifications]\ndesktop = false\nlanguage = \"en\"\n{text}"
    ))
    .unwrap()
}

#[tokio::test]
async fn webhook_ntfy_and_slack_get_summary_and_link_only() {
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let secret = secret_file(dir.path(), "hook-secret", "s3cret");
    let token = secret_file(dir.path(), "ntfy-token", "tk_abc");
    let slack_url = secret_file(dir.path(), "slack-url", &format!("{}/slack", receiver.base));
    let mut config = config(&format!(
        r#"
        [[notifications.channels]]
        kind = "webhook"
        url = "{base}/hook"
        secret_file = "{secret}"

        [[notifications.channels]]
        kind = "ntfy"
        url = "{base}/mcp-topic"
        token_file = "{token}"

        [[notifications.channels]]
        kind = "slack"
        url_file = "{slack_url}"
        "#,
        base = receiver.base
    ));
    config.public_url =
        Some(mcp_consent::web::public::PublicUrl::parse("https://consent.example.ts.net").unwrap());
    let app = spawn_with(config).await;
    let (id, _) = open_marked(&app).await;
    let link = format!("https://consent.example.ts.net/questions/{id}");

    let hook = receiver.wait_for("/hook").await;
    let body = hook.json();
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["id", "server", "kind", "tool", "waiting", "url", "at"],
        "{body}"
    );
    assert_eq!(body["id"], id.as_str());
    assert_eq!(body["server"], "weather");
    assert_eq!(body["kind"], "form");
    assert_eq!(body["tool"], "forecast");
    assert_eq!(body["waiting"], 1);
    assert_eq!(body["url"], link.as_str());
    chrono::DateTime::parse_from_rfc3339(body["at"].as_str().unwrap()).unwrap();
    // The receiver checks the signature with the secret as written, newline dropped.
    let mut mac = Hmac::<Sha256>::new_from_slice(b"s3cret").unwrap();
    mac.update(&hook.body);
    let expected = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
    assert_eq!(
        hook.header("x-mcp-consent-signature"),
        Some(expected.as_str())
    );
    assert_eq!(hook.header("content-type"), Some("application/json"));

    let ntfy = receiver.wait_for("/mcp-topic").await;
    assert_eq!(ntfy.header("click"), Some(link.as_str()));
    assert_eq!(ntfy.header("title"), Some("mcp-consent"));
    assert_eq!(ntfy.header("authorization"), Some("Bearer tk_abc"));
    assert_eq!(
        String::from_utf8_lossy(&ntfy.body),
        "weather asks for input"
    );

    let slack = receiver.wait_for("/slack").await;
    let message = slack.json();
    assert_eq!(
        message.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["text"],
        "a text with the link, no blocks and no buttons: {message}"
    );
    let text = message["text"].as_str().unwrap();
    assert!(text.contains("weather asks for input"), "{text}");
    assert!(text.contains(&format!("<{link}|")), "{text}");

    for got in receiver.got.lock().unwrap().iter() {
        assert!(!got.everything().contains(MARKER), "{got:?}");
    }
}

#[tokio::test]
async fn without_public_url_links_point_at_the_loopback_address() {
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_with(config(&format!(
        "[[notifications.channels]]\nkind = \"ntfy\"\nurl = \"{}/topic\"\n",
        receiver.base
    )))
    .await;
    let (id, _) = open_marked(&app).await;
    let got = receiver.wait_for("/topic").await;
    assert_eq!(
        got.header("click"),
        Some(format!("{}/questions/{id}", app.base).as_str())
    );
    assert_eq!(got.header("authorization"), None);
    drop(dir);
}

#[tokio::test]
async fn a_failing_or_hanging_channel_neither_delays_nor_fails_the_question() {
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let secret = secret_file(dir.path(), "s", "k");
    // A port nobody listens on: bind one, note it, close it.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let app = spawn_with(config(&format!(
        r#"
        [[notifications.channels]]
        kind = "ntfy"
        url = "{base}/slow"

        [[notifications.channels]]
        kind = "webhook"
        url = "http://{closed}/hook"
        secret_file = "{secret}"

        [[notifications.channels]]
        kind = "ntfy"
        url = "{base}/fail"
        "#,
        base = receiver.base
    )))
    .await;
    let (id, took) = open_marked(&app).await;
    assert!(took < Duration::from_secs(2), "opening took {took:?}");
    // The hanging channel has the notice and is still waiting on its answer.
    receiver.wait_for("/slow").await;
    let (status, _) = app
        .answer(
            &id,
            json!({"action": "accept", "content": {"city": "Lisbon"}}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    let (status, response) = app.response(&id, 5).await;
    assert_eq!(status, reqwest::StatusCode::OK);
    assert_eq!(response["response"]["result"]["content"]["city"], "Lisbon");
    let counted = eventually(Duration::from_secs(10), || async {
        let text = app.get("/metrics").await.text().await.unwrap();
        (text.contains("mcp_consent_notifications_failed_total{channel=\"webhook\"} 1")
            && text.contains("mcp_consent_notifications_failed_total{channel=\"ntfy\"} 1"))
        .then_some(())
    })
    .await;
    assert!(counted.is_some(), "the failures were counted by kind");
}

#[tokio::test]
async fn config_errors_and_unusable_secret_files_name_the_channel() {
    let e = Config::parse(
        r#"
        [[notifications.channels]]
        kind = "ntfy"
        url = "https://ntfy.sh/t"

        [[notifications.channels]]
        kind = "email"
        smtp_url = "http://mail.example:25"
        from = "me@example.com"
        to = "me@example.com"
        "#,
    )
    .unwrap_err();
    let text = error_chain(&e);
    assert!(text.contains("channel 2 (email)"), "{text}");
    assert!(text.contains("smtp://"), "{text}");
    let e = Config::parse(
        "[[notifications.channels]]\nkind = \"email\"\nsmtp_url = \"smtp://m:25\"\nfrom = \"me@example.com\"\nto = [\"a@example.com\", \"not an address\"]",
    )
    .unwrap_err();
    let text = error_chain(&e);
    // Config errors never quote a value (it could be a secret): the channel and the field are
    // named instead.
    assert!(
        text.contains("channel 1 (email)") && text.contains("is not a mail address"),
        "{text}"
    );
    assert!(!text.contains("not an address"), "{text}");

    let dir = tempfile::tempdir().unwrap();
    let secret = secret_file(dir.path(), "loose", "k");
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
    let config = config(&format!(
        "[[notifications.channels]]\nkind = \"ntfy\"\nurl = \"https://ntfy.sh/t\"\n\n[[notifications.channels]]\nkind = \"webhook\"\nurl = \"https://example.com/h\"\nsecret_file = \"{secret}\"\n"
    ));
    let Err(e) = Application::build(&config, dir.path().join("state"), "127.0.0.1:0").await else {
        panic!("a secret readable by others was accepted");
    };
    let text = error_chain(&e);
    assert!(text.contains("channel 2 (webhook)"), "{text}");
    assert!(text.contains(&secret), "{text}");
}

/// Runs `mcp-consent notify test ARGS` with `config`; returns (exit code, stdout, stderr).
async fn notify_test(config: &Path, args: &[&str]) -> (i32, String, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-consent"))
        .args(["notify", "test", "--config"])
        .arg(config)
        .args(args)
        .output()
        .await
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn notify_test_says_what_each_channel_answered_and_names_the_failed() {
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let secret = secret_file(dir.path(), "s", "k");
    let file = dir.path().join("config.toml");
    std::fs::write(
        &file,
        format!(
            r#"public_url = "https://consent.example.ts.net"

[[notifications.channels]]
kind = "webhook"
url = "{base}/hook"
secret_file = "{secret}"

[[notifications.channels]]
kind = "ntfy"
url = "{base}/fail"
"#,
            base = receiver.base
        ),
    )
    .unwrap();
    let (code, out, err) = notify_test(&file, &[]).await;
    assert_ne!(code, 0, "{out}{err}");
    assert!(out.contains("channel 1 (webhook): sent"), "{out}");
    assert!(out.contains("HTTP 200 OK: ok"), "{out}");
    assert!(out.contains("channel 2 (ntfy): FAILED"), "{out}");
    assert!(
        out.contains("broken"),
        "the receiver's answer is shown: {out}"
    );
    assert!(err.contains("failed: channel 2 (ntfy)"), "{err}");
    assert!(!err.contains("channel 1"), "{err}");
    let hook = receiver.on("/hook")[0].json();
    assert_eq!(hook["kind"], "test");
    assert_eq!(hook["url"], "https://consent.example.ts.net/");

    // One channel, by kind or by position.
    let (code, out, _) = notify_test(&file, &["--channel", "webhook"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("channel 2"), "{out}");
    let (code, out, _) = notify_test(&file, &["--channel", "1"]).await;
    assert_eq!(code, 0, "{out}");
    assert_eq!(receiver.on("/hook").len(), 3);
    let (code, _, err) = notify_test(&file, &["--channel", "slack"]).await;
    assert_ne!(code, 0);
    assert!(err.contains("no channel is \"slack\""), "{err}");
}
