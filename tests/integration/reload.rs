//! Reloading the config while serving: SIGHUP to `mcp-consent serve` puts a changed config in
//! force for new questions without dropping the pending ones; an invalid file is refused and
//! the old config stays; keys that need a restart are named and keep their value.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use mcp_consent::config::Config;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{ChildStderr, Command};

use crate::helpers::*;

/// A harmless form (no secret look): person-only only under `forms_person_only`.
fn nickname(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": {
        "message": "Nickname?",
        "requestedSchema": {"type": "object", "properties": {"nick": {"type": "string"}}}}})
}

/// Reads log lines until one contains `what`.
async fn log_line(lines: &mut Lines<BufReader<ChildStderr>>, what: &str) -> String {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let line = lines.next_line().await.unwrap().expect("the log goes on");
            if line.contains(what) {
                return line;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no log line with {what:?}"))
}

fn hangup(child: &tokio::process::Child) {
    let pid = i32::try_from(child.id().unwrap()).unwrap();
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGHUP) }, 0);
}

/// Opens `request` from server "s" over the API; returns its id.
async fn open(base: &str, token: &str, request: Value) -> String {
    let res: Value = http_client()
        .post(format!("{base}/api/v1/requests"))
        .bearer_auth(token)
        .json(&json!({"server": "s", "protocolVersion": "2025-11-25",
            "clientCapabilities": full_caps(), "request": request}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    res["id"].as_str().unwrap().to_owned()
}

/// What the API says about question `id`: its state, or the status when it is refused.
async fn seen_by_api(base: &str, token: &str, id: &str) -> Result<String, StatusCode> {
    let res = http_client()
        .get(format!("{base}/api/v1/questions/{id}"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    match res.status() {
        StatusCode::OK => Ok(res.json::<Value>().await.unwrap()["state"]
            .as_str()
            .unwrap()
            .to_owned()),
        other => Err(other),
    }
}

fn write_config(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn sighup_reloads_the_config_keeps_questions_and_refuses_an_invalid_file() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let config = tmp.path().join("config.toml");
    write_config(&config, "forms_person_only = false\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-consent"))
        .args(["serve", "--listen", "127.0.0.1:0", "--state-dir"])
        .arg(&state)
        .arg("--config")
        .arg(&config)
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let base = listening_on(&mut child).await;
    let mut log = BufReader::new(child.stderr.take().unwrap()).lines();
    log_line(&mut log, "mcp-consent started").await;
    let token = std::fs::read_to_string(state.join("api-token"))
        .unwrap()
        .trim()
        .to_owned();

    let before = open(&base, &token, nickname(1)).await;
    assert_eq!(
        seen_by_api(&base, &token, &before).await.as_deref(),
        Ok("pending")
    );

    write_config(
        &config,
        "forms_person_only = true\nlisten = \"127.0.0.1:9\"\n",
    );
    hangup(&child);
    let warned = log_line(&mut log, "config reloaded").await;
    assert!(
        warned.contains("listen"),
        "a listen change needs a restart: {warned}"
    );
    let after = open(&base, &token, nickname(2)).await;
    assert_eq!(
        seen_by_api(&base, &token, &after).await,
        Err(StatusCode::FORBIDDEN),
        "forms are person-only now"
    );
    assert_eq!(
        seen_by_api(&base, &token, &before).await.as_deref(),
        Ok("pending"),
        "the question opened before the reload is still open and answerable by the API"
    );

    write_config(&config, "forms_person_only = \"sometimes\"\n");
    hangup(&child);
    log_line(&mut log, "config reload refused").await;
    let third = open(&base, &token, nickname(3)).await;
    assert_eq!(
        seen_by_api(&base, &token, &third).await,
        Err(StatusCode::FORBIDDEN),
        "the old config stays in force"
    );
    let (status, _) = {
        let res = http_client()
            .post(format!("{base}/api/v1/questions/{before}/answer"))
            .bearer_auth(&token)
            .json(&json!({"action": "accept", "content": {"nick": "ok"}}))
            .send()
            .await
            .unwrap();
        (res.status(), ())
    };
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_reload_changes_models_and_refuses_invalid_ones() {
    let app = spawn_app().await;
    let pending = app.open_ok(form_request(1)).await;
    let with_model: Config = Config::parse(
        r#"
        [[models]]
        id = "local-mini"
        provider = "openai"
        base_url = "http://127.0.0.1:9/v1/"
        "#,
    )
    .unwrap();
    assert!(app.reloader.apply(with_model.clone()).unwrap().is_empty());
    let browser = app.login().await;
    let sampling = app.open_ok(sampling_request(2, "hello")).await;
    let page = app.html(&browser, &format!("/questions/{sampling}")).await;
    assert!(page.contains("local-mini"), "the new model routes: {page}");

    let mut invalid = with_model;
    invalid.models[0].speed = 7.0;
    assert!(app.reloader.apply(invalid).is_err());
    let sampling = app.open_ok(sampling_request(3, "again")).await;
    let page = app.html(&browser, &format!("/questions/{sampling}")).await;
    assert!(page.contains("local-mini"), "the old models stay: {page}");
    assert_eq!(app.question(&pending).await["state"], "pending");
}
