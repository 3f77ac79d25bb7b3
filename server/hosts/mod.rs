//! `mcp-consent hosts`: finds the MCP hosts' configuration files, rewrites each server entry
//! so that the host launches it through `mcp-consent proxy`, and puts the entries back.
//!
//! One file per concern: [`locate`] knows where each host keeps its files, [`dialect`] what
//! each host's entries look like, [`plan`] what an entry is and the edit that wraps it, [`wrapper`] how a wrapped command line is built and
//! recognised, [`json`], [`toml`] and [`yaml`] edit each format in place (comments, key
//! order and variable references kept, through format-preserving libraries), [`file`] reads
//! and writes safely (symlinks resolved, atomic replace, backups), [`manifest`] remembers what
//! each wrapped entry was, and [`ops`] puts these together for `list`, `wrap` and `unwrap`.

pub mod dialect;
pub mod file;
pub mod json;
pub mod locate;
pub mod manifest;
pub mod ops;
pub mod plan;
pub mod toml;
pub mod wrapper;
pub mod yaml;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An MCP host whose configuration `mcp-consent hosts` rewrites; the names are the values of
/// `--host`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum HostId {
    /// Claude Desktop.
    ClaudeDesktop,
    /// Claude Code: `~/.claude.json` (user and local scopes) and project `.mcp.json` files.
    ClaudeCode,
    /// Cursor.
    Cursor,
    /// VS Code (GitHub Copilot).
    Vscode,
    /// Windsurf.
    Windsurf,
    /// Zed.
    Zed,
    /// OpenAI Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
    /// Goose.
    Goose,
    /// Cline.
    Cline,
    /// Continue.
    Continue,
    /// LM Studio.
    Lmstudio,
    /// opencode.
    Opencode,
}

impl HostId {
    /// Every host, in the order they are listed.
    pub const ALL: [HostId; 13] = [
        HostId::ClaudeDesktop,
        HostId::ClaudeCode,
        HostId::Cursor,
        HostId::Vscode,
        HostId::Windsurf,
        HostId::Zed,
        HostId::Codex,
        HostId::Gemini,
        HostId::Goose,
        HostId::Cline,
        HostId::Continue,
        HostId::Lmstudio,
        HostId::Opencode,
    ];

    /// The `--host` name (`claude-desktop`, `vscode`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            HostId::ClaudeDesktop => "claude-desktop",
            HostId::ClaudeCode => "claude-code",
            HostId::Cursor => "cursor",
            HostId::Vscode => "vscode",
            HostId::Windsurf => "windsurf",
            HostId::Zed => "zed",
            HostId::Codex => "codex",
            HostId::Gemini => "gemini",
            HostId::Goose => "goose",
            HostId::Cline => "cline",
            HostId::Continue => "continue",
            HostId::Lmstudio => "lmstudio",
            HostId::Opencode => "opencode",
        }
    }

    /// The application's own name, for messages.
    pub fn title(self) -> &'static str {
        match self {
            HostId::ClaudeDesktop => "Claude Desktop",
            HostId::ClaudeCode => "Claude Code",
            HostId::Cursor => "Cursor",
            HostId::Vscode => "VS Code",
            HostId::Windsurf => "Windsurf",
            HostId::Zed => "Zed",
            HostId::Codex => "Codex",
            HostId::Gemini => "Gemini CLI",
            HostId::Goose => "Goose",
            HostId::Cline => "Cline",
            HostId::Continue => "Continue",
            HostId::Lmstudio => "LM Studio",
            HostId::Opencode => "opencode",
        }
    }

    /// Whether the host reads its configuration only at start (so it needs a restart after a
    /// rewrite); the others watch their files.
    pub fn needs_restart(self) -> bool {
        matches!(
            self,
            HostId::ClaudeDesktop
                | HostId::ClaudeCode
                | HostId::Codex
                | HostId::Gemini
                | HostId::Goose
                | HostId::Continue
        )
    }
}

/// How a server is reached, as `hosts list` reports it: a command over stdio, or a remote
/// endpoint over HTTP (Streamable HTTP or the older HTTP+SSE).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// A local command the host launches.
    Stdio,
    /// A remote URL.
    Http,
}

impl Transport {
    /// `stdio` or `http`.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }
}

/// The syntax of a configuration file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Strict JSON: the host's parser refuses comments and trailing commas.
    Json,
    /// JSON with comments and trailing commas.
    Jsonc,
    /// TOML.
    Toml,
    /// YAML.
    Yaml,
}

/// Where a server entry sits in its file: the key path of the map (or list) holding it, and
/// its name there.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EntryAt {
    /// Keys from the top of the file to the container of the entries.
    pub container: Vec<String>,
    /// The server's name (its key, or its `name` in a list).
    pub name: String,
}

/// A change to one entry: keys set (added at the end when absent) and keys removed; every
/// other key stays as it is, where it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Edit {
    /// Keys given a new value.
    pub set: Vec<(String, Value)>,
    /// Keys taken out.
    pub remove: Vec<String>,
}

impl Edit {
    /// Applies the edit to one entry's keys: removals first, then the values set.
    pub fn apply_to(&self, entry: &mut dyn EntryKeys) {
        for key in &self.remove {
            entry.remove_key(key);
        }
        for (key, value) in &self.set {
            entry.set_key(key, value);
        }
    }
}

/// The keys of one entry as a format's editor changes them in place.
pub trait EntryKeys {
    /// Takes a key out (nothing when absent).
    fn remove_key(&mut self, key: &str);
    /// Gives a key a new value where it is, or adds it at the end.
    fn set_key(&mut self, key: &str, value: &Value);
}

/// A configuration file parsed by a format-preserving editor: its entries can be read as
/// plain values and edited in place, and it renders back to text that differs only where it
/// was edited.
pub trait Document {
    /// The entries of each container path (a `*` segment matches every key there), in file
    /// order, as plain values. A container that is absent or not a map/list gives nothing.
    fn entries(&self, containers: &[&[&str]]) -> Vec<(EntryAt, Value)>;
    /// Applies `edit` to the entry at `at`.
    ///
    /// # Errors
    /// [`HostsError::Missing`] when the entry is no longer there.
    fn apply(&mut self, at: &EntryAt, edit: &Edit) -> Result<(), HostsError>;
    /// The text of the document with its edits.
    fn render(&self) -> String;
}

/// Errors of `mcp-consent hosts`.
#[derive(Debug, thiserror::Error)]
pub enum HostsError {
    /// A file could not be read, written or backed up.
    #[error("{action} {path}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file does not parse; it is left alone.
    #[error("{path} does not parse ({why}); it was left as it is")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        why: String,
    },
    /// The file changed between the moment it was read and the moment it would have been
    /// replaced (the host or a person wrote it); it was not overwritten.
    #[error(
        "{path} changed while mcp-consent was editing it; it was not overwritten (run the command again)"
    )]
    Changed {
        /// The file.
        path: PathBuf,
    },
    /// An entry to edit is no longer in the file.
    #[error("no entry {name:?} under {container:?}")]
    Missing {
        /// The container's key path.
        container: Vec<String>,
        /// The entry's name.
        name: String,
    },
    /// A host is running that rewrites this file without locks; editing it now could be lost.
    #[error(
        "{host} is running ({processes}) and rewrites {path} while it runs; close it first, then run the command again"
    )]
    HostRunning {
        /// The host's name.
        host: &'static str,
        /// What was seen running.
        processes: String,
        /// The file.
        path: PathBuf,
    },
    /// The record of wrapped entries in the state directory is unreadable.
    #[error("the record of wrapped entries {path} is not valid ({why})")]
    Manifest {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The path of this program could not be found (to put it in front of each command).
    #[error("cannot find the path of the mcp-consent program")]
    NoExe(#[source] std::io::Error),
}

impl HostsError {
    /// An [`HostsError::Io`] maker for `map_err`.
    pub fn io(action: &'static str, path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_path_buf();
        move |source| HostsError::Io {
            action,
            path,
            source,
        }
    }
}
