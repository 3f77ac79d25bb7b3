//! YAML files (Goose, Continue), edited with `yaml-edit`, a lossless editor on a rowan syntax
//! tree: comments, quoting, indentation and key order of everything not edited stay as they
//! are. Continue keeps its servers in a list of maps with a `name`; Goose in a map.

use std::str::FromStr;

use serde_json::{Map, Number, Value};
use yaml_edit::{Mapping, YamlFile, YamlNode, YamlValue};

use super::{Document, Edit, EntryAt, EntryKeys, HostsError};

/// A YAML file (its first document is the configuration).
pub struct YamlDocument {
    file: YamlFile,
    /// The entries are list items with a `name`.
    list: bool,
}

impl YamlDocument {
    /// Parses `text`; `list` says the containers hold lists of named maps.
    ///
    /// # Errors
    /// The parser's message, with line and column.
    pub fn parse(text: &str, list: bool) -> Result<YamlDocument, String> {
        let file = YamlFile::from_str(text).map_err(|e| e.to_string())?;
        let doc = YamlDocument { file, list };
        if !text.trim().is_empty() && doc.top().is_none() {
            return Err("the top level is not a map".to_owned());
        }
        Ok(doc)
    }

    fn top(&self) -> Option<Mapping> {
        self.file.documents().next()?.as_mapping()
    }

    /// The nodes at `path` from the top (`*` matches every key), with their key paths.
    fn containers(&self, path: &[&str]) -> Vec<(Vec<String>, YamlNode)> {
        let Some(top) = self.top() else {
            return Vec::new();
        };
        let mut level = vec![(Vec::new(), YamlNode::Mapping(top))];
        for key in path {
            let mut next = Vec::new();
            for (at, node) in level {
                let Some(map) = node.as_mapping() else {
                    continue;
                };
                for entry in map.entries() {
                    let (Some(k), Some(v)) = (entry.key_node(), entry.value_node()) else {
                        continue;
                    };
                    let name = scalar_text(&k);
                    if *key == "*" || name == *key {
                        let mut at = at.clone();
                        at.push(name);
                        next.push((at, v));
                    }
                }
            }
            level = next;
        }
        level
    }

    /// The entries of one container node: `(name, map)` pairs.
    fn members(&self, node: &YamlNode) -> Vec<(String, YamlNode)> {
        if self.list {
            let Some(seq) = node.as_sequence() else {
                return Vec::new();
            };
            seq.values()
                .filter_map(|item| {
                    // A hub block (`- uses: owner/block`) has no name: it is named by its
                    // `uses`, so that it is listed as skipped.
                    let map = item.as_mapping()?;
                    let name = map.get("name").or_else(|| map.get("uses"));
                    let name = scalar_text(&name?);
                    Some((name, item))
                })
                .collect()
        } else {
            let Some(map) = node.as_mapping() else {
                return Vec::new();
            };
            map.entries()
                .filter_map(|e| Some((scalar_text(&e.key_node()?), e.value_node()?)))
                .collect()
        }
    }
}

impl Document for YamlDocument {
    fn entries(&self, containers: &[&[&str]]) -> Vec<(EntryAt, Value)> {
        let mut out = Vec::new();
        for path in containers {
            for (container, node) in self.containers(path) {
                for (name, value) in self.members(&node) {
                    let at = EntryAt {
                        container: container.clone(),
                        name,
                    };
                    out.push((at, plain(&value)));
                }
            }
        }
        out
    }

    fn apply(&mut self, at: &EntryAt, edit: &Edit) -> Result<(), HostsError> {
        let path: Vec<&str> = at.container.iter().map(String::as_str).collect();
        let entry = self
            .containers(&path)
            .into_iter()
            .next()
            .and_then(|(_, node)| {
                self.members(&node)
                    .into_iter()
                    .find(|(name, _)| *name == at.name)
            })
            .and_then(|(_, node)| node.as_mapping().cloned())
            .ok_or_else(|| HostsError::Missing {
                container: at.container.clone(),
                name: at.name.clone(),
            })?;
        edit.apply_to(&mut Entry(entry));
        Ok(())
    }

    fn render(&self) -> String {
        self.file.to_string()
    }
}

/// One entry mapping.
struct Entry(Mapping);

impl EntryKeys for Entry {
    fn remove_key(&mut self, key: &str) {
        self.0.remove(key);
    }

    fn set_key(&mut self, key: &str, value: &Value) {
        self.0.set(key, yaml_value(value));
    }
}

fn scalar_text(node: &YamlNode) -> String {
    match node.as_scalar() {
        Some(s) => s.as_string(),
        None => String::new(),
    }
}

/// A node as a plain value: quoted scalars are strings; plain ones are null, booleans or
/// numbers when they read as such (YAML 1.2 core schema), else strings.
fn plain(node: &YamlNode) -> Value {
    match node {
        YamlNode::Scalar(s) if s.is_quoted() => Value::String(s.as_string()),
        YamlNode::Scalar(s) => {
            let text = s.as_string();
            match text.as_str() {
                "" | "~" | "null" | "Null" | "NULL" => Value::Null,
                "true" | "True" | "TRUE" => Value::Bool(true),
                "false" | "False" | "FALSE" => Value::Bool(false),
                _ => match (text.parse::<i64>(), text.parse::<f64>()) {
                    (Ok(i), _) => Value::Number(i.into()),
                    (_, Ok(f)) => Number::from_f64(f).map_or(Value::String(text), Value::Number),
                    _ => Value::String(text),
                },
            }
        }
        YamlNode::Mapping(m) => Value::Object(
            m.entries()
                .filter_map(|e| Some((scalar_text(&e.key_node()?), plain(&e.value_node()?))))
                .collect::<Map<_, _>>(),
        ),
        YamlNode::Sequence(s) => Value::Array(s.values().map(|v| plain(&v)).collect()),
        YamlNode::TaggedNode(t) => Value::String(t.to_string()),
        YamlNode::Alias(a) => Value::String(format!("*{}", a.name())),
    }
}

fn yaml_value(value: &Value) -> YamlValue {
    match value {
        Value::Null => YamlValue::scalar(yaml_edit::ScalarValue::null()),
        Value::Bool(b) => YamlValue::scalar(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => YamlValue::scalar(i),
            None => YamlValue::scalar(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => YamlValue::scalar(s.as_str()),
        Value::Array(items) => YamlValue::from_sequence(items.iter().map(yaml_value).collect()),
        Value::Object(map) => {
            let mut out = YamlValue::mapping();
            if let Some(m) = out.as_mapping_mut() {
                for (k, v) in map {
                    m.insert(k.clone(), yaml_value(v));
                }
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn goose_map_and_continue_list_are_read_and_edited_in_place() {
        let goose = "# mine\nextensions:\n  fs:\n    type: stdio\n    cmd: npx # the runner\n    args:\n      - -y\n    timeout: 300\n";
        let mut doc = YamlDocument::parse(goose, false).unwrap();
        let entries = doc.entries(&[&["extensions"]]);
        assert_eq!(
            entries[0].1,
            json!({"type": "stdio", "cmd": "npx", "args": ["-y"], "timeout": 300})
        );
        let edit = Edit {
            set: vec![
                ("cmd".to_owned(), json!("/x/mcp-consent")),
                ("args".to_owned(), json!(["proxy", "--", "npx", "-y"])),
            ],
            remove: vec![],
        };
        doc.apply(&entries[0].0, &edit).unwrap();
        let out = doc.render();
        assert!(
            out.starts_with("# mine\n") && out.contains("timeout: 300"),
            "{out}"
        );
        let again = YamlDocument::parse(&out, false)
            .unwrap()
            .entries(&[&["extensions"]]);
        assert_eq!(again[0].1["cmd"], "/x/mcp-consent", "{out}");
        assert_eq!(
            again[0].1["args"],
            json!(["proxy", "--", "npx", "-y"]),
            "{out}"
        );

        let cont =
            "name: mine\nmcpServers:\n  - name: a\n    command: uvx\n  - uses: someone/block\n";
        let doc = YamlDocument::parse(cont, true).unwrap();
        let entries = doc.entries(&[&["mcpServers"]]);
        assert_eq!(entries[1].0.name, "someone/block");
        assert!(YamlDocument::parse("a: [1,\n", false).is_err());
    }
}
