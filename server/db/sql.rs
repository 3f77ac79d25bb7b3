//! SQL that diesel's builder would otherwise bind: the word `'pending'` as a literal.
//!
//! The partial indexes on `questions` say `WHERE state = 'pending'`. A query comparing
//! `state` with a bound parameter can use them only for that parameter's value, so SQLite
//! marks the statement to be compiled again whenever the parameter is bound — every
//! execution, which also defeats diesel's statement cache. With the literal the plan is
//! fixed and the prepared statement is reused.

use diesel::expression::{AppearsOnTable, Expression, SelectableExpression, ValidGrouping};
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::Text;
use diesel::sqlite::Sqlite;

use crate::domain::State;

/// The SQL literal `'pending'`, a `Text` expression (compare `questions::state` with it).
#[derive(Debug, Clone, Copy, QueryId, ValidGrouping)]
pub struct Pending;

impl Expression for Pending {
    type SqlType = Text;
}

impl QueryFragment<Sqlite> for Pending {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Sqlite>) -> diesel::QueryResult<()> {
        out.push_sql("'");
        out.push_sql(State::Pending.as_str());
        out.push_sql("'");
        Ok(())
    }
}

impl<QS> AppearsOnTable<QS> for Pending {}

impl<QS> SelectableExpression<QS> for Pending {}

#[cfg(test)]
mod tests {
    use diesel::debug_query;
    use diesel::prelude::*;

    use super::*;
    use crate::db::schema::questions;

    /// The literal is spelled into the SQL (no bind), so it matches the partial indexes.
    #[test]
    fn pending_is_spelled_into_the_sql() {
        let query = questions::table
            .filter(questions::state.eq(Pending))
            .select(questions::id);
        let sql = debug_query::<Sqlite, _>(&query).to_string();
        assert!(sql.contains("`questions`.`state` = 'pending'"), "{sql}");
        assert!(sql.ends_with("-- binds: []"), "{sql}");
    }
}
