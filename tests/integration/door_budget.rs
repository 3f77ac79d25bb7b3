//! What one door (the owner-only socket, the API token over TCP) may add to the store in an
//! hour: `max_stored_bytes_per_door`, whatever server names the caller picks, for questions
//! and tool-decision reports alike; and a proxy over it still passes and counts every call.

use std::sync::Arc;
use std::time::Duration;

use mcp_consent::clock::ManualClock;
use mcp_consent::config::Config;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::tool_calls::{call, calls_received, host_line, started};

/// A report of `n` allowed calls of `server`'s tool `t`.
fn report(server: &str, n: usize) -> Value {
    let decision = json!({"tool": "t", "decision": "allowed", "rule": "tools.default",
        "argumentsDigest": "0".repeat(64), "at": chrono::Utc::now().to_rfc3339()});
    json!({"server": server, "allowed": n, "denied": 0, "decisions": vec![decision; n]})
}

/// A form question of `server` whose message is `size` bytes long.
fn big_question(server: &str, id: i64, size: usize) -> Value {
    let mut request = form_request(id);
    request["params"]["message"] = json!("x".repeat(size));
    json!({"server": server, "session": "s", "protocolVersion": "2025-11-25",
        "clientCapabilities": full_caps(), "request": request})
}

async fn metric(app: &TestApp, name: &str) -> f64 {
    let text = app.get("/metrics").await.text().await.unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

async fn audited(app: &TestApp, action: &str) -> usize {
    let log: Value = app
        .get("/api/v1/audit?limit=1000")
        .await
        .json()
        .await
        .unwrap();
    log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == action)
        .count()
}

#[tokio::test]
async fn a_token_holder_cannot_fill_the_store_under_names_of_its_choosing() {
    let clock = ManualClock::at(chrono::Utc::now());
    let app = spawn_with_parts(
        Config {
            max_stored_bytes_per_door: 30_000,
            ..Config::default()
        },
        Arc::new(clock.clone()),
        None,
    )
    .await;
    // Over TCP, each report under a new server name: about 210 bytes a decision, so two
    // reports of 50 fit and the third is refused whole, with a time to come back.
    for name in ["r1", "r2"] {
        let res = app
            .post_json("/api/v1/tools/decisions", &report(name, 50))
            .await;
        assert_eq!(res.status(), StatusCode::OK);
    }
    let res = app
        .post_json("/api/v1/tools/decisions", &report("r3", 50))
        .await;
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry: u64 = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=3600).contains(&retry), "{retry}");
    let body: Value = res.json().await.unwrap();
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("max_stored_bytes_per_door"),
        "{body}"
    );
    // Nothing of the refused report was taken, not even its counts.
    assert_eq!(audited(&app, "tool_allowed").await, 100);
    assert_eq!(
        metric(&app, r#"mcp_consent_tool_calls_total{decision="allowed"}"#).await,
        100.0
    );
    // Counts alone store nothing and are always taken.
    let mut counts = report("r3", 0);
    counts["allowed"] = json!(50);
    counts["unaudited"] = json!(50);
    let res = app.post_json("/api/v1/tools/decisions", &counts).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        metric(&app, "mcp_consent_tool_decisions_unaudited_total").await,
        50.0
    );

    // A question under yet another name is refused as well, naming the limit.
    let (status, body) = {
        let res = app
            .post_json("/api/v1/requests", &big_question("q1", 1, 10_000))
            .await;
        (res.status(), res.json::<Value>().await.unwrap())
    };
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["response"]["error"]["code"], -32603, "{body}");
    let message = body["response"]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("limit 30000 bytes") && message.contains("max_stored_bytes_per_door"),
        "{message}"
    );
    let listed: Value = app
        .get("/api/v1/questions?state=pending")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["questions"].as_array().unwrap().len(), 0, "{listed}");

    // The owner-only socket is another door: the same question and report get through.
    let res = app
        .post_json_over_socket("/api/v1/requests", &big_question("q1", 1, 10_000))
        .await;
    assert_eq!(res.status(), StatusCode::CREATED);
    let res = app
        .post_json_over_socket("/api/v1/tools/decisions", &report("r3", 50))
        .await;
    assert_eq!(res.status(), StatusCode::OK);

    // An hour later the TCP door takes reports again.
    clock.advance(chrono::TimeDelta::minutes(61));
    let res = app
        .post_json("/api/v1/tools/decisions", &report("r4", 50))
        .await;
    assert_eq!(res.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_proxy_over_its_doors_budget_reports_counts_and_holds_no_call_back() {
    // Room for a few decisions of this proxy's (about 230 bytes each), not for twenty.
    let app = spawn_with(Config {
        max_stored_bytes_per_door: 1_000,
        ..Config::default()
    })
    .await;
    let mut proxy = started(&app, 23).await;
    for id in 10..12 {
        proxy.send(&call(id, "read_file", "/a")).await;
        assert_eq!(host_line(&mut proxy).await["id"], id);
    }
    let two = eventually(Duration::from_secs(10), || async {
        (audited(&app, "tool_allowed").await == 2).then_some(())
    })
    .await;
    assert!(two.is_some(), "the first two calls are audited one by one");

    // Twenty more in one go: the report is refused as over the door's budget.
    for id in 20..40 {
        proxy.send(&call(id, "read_file", "/b")).await;
    }
    for _ in 20..40 {
        assert_eq!(
            host_line(&mut proxy).await["result"]["isError"],
            Value::Null
        );
    }
    proxy.send(&call(40, "read_file", "/c")).await;
    assert_eq!(host_line(&mut proxy).await["id"], 40);
    assert_eq!(
        calls_received(&proxy).len(),
        23,
        "every call reached the server"
    );
    // Every call is counted; those past the budget as unaudited too, never audited.
    let counted = eventually(Duration::from_secs(15), || async {
        let allowed = metric(&app, r#"mcp_consent_tool_calls_total{decision="allowed"}"#).await;
        let unaudited = metric(&app, "mcp_consent_tool_decisions_unaudited_total").await;
        (allowed == 23.0 && unaudited == 21.0).then_some(())
    })
    .await;
    assert!(
        counted.is_some(),
        "{}",
        app.get("/metrics").await.text().await.unwrap()
    );
    assert_eq!(audited(&app, "tool_allowed").await, 2);
}

#[tokio::test]
async fn answers_revisions_and_capabilities_count_against_the_door_too() {
    let app = spawn_with(Config {
        max_stored_bytes_per_door: 30_000,
        ..Config::default()
    })
    .await;
    // What an answer carries is charged before anything else is looked at.
    let big = json!({"action": "accept", "content": {"note": "x".repeat(20_000)}});
    let path = "/api/v1/questions/01a236b7-7a1d-7748-910f-fa0e6632f2a6/answer";
    assert_eq!(
        app.post_json(path, &big).await.status(),
        StatusCode::NOT_FOUND
    );
    let res = app.post_json(path, &big).await;
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(res.headers().contains_key("retry-after"));
    // Capabilities past 64 KiB are refused before anything is stored.
    let mut open = big_question("s", 1, 10);
    open["clientCapabilities"]["padding"] = json!("x".repeat(70_000));
    let res = app.post_json_over_socket("/api/v1/requests", &open).await;
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["response"]["error"]["code"], -32602, "{body}");
    // Counts that would wrap a counter are refused.
    let mut wrap = report("r", 0);
    wrap["denied"] = json!(u64::MAX);
    let res = app
        .post_json_over_socket("/api/v1/tools/decisions", &wrap)
        .await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_revision_is_charged_the_request_it_stores_and_a_control_its_name() {
    let app = spawn_with(Config {
        max_stored_bytes_per_door: 25_000,
        ..Config::default()
    })
    .await;
    // A question of 10 KB opened on this machine; revisions over TCP send a few bytes each,
    // but each would store the whole request again.
    let res = app
        .post_json_over_socket("/api/v1/requests", &big_question("s", 1, 10_000))
        .await;
    let id = res.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let edit = json!({"baseRevision": 1, "systemPrompt": "x"});
    let path = format!("/api/v1/questions/{id}/revisions");
    for _ in 0..2 {
        let res = app.post_json(&path, &edit).await;
        assert_ne!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    }
    let res = app.post_json(&path, &edit).await;
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    // A server control names at most 256 bytes.
    let res = app
        .post_json_over_socket(
            "/api/v1/servers/control",
            &json!({"server": "s".repeat(300), "change": "block"}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_request_id_longer_than_256_bytes_opens_nothing() {
    let app = spawn_app().await;
    let mut open = big_question("s", 1, 10);
    open["request"]["id"] = json!("i".repeat(300));
    let res = app.post_json_over_socket("/api/v1/requests", &open).await;
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["response"]["error"]["code"], -32600, "{body}");
}

/// A revision stores the params of the revision it is based on, which an earlier edit may
/// have made large: each later edit, however small, is charged that, through the revisions
/// endpoint and through an approval that carries an edit alike.
#[tokio::test]
async fn each_revision_is_charged_the_revision_it_is_based_on() {
    let app = spawn_with(Config {
        models: vec![crate::model_review::model(
            "dead",
            "http://127.0.0.1:1/v1/",
            false,
            1.0,
        )],
        max_stored_bytes_per_door: 70_000,
        ..Config::default()
    })
    .await;
    let res = app
        .post_json_over_socket(
            "/api/v1/requests",
            &json!({"server": "s", "session": "s", "protocolVersion": "2025-11-25",
                "clientCapabilities": full_caps(), "request": sampling_request(1, "hi")}),
        )
        .await;
    let id = res.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/api/v1/questions/{id}/revisions");
    // One edit makes the prompt 20 KB (charged its body)…
    let big = json!({"baseRevision": 1, "texts": [{"message": 0, "block": 0, "text": "x".repeat(20_000)}]});
    let res = app.post_json(&path, &big).await;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "{}",
        res.text().await.unwrap()
    );
    // …and every small edit on top stores those 20 KB again, so the door is full after two.
    let small = |base: i64| json!({"baseRevision": base, "systemPrompt": format!("v{base}")});
    let res = app.post_json(&path, &small(2)).await;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "{}",
        res.text().await.unwrap()
    );
    let approval = json!({"approvalId": format!("{id}:request:3"), "decision": "approve",
        "model": "nosuch", "edit": small(3)});
    let res = app
        .post_json(&format!("/api/v1/questions/{id}/approvals"), &approval)
        .await;
    assert_ne!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    let res = app.post_json(&path, &small(4)).await;
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
}

/// A server control is charged as the rows it stores (the control and its audit entry), not
/// only its name.
#[tokio::test]
async fn server_controls_are_charged_their_rows() {
    let app = spawn_with(Config {
        max_stored_bytes_per_door: 20_000,
        ..Config::default()
    })
    .await;
    let block = |n: usize| json!({"server": format!("n{n:03}"), "change": "block"});
    for n in 0..70 {
        let res = app.post_json("/api/v1/servers/control", &block(n)).await;
        assert_eq!(res.status(), StatusCode::OK, "control {n}");
    }
    let mut refused = None;
    for n in 70..90 {
        let res = app.post_json("/api/v1/servers/control", &block(n)).await;
        if res.status() == StatusCode::TOO_MANY_REQUESTS {
            refused = Some(n);
            break;
        }
    }
    assert!(
        refused.is_some(),
        "four-byte names were charged as if rows cost nothing"
    );
}

/// The token over TCP may hold at most 100 servers under a pause or block: it cannot bury the
/// person's controls (or a block of its own on a real server) under decoys, and the queue
/// lists every control in force, saying which ones the token set.
#[tokio::test]
async fn the_token_holds_at_most_a_hundred_controls_and_the_queue_lists_every_one() {
    let app = spawn_app().await;
    let change = |server: &str, change: &str| json!({"server": server, "change": change});
    let browser = app.login().await;
    let csrf = csrf_of(&app.html(&browser, "/").await);
    let person = |server: &'static str, what: &'static str| {
        let (browser, csrf, base) = (browser.clone(), csrf.clone(), app.base.clone());
        async move {
            let res = browser
                .post(format!("{base}/servers/control"))
                .form(&[
                    ("csrf", csrf.as_str()),
                    ("server", server),
                    ("change", what),
                ])
                .send()
                .await
                .unwrap();
            assert!(res.status().is_success() || res.status().is_redirection());
        }
    };
    person("a-person-muted", "mute").await;
    for n in 0..100 {
        let res = app
            .post_json(
                "/api/v1/servers/control",
                &change(&format!("n{n:03}"), "block"),
            )
            .await;
        assert_eq!(res.status(), StatusCode::OK, "control {n}");
    }
    let res = app
        .post_json("/api/v1/servers/control", &change("github", "block"))
        .await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    let body: Value = res.json().await.unwrap();
    let message = body["error"].as_str().unwrap();
    assert!(
        message.contains("already has 100 servers paused or blocked"),
        "{message}"
    );
    // Nothing changed for the refused one; one the token holds already may be set again, and
    // the person's own and the socket's are not counted.
    let listed: Value = app
        .get("/api/v1/servers/controls")
        .await
        .json()
        .await
        .unwrap();
    let servers = listed["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 101, "{listed}");
    assert!(!servers.iter().any(|c| c["server"] == "github"));
    let again = app
        .post_json("/api/v1/servers/control", &change("n000", "pause"))
        .await;
    assert_eq!(again.status(), StatusCode::OK);
    let muted = servers
        .iter()
        .find(|c| c["server"] == "a-person-muted")
        .unwrap();
    assert_eq!(muted["setVia"], "browser", "{muted}");
    assert_eq!(servers[1]["setVia"], "token", "{listed}");
    let socket = app
        .post_json_over_socket("/api/v1/servers/control", &change("local-tool", "block"))
        .await;
    assert_eq!(socket.status(), StatusCode::OK);

    // The queue lists every control in force, and says which the token set.
    let page = app.html(&browser, "/").await;
    for name in ["a-person-muted", "local-tool", "n000", "n099"] {
        assert!(page.contains(name), "{name} missing from the queue");
    }
    assert_eq!(page.matches("set by the API token over TCP").count(), 100);

    // Once the person lifts one, the token has room for one more.
    person("n050", "unblock").await;
    let res = app
        .post_json("/api/v1/servers/control", &change("github", "block"))
        .await;
    assert_eq!(res.status(), StatusCode::OK);
}

/// The token's questions under a server's name never crowd out the ones that server's proxy
/// asks through the socket: `max_pending_per_server` is counted per door.
#[tokio::test]
async fn questions_under_a_servers_name_over_tcp_leave_its_proxys_room() {
    let app = spawn_with(Config {
        max_pending_per_server: 3,
        ..Config::default()
    })
    .await;
    for id in 1..=3 {
        let res = app
            .post_json("/api/v1/requests", &big_question("github", id, 10))
            .await;
        assert_eq!(res.status(), StatusCode::CREATED);
    }
    let res = app
        .post_json("/api/v1/requests", &big_question("github", 4, 10))
        .await;
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["response"]["error"]["code"], -32603, "{body}");
    let res = app
        .post_json_over_socket("/api/v1/requests", &big_question("github", 5, 10))
        .await;
    assert_eq!(res.status(), StatusCode::CREATED);
}

/// A model run stores the model's whole reply: it is counted against the door that approved
/// or regenerated it, so a script looping "regenerate" fills its door, not the disk.
#[tokio::test]
async fn model_runs_are_counted_against_the_door_that_started_them() {
    let fake = crate::model_review::FakeModel::start().await;
    let app = spawn_with(Config {
        models: vec![crate::model_review::model(
            "fast-mini",
            &fake.base,
            false,
            0.1,
        )],
        max_stored_bytes_per_door: 8_000,
        ..Config::default()
    })
    .await;
    let id = app.open_ok(crate::model_review::hinted(1, &["mini"])).await;
    let mut approval = format!("{id}:request:1");
    let mut decision = "approve";
    let mut refused_after = None;
    for run in 0..40 {
        let res = app
            .post_json(
                &format!("/api/v1/questions/{id}/approvals"),
                &json!({"approvalId": approval, "decision": decision}),
            )
            .await;
        if res.status() == StatusCode::TOO_MANY_REQUESTS {
            refused_after = Some(run);
            break;
        }
        assert_eq!(
            res.status(),
            StatusCode::OK,
            "{}",
            res.text().await.unwrap()
        );
        let q = crate::model_review::phase_becomes(&app, &id, "response_review").await;
        approval = q["review"]["responseApprovalId"]
            .as_str()
            .unwrap()
            .to_owned();
        decision = "regenerate";
    }
    let runs = fake.calls().len();
    let refused_after = refused_after.expect("the door never filled");
    // Each run's reply (and the decision's body) is counted, not only the decision.
    assert!(
        refused_after < 40 && runs == refused_after,
        "{runs} runs, refused after {refused_after}"
    );
}

/// A server's controls say which door set what refuses it: a script's pause of a server the
/// person blocked leaves the block the person's, and the person's mute of a server the script
/// blocked leaves the block the script's (still counted against its hundred).
#[tokio::test]
async fn a_control_keeps_the_door_that_set_what_refuses_the_server() {
    let app = spawn_app().await;
    let browser = app.login().await;
    let csrf = csrf_of(&app.html(&browser, "/").await);
    let person = |server: &'static str, what: &'static str| {
        let (browser, csrf, base) = (browser.clone(), csrf.clone(), app.base.clone());
        async move {
            browser
                .post(format!("{base}/servers/control"))
                .form(&[
                    ("csrf", csrf.as_str()),
                    ("server", server),
                    ("change", what),
                ])
                .send()
                .await
                .unwrap();
        }
    };
    let token = |server: &'static str, what: &'static str| {
        let app = &app;
        async move {
            let body = json!({"server": server, "change": what});
            app.post_json("/api/v1/servers/control", &body).await
        }
    };
    person("persons", "block").await;
    assert_eq!(token("persons", "pause").await.status(), StatusCode::OK);
    assert_eq!(token("scripts", "block").await.status(), StatusCode::OK);
    person("scripts", "mute").await;
    let listed: Value = app
        .get("/api/v1/servers/controls")
        .await
        .json()
        .await
        .unwrap();
    let via = |name: &str| {
        listed["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["server"] == name)
            .map(|c| c["setVia"].clone())
    };
    assert_eq!(via("persons"), Some(json!("browser")), "{listed}");
    assert_eq!(via("scripts"), Some(json!("token")), "{listed}");
}
