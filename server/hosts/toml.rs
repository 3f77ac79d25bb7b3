//! TOML files (Codex), edited with `toml_edit`: `[mcp_servers.NAME]` tables, inline tables,
//! dotted keys and subtables are all edited where they are, with their comments and layout;
//! a replaced value keeps the whitespace and comment around it.

use serde_json::{Map, Number, Value};
use toml_edit::{Array, DocumentMut, InlineTable, Item, TableLike};

use super::{Document, Edit, EntryAt, EntryKeys, HostsError};

/// A TOML document.
pub struct TomlDocument {
    doc: DocumentMut,
}

impl TomlDocument {
    /// Parses `text`.
    ///
    /// # Errors
    /// The parser's message.
    pub fn parse(text: &str) -> Result<TomlDocument, String> {
        text.parse::<DocumentMut>()
            .map(|doc| TomlDocument { doc })
            .map_err(|e| e.to_string().trim().to_owned())
    }

    fn containers<'a>(&'a self, path: &[&str]) -> Vec<(Vec<String>, &'a dyn TableLike)> {
        let mut level: Vec<(Vec<String>, &dyn TableLike)> = vec![(Vec::new(), self.doc.as_table())];
        for key in path {
            let mut next = Vec::new();
            for (at, table) in level {
                for (name, item) in table.iter() {
                    if (*key == "*" || name == *key)
                        && let Some(inner) = item.as_table_like()
                    {
                        let mut at = at.clone();
                        at.push(name.to_owned());
                        next.push((at, inner));
                    }
                }
            }
            level = next;
        }
        level
    }
}

impl Document for TomlDocument {
    fn entries(&self, containers: &[&[&str]]) -> Vec<(EntryAt, Value)> {
        let mut out = Vec::new();
        for path in containers {
            for (container, table) in self.containers(path) {
                for (name, item) in table.iter() {
                    let at = EntryAt {
                        container: container.clone(),
                        name: name.to_owned(),
                    };
                    out.push((at, plain_item(item)));
                }
            }
        }
        out
    }

    fn apply(&mut self, at: &EntryAt, edit: &Edit) -> Result<(), HostsError> {
        let missing = || HostsError::Missing {
            container: at.container.clone(),
            name: at.name.clone(),
        };
        let mut table: &mut dyn TableLike = self.doc.as_table_mut();
        for key in at.container.iter().chain([&at.name]) {
            table = table
                .get_mut(key)
                .and_then(Item::as_table_like_mut)
                .ok_or_else(missing)?;
        }
        edit.apply_to(&mut Entry(table));
        Ok(())
    }

    fn render(&self) -> String {
        self.doc.to_string()
    }
}

/// One entry table (a `[table]`, an inline table or dotted keys).
struct Entry<'a>(&'a mut dyn TableLike);

impl EntryKeys for Entry<'_> {
    fn remove_key(&mut self, key: &str) {
        self.0.remove(key);
    }

    fn set_key(&mut self, key: &str, value: &Value) {
        let mut new = toml_value(value);
        match self.0.get_mut(key) {
            // The new value keeps the whitespace and comment around the old one.
            Some(Item::Value(old)) => {
                *new.decor_mut() = old.decor().clone();
                *old = new;
            }
            Some(item) => *item = Item::Value(new),
            None => {
                self.0.insert(key, Item::Value(new));
            }
        }
    }
}

fn plain_item(item: &Item) -> Value {
    match item {
        Item::None => Value::Null,
        Item::Value(v) => plain(v),
        Item::Table(t) => plain_table(t),
        Item::ArrayOfTables(a) => Value::Array(a.iter().map(|t| plain_table(t)).collect()),
    }
}

fn plain_table(table: &dyn TableLike) -> Value {
    Value::Object(
        table
            .iter()
            .map(|(k, v)| (k.to_owned(), plain_item(v)))
            .collect::<Map<_, _>>(),
    )
}

fn plain(value: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match value {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::Number((*i.value()).into()),
        T::Float(f) => Number::from_f64(*f.value()).map_or(Value::Null, Value::Number),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(d.value().to_string()),
        T::Array(a) => Value::Array(a.iter().map(plain).collect()),
        T::InlineTable(t) => plain_table(t),
    }
}

fn toml_value(value: &Value) -> toml_edit::Value {
    match value {
        // TOML has no null; nothing this module writes is null.
        Value::Null => toml_edit::Value::from(""),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64().unwrap_or_default().into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(items) => {
            toml_edit::Value::Array(items.iter().map(toml_value).collect::<Array>())
        }
        Value::Object(map) => {
            let mut table = InlineTable::new();
            for (k, v) in map {
                table.insert(k, toml_value(v));
            }
            toml_edit::Value::InlineTable(table)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_table_shape_is_found_and_comments_stay() {
        let text = "# top\n[mcp_servers.a]\ncommand = \"npx\" # run it\nargs = [\"-y\"]\n\n[mcp_servers.a.env]\nK = \"v\"\n\n[mcp_servers]\nb = { url = \"https://x/mcp\" }\n";
        let mut doc = TomlDocument::parse(text).unwrap();
        let entries = doc.entries(&[&["mcp_servers"]]);
        let names: Vec<_> = entries.iter().map(|(at, _)| at.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(entries[0].1["env"], json!({"K": "v"}));
        let edit = Edit {
            set: vec![("command".to_owned(), json!("/x/mcp-consent"))],
            remove: vec![],
        };
        doc.apply(&entries[0].0, &edit).unwrap();
        let out = doc.render();
        assert!(
            out.contains("command = \"/x/mcp-consent\" # run it"),
            "{out}"
        );
        assert!(out.starts_with("# top\n"), "{out}");
    }
}
