//! Direct SQLite work for the service rows: filling the service's store with copies of a
//! question it made (so the rows have exactly its shape, whatever its columns), and the SQLite
//! floor the broker's figures are compared with.

use std::path::Path;
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};

#[derive(QueryableByName)]
struct OneText {
    #[diesel(sql_type = Text)]
    v: String,
}

pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn open(path: &Path) -> Result<SqliteConnection> {
    let mut conn = SqliteConnection::establish(&path.to_string_lossy())?;
    conn.batch_execute(
        "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
    )?;
    Ok(conn)
}

/// How the copies differ from their template.
#[derive(Debug, Clone, Copy)]
pub enum Fill {
    /// Pending, expiring a day from now.
    Pending,
    /// Decided (`accepted`) `age_ms` ago.
    Decided { age_ms: i64 },
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The `INSERT … SELECT` that copies question `template` once per row of a CTE `n(i)`, with a
/// fresh time-ordered id (UUIDv7 layout), session `fill` and `rpc_id` `i`.
fn copy_sql(
    conn: &mut SqliteConnection,
    template: &str,
    fill: Fill,
    from: i64,
    to: i64,
) -> Result<String> {
    let columns = diesel::sql_query(
        "SELECT group_concat(name, ',') AS v FROM pragma_table_info('questions')",
    )
    .get_result::<OneText>(conn)?
    .v;
    let now = now_ms();
    let created = match fill {
        Fill::Pending => now,
        Fill::Decided { age_ms } => now - age_ms,
    };
    let exprs: Vec<String> = columns
        .split(',')
        .map(|c| match c {
            "id" => "printf('%s-%s-7%03x-8%03x-%012x', substr(printf('%012x', c_at), 1, 8), \
                     substr(printf('%012x', c_at), 9, 4), abs(random()) % 4096, \
                     abs(random()) % 4096, abs(random()) % 281474976710656)"
                .to_owned(),
            "session" => "'fill'".to_owned(),
            "rpc_id" => "CAST(n.i AS TEXT)".to_owned(),
            "created_at" => "c_at".to_owned(),
            "expires_at" => format!("{}", now + 86_400_000),
            "state" => match fill {
                Fill::Pending => "'pending'".to_owned(),
                Fill::Decided { .. } => "'accepted'".to_owned(),
            },
            "decided_at" => match fill {
                Fill::Pending => "NULL".to_owned(),
                Fill::Decided { .. } => "c_at + 1000".to_owned(),
            },
            other => format!("t.{other}"),
        })
        .collect();
    Ok(format!(
        "WITH RECURSIVE n(i) AS (SELECT {from} UNION ALL SELECT i + 1 FROM n WHERE i < {to}) \
         INSERT INTO questions ({columns}) \
         SELECT {} FROM (SELECT n.i AS i, {created} - ({to} - n.i) AS c_at FROM n) AS n, \
         (SELECT * FROM questions WHERE id = '{template}') AS t",
        exprs.join(", ")
    ))
}

/// Adds copies `from..=to` of question `template` to the store at `db`.
pub fn fill(db: &Path, template: &str, fill: Fill, from: i64, to: i64) -> Result<()> {
    let mut conn = open(db)?;
    let sql = copy_sql(&mut conn, template, fill, from, to)?;
    conn.batch_execute(&format!("BEGIN IMMEDIATE; {sql}; COMMIT;"))?;
    Ok(())
}

/// The SQLite floor: a fresh store with the service's `questions` table and indexes, one
/// question's row copied in as the template.
pub struct Floor {
    conn: SqliteConnection,
    template: String,
    columns: String,
    _dir: tempfile::TempDir,
}

impl Floor {
    pub fn new(service_db: &Path, template: &str) -> Result<Floor> {
        let dir = tempfile::tempdir()?;
        let mut conn = open(&dir.path().join("floor.db"))?;
        let mut src = open(service_db)?;
        let schema = diesel::sql_query(
            "SELECT group_concat(sql, ';') AS v FROM sqlite_master \
             WHERE tbl_name = 'questions' AND sql IS NOT NULL",
        )
        .get_result::<OneText>(&mut src)?
        .v;
        drop(src);
        conn.batch_execute(&schema)?;
        conn.batch_execute(&format!(
            "ATTACH DATABASE '{}' AS src; \
             INSERT INTO questions SELECT * FROM src.questions WHERE id = '{template}'; \
             DETACH DATABASE src;",
            service_db.to_string_lossy().replace('\'', "''")
        ))?;
        let columns = diesel::sql_query(
            "SELECT group_concat(name, ',') AS v FROM pragma_table_info('questions')",
        )
        .get_result::<OneText>(&mut conn)?
        .v;
        Ok(Floor {
            conn,
            template: template.to_owned(),
            columns,
            _dir: dir,
        })
    }

    /// One question's life as three autocommit statements: insert it pending, decide it, read
    /// its response back. Its time.
    pub fn cycle(&mut self, i: i64) -> Result<Duration> {
        let start = Instant::now();
        let id = format!("floor-{i}");
        let exprs: Vec<String> = self
            .columns
            .split(',')
            .map(|c| match c {
                "id" => "?1".to_owned(),
                "rpc_id" => "CAST(?2 AS TEXT)".to_owned(),
                "state" => "'pending'".to_owned(),
                "decided_at" | "response" => "NULL".to_owned(),
                other => other.to_owned(),
            })
            .collect();
        diesel::sql_query(format!(
            "INSERT INTO questions ({}) SELECT {} FROM questions WHERE id = '{}'",
            self.columns,
            exprs.join(", "),
            self.template
        ))
        .bind::<Text, _>(&id)
        .bind::<BigInt, _>(i)
        .execute(&mut self.conn)?;
        diesel::sql_query(
            "UPDATE questions SET state = 'accepted', decided_at = ?1, \
             response = '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}}' \
             WHERE id = ?2 AND state = 'pending'",
        )
        .bind::<BigInt, _>(now_ms())
        .bind::<Text, _>(&id)
        .execute(&mut self.conn)?;
        let read = diesel::sql_query("SELECT response AS v FROM questions WHERE id = ?1")
            .bind::<Text, _>(&id)
            .get_result::<OneText>(&mut self.conn)?;
        std::hint::black_box(read.v);
        Ok(start.elapsed())
    }

    /// The floor of pruning: `count` decided copies deleted by one statement. Its time.
    pub fn prune(&mut self, count: i64) -> Result<Duration> {
        let age_ms = 60 * 86_400_000;
        let sql = copy_sql(
            &mut self.conn,
            &self.template,
            Fill::Decided { age_ms },
            1_000_000,
            1_000_000 + count - 1,
        )?;
        self.conn
            .batch_execute(&format!("BEGIN IMMEDIATE; {sql}; COMMIT;"))?;
        let start = Instant::now();
        diesel::sql_query("DELETE FROM questions WHERE decided_at < ?1")
            .bind::<BigInt, _>(now_ms() - 30 * 86_400_000)
            .execute(&mut self.conn)?;
        Ok(start.elapsed())
    }
}
