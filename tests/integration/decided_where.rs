//! Where each decision came through — the browser, the CLI over its socket, the API token over
//! TCP — as the audit records it and the history shows it; and the per-server controls (pause,
//! block, mute notices) over the JSON API, audited like the queue's buttons.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::queue_work::audit;

fn entry_of<'a>(entries: &'a [Value], question: &str) -> &'a Value {
    entries
        .iter()
        .find(|e| e["questionId"] == question)
        .unwrap_or_else(|| panic!("no entry of {question}: {entries:?}"))
}

#[tokio::test]
async fn history_names_the_door_each_answer_came_through() {
    let app = spawn_app().await;
    let by_cli = app.open_ok(form_request(1)).await;
    let by_token = app.open_ok(form_request(2)).await;
    let by_browser = app.open_ok(form_request(3)).await;

    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-consent"))
        .env_remove("MCP_CONSENT_BROKER")
        .args(["questions", "--state-dir"])
        .arg(&app.state)
        .args(["decline", &by_cli])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (status, _) = app.answer(&by_token, json!({"action": "decline"})).await;
    assert_eq!(status, StatusCode::OK);
    let browser = app.login().await;
    let csrf = csrf_of(&app.html(&browser, "/").await);
    let res = browser
        .post(format!("{}/questions/decline", app.base))
        .form(&[
            ("csrf", csrf.as_str()),
            ("id", by_browser.as_str()),
            ("confirmed", "1"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);

    let entries = audit(&app, "").await;
    assert_eq!(entry_of(&entries, &by_cli)["via"], "cli");
    assert_eq!(entry_of(&entries, &by_cli)["actor"], "agent");
    assert_eq!(entry_of(&entries, &by_token)["via"], "token");
    assert_eq!(entry_of(&entries, &by_browser)["via"], "browser");
    assert_eq!(entry_of(&entries, &by_browser)["actor"], "human");

    let history = app.html(&browser, "/history").await;
    let row = |id: &str| {
        history
            .split(&format!("data-question-id=\"{id}\""))
            .nth(1)
            .and_then(|rest| rest.split("</tr>").next())
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        row(&by_cli).contains("the CLI (mcp-consent questions)"),
        "{}",
        row(&by_cli)
    );
    assert!(
        row(&by_token).contains("with the API token, over TCP"),
        "{}",
        row(&by_token)
    );
    assert!(
        row(&by_browser).contains("you, in the browser"),
        "{}",
        row(&by_browser)
    );
    let page = app.html(&browser, "/audit").await;
    assert!(
        page.contains("CLI, local socket") && page.contains("API token"),
        "the audit page names the doors: {page}"
    );
}

#[tokio::test]
async fn server_controls_work_over_the_api_and_each_change_is_audited() {
    let app = spawn_app().await;
    let res = app
        .post_json(
            "/api/v1/servers/control",
            &json!({"server": "test-server", "change": "pause"}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    let paused: Value = res.json().await.unwrap();
    assert_eq!(paused["server"], "test-server");
    assert!(paused["pausedUntil"].is_string(), "{paused}");
    let (_, body) = app.open(form_request(1), full_caps(), "2025-11-25").await;
    assert_eq!(
        body["response"]["error"]["code"], -32603,
        "a pause made over the API refuses the server's requests: {body}"
    );
    let listed: Value = app
        .get("/api/v1/servers/controls")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["servers"][0]["server"], "test-server", "{listed}");
    assert_eq!(listed["servers"][0]["blocked"], false, "{listed}");

    // Lifting it is the person's: the token is refused, the browser session may.
    let res = app
        .post_json(
            "/api/v1/servers/control",
            &json!({"server": "test-server", "change": "resume"}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    let res = app
        .post_json(
            "/api/v1/servers/control",
            &json!({"server": "test-server", "change": "pauze"}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let browser = app.login().await;
    let csrf = csrf_of(&app.html(&browser, "/").await);
    let res = browser
        .post(format!("{}/api/v1/servers/control", app.base))
        .header("X-CSRF-Token", &csrf)
        .json(&json!({"server": "test-server", "change": "resume"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let resumed: Value = res.json().await.unwrap();
    assert!(resumed["pausedUntil"].is_null(), "{resumed}");
    app.open_ok(form_request(2)).await;
    // The queue's button is audited too.
    let res = browser
        .post(format!("{}/servers/control", app.base))
        .form(&[
            ("csrf", csrf.as_str()),
            ("server", "test-server"),
            ("change", "mute"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);

    let entries = audit(&app, "?server=test-server").await;
    let controls: Vec<(&str, &str, &str)> = entries
        .iter()
        .filter(|e| e["action"].as_str().unwrap().starts_with("server_"))
        .map(|e| {
            (
                e["action"].as_str().unwrap(),
                e["actor"].as_str().unwrap(),
                e["via"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        controls,
        [
            ("server_muted", "human", "browser"),
            ("server_resumed", "human", "browser"),
            ("server_paused", "agent", "token"),
        ],
        "who, what and through which door, newest first; the refused changes left nothing"
    );
    assert!(entries.iter().all(|e| e["at"].is_string()));
    let page = app.html(&browser, "/audit").await;
    assert!(
        page.contains("server paused") && page.contains("notices muted"),
        "{page}"
    );
}
