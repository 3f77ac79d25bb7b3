//! Retention at its edges: age strictly older than the bound, the newest `max_terminal` kept
//! (ties by id), pending questions never pruned.

use diesel::RunQueryDsl;
use diesel::sql_types::{BigInt, Text};
use mcp_consent::config::{Config, Retention};
use mcp_consent::db::Db;
use mcp_consent::jobs::retention::{BATCH, Pruned, prune_once, prune_with};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::helpers::*;

const DAY: i64 = 86_400_000;

async fn decide_at(db: &Db, id: &str, decided_at: i64) {
    let id = id.to_owned();
    db.write(move |conn| {
        diesel::sql_query("UPDATE questions SET decided_at = ? WHERE id = ?")
            .bind::<BigInt, _>(decided_at)
            .bind::<Text, _>(&id)
            .execute(conn)?;
        Ok(())
    })
    .await
    .unwrap();
}

/// A declined question (terminal) and its id.
pub(crate) async fn decided(app: &TestApp, n: i64) -> String {
    let id = app.open_ok(form_request(n)).await;
    app.answer(&id, json!({"action": "decline"})).await;
    id
}

async fn exists(app: &TestApp, id: &str) -> bool {
    app.get(&format!("/api/v1/questions/{id}")).await.status() == reqwest::StatusCode::OK
}

pub(crate) fn policy(max_age_days: u64, max_terminal: u64) -> Retention {
    Retention {
        max_age_days,
        max_terminal,
        interval_secs: 3600,
        audit_max_age_days: 365,
    }
}

#[tokio::test]
async fn age_bound_deletes_only_strictly_older_terminal_questions() {
    let app = spawn_app().await;
    let db = Db::open(&app.state.join("broker/broker.db")).unwrap();
    let now = 1_900_000_000_000;
    let at_bound = decided(&app, 1).await;
    let past_bound = decided(&app, 2).await;
    let pending = app.open_ok(form_request(3)).await;
    decide_at(&db, &at_bound, now - 30 * DAY).await;
    decide_at(&db, &past_bound, now - 30 * DAY - 1).await;

    let report = prune_once(&db, &policy(30, 1000), now).await.unwrap();
    assert_eq!((report.by_age, report.by_count), (1, 0));
    assert!(exists(&app, &at_bound).await);
    assert!(!exists(&app, &past_bound).await);
    assert!(exists(&app, &pending).await);

    // Far in the future everything terminal is old; the pending question stays.
    prune_once(&db, &policy(30, 1000), now + 365 * DAY)
        .await
        .unwrap();
    assert!(!exists(&app, &at_bound).await);
    assert!(exists(&app, &pending).await);
}

#[tokio::test]
async fn count_bound_keeps_the_newest_by_decision_time_then_id() {
    let app = spawn_app().await;
    let db = Db::open(&app.state.join("broker/broker.db")).unwrap();
    let now = 1_900_000_000_000;
    let mut ids = Vec::new();
    for n in 0..5 {
        ids.push(decided(&app, n).await);
    }
    let pending = app.open_ok(form_request(99)).await;
    // ids[0] oldest ... ids[4] newest; ids[2] and ids[3] tie and the larger id wins.
    decide_at(&db, &ids[0], now - 5000).await;
    decide_at(&db, &ids[1], now - 4000).await;
    decide_at(&db, &ids[2], now - 3000).await;
    decide_at(&db, &ids[3], now - 3000).await;
    decide_at(&db, &ids[4], now - 1000).await;

    // Exactly at the bound: nothing goes.
    assert_eq!(
        prune_once(&db, &policy(30, 5), now)
            .await
            .unwrap()
            .questions(),
        0
    );

    let report = prune_once(&db, &policy(30, 2), now).await.unwrap();
    assert_eq!((report.by_age, report.by_count), (0, 3));
    let (older_tie, newer_tie) = if ids[2] < ids[3] {
        (&ids[2], &ids[3])
    } else {
        (&ids[3], &ids[2])
    };
    assert!(exists(&app, &ids[4]).await);
    assert!(exists(&app, newer_tie).await);
    assert!(!exists(&app, older_tie).await);
    assert!(!exists(&app, &ids[0]).await && !exists(&app, &ids[1]).await);
    assert!(
        exists(&app, &pending).await,
        "pending questions are never pruned"
    );

    let report = prune_once(&db, &policy(30, 0), now).await.unwrap();
    assert_eq!(report.by_count, 2);
    assert!(exists(&app, &pending).await);
}

/// Adds `count` copies of question `template` (decided as it was) with ids `copy-<n>`.
pub(crate) async fn copy_question(db: &Db, template: &str, count: i64) {
    let template = template.to_owned();
    db.write(move |conn| {
        conn.immediate_transaction(|c| {
            diesel::sql_query("CREATE TEMP TABLE copy AS SELECT * FROM questions WHERE id = ?")
                .bind::<Text, _>(&template)
                .execute(c)?;
            for n in 0..count {
                diesel::sql_query("UPDATE copy SET id = ?")
                    .bind::<Text, _>(format!("copy-{n}"))
                    .execute(c)?;
                diesel::sql_query("INSERT INTO questions SELECT * FROM copy").execute(c)?;
            }
            diesel::sql_query("DROP TABLE copy").execute(c)?;
            Ok::<_, diesel::result::Error>(())
        })?;
        Ok(())
    })
    .await
    .unwrap();
}

#[derive(diesel::QueryableByName)]
pub(crate) struct Count {
    #[diesel(sql_type = BigInt)]
    pub(crate) n: i64,
}

#[tokio::test]
async fn a_write_during_a_prune_runs_after_one_batch_not_after_the_whole_prune() {
    let app = spawn_app().await;
    let db = Db::open(&app.state.join("broker/broker.db")).unwrap();
    let template = decided(&app, 1).await;
    let total = 3 * BATCH + 1;
    copy_question(&db, &template, total - 1).await;

    // After the first batch, a write is queued (as a request's would be) that counts the
    // decided questions left; the prune goes on.
    let events = Arc::new(Mutex::new(Vec::new()));
    let mut write = None;
    let report = prune_with(
        &db,
        &policy(30, 0),
        chrono::Utc::now().timestamp_millis(),
        |b| {
            assert_eq!(b.what, Pruned::ByCount);
            events.lock().unwrap().push(format!("batch of {}", b.rows));
            if write.is_none() {
                let events = events.clone();
                write = Some(db.write(move |conn| {
                    let left = diesel::sql_query("SELECT count(*) AS n FROM questions")
                        .get_result::<Count>(conn)?
                        .n;
                    events.lock().unwrap().push("write".to_owned());
                    Ok(left)
                }));
            }
        },
    )
    .await
    .unwrap();
    let left_when_written = write.unwrap().await.unwrap();

    assert_eq!(report.by_count, total as usize);
    assert_eq!(
        *events.lock().unwrap(),
        [
            format!("batch of {BATCH}"),
            "write".to_owned(),
            format!("batch of {BATCH}"),
            format!("batch of {BATCH}"),
            "batch of 1".to_owned()
        ],
        "the write ran right after the batch it was queued behind"
    );
    assert_eq!(left_when_written, total - BATCH);
    assert!(!exists(&app, &template).await);
}

/// `mcp-consent prune` on `state` with `config`; its output once it succeeded.
fn prune_command(state: &std::path::Path, config: &std::path::Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-consent"))
        .arg("prune")
        .arg("--state-dir")
        .arg(state)
        .arg("--config")
        .arg(config)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn the_prune_command_reports_what_it_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let app = spawn_on(Config::default(), &state).await;
    decided(&app, 1).await;
    let config = tmp.path().join("config.toml");
    std::fs::write(&config, "[retention]\nmax_terminal = 0\n").unwrap();
    let text = prune_command(&state, &config);
    assert!(
        text.contains("pruned 1 questions") && text.contains("beyond the newest 0"),
        "{text}"
    );
}

/// The service's `mcp_consent_retention_runs_total`.
pub(crate) async fn retention_runs(app: &TestApp) -> u64 {
    app.html(&app.client, "/metrics")
        .await
        .lines()
        .find_map(|l| l.strip_prefix("mcp_consent_retention_runs_total "))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Waits until `app`'s own start-up retention run has been counted (so it holds no lock and
/// takes no rows written after); its next run is an hour away (`interval_secs`' default).
/// Returns the runs counted.
pub(crate) async fn start_up_run_done(app: &TestApp) -> u64 {
    eventually(Duration::from_secs(20), || async {
        let runs = retention_runs(app).await;
        (runs >= 1).then_some(runs)
    })
    .await
    .expect("the instance's start-up retention run ends")
}

/// With the service running, `prune` hands its bounds to the service over the socket and the
/// service runs the batches on its own writer (its `/metrics` counts the run); with none, the
/// command prunes the store itself.
#[tokio::test]
async fn the_prune_command_runs_through_the_running_service() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let app = spawn_on(Config::default(), &state).await;
    let start_up = start_up_run_done(&app).await;
    decided(&app, 1).await;
    decided(&app, 2).await;
    let config = tmp.path().join("config.toml");
    std::fs::write(&config, "[retention]\nmax_terminal = 1\n").unwrap();
    let text = prune_command(&state, &config);
    assert!(
        text.contains("pruned 1 questions") && text.contains("through the running service"),
        "{text}"
    );
    assert_eq!(retention_runs(&app).await, start_up + 1);

    let alone = tmp.path().join("alone");
    let text = prune_command(&alone, &config);
    assert!(
        text.contains("pruned 0 questions") && text.contains("the service is not running"),
        "{text}"
    );
}

/// A reader still on a snapshot from before the prune when the run ends: the WAL cannot be
/// truncated yet, and the run does not make the writer wait for the reader (a write queued then
/// goes through while the reader holds on, even with a busy timeout of an hour on the writer);
/// the run tries again, and once the reader is done the WAL is truncated to nothing.
#[tokio::test]
async fn a_reader_in_the_way_of_the_wal_truncation_holds_up_no_write() {
    use diesel::Connection;
    use diesel::connection::SimpleConnection;
    let app = spawn_app().await;
    let path = app.state.join("broker/broker.db");
    let db = Db::open(&path).unwrap();
    db.write(|c| Ok(c.batch_execute("PRAGMA busy_timeout = 3600000;")?))
        .await
        .unwrap();
    let template = decided(&app, 1).await;
    copy_question(&db, &template, BATCH).await;
    let mut reader = diesel::SqliteConnection::establish(path.to_str().unwrap()).unwrap();
    reader
        .batch_execute("BEGIN; SELECT count(*) FROM questions;")
        .unwrap();

    let pruning = {
        let db = db.clone();
        tokio::spawn(async move {
            prune_with(
                &db,
                &policy(30, 0),
                chrono::Utc::now().timestamp_millis(),
                |_| {},
            )
            .await
        })
    };
    let gone = eventually(Duration::from_secs(30), || async {
        let left = db
            .run(|c| {
                Ok(diesel::sql_query("SELECT count(*) AS n FROM questions")
                    .get_result::<Count>(c)?)
            })
            .await
            .unwrap();
        (left.n == 0).then_some(())
    })
    .await;
    assert!(gone.is_some(), "the batches ran");
    let written = tokio::time::timeout(
        Duration::from_secs(60),
        db.write(|c| Ok(mcp_consent::db::models::insert_api_token(c, "probe", 1)?)),
    )
    .await
    .expect("a write waited for the truncation");
    written.unwrap();
    assert!(
        !pruning.is_finished(),
        "the run waits for the reader to truncate"
    );

    reader.batch_execute("COMMIT;").unwrap();
    let report = pruning.await.unwrap().unwrap();
    assert!(report.wal_truncated);
    assert_eq!(report.by_count, BATCH as usize + 1);
    let wal = std::fs::metadata(app.state.join("broker/broker.db-wal")).unwrap();
    assert_eq!(wal.len(), 0, "truncated to nothing");
}
