//! What each host's server entries look like: where they sit in the file, the names of their
//! fields, which entries are not the person's to wrap, and how a remote entry's headers are
//! written. Facts from each host's documentation and source (see `docs/hosts.md`).

use serde_json::{Map, Value};

use super::HostId;

/// What a wrapped remote entry's `type` becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdioType {
    /// The host has no stdio `type` value: a `type` key is taken out.
    Remove,
    /// A `type` key, where the entry has one, becomes this value.
    IfPresent(&'static str),
    /// The entry must say `type: VALUE` (the host's schema is tagged by it).
    Always(&'static str),
}

/// One host's entry shape.
#[derive(Debug, Clone, Copy)]
pub struct Dialect {
    /// The host.
    pub host: HostId,
    /// Key paths of the maps (or, for [`Dialect::list`], lists) that hold the entries; `*`
    /// matches every key.
    pub containers: &'static [&'static [&'static str]],
    /// The entries are a list of maps, each with a `name` (Continue's YAML files).
    pub list: bool,
    /// The key of the program to run.
    pub command: &'static str,
    /// The key of its arguments; `None` when the command is one array of program and
    /// arguments (opencode).
    pub args: Option<&'static str>,
    /// The key of the child's environment.
    pub env: &'static str,
    /// The keys that hold a remote server's URL, in the order the host reads them.
    pub urls: &'static [&'static str],
    /// The key path of a remote entry's header map.
    pub headers: &'static [&'static str],
    /// Keys a remote entry may carry that the host refuses (or ignores) on a stdio entry; a
    /// wrapped remote entry loses them (the record keeps them for `unwrap`).
    pub remote_keys: &'static [&'static str],
    /// What `type` becomes on a wrapped remote entry.
    pub stdio_type: StdioType,
}

const JSON_SERVERS: &[&[&str]] = &[&["mcpServers"]];

const fn mcp_servers(host: HostId, remote_keys: &'static [&'static str]) -> Dialect {
    Dialect {
        host,
        containers: JSON_SERVERS,
        list: false,
        command: "command",
        args: Some("args"),
        env: "env",
        urls: &["url"],
        headers: &["headers"],
        remote_keys,
        stdio_type: StdioType::IfPresent("stdio"),
    }
}

/// Claude Desktop's `claude_desktop_config.json`.
pub const CLAUDE_DESKTOP: Dialect = mcp_servers(HostId::ClaudeDesktop, &[]);
/// Claude Code's `~/.claude.json`: user scope at the top, local scope per project.
pub const CLAUDE_CODE_USER: Dialect = Dialect {
    containers: &[&["mcpServers"], &["projects", "*", "mcpServers"]],
    ..mcp_servers(HostId::ClaudeCode, &["oauth"])
};
/// A Claude Code project's `.mcp.json`.
pub const CLAUDE_CODE_PROJECT: Dialect = mcp_servers(HostId::ClaudeCode, &["oauth"]);
/// Cursor's `mcp.json`.
pub const CURSOR: Dialect = mcp_servers(HostId::Cursor, &["auth"]);
/// VS Code's `mcp.json` (`servers`, beside `inputs`).
pub const VSCODE: Dialect = Dialect {
    containers: &[&["servers"]],
    ..mcp_servers(HostId::Vscode, &["oauth"])
};
/// The portable Copilot file read by VS Code (`~/.copilot/mcp-config.json`).
pub const VSCODE_PORTABLE: Dialect = mcp_servers(HostId::Vscode, &["oauth"]);
/// Windsurf's `mcp_config.json` (`serverUrl` or `url`).
pub const WINDSURF: Dialect = Dialect {
    urls: &["serverUrl", "url"],
    ..mcp_servers(HostId::Windsurf, &[])
};
/// Zed's `settings.json` (`context_servers`).
pub const ZED: Dialect = Dialect {
    containers: &[&["context_servers"]],
    stdio_type: StdioType::Remove,
    ..mcp_servers(HostId::Zed, &["oauth"])
};
/// Codex's `config.toml` (`[mcp_servers.NAME]`).
pub const CODEX: Dialect = Dialect {
    containers: &[&["mcp_servers"]],
    headers: &["http_headers"],
    stdio_type: StdioType::Remove,
    ..mcp_servers(
        HostId::Codex,
        &[
            "bearer_token_env_var",
            "env_http_headers",
            "oauth",
            "oauth_resource",
            "scopes",
            "auth",
        ],
    )
};
/// Gemini CLI's `settings.json`.
pub const GEMINI: Dialect = Dialect {
    urls: &["httpUrl", "url"],
    stdio_type: StdioType::Remove,
    ..mcp_servers(
        HostId::Gemini,
        &[
            "oauth",
            "authProviderType",
            "targetAudience",
            "targetServiceAccount",
            "tcp",
        ],
    )
};
/// Goose's `config.yaml` (`extensions`, `cmd`/`envs`, tagged by `type`).
pub const GOOSE: Dialect = Dialect {
    host: HostId::Goose,
    containers: &[&["extensions"]],
    list: false,
    command: "cmd",
    args: Some("args"),
    env: "envs",
    urls: &["uri"],
    headers: &["headers"],
    remote_keys: &["socket"],
    stdio_type: StdioType::Always("stdio"),
};
/// Cline's `cline_mcp_settings.json`.
pub const CLINE: Dialect = mcp_servers(HostId::Cline, &["transportType"]);
/// Continue's YAML files: `mcpServers` is a list of entries with a `name`.
pub const CONTINUE_YAML: Dialect = Dialect {
    list: true,
    headers: &["requestOptions", "headers"],
    remote_keys: &["requestOptions"],
    stdio_type: StdioType::Remove,
    ..mcp_servers(HostId::Continue, &[])
};
/// Continue's JSON block files (copied in from other hosts): a map `mcpServers`.
pub const CONTINUE_JSON: Dialect = Dialect {
    stdio_type: StdioType::Remove,
    ..mcp_servers(HostId::Continue, &[])
};
/// LM Studio's `mcp.json` ("follows Cursor's notation").
pub const LMSTUDIO: Dialect = mcp_servers(HostId::Lmstudio, &[]);
/// opencode's `opencode.json(c)`: `mcp.NAME` (V1) and `mcp.servers.NAME` (V2), the command one
/// array, the environment `environment`.
pub const OPENCODE: Dialect = Dialect {
    host: HostId::Opencode,
    containers: &[&["mcp"], &["mcp", "servers"]],
    list: false,
    command: "command",
    args: None,
    env: "environment",
    urls: &["url"],
    headers: &["headers"],
    remote_keys: &["oauth"],
    stdio_type: StdioType::Always("local"),
};

impl Dialect {
    /// Whether a value found in a container is a server entry at all (opencode's `mcp` also
    /// holds `servers` and `timeout`; a V2 `servers` map has no `type`).
    pub fn is_entry(&self, value: &Value) -> bool {
        match value.as_object() {
            Some(entry) if self.host == HostId::Opencode => {
                entry.get("type").is_some_and(Value::is_string)
            }
            Some(_) => true,
            None => false,
        }
    }

    /// Why this entry is not the person's to wrap, if it is not.
    pub fn skip_reason(&self, entry: &Map<String, Value>) -> Option<String> {
        let kind = entry
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let has_url = self.urls.iter().any(|k| entry.contains_key(*k));
        let reason = match self.host {
            HostId::Zed if entry.contains_key("settings") => {
                "provided by a Zed extension (it has `settings`, not a command of yours)".to_owned()
            }
            HostId::Goose if matches!(kind, "builtin" | "platform" | "frontend" | "inline_python") => {
                format!("a Goose built-in (type {kind}) that runs inside Goose")
            }
            HostId::Goose if kind == "sse" => "Goose no longer runs SSE extensions".to_owned(),
            HostId::Continue if entry.contains_key("uses") => {
                "a hub block (`uses:`); replace it with an inline entry to wrap it".to_owned()
            }
            HostId::ClaudeDesktop if has_url && !entry.contains_key(self.command) => {
                "Claude Desktop ignores remote entries in this file (remote servers are its Connectors, kept by the app)".to_owned()
            }
            HostId::ClaudeCode if entry.contains_key("headersHelper") => {
                "its headers come from a `headersHelper` command the proxy cannot run".to_owned()
            }
            HostId::Codex if entry.contains_key("http_headers_helper") => {
                "its headers come from an `http_headers_helper` command the proxy cannot run".to_owned()
            }
            HostId::Codex if entry.contains_key("experimental_environment") || entry.contains_key("environment_id") => {
                "it runs in a remote Codex environment".to_owned()
            }
            _ if entry.contains_key(self.command) || has_url => return None,
            HostId::Gemini => "a Gemini extension's override (no command or url)".to_owned(),
            _ => "neither a command nor a URL".to_owned(),
        };
        Some(reason)
    }

    /// The remote URL of an entry, if it is remote.
    pub fn url<'a>(&self, entry: &'a Map<String, Value>) -> Option<&'a str> {
        self.urls
            .iter()
            .find_map(|k| entry.get(*k).and_then(Value::as_str))
    }

    /// The headers a remote entry sends, and environment variables the wrapped entry must pass
    /// on to the proxy (Codex gives stdio children only the names it lists in `env_vars`).
    pub fn headers(&self, entry: &Map<String, Value>) -> (Vec<Header>, Vec<String>) {
        let mut headers = Vec::new();
        let mut pass = Vec::new();
        let mut map = Some(entry);
        for key in self.headers {
            map = map.and_then(|m| m.get(*key)).and_then(Value::as_object);
        }
        for (name, value) in map.into_iter().flatten() {
            let value = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let source = match self.host {
                // Goose substitutes `$VAR` in headers but never in a stdio entry's `envs`: the
                // reference goes to the proxy, which takes it from the environment.
                HostId::Goose if value.contains('$') => HeaderSource::Reference(braced(&value)),
                _ => HeaderSource::Verbatim(value),
            };
            headers.push(Header {
                name: name.clone(),
                source,
            });
        }
        if self.host == HostId::Codex {
            if let Some(var) = entry.get("bearer_token_env_var").and_then(Value::as_str) {
                headers.push(Header {
                    name: "Authorization".to_owned(),
                    source: HeaderSource::Reference(format!("Bearer ${{{var}}}")),
                });
                pass.push(var.to_owned());
            }
            let named = entry.get("env_http_headers").and_then(Value::as_object);
            for (name, var) in named.into_iter().flatten() {
                if let Some(var) = var.as_str() {
                    headers.push(Header {
                        name: name.clone(),
                        source: HeaderSource::EnvVar(var.to_owned()),
                    });
                    pass.push(var.to_owned());
                }
            }
        }
        (headers, pass)
    }
}

/// One header of a remote server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The header's name.
    pub name: String,
    /// Where its value comes from.
    pub source: HeaderSource,
}

/// Where a header's value comes from on the wrapped entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderSource {
    /// The value as written in the file (a literal, or the host's own variable syntax): it
    /// moves into the entry's environment verbatim, where the host expands what it expands.
    Verbatim(String),
    /// A value made of `${VAR}` references the proxy expands (`--header 'Name: …'`).
    Reference(String),
    /// The whole value is this environment variable (`--env-header 'Name=VAR'`).
    EnvVar(String),
}

/// `$VAR` written as `${VAR}`, the form the proxy's `--header` expands.
fn braced(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 4);
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '$'
            && chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || *n == '_')
        {
            out.push('{');
            while let Some(n) = chars
                .peek()
                .copied()
                .filter(|n| n.is_ascii_alphanumeric() || *n == '_')
            {
                out.push(n);
                chars.next();
            }
            out.push('}');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goose_variables_become_the_proxys_braced_form() {
        assert_eq!(braced("Bearer $TOKEN"), "Bearer ${TOKEN}");
        assert_eq!(braced("${A}-$B_2x"), "${A}-${B_2x}");
        assert_eq!(braced("cost $5"), "cost $5");
    }
}
