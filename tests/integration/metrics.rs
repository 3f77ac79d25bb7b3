//! `/metrics`: every outcome counted, the pending gauge back to zero, valid exposition format
//! (checked with `promtool check metrics`), no request content in any label.

use std::io::Write;
use std::process::{Command, Stdio};

use diesel::RunQueryDsl;
use mcp_consent::config::Config;
use mcp_consent::db::Db;
use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(series)
                .and_then(|rest| rest.strip_prefix(' '))
        })
        .unwrap_or_else(|| panic!("no series {series} in:\n{text}"))
        .trim()
        .parse()
        .unwrap()
}

async fn scrape(app: &TestApp) -> String {
    let res = app
        .client
        .get(format!("{}/metrics", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    res.text().await.unwrap()
}

#[tokio::test]
async fn every_outcome_is_counted_and_the_pending_gauge_returns_to_zero() {
    let app = spawn_with(Config {
        max_request_bytes: 4096,
        ..Config::default()
    })
    .await;
    // Open: two sampling, three forms (one secret → human), one URL.
    let accepted = app.open_ok(sampling_request(1, "MARKER-in-prompt")).await;
    let declined = app.open_ok(sampling_request(2, "x")).await;
    let cancelled = app.open_ok(form_request(3)).await;
    let withdrawn = app.open_ok(form_request(4)).await;
    let expired = app.open_ok(form_request(5)).await;
    let secret = json!({"jsonrpc": "2.0", "id": 6, "method": "elicitation/create", "params": {"message": "key",
        "requestedSchema": {"type": "object", "properties": {"apiKey": {"type": "string"}}}}});
    let human = app.open_ok(secret).await;
    let url = json!({"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": {"mode": "url",
        "elicitationId": "e7", "url": "https://example.org/x", "message": "open"}});
    let url_q = app.open_ok(url).await;

    let before = scrape(&app).await;
    assert_eq!(
        value(
            &before,
            "mcp_consent_questions_pending{audience=\"agent\",kind=\"sampling\"}"
        ),
        2.0
    );
    assert_eq!(
        value(
            &before,
            "mcp_consent_questions_pending{audience=\"agent\",kind=\"form\"}"
        ),
        3.0
    );
    assert_eq!(
        value(
            &before,
            "mcp_consent_questions_pending{audience=\"human\",kind=\"form\"}"
        ),
        1.0
    );
    assert_eq!(
        value(
            &before,
            "mcp_consent_questions_pending{audience=\"human\",kind=\"url\"}"
        ),
        1.0
    );

    // Refusals: an invalid request, a capability violation, a bad scheme, too large, an invalid answer.
    app.open(json!({"jsonrpc": "2.0", "id": 8, "method": "sampling/createMessage", "params": {"messages": []}}), full_caps(), "2025-11-25").await;
    app.open(json!({"jsonrpc": "2.0", "id": 9, "method": "elicitation/create", "params": {"mode": "url", "elicitationId": "e9", "url": "https://a.example", "message": "m"}}), json!({"elicitation": {}}), "2025-11-25").await;
    app.open(json!({"jsonrpc": "2.0", "id": 10, "method": "elicitation/create", "params": {"mode": "url", "elicitationId": "e10", "url": "javascript:alert(1)", "message": "m"}}), full_caps(), "2025-11-25").await;
    app.open(
        sampling_request(11, &"y".repeat(5000)),
        full_caps(),
        "2025-11-25",
    )
    .await;
    assert_eq!(
        app.answer(
            &accepted,
            json!({"action": "accept", "result": {"content": {"type": "text", "text": "no role"}}})
        )
        .await
        .0,
        StatusCode::UNPROCESSABLE_ENTITY
    );

    // Outcomes.
    let result =
        json!({"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"});
    app.answer(&accepted, json!({"action": "accept", "result": result}))
        .await;
    app.answer(&declined, json!({"action": "decline"})).await;
    app.answer(&cancelled, json!({"action": "cancel"})).await;
    app.post_json(&format!("/api/v1/requests/{withdrawn}/cancel"), &json!({}))
        .await;
    let browser = app.login().await;
    browser
        .get(format!("{}/questions/{url_q}/open", app.base))
        .send()
        .await
        .unwrap();
    app.post_json("/api/v1/elicitations/e7/complete", &json!({}))
        .await;
    let res = app.html(&browser, &format!("/questions/{human}")).await;
    let csrf = csrf_of(&res);
    browser
        .post(format!("{}/questions/{human}/answer", app.base))
        .form(&[("csrf", csrf.as_str()), ("action", "decline")])
        .send()
        .await
        .unwrap();
    // Expire one question by moving its deadline into the past (no sleeping on a timer).
    let db = Db::open(&app.state.join("broker/broker.db")).unwrap();
    let id = expired.clone();
    db.write(move |conn| {
        diesel::sql_query("UPDATE questions SET expires_at = 0 WHERE id = ?")
            .bind::<diesel::sql_types::Text, _>(&id)
            .execute(conn)?;
        Ok(())
    })
    .await
    .unwrap();
    assert_eq!(
        app.response(&expired, 5).await.1["response"]["error"]["code"],
        -32603
    );

    let after = scrape(&app).await;
    for (series, want) in [
        ("mcp_consent_questions_opened_total{kind=\"sampling\"}", 2.0),
        ("mcp_consent_questions_opened_total{kind=\"form\"}", 4.0),
        ("mcp_consent_questions_opened_total{kind=\"url\"}", 1.0),
        (
            "mcp_consent_questions_closed_total{kind=\"sampling\",outcome=\"accepted\"}",
            1.0,
        ),
        (
            "mcp_consent_questions_closed_total{kind=\"sampling\",outcome=\"declined\"}",
            1.0,
        ),
        (
            "mcp_consent_questions_closed_total{kind=\"form\",outcome=\"cancelled\"}",
            1.0,
        ),
        (
            "mcp_consent_questions_closed_total{kind=\"form\",outcome=\"withdrawn\"}",
            1.0,
        ),
        (
            "mcp_consent_questions_closed_total{kind=\"form\",outcome=\"expired\"}",
            1.0,
        ),
        (
            "mcp_consent_questions_closed_total{kind=\"form\",outcome=\"declined\"}",
            1.0,
        ),
        (
            "mcp_consent_questions_closed_total{kind=\"url\",outcome=\"accepted\"}",
            1.0,
        ),
        (
            "mcp_consent_questions_closed_total{kind=\"url\",outcome=\"completed\"}",
            1.0,
        ),
        (
            "mcp_consent_rejections_total{kind=\"sampling\",reason=\"invalid_request\"}",
            1.0,
        ),
        (
            "mcp_consent_rejections_total{kind=\"url\",reason=\"capability\"}",
            1.0,
        ),
        (
            "mcp_consent_rejections_total{kind=\"url\",reason=\"scheme_not_allowed\"}",
            1.0,
        ),
        (
            "mcp_consent_rejections_total{kind=\"unknown\",reason=\"too_large\"}",
            1.0,
        ),
        (
            "mcp_consent_rejections_total{kind=\"sampling\",reason=\"invalid_answer\"}",
            1.0,
        ),
        (
            "mcp_consent_rejections_total{kind=\"sampling\",reason=\"user_declined\"}",
            1.0,
        ),
        (
            "mcp_consent_rejections_total{kind=\"form\",reason=\"user_cancelled\"}",
            1.0,
        ),
        (
            "mcp_consent_rejections_total{kind=\"form\",reason=\"user_declined\"}",
            1.0,
        ),
        (
            "mcp_consent_decision_duration_seconds_count{kind=\"sampling\"}",
            2.0,
        ),
        (
            "mcp_consent_decision_duration_seconds_count{kind=\"url\"}",
            1.0,
        ),
        ("mcp_consent_build_info{version=\"0.1.0\"}", 1.0),
    ] {
        assert_eq!(value(&after, series), want, "{series}");
    }
    for kind in ["sampling", "form", "url"] {
        for audience in ["human", "agent"] {
            let series =
                format!("mcp_consent_questions_pending{{audience=\"{audience}\",kind=\"{kind}\"}}");
            assert_eq!(value(&after, &series), 0.0, "{series}");
        }
    }
    assert!(!after.contains("MARKER"), "no request content in metrics");
    assert!(
        !after.contains("test-server"),
        "the server name is not a label"
    );

    // The exposition is valid Prometheus text.
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian package prometheus) is installed");
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(after.as_bytes())
        .unwrap();
    let out = promtool.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn a_configured_token_is_required_for_metrics() {
    let tmp = tempfile::tempdir().unwrap();
    let token_file = tmp.path().join("metrics-token");
    std::fs::write(&token_file, "scrape-secret\n").unwrap();
    owner_only(&token_file);
    let app = spawn_with(Config {
        metrics_token_file: Some(token_file),
        ..Config::default()
    })
    .await;
    let url = format!("{}/metrics", app.base);
    assert_eq!(
        app.client.get(&url).send().await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );
    let wrong = app
        .client
        .get(&url)
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let ok = app
        .client
        .get(&url)
        .bearer_auth("scrape-secret")
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
}
