//! The shared queue on a real PostgreSQL: several instances, each with its own state
//! directory, token and port, on one database. Each test has a database of its own on the
//! suite's cluster ([`cluster::Cluster::shared`]); the fault tests ([`faults`]) run their own
//! cluster, since they stop it.

pub mod cluster;
mod faults;
mod retention;

use std::time::{Duration, Instant};

use mcp_consent::config::Config;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use cluster::Cluster;

/// A config pointing at `url`.
pub fn shared(url: &str) -> Config {
    Config {
        database_url: Some(url.to_owned()),
        ..Config::default()
    }
}

/// `n` instances on one fresh database of the shared cluster.
async fn instances(n: usize) -> (String, Vec<TestApp>) {
    let url = Cluster::shared().database();
    let mut apps = Vec::new();
    for _ in 0..n {
        apps.push(spawn_with(shared(&url)).await);
    }
    (url, apps)
}

/// A form question opened on one instance is listed, shown and answered on another, and the
/// long-poll waiting on the first gets the answer once.
#[tokio::test]
async fn a_question_opened_on_one_instance_is_answered_on_another_and_delivered_once() {
    let (_url, apps) = instances(2).await;
    let (a, b) = (&apps[0], &apps[1]);
    let id = a.open_ok(form_request(1)).await;
    let listed: Value = b
        .get("/api/v1/questions?state=pending")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["questions"][0]["id"], id.as_str(), "{listed}");
    assert_eq!(b.question(&id).await["state"], "pending");

    let waiting = {
        let (base, token, client) = (a.base.clone(), a.token.clone(), a.client.clone());
        let id = id.clone();
        tokio::spawn(async move {
            client
                .get(format!("{base}/api/v1/requests/{id}/response?wait=20"))
                .bearer_auth(token)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        })
    };
    // The long-poll on `a` is waiting before `b` answers (its question is watched).
    tokio::time::sleep(Duration::from_millis(200)).await;
    let answered_at = Instant::now();
    let (status, body) = b
        .answer(&id, json!({"action": "accept", "content": {"name": "Ann"}}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let delivered = waiting.await.unwrap();
    assert!(
        answered_at.elapsed() < Duration::from_secs(2),
        "delivered across instances in {:?}",
        answered_at.elapsed()
    );
    assert_eq!(
        delivered["response"]["result"]["content"]["name"], "Ann",
        "{delivered}"
    );
    // Asked again on either instance: the same one response, never a second.
    for app in [a, b] {
        let (status, again) = app.response(&id, 0).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(again["response"], delivered["response"]);
    }
}

/// Answers racing on three instances: exactly one wins, every other gets 409, and every
/// instance shows the winner's answer.
#[tokio::test]
async fn racing_answers_on_three_instances_one_wins_the_others_get_409() {
    let (_url, apps) = instances(3).await;
    for round in 0..5 {
        let id = apps[0].open_ok(form_request(100 + round)).await;
        let mut racing = Vec::new();
        for (i, app) in apps.iter().enumerate() {
            for j in 0..3 {
                let (base, token, client, id) = (
                    app.base.clone(),
                    app.token.clone(),
                    app.client.clone(),
                    id.clone(),
                );
                let name = format!("n{i}{j}");
                racing.push(tokio::spawn(async move {
                    let res = client
                        .post(format!("{base}/api/v1/questions/{id}/answer"))
                        .bearer_auth(token)
                        .json(&json!({"action": "accept", "content": {"name": name}}))
                        .send()
                        .await
                        .unwrap();
                    (res.status(), name)
                }));
            }
        }
        let mut winners = Vec::new();
        for r in racing {
            let (status, name) = r.await.unwrap();
            match status {
                StatusCode::OK => winners.push(name),
                StatusCode::CONFLICT => {}
                other => panic!("unexpected {other}"),
            }
        }
        assert_eq!(winners.len(), 1, "{winners:?}");
        for app in &apps {
            let (_, r) = app.response(&id, 0).await;
            assert_eq!(
                r["response"]["result"]["content"]["name"],
                winners[0].as_str()
            );
        }
    }
}

/// An answer and a withdrawal racing on two instances end in one outcome, seen the same on
/// both.
#[tokio::test]
async fn answer_against_withdrawal_across_instances_has_one_outcome() {
    let (_url, apps) = instances(2).await;
    for round in 0..5 {
        let id = apps[0].open_ok(form_request(200 + round)).await;
        let answer = apps[1].answer(&id, json!({"action": "accept", "content": {"name": "Bo"}}));
        let (cancel, empty) = (format!("/api/v1/requests/{id}/cancel"), json!({}));
        let withdraw = apps[0].post_json(&cancel, &empty);
        let ((answered, _), withdrawn) = tokio::join!(answer, withdraw);
        let states: Vec<Value> = states_on(&apps, &id).await;
        assert_eq!(states[0], states[1]);
        let state = states[0].as_str().unwrap();
        match state {
            "accepted" => assert_eq!(answered, StatusCode::OK),
            "withdrawn" => assert_eq!(answered, StatusCode::CONFLICT),
            other => panic!("state {other}, withdraw said {}", withdrawn.status()),
        }
    }
}

async fn states_on(apps: &[TestApp], id: &str) -> Vec<Value> {
    let mut states = Vec::new();
    for app in apps {
        states.push(app.question(id).await["state"].clone());
    }
    states
}

/// `/api/v1/events` on one instance carries the changes made on another within a second,
/// still summary-only.
#[tokio::test]
async fn events_carry_every_instances_changes_within_a_second() {
    let (_url, apps) = instances(2).await;
    let mut stream = apps[1].get("/api/v1/events").await;
    let opened_at = Instant::now();
    let id = apps[0].open_ok(form_request(7)).await;
    let mut seen = String::new();
    let found = tokio::time::timeout(Duration::from_secs(1), async {
        while !seen.contains(&id) {
            let chunk = stream.chunk().await.unwrap().unwrap();
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    assert!(
        found.is_ok(),
        "no event for {id} on the other instance after {:?}: {seen}",
        opened_at.elapsed()
    );
    assert!(
        !seen.contains("Profile"),
        "events stay summary-only: {seen}"
    );
}

/// `max_pending_per_server` counts the shared queue: opens spread over two instances stop at
/// the limit together.
#[tokio::test]
async fn the_per_server_limit_counts_over_the_shared_queue() {
    let url = Cluster::shared().database();
    let config = Config {
        max_pending_per_server: 3,
        ..shared(&url)
    };
    let a = spawn_with(config.clone()).await;
    let b = spawn_with(config).await;
    let mut racing = Vec::new();
    for i in 0..8 {
        let app = if i % 2 == 0 { &a } else { &b };
        racing.push(app.open(form_request(300 + i), full_caps(), "2025-11-25"));
    }
    let mut created = 0;
    for (status, body) in futures_util::future::join_all(racing).await {
        match status {
            StatusCode::CREATED => created += 1,
            _ => assert!(
                body.to_string().contains("too many open questions"),
                "{body}"
            ),
        }
    }
    assert_eq!(created, 3);
}

/// Migrations: instances started together on a fresh database all come up (one migrates, the
/// others wait); a database migrated by a newer binary is refused with a clear message and is
/// left as it was.
#[tokio::test]
async fn instances_migrate_once_together_and_a_newer_schema_is_refused() {
    let url = Cluster::shared().database();
    let starts = (0..3).map(|_| spawn_with(shared(&url)));
    let apps = futures_util::future::join_all(starts).await;
    assert_eq!(apps.len(), 3);
    let id = apps[2].open_ok(form_request(1)).await;
    assert_eq!(apps[0].question(&id).await["state"], "pending");

    let db = url.rsplit('/').next().unwrap().split('?').next().unwrap();
    Cluster::shared().psql(
        db,
        "INSERT INTO __diesel_schema_migrations (version) VALUES ('29991231000000')",
    );
    let tmp = tempfile::tempdir().unwrap();
    let refused = mcp_consent::app::Application::build(
        &shared(&url),
        tmp.path().join("state"),
        "127.0.0.1:0",
    )
    .await;
    let message = error_chain(&refused.err().expect("a newer schema is refused"));
    assert!(
        message.contains("newer than this mcp-consent") && message.contains("29991231000000"),
        "{message}"
    );
    assert_eq!(
        Cluster::shared().psql(db, "SELECT count(*) FROM questions"),
        "1",
        "nothing was written"
    );
}

/// `schema.rs` describes the PostgreSQL tables too: every table the PostgreSQL migrations make
/// is printed in diesel's layout exactly as `schema.rs` has it.
#[tokio::test]
async fn schema_rs_is_what_the_postgres_migrations_make() {
    let url = Cluster::shared().database();
    drop(spawn_with(shared(&url)).await);
    let printed = mcp_consent::db::schema_check::print_pg_tables(&url).unwrap();
    let schema = include_str!("../../../server/db/schema.rs");
    for block in &printed {
        assert!(
            schema.contains(block.as_str()),
            "server/db/schema.rs drifted from migrations_pg/:\n{block}"
        );
    }
    let tables: Vec<&str> = printed
        .iter()
        .map(|b| b.split_whitespace().nth(2).unwrap())
        .collect();
    assert_eq!(
        tables,
        [
            "approvals",
            "audit_log",
            "auto_approve_rules",
            "questions",
            "sampling_revisions",
            "sampling_runs",
            "server_controls",
            "tool_grants"
        ]
    );
}

/// The password comes from `database_password_file` (trailing newline dropped) when the URL
/// has none; a wrong one fails the start with a message naming the database's host and port.
#[tokio::test]
async fn the_password_file_is_used_for_a_url_without_password() {
    let cluster = Cluster::shared();
    let with_password = cluster.database();
    let db = with_password
        .rsplit('/')
        .next()
        .unwrap()
        .split('?')
        .next()
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let pw = tmp.path().join("db-password");
    std::fs::write(&pw, format!("{}\n", cluster::PASSWORD)).unwrap();
    std::fs::set_permissions(&pw, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let config = Config {
        database_url: Some(cluster.url_without_password(db)),
        database_password_file: Some(pw.clone()),
        ..Config::default()
    };
    let app = spawn_with(config).await;
    app.open_ok(form_request(1)).await;
    assert_eq!(cluster.psql(db, "SELECT count(*) FROM questions"), "1");

    std::fs::write(&pw, "wrong\n").unwrap();
    let config = Config {
        database_url: Some(cluster.url_without_password(db)),
        database_password_file: Some(pw),
        ..Config::default()
    };
    let refused =
        mcp_consent::app::Application::build(&config, tmp.path().join("s2"), "127.0.0.1:0").await;
    let message = error_chain(&refused.err().expect("a wrong password is refused"));
    assert!(
        message.contains(&format!("127.0.0.1:{}", cluster.port)),
        "{message}"
    );
}
