//! Every write goes through the store's one writer: a sign-in's and the sampling review's
//! writes that arrive while a prune runs are done after the batch under way, not after the
//! whole prune (on a reader connection they slept in SQLite's busy handler while the batches
//! took the lock back to back).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Waker};

use diesel::{Connection, RunQueryDsl, SqliteConnection};
use futures_util::future::{MaybeDone, maybe_done};
use mcp_consent::auth::{Auth, Lifetime};
use mcp_consent::broker::{Broker, BrokerSettings};
use mcp_consent::clock::SystemClock;
use mcp_consent::db::{Db, DbError};
use mcp_consent::domain::Actor;
use mcp_consent::jobs::retention::{BATCH, prune_with};
use mcp_consent::metrics::Metrics;
use mcp_consent::review::Reviewer;

use crate::helpers::*;
use crate::retention::{Count, copy_question, decided, policy};

/// Batches of the prune: long enough that "after the whole prune" and "after the batch under
/// way" differ.
const BATCHES: i64 = 8;

/// Work started up to its first wait, to be awaited to the end with [`finish`].
type Started<F> = Pin<Box<MaybeDone<F>>>;

/// `work` run up to its first wait: a store write is sent when its `Db::write` (or `Db::run`)
/// is called, so by then the first write of `work` is on its way.
fn started<F: Future>(work: F) -> Started<F> {
    let mut work = Box::pin(maybe_done(work));
    let _ = work.as_mut().poll(&mut Context::from_waker(Waker::noop()));
    work
}

/// The output of [`started`] work, awaiting what is left of it.
async fn finish<F: Future>(mut work: Started<F>) -> F::Output {
    work.as_mut().await;
    work.as_mut().take_output().expect("finished once")
}

/// Queues on the writer a write that starts `work` while it holds the write lock, as a prune
/// batch does while it runs; the queued write hands `work` back.
fn start_while_locked<F>(
    db: &Db,
    work: F,
) -> impl Future<Output = Result<Started<F>, DbError>> + Send + use<F>
where
    F: Future + Send + 'static,
    F::Output: Send,
{
    let runtime = tokio::runtime::Handle::current();
    db.write(move |c| {
        // `work` may need the runtime (`Db::run` hands its job to the blocking pool).
        let _runtime = runtime.enter();
        Ok(c.immediate_transaction(|_| Ok::<_, diesel::result::Error>(started(work)))?)
    })
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

/// Adds [`BATCHES`] batches of decided questions and prunes them all; after the first batch
/// `queue` is called. Returns whether `written` held after each batch (read before `queue`,
/// so the first entry is from before the writes).
async fn prune_queueing(
    app: &TestApp,
    db: &Db,
    conn: &mut SqliteConnection,
    written: impl Fn(&mut SqliteConnection) -> bool + Send + Sync,
    mut queue: impl FnMut() + Send,
) -> Vec<bool> {
    let template = decided(app, 1).await;
    copy_question(db, &template, (BATCHES - 1) * BATCH + 1).await;
    let mut after_batches = Vec::new();
    let report = prune_with(
        db,
        &policy(30, 0),
        chrono::Utc::now().timestamp_millis(),
        |_| {
            // The batch is committed, and so is every write queued before it.
            after_batches.push(written(conn));
            if after_batches.len() == 1 {
                queue();
            }
        },
    )
    .await
    .unwrap();
    assert_eq!(report.by_count, ((BATCHES - 1) * BATCH + 2) as usize);
    after_batches
}

/// Asserts that a write started during the second batch was done after it or, if it was
/// queued only once the third was, after that one: not after the whole prune.
fn assert_written_after_one_batch(after_batches: &[bool]) {
    assert_eq!(after_batches.len(), BATCHES as usize, "{after_batches:?}");
    let first = after_batches.iter().position(|w| *w);
    assert!(
        matches!(first, Some(1 | 2)) && after_batches[2..].iter().all(|w| *w),
        "written after these batches: {after_batches:?}"
    );
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

    // While a batch runs, a login link is taken and a session created.
    let (mut take, mut create) = (None, None);
    let after_batches = prune_queueing(
        &app,
        &db,
        &mut conn,
        |c| rows(c, "login_links") == links - 1 && rows(c, "web_sessions") == sessions + 1,
        || {
            let (taker, link) = (auth.clone(), link.clone());
            take = Some(start_while_locked(&db, async move {
                taker.take_login_link(&link).await
            }));
            let creator = auth.clone();
            create = Some(start_while_locked(&db, async move {
                creator
                    .create_session(Lifetime::Day, "Firefox / Linux".to_owned())
                    .await
            }));
        },
    )
    .await;

    assert_written_after_one_batch(&after_batches);
    assert!(finish(take.unwrap().await.unwrap()).await.unwrap());
    let (secret, _) = finish(create.unwrap().await.unwrap()).await.unwrap();
    assert!(auth.session(&secret).await.unwrap().is_some());
}

#[tokio::test]
async fn a_review_rule_during_a_prune_is_written_after_one_batch_not_after_the_whole_prune() {
    let app = spawn_app().await;
    let (db, mut conn) = store(&app);
    let settings = BrokerSettings {
        question_timeout: std::time::Duration::from_secs(900),
        max_pending_per_server: 10,
        max_stored_bytes_per_server: u64::MAX,
        max_stored_bytes_per_door: u64::MAX,
        forms_person_only: false,
    };
    let broker = Broker::new(db.clone(), settings, Metrics::new().unwrap());
    let reviewer = Reviewer::new(broker, db.clone(), None);

    // While a batch runs, an auto-approve rule is made; during the next prune it is revoked.
    let mut create = None;
    let after_batches = prune_queueing(
        &app,
        &db,
        &mut conn,
        |c| rows(c, "auto_approve_rules") == 1,
        || {
            let reviewer = reviewer.clone();
            create = Some(start_while_locked(&db, async move {
                reviewer
                    .create_rule("everything", "request", Actor::Human, "trusted", None)
                    .await
            }));
        },
    )
    .await;
    assert_written_after_one_batch(&after_batches);
    let rule = finish(create.unwrap().await.unwrap()).await.unwrap();

    let mut revoke = None;
    let after_batches = prune_queueing(
        &app,
        &db,
        &mut conn,
        |c| {
            let revoked =
                "SELECT count(*) AS n FROM auto_approve_rules WHERE revoked_at IS NOT NULL";
            diesel::sql_query(revoked).get_result::<Count>(c).unwrap().n == 1
        },
        || {
            let (reviewer, id) = (reviewer.clone(), rule.id.clone());
            revoke = Some(start_while_locked(&db, async move {
                reviewer.revoke_rule(&id, Actor::Human).await
            }));
        },
    )
    .await;
    assert_written_after_one_batch(&after_batches);
    assert!(finish(revoke.unwrap().await.unwrap()).await.unwrap());
}
