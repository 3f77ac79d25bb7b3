//! The service's own doors: a process squatting the TCP port gets nothing secret
//! from any client, environment proxies are never used, a rotated token is refused at once, and
//! a flood of passphrase logins keeps memory bounded while the owner still logs in.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_consent::config::Config;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use crate::helpers::*;
use crate::host::{Proxy, init_result};

/// A listener on a TCP port that records every byte it receives. It answers the service-proof
/// request by relaying it to `relay_to` (the real service on another port, the best a squatter
/// can do) and anything else with a forged success naming a phishing link.
struct Squatter {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<u8>>>,
    accepted: Arc<AtomicUsize>,
    open: Arc<AtomicUsize>,
}

impl Squatter {
    async fn start(relay_to: Option<String>) -> Squatter {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let squatter = Squatter {
            addr: listener.local_addr().unwrap(),
            seen: Arc::default(),
            accepted: Arc::default(),
            open: Arc::default(),
        };
        let (seen, accepted, open) = (
            squatter.seen.clone(),
            squatter.accepted.clone(),
            squatter.open.clone(),
        );
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                accepted.fetch_add(1, Ordering::SeqCst);
                open.fetch_add(1, Ordering::SeqCst);
                let (seen, open, relay_to) = (seen.clone(), open.clone(), relay_to.clone());
                tokio::spawn(async move {
                    serve_one(stream, &seen, relay_to.as_deref()).await;
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        squatter
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Everything received, once every connection the clients made has closed.
    async fn received(&self) -> String {
        let until = Instant::now() + Duration::from_secs(10);
        while self.open.load(Ordering::SeqCst) > 0 && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }
}

async fn serve_one(stream: TcpStream, seen: &Mutex<Vec<u8>>, relay_to: Option<&str>) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            seen.lock().unwrap().extend_from_slice(line.as_bytes());
            let end = line == "\r\n";
            head.push_str(&line);
            if end {
                break;
            }
        }
        let length = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
            })
            .unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        seen.lock().unwrap().extend_from_slice(&body);
        let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let (status, reply) = match relay_to {
            Some(real) if path.starts_with("/api/v1/service-proof") => {
                let res = reqwest::get(format!("{real}{path}")).await.unwrap();
                ("200 OK", res.text().await.unwrap())
            }
            _ => (
                "201 Created",
                json!({"url": "http://127.0.0.1:1/phish", "id": "forged", "state": "pending", "questions": []})
                    .to_string(),
            ),
        };
        let response = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{reply}",
            reply.len()
        );
        if reader
            .get_mut()
            .write_all(response.as_bytes())
            .await
            .is_err()
        {
            return;
        }
    }
}

async fn run(state: &Path, args: &[&str], envs: &[(&str, String)]) -> Output {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-consent"));
    cmd.env_remove("MCP_CONSENT_BROKER")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .arg("--state-dir")
        .arg(state)
        .args(args)
        .stdin(Stdio::null());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().await.unwrap()
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

#[tokio::test]
async fn a_port_squatter_receives_nothing_secret_from_login_questions_or_the_proxy() {
    let app = spawn_app().await;
    let squatter = Squatter::start(Some(app.base.clone())).await;
    let broker = squatter.url();

    let login = run(&app.state, &["login", "--broker", &broker], &[]).await;
    assert!(!login.status.success(), "login trusted the squatter");
    assert!(
        !text(&login.stdout).contains("phish"),
        "{}",
        text(&login.stdout)
    );
    assert!(
        text(&login.stderr).contains("did not prove"),
        "{}",
        text(&login.stderr)
    );

    let list = run(&app.state, &["questions", "--broker", &broker, "list"], &[]).await;
    assert!(!list.status.success(), "questions trusted the squatter");

    let marker = "squatter-marker-7f3a";
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"send": {"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": {"mode": "form", "message": marker,
            "requestedSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}}},
        {"until_response": 0},
    ]);
    let mut proxy = Proxy::start(&app.state, Some(&broker), script);
    proxy.initialize().await;
    let line = proxy.server_received(r#""id":0"#).await;
    let response: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(response["error"]["code"], -32603, "{response}");
    drop(proxy);

    let seen = squatter.received().await;
    assert!(
        seen.contains("service-proof"),
        "the clients asked for a proof: {seen}"
    );
    for secret in [app.token.as_str(), "Bearer", marker, "elicitation"] {
        assert!(
            !seen.contains(secret),
            "the squatter received {secret:?}: {seen}"
        );
    }
    assert!(
        !seen.to_ascii_lowercase().contains("authorization"),
        "{seen}"
    );
}

#[tokio::test]
async fn by_default_clients_use_the_socket_and_never_the_tcp_port_in_service_url() {
    // A state directory whose service is not running; service-url names a squatter.
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    std::fs::create_dir_all(state.join("broker")).unwrap();
    mcp_consent::paths::write_private(&state.join("api-token"), "t0ken-secret\n").unwrap();
    let squatter = Squatter::start(None).await;
    mcp_consent::paths::write_private(&state.join("service-url"), &format!("{}\n", squatter.url()))
        .unwrap();

    let login = run(&state, &["login"], &[]).await;
    assert!(!login.status.success());
    assert!(
        text(&login.stderr).contains("api.sock"),
        "{}",
        text(&login.stderr)
    );
    let list = run(&state, &["questions", "list"], &[]).await;
    assert!(!list.status.success());
    assert_eq!(
        squatter.accepted.load(Ordering::SeqCst),
        0,
        "no client dialled the port"
    );
}

#[tokio::test]
async fn clients_ignore_proxy_variables_in_the_environment() {
    let app = spawn_app().await;
    let listener = Squatter::start(None).await;
    let proxy_url = listener.url();
    let envs: Vec<(&str, String)> = [
        "http_proxy",
        "HTTP_PROXY",
        "ALL_PROXY",
        "all_proxy",
        "https_proxy",
        "HTTPS_PROXY",
    ]
    .into_iter()
    .map(|k| (k, proxy_url.clone()))
    .collect();

    let over_socket = run(&app.state, &["login"], &envs).await;
    assert!(
        over_socket.status.success(),
        "{}",
        text(&over_socket.stderr)
    );
    let list = run(
        &app.state,
        &["questions", "--broker", &app.base, "list"],
        &envs,
    )
    .await;
    assert!(list.status.success(), "{}", text(&list.stderr));

    assert_eq!(
        listener.accepted.load(Ordering::SeqCst),
        0,
        "the proxy saw a connection"
    );
    assert_eq!(listener.received().await, "");
}

async fn status_with(app: &TestApp, token: &str) -> reqwest::StatusCode {
    reqwest::Client::new()
        .get(format!("{}/api/v1/questions", app.base))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .status()
}

fn file_token(state: &Path) -> String {
    std::fs::read_to_string(state.join("api-token"))
        .unwrap()
        .trim()
        .to_owned()
}

#[tokio::test]
async fn a_rotated_token_is_refused_at_once_and_a_removed_one_at_the_next_start() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let app = spawn_on(Config::default(), &state).await;
    let old = app.token.clone();
    assert_eq!(status_with(&app, &old).await, reqwest::StatusCode::OK);

    let out = run(&state, &["token", "rotate"], &[]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let new = file_token(&state);
    assert_ne!(new, old);
    assert_eq!(
        status_with(&app, &old).await,
        reqwest::StatusCode::UNAUTHORIZED
    );
    assert_eq!(status_with(&app, &new).await, reqwest::StatusCode::OK);
    let login = run(&state, &["login"], &[]).await;
    assert!(
        login.status.success(),
        "clients use the new token: {}",
        text(&login.stderr)
    );

    // Removing the file and restarting makes a fresh token; the removed one is refused.
    app.stop().await;
    std::fs::remove_file(state.join("api-token")).unwrap();
    let again = spawn_on(Config::default(), &state).await;
    assert_ne!(again.token, new);
    assert_eq!(
        status_with(&again, &new).await,
        reqwest::StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        status_with(&again, &again.token).await,
        reqwest::StatusCode::OK
    );
    let db = mcp_consent::db::Db::open(&state.join("broker/broker.db")).unwrap();
    let digests = db
        .run(|c| Ok(mcp_consent::db::models::api_token_digests(c)?))
        .await
        .unwrap();
    assert_eq!(
        digests,
        vec![mcp_consent::auth::sha256_hex(&again.token)],
        "only the hash of the current token is kept"
    );
}

/// Peak resident memory of `pid` in KiB (VmHWM), from /proc.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// The stated bound: the service's peak RSS under 128 parallel wrong passphrases (the issue's
/// attack). Two argon2id checks at once (2 × 19 MiB) on top of the idle service; without the
/// limit each attempt took its own 19 MiB (128 took the service to 8.5 GB).
const LOGIN_FLOOD_PEAK_RSS_KIB: u64 = 160 * 1024;

#[tokio::test]
async fn a_hundred_and_twenty_eight_parallel_wrong_passphrases_keep_memory_bounded_and_the_owner_logs_in()
 {
    if !Path::new("/proc/self/status").exists() {
        return; // VmHWM is Linux's; the limit itself is tested in auth::throttle.
    }
    let tmp = tempfile::tempdir().unwrap();
    let hash_file = tmp.path().join("passphrase.hash");
    let hash = mcp_consent::auth::passphrase::hash("correct horse battery").unwrap();
    std::fs::write(&hash_file, format!("{hash}\n")).unwrap();
    owner_only(&hash_file);
    let config = tmp.path().join("config.toml");
    std::fs::write(&config, format!("passphrase_hash_file = {:?}\n", hash_file)).unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-consent"))
        .args(["serve", "--listen", "127.0.0.1:0", "--state-dir"])
        .arg(tmp.path().join("state"))
        .arg("--config")
        .arg(&config)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let base = listening_on(&mut child).await;
    let idle = peak_rss_kib(pid);

    let attackers: Vec<_> = (0..128)
        .map(|i| {
            let url = format!("{base}/login");
            tokio::spawn(async move {
                reqwest::Client::new()
                    .post(url)
                    .form(&[("passphrase", format!("wrong guess {i}"))])
                    .send()
                    .await
                    .map(|r| r.status())
            })
        })
        .collect();
    let owner = http_client();
    let started = Instant::now();
    let logged_in = loop {
        let res = owner
            .post(format!("{base}/login"))
            .form(&[("passphrase", "correct horse battery")])
            .send()
            .await;
        // A person's browser retries a dropped connection; so does the owner here.
        let res = match res {
            Ok(res) => res,
            Err(e) if started.elapsed() < Duration::from_secs(30) => {
                eprintln!("owner: {e:?}; retrying");
                continue;
            }
            Err(e) => panic!("the owner never got an answer: {e:?}"),
        };
        match res.status() {
            reqwest::StatusCode::SEE_OTHER => break true,
            reqwest::StatusCode::TOO_MANY_REQUESTS => {
                let wait: u64 = res.headers()["retry-after"]
                    .to_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                tokio::time::sleep(Duration::from_secs(wait)).await;
            }
            other => panic!("the owner's login got {other}"),
        }
        if started.elapsed() > Duration::from_secs(30) {
            break false;
        }
    };
    assert!(logged_in, "the owner logged in during the flood");
    let owner_took = started.elapsed();
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for a in attackers {
        let outcome = match a.await.unwrap() {
            Ok(status) => status.to_string(),
            Err(e) => format!("error {e:?}"),
        };
        *outcomes.entry(outcome).or_default() += 1;
    }
    eprintln!("attackers: {outcomes:?}");
    let peak = peak_rss_kib(pid);
    eprintln!(
        "idle peak RSS {idle} KiB, peak under the flood {peak} KiB; owner logged in after {owner_took:?}"
    );
    assert!(
        peak < LOGIN_FLOOD_PEAK_RSS_KIB,
        "peak RSS {peak} KiB (idle {idle} KiB)"
    );
}

fn raw_files_contain(state: &Path, marker: &str) -> Vec<String> {
    ["broker.db", "broker.db-wal", "broker.db-shm"]
        .into_iter()
        .filter(|f| {
            std::fs::read(state.join("broker").join(f))
                .map(|bytes| bytes.windows(marker.len()).any(|w| w == marker.as_bytes()))
                .unwrap_or(false)
        })
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn pruned_prompts_and_answers_are_not_readable_in_the_database_files() {
    let app = spawn_app().await;
    let (prompt, answer) = ("prompt-marker-51c0", "answer-marker-9e2d");
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {"mode": "form",
        "message": format!("Your name? {prompt}"),
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}});
    let id = app.open_ok(request).await;
    let (status, _) = app
        .answer(
            &id,
            json!({"action": "accept", "content": {"name": answer}}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    let (status, _) = app.response(&id, 5).await;
    assert_eq!(status, reqwest::StatusCode::OK);
    assert!(
        !raw_files_contain(&app.state, prompt).is_empty(),
        "the marker is in the files before pruning (the test can see it)"
    );

    let db = mcp_consent::db::Db::open(&app.state.join("broker/broker.db")).unwrap();
    let policy = mcp_consent::config::Retention {
        max_age_days: 30,
        max_terminal: 0,
        interval_secs: 3600,
        audit_max_age_days: 365,
    };
    let report = mcp_consent::jobs::retention::prune_once(
        &db,
        &policy,
        chrono::Utc::now().timestamp_millis(),
    )
    .await
    .unwrap();
    assert_eq!(report.by_count, 1);
    for marker in [prompt, answer] {
        assert_eq!(
            raw_files_contain(&app.state, marker),
            Vec::<String>::new(),
            "{marker}"
        );
    }
}

async fn event_subscribers(app: &TestApp) -> String {
    let text = app.get("/metrics").await.text().await.unwrap();
    text.lines()
        .find(|l| l.starts_with("mcp_consent_event_subscribers "))
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_closed_event_stream_releases_its_subscriber_slot_without_further_events() {
    let app = spawn_app().await;
    let mut res = reqwest::Client::new()
        .get(format!("{}/api/v1/events", app.base))
        .bearer_auth(&app.token)
        .send()
        .await
        .unwrap();
    let first = res.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("connected"));
    assert_eq!(
        event_subscribers(&app).await,
        "mcp_consent_event_subscribers 1"
    );
    drop(res);
    // No event is published; the keep-alive write (every 15 s) finds the client gone.
    let until = Instant::now() + mcp_consent::web::api::EVENTS_KEEP_ALIVE * 3;
    while event_subscribers(&app).await != "mcp_consent_event_subscribers 0" {
        assert!(Instant::now() < until, "the slot was never released");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn the_token_over_tcp_cannot_make_a_login_link_and_so_never_becomes_the_person() {
    let app = spawn_app().await;
    // A script, a CI runner or a `--broker` client elsewhere holds only the token: a login link
    // would let it answer what the token may not (a person-only question, a tool call).
    let res = app.post_json("/api/v1/login-links", &json!({})).await;
    assert_eq!(res.status(), reqwest::StatusCode::FORBIDDEN);
    let body = res.text().await.unwrap();
    assert!(!body.contains("/login?token="), "{body}");
    assert!(body.contains("mcp-consent login"), "{body}");
    let login = run(&app.state, &["login", "--broker", &app.base], &[]).await;
    assert!(!login.status.success());
    assert!(
        !text(&login.stdout).contains("/login?token="),
        "{}",
        text(&login.stdout)
    );
    // Over the owner-only socket, as `mcp-consent login` asks, it is made.
    assert_eq!(
        app.create_login_link().await.status(),
        reqwest::StatusCode::CREATED
    );
}
