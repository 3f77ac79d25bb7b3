//! Every write goes through the store's one writer: a sign-in's and the sampling review's
//! writes queued while a prune runs are done after the batch under way, not after the whole
//! prune (the writes that once slept in SQLite's busy handler on a reader connection).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Waker};

use diesel::{Connection, RunQueryDsl, SqliteConnection};
use futures_util::future::{MaybeDone, maybe_done};
use mcp_consent::auth::{Auth, Lifetime};
use mcp_consent::broker::{Broker, BrokerSettings};
use mcp_consent::clock::SystemClock;
use mcp_consent::db::Db;
use mcp_consent::domain::Actor;
use mcp_consent::jobs::retention::{BATCH, prune_with};
use mcp_consent::metrics::Metrics;
use mcp_consent::review::Reviewer;

use crate::helpers::*;
use crate::retention::{Count, copy_question, decided, policy};

/// `work` run up to its first wait, then handed back to be awaited to the end: a store write
/// is queued on the writer when its `Db::write` is called, so once this returns the write of
/// a call that starts with one waits in the queue.
fn started<F: Future>(work: F) -> Pin<Box<MaybeDone<F>>> {
    let mut work = Box::pin(maybe_done(work));
    let _ = work.as_mut().poll(&mut Context::from_waker(Waker::noop()));
    work
}

/// The output of a [`started`] call, awaiting what is left of it.
async fn finish<F: Future>(mut work: Pin<Box<MaybeDone<F>>>) -> F::Output {
    work.as_mut().await;
    work.as_mut().take_output().expect("finished once")
}

/// Rows in `table`, read on a connection of its own (outside the store's queue).
fn rows(conn: &mut SqliteConnection, table: &str) -> i64 {
    diesel::sql_query(format!("SELECT count(*) AS n FROM {table}"))
        .get_result::<Count>(conn)
        .unwrap()
        .n
}

/// The store of `app`, and a connection to count rows with.
fn store(app: &TestApp) -> (Db, SqliteConnection) {
    let file = app.state.join("broker/broker.db");
    let db = Db::open(&file).unwrap();
    let conn = SqliteConnection::establish(file.to_str().unwrap()).unwrap();
    (db, conn)
}

/// Adds `3 * BATCH + 1` decided questions, prunes them all (four batches) and calls `queue`
/// after the first batch. Returns what `seen` read after each batch (before `queue`, so the
/// first entry is from before the writes).
async fn prune_queueing<T>(
    app: &TestApp,
    db: &Db,
    conn: &mut SqliteConnection,
    seen: impl Fn(&mut SqliteConnection) -> T + Send + Sync,
    mut queue: impl FnMut() + Send,
) -> Vec<T>
where
    T: Send,
{
    let template = decided(app, 1).await;
    copy_question(db, &template, 3 * BATCH).await;
    let mut after_batches = Vec::new();
    let report = prune_with(
        db,
        &policy(30, 0),
        chrono::Utc::now().timestamp_millis(),
        |_| {
            // The batch is committed, and so is every write queued before it.
            after_batches.push(seen(conn));
            if after_batches.len() == 1 {
                queue();
            }
        },
    )
    .await
    .unwrap();
    assert_eq!(report.by_count, 3 * BATCH as usize + 1);
    after_batches
}

#[tokio::test]
async fn a_sign_in_during_a_prune_is_written_after_one_batch_not_after_the_whole_prune() {
    let app = spawn_app().await;
    let (db, mut conn) = store(&app);
    let auth = Auth::new(db.clone(), Arc::new(SystemClock));
    let link = auth.create_login_link().await.unwrap();
    let (links, sessions) = (
        rows(&mut conn, "login_links"),
        rows(&mut conn, "web_sessions"),
    );

    // A login link is taken and a session created while the prune runs.
    let (mut take, mut create) = (None, None);
    let seen = prune_queueing(
        &app,
        &db,
        &mut conn,
        |c| {
            let taken = links - rows(c, "login_links");
            (taken, rows(c, "web_sessions") - sessions)
        },
        || {
            take = Some(started(auth.take_login_link(&link)));
            create = Some(started(
                auth.create_session(Lifetime::Day, "Firefox / Linux".to_owned()),
            ));
        },
    )
    .await;

    assert_eq!(
        seen,
        [(0, 0), (1, 1), (1, 1), (1, 1)],
        "(links taken, sessions made) after each batch: both written by the second batch"
    );
    assert!(finish(take.unwrap()).await.unwrap());
    let (secret, _) = finish(create.unwrap()).await.unwrap();
    assert!(auth.session(&secret).await.unwrap().is_some());
}

#[tokio::test]
async fn a_review_rule_during_a_prune_is_written_after_one_batch_not_after_the_whole_prune() {
    let app = spawn_app().await;
    let (db, mut conn) = store(&app);
    let settings = BrokerSettings {
        question_timeout: std::time::Duration::from_secs(900),
        max_pending_per_server: 10,
        forms_person_only: false,
    };
    let broker = Broker::new(db.clone(), settings, Metrics::new().unwrap());
    let reviewer = Reviewer::new(broker, db.clone(), None);

    // An auto-approve rule is made, then revoked, while the prune runs.
    let mut create = None;
    let seen = prune_queueing(
        &app,
        &db,
        &mut conn,
        |c| rows(c, "auto_approve_rules"),
        || {
            create = Some(started(reviewer.create_rule(
                "everything",
                "request",
                Actor::Human,
                "trusted",
                None,
            )));
        },
    )
    .await;
    assert_eq!(
        seen,
        [0, 1, 1, 1],
        "rules after each batch: written by the second batch"
    );
    let rule = finish(create.unwrap()).await.unwrap();
    let mut revoke = None;

    let seen = prune_queueing(
        &app,
        &db,
        &mut conn,
        |c| {
            let revoked =
                "SELECT count(*) AS n FROM auto_approve_rules WHERE revoked_at IS NOT NULL";
            diesel::sql_query(revoked).get_result::<Count>(c).unwrap().n
        },
        || revoke = Some(started(reviewer.revoke_rule(&rule.id))),
    )
    .await;
    assert_eq!(seen, [0, 1, 1, 1], "revoked by the second batch");
    assert!(finish(revoke.unwrap()).await.unwrap());
}
