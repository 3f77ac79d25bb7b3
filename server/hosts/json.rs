//! JSON and JSONC files, edited through the concrete syntax tree of `jsonc-parser` (dprint's
//! parser): comments, whitespace, key order and every value not edited stay byte for byte.
//! Strict-JSON hosts' files are parsed strictly (no comments, no trailing commas), so a file
//! such a host would refuse is refused here too, and an edit never adds either.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value;

use super::{Document, Edit, EntryAt, EntryKeys, HostsError};

/// A JSON or JSONC document.
pub struct JsonDocument {
    root: CstRootNode,
}

impl JsonDocument {
    /// Parses `text`; `comments` allows comments and trailing commas (JSONC).
    ///
    /// # Errors
    /// The parser's message, with line and column.
    pub fn parse(text: &str, comments: bool) -> Result<JsonDocument, String> {
        let options = ParseOptions {
            allow_comments: comments,
            allow_loose_object_property_names: false,
            allow_trailing_commas: comments,
            allow_missing_commas: false,
            allow_single_quoted_strings: false,
            allow_hexadecimal_numbers: false,
            allow_unary_plus_numbers: false,
            ..ParseOptions::default()
        };
        let root = CstRootNode::parse(text, &options).map_err(|e| e.to_string())?;
        match root.value() {
            Some(value) if value.as_object().is_some() => Ok(JsonDocument { root }),
            Some(_) => Err("the top level is not an object".to_owned()),
            None if text.trim().is_empty() => Err("the file is empty".to_owned()),
            None => Err("no value".to_owned()),
        }
    }

    fn containers(&self, path: &[&str]) -> Vec<(Vec<String>, CstObject)> {
        let Some(top) = self.root.object_value() else {
            return Vec::new();
        };
        let mut level = vec![(Vec::new(), top)];
        for key in path {
            let mut next = Vec::new();
            for (at, object) in level {
                let props = if *key == "*" {
                    object.properties()
                } else {
                    object.get(key).into_iter().collect()
                };
                for prop in props {
                    if let (Some(name), Some(inner)) = (prop.decoded_name(), prop.object_value()) {
                        let mut at = at.clone();
                        at.push(name);
                        next.push((at, inner));
                    }
                }
            }
            level = next;
        }
        level
    }

    fn object_at(&self, at: &EntryAt) -> Option<CstObject> {
        let path: Vec<&str> = at.container.iter().map(String::as_str).collect();
        let (_, container) = self.containers(&path).into_iter().next()?;
        container.get(&at.name)?.object_value()
    }
}

impl Document for JsonDocument {
    fn entries(&self, containers: &[&[&str]]) -> Vec<(EntryAt, Value)> {
        let mut out = Vec::new();
        for path in containers {
            for (container, object) in self.containers(path) {
                for prop in object.properties() {
                    let (Some(name), Some(value)) = (prop.decoded_name(), prop.value()) else {
                        continue;
                    };
                    if let Some(value) = value.to_serde_value() {
                        let at = EntryAt {
                            container: container.clone(),
                            name,
                        };
                        out.push((at, value));
                    }
                }
            }
        }
        out
    }

    fn apply(&mut self, at: &EntryAt, edit: &Edit) -> Result<(), HostsError> {
        let entry = self.object_at(at).ok_or_else(|| HostsError::Missing {
            container: at.container.clone(),
            name: at.name.clone(),
        })?;
        edit.apply_to(&mut Entry(entry));
        Ok(())
    }

    fn render(&self) -> String {
        self.root.to_string()
    }
}

/// One entry object of the tree.
struct Entry(CstObject);

impl EntryKeys for Entry {
    fn remove_key(&mut self, key: &str) {
        if let Some(prop) = self.0.get(key) {
            prop.remove();
        }
    }

    fn set_key(&mut self, key: &str, value: &Value) {
        match self.0.get(key) {
            Some(prop) => prop.set_value(input(value)),
            None => {
                self.0.append(key, input(value));
            }
        }
    }
}

/// A plain value as the editor's input.
fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edits_keep_comments_and_untouched_bytes() {
        let text = "{\n  // mine\n  \"servers\": {\n    \"a\": { \"command\": \"npx\", /* why */ \"args\": [\"-y\"] },\n    \"b\": {\"url\": \"${input:u}\"}\n  },\n  \"inputs\": [],\n}\n";
        let mut doc = JsonDocument::parse(text, true).unwrap();
        let entries = doc.entries(&[&["servers"]]);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1].1, json!({"url": "${input:u}"}));
        let edit = Edit {
            set: vec![("command".to_owned(), json!("/x/mcp-consent"))],
            remove: vec![],
        };
        doc.apply(&entries[0].0, &edit).unwrap();
        let out = doc.render();
        assert!(
            out.contains("// mine")
                && out.contains("/* why */")
                && out.contains("\"inputs\": [],\n}"),
            "{out}"
        );
        assert!(out.contains("\"command\": \"/x/mcp-consent\""), "{out}");
        assert!(
            JsonDocument::parse(text, false).is_err(),
            "strict JSON refuses comments"
        );
    }
}
