//! Keeps `schema.rs` what `diesel print-schema` makes of the migrations: the test migrates a
//! fresh store, prints its schema in diesel's layout from SQLite's own description (table_info
//! and foreign_key_list, which is what diesel reads) and compares it with the file. The
//! PostgreSQL migrations make a part of the same schema (the shared tables): [`print_pg_tables`]
//! prints each of their tables from `information_schema` in the same layout, and an integration
//! test against a real server finds each one in the file.

use diesel::sql_types::{BigInt, Integer, Text};
use diesel::{Connection, PgConnection, QueryableByName, RunQueryDsl, SqliteConnection};

#[derive(QueryableByName)]
struct TableName {
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct ColumnInfo {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text, column_name = "type")]
    sql_type: String,
    #[diesel(sql_type = Integer)]
    notnull: i32,
    #[diesel(sql_type = Integer)]
    pk: i32,
}

#[derive(QueryableByName)]
struct ForeignKey {
    #[diesel(sql_type = Text)]
    table: String,
    #[diesel(sql_type = Text)]
    from: String,
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// diesel's name of an SQLite column type.
fn diesel_type(sql: &str) -> String {
    match sql.to_ascii_uppercase().as_str() {
        "TEXT" => "Text".into(),
        "BIGINT" => "BigInt".into(),
        "INTEGER" => "Integer".into(),
        "DOUBLE" => "Double".into(),
        other => format!("Unknown<{other}>"),
    }
}

/// One `diesel::table!` block as `diesel print-schema` prints it: the table, its key columns,
/// then each column with its diesel type (`Nullable<…>` when it may be null).
fn table_block<'c>(
    table: &str,
    keys: &[&str],
    columns: impl Iterator<Item = (&'c str, String, bool)>,
) -> String {
    let mut out = format!("diesel::table! {{\n    {table} ({}) {{\n", keys.join(", "));
    for (name, ty, nullable) in columns {
        let ty = if nullable {
            format!("Nullable<{ty}>")
        } else {
            ty
        };
        out.push_str(&format!("        {name} -> {ty},\n"));
    }
    out.push_str("    }\n}\n");
    out
}

/// The schema of the store behind `conn`, as `diesel print-schema` prints it.
pub fn print_schema(conn: &mut SqliteConnection) -> diesel::QueryResult<String> {
    let tables: Vec<TableName> = diesel::sql_query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         AND name != '__diesel_schema_migrations' ORDER BY name",
    )
    .load(conn)?;
    let mut out = String::from("// @generated automatically by Diesel CLI.\n");
    let mut joins = Vec::new();
    for t in &tables {
        out.push('\n');
        out.push_str(&sqlite_table(conn, &t.name)?);
        joins.extend(sqlite_joins(conn, &t.name)?);
    }
    joins.sort();
    joins.dedup();
    if !joins.is_empty() {
        out.push('\n');
        for j in &joins {
            out.push_str(j);
        }
    }
    out.push_str("\ndiesel::allow_tables_to_appear_in_same_query!(\n");
    for t in &tables {
        out.push_str(&format!("    {},\n", t.name));
    }
    out.push_str(");\n");
    Ok(out)
}

/// One SQLite table's `diesel::table!` block, from `PRAGMA table_info`.
fn sqlite_table(conn: &mut SqliteConnection, table: &str) -> diesel::QueryResult<String> {
    let columns: Vec<ColumnInfo> =
        diesel::sql_query(format!("PRAGMA table_info('{table}')")).load(conn)?;
    let mut keys: Vec<&ColumnInfo> = columns.iter().filter(|c| c.pk > 0).collect();
    keys.sort_by_key(|c| c.pk);
    let keys: Vec<&str> = keys.iter().map(|c| c.name.as_str()).collect();
    Ok(table_block(
        table,
        &keys,
        columns.iter().map(|c| {
            let nullable = c.notnull == 0 && c.pk == 0;
            (c.name.as_str(), diesel_type(&c.sql_type), nullable)
        }),
    ))
}

/// One SQLite table's `diesel::joinable!` lines, from `PRAGMA foreign_key_list`.
fn sqlite_joins(conn: &mut SqliteConnection, table: &str) -> diesel::QueryResult<Vec<String>> {
    let mut fks: Vec<ForeignKey> =
        diesel::sql_query(format!("PRAGMA foreign_key_list('{table}')")).load(conn)?;
    fks.sort_by_key(|f| f.id);
    Ok(fks
        .into_iter()
        .map(|f| format!("diesel::joinable!({table} -> {} ({}));\n", f.table, f.from))
        .collect())
}

#[derive(QueryableByName)]
struct PgColumn {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = Text)]
    column_name: String,
    #[diesel(sql_type = Text)]
    data_type: String,
    #[diesel(sql_type = Text)]
    is_nullable: String,
    #[diesel(sql_type = BigInt)]
    key_position: i64,
}

/// diesel's name of a PostgreSQL column type (`information_schema.columns.data_type`).
fn diesel_pg_type(sql: &str) -> String {
    match sql {
        "text" => "Text".into(),
        "bigint" => "BigInt".into(),
        "integer" => "Integer".into(),
        "double precision" => "Double".into(),
        other => format!("Unknown<{other}>"),
    }
}

/// Each table of the PostgreSQL database at `url` (its `public` schema, less diesel's own),
/// in name order, printed as `diesel print-schema` prints a `table!` block.
///
/// # Errors
/// Connecting or querying failed.
pub fn print_pg_tables(url: &str) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut conn = PgConnection::establish(url)?;
    let columns: Vec<PgColumn> = diesel::sql_query(
        "SELECT c.table_name::text AS table_name, c.column_name::text AS column_name, \
                c.data_type::text AS data_type, c.is_nullable::text AS is_nullable, \
                COALESCE(k.ordinal_position, 0)::bigint AS key_position \
         FROM information_schema.columns c \
         LEFT JOIN information_schema.table_constraints t \
           ON t.table_schema = c.table_schema AND t.table_name = c.table_name \
              AND t.constraint_type = 'PRIMARY KEY' \
         LEFT JOIN information_schema.key_column_usage k \
           ON k.constraint_name = t.constraint_name AND k.table_schema = c.table_schema \
              AND k.table_name = c.table_name AND k.column_name = c.column_name \
         WHERE c.table_schema = 'public' AND c.table_name != '__diesel_schema_migrations' \
         ORDER BY c.table_name, c.ordinal_position",
    )
    .load(&mut conn)?;
    let mut tables: Vec<(String, Vec<&PgColumn>)> = Vec::new();
    for c in &columns {
        match tables.last_mut() {
            Some((name, cols)) if *name == c.table_name => cols.push(c),
            _ => tables.push((c.table_name.clone(), vec![c])),
        }
    }
    Ok(tables
        .into_iter()
        .map(|(name, cols)| {
            let mut keys: Vec<&&PgColumn> = cols.iter().filter(|c| c.key_position > 0).collect();
            keys.sort_by_key(|c| c.key_position);
            let keys: Vec<&str> = keys.iter().map(|c| c.column_name.as_str()).collect();
            table_block(
                &name,
                &keys,
                cols.iter().map(|c| {
                    let nullable = c.is_nullable == "YES";
                    (
                        c.column_name.as_str(),
                        diesel_pg_type(&c.data_type),
                        nullable,
                    )
                }),
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use diesel::Connection;
    use diesel_migrations::MigrationHarness;

    use super::*;

    #[test]
    fn schema_rs_is_what_the_migrations_make() {
        let mut conn = SqliteConnection::establish(":memory:").unwrap();
        conn.run_pending_migrations(super::super::MIGRATIONS)
            .unwrap();
        let printed = print_schema(&mut conn).unwrap();
        assert_eq!(
            include_str!("schema.rs"),
            printed,
            "server/db/schema.rs drifted from migrations/: replace it with the text above"
        );
    }
}
