//! Retention on the shared database: one run at a time across instances (an advisory lock),
//! `mcp-consent prune` exiting 0 when another run holds it, pending questions never pruned,
//! and a run interrupted between batches finished by the next.

use std::time::Duration;

use diesel::{Connection, PgConnection, QueryableByName, RunQueryDsl};
use mcp_consent::db::prune::RETENTION_LOCK;
use mcp_consent::db::{Db, Target};
use mcp_consent::jobs::retention::{BATCH, prune_stores};

use super::cluster::Cluster;
use super::shared;
use crate::helpers::*;
use crate::retention::{policy, start_up_run_done};

#[derive(QueryableByName)]
struct Locked {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    locked: bool,
}

/// The database name of a test database URL.
fn name(url: &str) -> &str {
    url.rsplit('/').next().unwrap().split('?').next().unwrap()
}

/// `n` questions decided long ago, written straight into the database.
fn old_decided(cluster: &Cluster, db: &str, n: usize) {
    cluster.psql(
        db,
        &format!(
            "INSERT INTO questions (id, kind, server, session, audience, state, protocol_version, \
             era, client_capabilities, rpc_id, request, created_at, expires_at, decided_at) \
             SELECT 'old-' || g, 'form', 's', '1', 'agent', 'declined', '2025-11-25', '2025-11-25', \
             '{{}}', g::text, '{{}}', 1, 2, 1000 + g FROM generate_series(1, {n}) g"
        ),
    );
}

fn count(cluster: &Cluster, db: &str, filter: &str) -> usize {
    cluster
        .psql(
            db,
            &format!("SELECT count(*) FROM questions WHERE {filter}"),
        )
        .parse()
        .unwrap()
}

#[tokio::test]
async fn a_run_holds_the_lock_others_skip_and_prune_says_so() {
    let cluster = Cluster::shared();
    let url = cluster.database();
    let db = name(&url).to_owned();
    let app = spawn_with(shared(&url)).await;
    start_up_run_done(&app).await;
    let pending = app.open_ok(form_request(1)).await;

    // Another run holds the lock: this one skips, and so does the command, exiting 0.
    let mut holder = PgConnection::establish(&url).unwrap();
    let locked = diesel::sql_query(format!(
        "SELECT pg_try_advisory_lock({RETENTION_LOCK}) AS locked"
    ))
    .get_result::<Locked>(&mut holder)
    .unwrap()
    .locked;
    assert!(locked, "the retention lock is free after the start-up run");
    old_decided(cluster, &db, 10);
    let queue = Db::open_shared(&Target::new(&url, None).unwrap()).unwrap();
    let local = Db::open(&app.state.join("broker/broker.db")).unwrap();
    let now = 1_900_000_000_000;
    let skipped = prune_stores(&queue, &local, &policy(1, 1000), now, |_| {})
        .await
        .unwrap();
    assert!(skipped.held_elsewhere);
    assert_eq!(count(cluster, &db, "id LIKE 'old-%'"), 10);
    let tmp = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-consent"))
        .args(["prune", "--state-dir"])
        .arg(tmp.path().join("state"))
        .env_remove("MCP_CONSENT_CONFIG")
        .env("MCP_CONSENT_DATABASE_URL", &url)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("holds the shared database's retention lock"),
        "{stdout}"
    );
    assert_eq!(count(cluster, &db, "id LIKE 'old-%'"), 10);

    // Released: the next run prunes every old decided question, never the pending one.
    drop(holder);
    let report = prune_stores(&queue, &local, &policy(1, 1000), now, |_| {})
        .await
        .unwrap();
    assert!(!report.held_elsewhere);
    assert_eq!(report.by_age, 10);
    assert_eq!(count(cluster, &db, "true"), 1);
    assert_eq!(app.question(&pending).await["state"], "pending");
}

#[tokio::test]
async fn a_run_stopped_between_batches_is_finished_by_the_next() {
    let cluster = Cluster::shared();
    let url = cluster.database();
    let db = name(&url).to_owned();
    let app = spawn_with(shared(&url)).await;
    start_up_run_done(&app).await;
    let total = usize::try_from(BATCH).unwrap() * 2 + 10;
    old_decided(cluster, &db, total);
    let queue = Db::open_shared(&Target::new(&url, None).unwrap()).unwrap();
    let local = Db::open(&app.state.join("broker/broker.db")).unwrap();
    let now = 1_900_000_000_000;

    // The first run stops (its instance goes away) after its first batch.
    let (first_batch, mut batched) = tokio::sync::mpsc::unbounded_channel();
    let run = {
        let (queue, local) = (queue.clone(), local.clone());
        tokio::spawn(async move {
            prune_stores(&queue, &local, &policy(1, 1000), now, move |b| {
                let _ = first_batch.send(b.rows);
                panic!("the instance goes away after its first batch");
            })
            .await
        })
    };
    let rows = tokio::time::timeout(Duration::from_secs(20), batched.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rows, usize::try_from(BATCH).unwrap());
    assert!(run.await.is_err(), "the run stopped");
    let left = count(cluster, &db, "id LIKE 'old-%'");
    assert_eq!(left, total - rows);

    // The lock went with the stopped run's connection; the next run finishes the work.
    let finished = eventually(Duration::from_secs(40), || async {
        let r = prune_stores(&queue, &local, &policy(1, 1000), now, |_| {})
            .await
            .unwrap();
        (!r.held_elsewhere).then_some(r)
    })
    .await
    .expect("the next run takes the lock");
    assert_eq!(finished.by_age, left);
    assert_eq!(count(cluster, &db, "true"), 0);
}
