//! The store's two doors: readers refuse writes (and still checkpoint), the writer writes.

use diesel::connection::SimpleConnection;
use diesel::sql_types::Integer;
use diesel::{QueryableByName, RunQueryDsl};

use super::{Db, DbError, models};

fn open() -> (tempfile::TempDir, Db) {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(&tmp.path().join("broker.db")).unwrap();
    (tmp, db)
}

/// A write sent to a reader fails with [`DbError::ReadOnly`] and changes nothing, through
/// diesel's query builder and through a raw batch alike; the same write on the writer works.
#[tokio::test]
async fn a_write_on_a_reader_fails_and_changes_nothing() {
    let (_tmp, db) = open();
    db.write(|c| Ok(models::insert_api_token(c, "a", 1)?))
        .await
        .unwrap();

    let replaced = db.run(|c| Ok(models::replace_api_tokens(c, "b", 2)?)).await;
    assert!(
        matches!(replaced, Err(DbError::ReadOnly(_))),
        "{replaced:?}"
    );
    let deleted = db
        .run(|c| Ok(c.batch_execute("DELETE FROM api_tokens;")?))
        .await;
    assert!(matches!(deleted, Err(DbError::ReadOnly(_))), "{deleted:?}");
    let digests = db.run(|c| Ok(models::api_token_digests(c)?)).await;
    assert_eq!(digests.unwrap(), ["a"]);

    db.write(|c| Ok(models::replace_api_tokens(c, "b", 2)?))
        .await
        .unwrap();
    let digests = db.run(|c| Ok(models::api_token_digests(c)?)).await;
    assert_eq!(digests.unwrap(), ["b"]);
}

/// `query_only` still lets a reader checkpoint: the background checkpoint and retention's
/// passive one copy the WAL into the database file from a reader.
#[tokio::test]
async fn a_reader_still_checkpoints_the_wal() {
    let (_tmp, db) = open();
    for n in 0..20 {
        db.write(move |c| Ok(models::insert_api_token(c, &format!("t{n}"), n)?))
            .await
            .unwrap();
    }
    let done = db
        .run(|c| Ok(super::prune::passive_checkpoint(c)?))
        .await
        .unwrap();
    assert_eq!(done.busy, 0, "{done:?}");
    assert!(done.log > 0, "the writes are in the WAL: {done:?}");
    assert_eq!(done.checkpointed, done.log, "all of it copied: {done:?}");
}

/// A truncating checkpoint blocked by a reader's older snapshot returns at once, even with a
/// busy timeout of an hour on the writer, and leaves the writer's timeout as it was; once the
/// reader is done, the next attempt empties the WAL.
#[tokio::test]
async fn a_blocked_wal_truncation_returns_at_once_and_succeeds_after_the_reader() {
    use diesel::Connection;
    let (tmp, db) = open();
    db.write(|c| Ok(c.batch_execute("PRAGMA busy_timeout = 3600000;")?))
        .await
        .unwrap();
    db.write(|c| Ok(models::insert_api_token(c, "a", 1)?))
        .await
        .unwrap();
    let path = tmp.path().join("broker.db");
    let mut reader = diesel::SqliteConnection::establish(path.to_str().unwrap()).unwrap();
    reader
        .batch_execute("BEGIN; SELECT count(*) FROM api_tokens;")
        .unwrap();
    db.write(|c| Ok(models::insert_api_token(c, "b", 2)?))
        .await
        .unwrap();

    let blocked = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        db.write(|c| Ok(super::prune::try_truncate_wal(c)?)),
    )
    .await
    .expect("the attempt waited for the reader");
    assert!(
        !blocked.unwrap(),
        "the reader's snapshot still needs the WAL"
    );
    #[derive(QueryableByName)]
    struct Timeout {
        #[diesel(sql_type = Integer)]
        timeout: i32,
    }
    let kept = db
        .write(|c| Ok(diesel::sql_query("PRAGMA busy_timeout").get_result::<Timeout>(c)?))
        .await
        .unwrap();
    assert_eq!(kept.timeout, 3_600_000);

    reader.batch_execute("COMMIT;").unwrap();
    let done = db
        .write(|c| Ok(super::prune::try_truncate_wal(c)?))
        .await
        .unwrap();
    assert!(done);
    let wal = std::fs::metadata(tmp.path().join("broker.db-wal")).unwrap();
    assert_eq!(wal.len(), 0, "truncated to nothing");
}

/// A WAL that grew while a reader held an old snapshot (so no checkpoint could rewind it) is
/// truncated by the background checkpoints once the reader is gone, without a retention run.
#[tokio::test]
async fn a_wal_grown_under_a_reader_is_truncated_by_the_background_checkpoints() {
    use diesel::Connection;
    let (tmp, db) = open();
    db.write(|c| Ok(models::insert_api_token(c, "first", 1)?))
        .await
        .unwrap();
    let path = tmp.path().join("broker.db");
    let mut reader = diesel::SqliteConnection::establish(path.to_str().unwrap()).unwrap();
    reader
        .batch_execute("BEGIN; SELECT count(*) FROM api_tokens;")
        .unwrap();
    let big = "x".repeat(1 << 20);
    for n in 0..70 {
        let row = format!("{n}{big}");
        db.write(move |c| Ok(models::insert_api_token(c, &row, n)?))
            .await
            .unwrap();
    }
    let wal = tmp.path().join("broker.db-wal");
    assert!(std::fs::metadata(&wal).unwrap().len() > super::WAL_TRUNCATE_ABOVE);
    reader.batch_execute("COMMIT;").unwrap();
    drop(reader);
    let mut n = 100;
    let truncated = loop {
        db.write(move |c| Ok(models::insert_api_token(c, &format!("small{n}"), n)?))
            .await
            .unwrap();
        n += 1;
        if std::fs::metadata(&wal).unwrap().len() < super::WAL_TRUNCATE_ABOVE {
            break true;
        }
        if n > 100 + 4 * super::CHECKPOINT_EVERY as i64 {
            break false;
        }
        tokio::task::yield_now().await;
    };
    assert!(truncated, "the WAL was never truncated");
}

/// A pause that ran out leaves no row behind once anything is stored, so however many pauses
/// came and went the table holds only what is in force, and those are what is listed.
#[tokio::test]
async fn controls_that_ran_out_are_swept_and_never_listed() {
    use super::controls::{self, ControlRow};
    use crate::domain::Via;
    let (_tmp, db) = open();
    let pause = |server: String, until: i64| ControlRow {
        server,
        paused_until: Some(until),
        blocked: 0,
        muted: 0,
        updated_at: 0,
        set_via: Some(Via::Token),
    };
    db.write(move |c| {
        for n in 0..50 {
            controls::put(c, &pause(format!("old{n}"), 1_000), 0)?;
        }
        Ok(())
    })
    .await
    .unwrap();
    let listed = db.run(|c| Ok(controls::in_force(c, 500)?)).await.unwrap();
    assert_eq!(listed.len(), 50);
    let counted = db.run(|c| Ok(controls::in_force_through(c, Via::Token, 2_000)?));
    assert_eq!(counted.await.unwrap(), 0, "ran out by then");
    assert!(
        db.run(|c| Ok(controls::in_force(c, 2_000)?))
            .await
            .unwrap()
            .is_empty()
    );

    db.write(move |c| Ok(controls::put(c, &pause("new".into(), 9_000), 2_000)?))
        .await
        .unwrap();
    let rows: Vec<String> = db
        .run(|c| {
            use super::schema::server_controls::dsl::*;
            use diesel::prelude::*;
            Ok(server_controls.select(server).load(c)?)
        })
        .await
        .unwrap();
    assert_eq!(rows, ["new"]);
}
