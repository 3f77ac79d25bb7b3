//! What an entry is (local, remote, already wrapped, or not the person's to wrap) and the edit
//! that wraps or unwraps it; pure functions of the entry's plain value and its host's
//! [`Dialect`].

use serde_json::{Map, Value, json};

use super::dialect::{Dialect, StdioType};
use super::wrapper::{self, Wrapped};
use super::{Edit, HostId, Transport};

/// What an entry is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A local command, not wrapped.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A remote server, not wrapped.
    Remote {
        /// Its URL.
        url: String,
    },
    /// Already launched through `mcp-consent proxy`.
    Wrapped(Wrapped),
    /// Not the person's to wrap, and why.
    Skip(String),
}

impl Kind {
    /// The transport `hosts list` reports, for entries it lists as servers.
    pub fn transport(&self) -> Option<Transport> {
        match self {
            Kind::Stdio { .. } => Some(Transport::Stdio),
            Kind::Remote { .. } => Some(Transport::Http),
            Kind::Wrapped(w) => Some(w.transport),
            Kind::Skip(_) => None,
        }
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().map(text).collect())
        .unwrap_or_default()
}

/// The program and arguments of a local entry, whichever shape the host uses: a string and
/// an array, one array (opencode), or Zed's older `command: {path, args}`.
fn command_line(d: &Dialect, entry: &Map<String, Value>) -> Option<(String, Vec<String>)> {
    let command = entry.get(d.command)?;
    match (command, d.args) {
        (Value::Array(parts), _) => {
            let (first, rest) = parts.split_first()?;
            Some((text(first), rest.iter().map(text).collect()))
        }
        (Value::Object(nested), _) => {
            Some((text(nested.get("path")?), strings(nested.get("args"))))
        }
        (Value::String(program), Some(args)) => Some((program.clone(), strings(entry.get(args)))),
        _ => None,
    }
}

/// Classifies one entry.
pub fn classify(d: &Dialect, entry: &Value) -> Kind {
    let Some(map) = entry.as_object() else {
        return Kind::Skip("not an entry".to_owned());
    };
    if let Some(reason) = d.skip_reason(map) {
        return Kind::Skip(reason);
    }
    if let Some((command, args)) = command_line(d, map) {
        return match wrapper::recognise(&command, &args) {
            Some(w) => Kind::Wrapped(w),
            None => Kind::Stdio { command, args },
        };
    }
    match d.url(map) {
        Some(url) if url.starts_with("unix:") || url.starts_with("pipe:") => {
            Kind::Skip("a local socket URL the proxy cannot reach".to_owned())
        }
        Some(url) => Kind::Remote {
            url: url.to_owned(),
        },
        None => Kind::Skip("neither a command nor a URL".to_owned()),
    }
}

/// The command keys of a wrapped entry: `command` = this program and `args` = the proxy's, or
/// one array for opencode, or Zed's nested object.
fn set_command(
    d: &Dialect,
    entry: &Map<String, Value>,
    exe: &str,
    args: Vec<String>,
    edit: &mut Edit,
) {
    if d.args.is_none() {
        let mut all = vec![exe.to_owned()];
        all.extend(args);
        edit.set.push((d.command.to_owned(), json!(all)));
    } else if let Some(Value::Object(nested)) = entry.get(d.command) {
        let mut nested = nested.clone();
        nested.insert("path".to_owned(), json!(exe));
        nested.insert("args".to_owned(), json!(args));
        edit.set.push((d.command.to_owned(), Value::Object(nested)));
    } else if let Some(key) = d.args {
        edit.set.push((d.command.to_owned(), json!(exe)));
        edit.set.push((key.to_owned(), json!(args)));
    }
}

/// The edit that makes the host launch `exe proxy …` for this entry; `None` for entries that
/// are wrapped already or skipped.
pub fn wrap(d: &Dialect, name: &str, entry: &Value, exe: &str) -> Option<Edit> {
    let map = entry.as_object()?;
    let mut edit = Edit::default();
    match classify(d, entry) {
        Kind::Stdio { command, args } => {
            set_command(
                d,
                map,
                exe,
                wrapper::stdio_args(name, &command, &args),
                &mut edit,
            );
        }
        Kind::Remote { url } => {
            let (headers, pass) = d.headers(map);
            let (args, env) = wrapper::remote_args(name, &url, &headers);
            let gone = d.urls.iter().chain(&d.headers[..1]).chain(d.remote_keys);
            edit.remove = gone
                .filter(|k| map.contains_key(**k))
                .map(|k| (*k).to_owned())
                .collect();
            match d.stdio_type {
                StdioType::Remove if map.contains_key("type") => {
                    edit.remove.push("type".to_owned())
                }
                StdioType::IfPresent(v) if map.contains_key("type") => {
                    edit.set.push(("type".to_owned(), json!(v)))
                }
                StdioType::Always(v) => edit.set.push(("type".to_owned(), json!(v))),
                _ => {}
            }
            set_command(d, map, exe, args, &mut edit);
            if !env.is_empty() {
                let mut merged = map
                    .get(d.env)
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                for (k, v) in env {
                    merged.insert(k, json!(v));
                }
                edit.set.push((d.env.to_owned(), Value::Object(merged)));
            }
            if d.host == HostId::Codex && !pass.is_empty() {
                let mut vars = map
                    .get("env_vars")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for var in pass {
                    if !vars.contains(&json!(var)) {
                        vars.push(json!(var));
                    }
                }
                edit.set.push(("env_vars".to_owned(), Value::Array(vars)));
            }
        }
        Kind::Wrapped(_) | Kind::Skip(_) => return None,
    }
    Some(edit)
}

/// The edit that turns the entry `current` back into `original`: keys the original lacks are
/// removed, keys whose value differs are set (in the original's order); equal keys stay.
pub fn restore(current: &Value, original: &Value) -> Edit {
    let (Some(now), Some(was)) = (current.as_object(), original.as_object()) else {
        return Edit::default();
    };
    Edit {
        remove: now
            .keys()
            .filter(|k| !was.contains_key(*k))
            .cloned()
            .collect(),
        set: was
            .iter()
            .filter(|(k, v)| now.get(*k) != Some(v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}

/// Without a record of the original: a wrapped local entry gets back the command that
/// follows `--`. A wrapped remote entry cannot be rebuilt (its headers moved), so `None`.
pub fn rebuild(d: &Dialect, entry: &Value) -> Option<Edit> {
    let map = entry.as_object()?;
    let Kind::Wrapped(Wrapped {
        inner: Some((command, args)),
        ..
    }) = classify(d, entry)
    else {
        return None;
    };
    let mut edit = Edit::default();
    set_command(d, map, &command, args, &mut edit);
    Some(edit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::dialect;

    #[test]
    fn a_remote_codex_entry_becomes_a_stdio_entry_codex_accepts() {
        let entry = json!({"url": "https://x.example/mcp", "bearer_token_env_var": "GH_TOKEN",
            "http_headers": {"X-Org": "acme"}, "enabled_tools": ["a"]});
        let edit = wrap(&dialect::CODEX, "gh", &entry, "/x/mcp-consent").unwrap();
        assert_eq!(edit.remove, ["url", "http_headers", "bearer_token_env_var"]);
        let set: Map<String, Value> = edit.set.into_iter().collect();
        assert_eq!(set["command"], "/x/mcp-consent");
        let args = strings(set.get("args"));
        assert!(
            args.contains(&"Authorization: Bearer ${GH_TOKEN}".to_owned()),
            "{args:?}"
        );
        assert!(!args.iter().any(|a| a.contains("acme")), "{args:?}");
        assert_eq!(set["env"], json!({"MCP_CONSENT_HEADER_X_ORG": "acme"}));
        assert_eq!(set["env_vars"], json!(["GH_TOKEN"]));
    }

    #[test]
    fn restore_undoes_any_edit() {
        let before = json!({"type": "http", "url": "u", "headers": {"a": "b"}, "keep": 1});
        let after = json!({"type": "stdio", "keep": 1, "command": "/x/mcp-consent", "args": []});
        let edit = restore(&after, &before);
        assert_eq!(edit.remove, ["command", "args"]);
        assert_eq!(edit.set.len(), 3);
    }
}
