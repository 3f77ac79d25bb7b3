//! Where each host keeps its MCP configuration on Linux and macOS: user files under `HOME` and
//! the XDG configuration directory (each host's own variables honoured: `CLAUDE_CONFIG_DIR`,
//! `CODEX_HOME`, `GEMINI_CLI_HOME`, `GOOSE_PATH_ROOT`, …), and project files in the current
//! directory and, for Claude Code, in every project `~/.claude.json` names.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::dialect::{self, Dialect};
use super::{Format, HostId};

/// What the file locations depend on: the home directory, the current directory and the
/// environment.
#[derive(Debug, Clone)]
pub struct Env {
    /// `HOME`.
    pub home: PathBuf,
    /// The current directory (for project files).
    pub cwd: PathBuf,
    /// Whether the paths are macOS's.
    pub macos: bool,
    vars: Vec<(String, String)>,
}

impl Env {
    /// The environment of this process.
    pub fn current() -> Option<Env> {
        Some(Env {
            home: dirs::home_dir()?,
            cwd: std::env::current_dir().ok()?,
            macos: cfg!(target_os = "macos"),
            vars: std::env::vars().collect(),
        })
    }

    /// A made-up environment (tests).
    pub fn with(home: PathBuf, cwd: PathBuf, vars: &[(&str, &str)]) -> Env {
        Env {
            home,
            cwd,
            macos: false,
            vars: vars
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    /// A variable, when set and not empty.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }

    fn var_path(&self, name: &str) -> Option<PathBuf> {
        self.var(name).map(PathBuf::from)
    }

    /// `$XDG_CONFIG_HOME` or `~/.config` (macOS: `~/Library/Application Support`), where
    /// desktop applications keep their settings.
    fn app_config(&self) -> PathBuf {
        if self.macos {
            self.home.join("Library/Application Support")
        } else {
            self.xdg_config()
        }
    }

    /// `$XDG_CONFIG_HOME` or `~/.config`, on both systems (command-line tools use it on macOS
    /// too).
    fn xdg_config(&self) -> PathBuf {
        self.var_path("XDG_CONFIG_HOME")
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| self.home.join(".config"))
    }
}

/// One configuration file of a host.
#[derive(Debug, Clone)]
pub struct HostFile {
    /// The host.
    pub host: HostId,
    /// The file, as the host names it (it may be a symlink).
    pub path: PathBuf,
    /// Its syntax.
    pub format: Format,
    /// Its entries' shape.
    pub dialect: Dialect,
    /// The host rewrites this file while it runs (Claude Code's `~/.claude.json`).
    pub live: bool,
    /// The file is shared with a project (and often committed).
    pub project: bool,
}

/// Every existing configuration file of the given hosts, in host order, each file once.
pub fn find(env: &Env, hosts: &[HostId]) -> Vec<HostFile> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for host in hosts {
        for file in candidates(env, *host) {
            let key = std::fs::canonicalize(&file.path).unwrap_or_else(|_| file.path.clone());
            if file.path.is_file() && seen.insert(key) {
                out.push(file);
            }
        }
    }
    out
}

fn file(host: HostId, path: PathBuf, format: Format, dialect: Dialect) -> HostFile {
    HostFile {
        host,
        path,
        format,
        dialect,
        live: false,
        project: false,
    }
}

fn project(mut f: HostFile) -> HostFile {
    f.project = true;
    f
}

fn candidates(env: &Env, host: HostId) -> Vec<HostFile> {
    use Format::{Json, Jsonc, Toml, Yaml};
    let home = &env.home;
    let cwd = &env.cwd;
    let f = |path: PathBuf, format, dialect| file(host, path, format, dialect);
    match host {
        HostId::ClaudeDesktop => vec![f(
            env.app_config().join("Claude/claude_desktop_config.json"),
            Json,
            dialect::CLAUDE_DESKTOP,
        )],
        HostId::ClaudeCode => claude_code(env),
        HostId::Cursor => vec![
            f(home.join(".cursor/mcp.json"), Json, dialect::CURSOR),
            project(f(cwd.join(".cursor/mcp.json"), Json, dialect::CURSOR)),
        ],
        HostId::Vscode => vscode(env),
        HostId::Windsurf => vec![f(
            home.join(".codeium/windsurf/mcp_config.json"),
            Json,
            dialect::WINDSURF,
        )],
        HostId::Zed => {
            let config = env
                .var_path("FLATPAK_XDG_CONFIG_HOME")
                .unwrap_or_else(|| env.xdg_config());
            vec![
                f(config.join("zed/settings.json"), Jsonc, dialect::ZED),
                project(f(cwd.join(".zed/settings.json"), Jsonc, dialect::ZED)),
            ]
        }
        HostId::Codex => {
            let codex = env
                .var_path("CODEX_HOME")
                .unwrap_or_else(|| home.join(".codex"));
            vec![
                f(codex.join("config.toml"), Toml, dialect::CODEX),
                project(f(cwd.join(".codex/config.toml"), Toml, dialect::CODEX)),
            ]
        }
        HostId::Gemini => {
            let gemini_home = env
                .var_path("GEMINI_CLI_HOME")
                .unwrap_or_else(|| home.clone());
            vec![
                f(
                    gemini_home.join(".gemini/settings.json"),
                    Jsonc,
                    dialect::GEMINI,
                ),
                project(f(cwd.join(".gemini/settings.json"), Jsonc, dialect::GEMINI)),
            ]
        }
        HostId::Goose => {
            let config = match env.var_path("GOOSE_PATH_ROOT") {
                Some(root) => root.join("config"),
                None => env.xdg_config().join("goose"),
            };
            vec![f(config.join("config.yaml"), Yaml, dialect::GOOSE)]
        }
        HostId::Cline => cline(env),
        HostId::Continue => continue_files(env),
        HostId::Lmstudio => lmstudio(env),
        HostId::Opencode => opencode(env),
    }
}

/// Every VS Code product's user file and profiles, the portable Copilot file, and the
/// project's `.vscode/mcp.json`.
fn vscode(env: &Env) -> Vec<HostFile> {
    use Format::{Json, Jsonc};
    let (home, cwd) = (&env.home, &env.cwd);
    let f = |path: PathBuf, format, dialect| file(HostId::Vscode, path, format, dialect);
    let mut files = Vec::new();
    for product in ["Code", "Code - Insiders"] {
        let user = env.app_config().join(product).join("User");
        files.push(f(user.join("mcp.json"), Jsonc, dialect::VSCODE));
        for profile in subdirs(&user.join("profiles")) {
            files.push(f(profile.join("mcp.json"), Jsonc, dialect::VSCODE));
        }
    }
    let copilot = env
        .var_path("COPILOT_HOME")
        .unwrap_or_else(|| home.join(".copilot"));
    files.push(f(
        copilot.join("mcp-config.json"),
        Json,
        dialect::VSCODE_PORTABLE,
    ));
    files.push(project(f(
        cwd.join(".vscode/mcp.json"),
        Jsonc,
        dialect::VSCODE,
    )));
    files
}

/// The VS Code extension's settings and the CLI's data directory.
fn cline(env: &Env) -> Vec<HostFile> {
    use Format::Json;
    let home = &env.home;
    let f = |path: PathBuf, format, dialect| file(HostId::Cline, path, format, dialect);
    let data = env
        .var_path("CLINE_DATA_DIR")
        .or_else(|| env.var_path("CLINE_DIR").map(|d| d.join("data")))
        .unwrap_or_else(|| home.join(".cline/data"));
    let vscode = env
        .app_config()
        .join("Code/User/globalStorage/saoudrizwan.claude-dev/settings");
    vec![
        f(vscode.join("cline_mcp_settings.json"), Json, dialect::CLINE),
        f(
            data.join("settings/cline_mcp_settings.json"),
            Json,
            dialect::CLINE,
        ),
    ]
}

/// The global `config.yaml` and every block file of the project's `.continue/mcpServers`.
fn continue_files(env: &Env) -> Vec<HostFile> {
    use Format::{Json, Yaml};
    let (home, cwd) = (&env.home, &env.cwd);
    let f = |path: PathBuf, format, dialect| file(HostId::Continue, path, format, dialect);
    let global = env
        .var_path("CONTINUE_GLOBAL_DIR")
        .unwrap_or_else(|| home.join(".continue"));
    let mut files = vec![f(global.join("config.yaml"), Yaml, dialect::CONTINUE_YAML)];
    for block in files_in(&cwd.join(".continue/mcpServers")) {
        let ext = block
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default();
        match ext {
            "yaml" | "yml" => files.push(project(f(block, Yaml, dialect::CONTINUE_YAML))),
            "json" => files.push(project(f(block, Json, dialect::CONTINUE_JSON))),
            _ => {}
        }
    }
    files
}

/// The one `mcp.json` LM Studio reads: under its home pointer, else the first that exists.
fn lmstudio(env: &Env) -> Vec<HostFile> {
    use Format::Json;
    let home = &env.home;
    let f = |path: PathBuf, format, dialect| file(HostId::Lmstudio, path, format, dialect);
    let pointed = std::fs::read_to_string(home.join(".lmstudio-home-pointer"))
        .ok()
        .map(|p| PathBuf::from(p.trim()))
        .filter(|p| p.is_absolute());
    let dirs = pointed
        .into_iter()
        .chain([home.join(".lmstudio"), home.join(".cache/lm-studio")]);
    // The first file that exists is the one LM Studio reads.
    dirs.map(|d| d.join("mcp.json"))
        .find(|p| p.is_file())
        .map(|p| f(p, Json, dialect::LMSTUDIO))
        .into_iter()
        .collect()
}

/// `$OPENCODE_CONFIG`, the config directories' files, and the project's.
fn opencode(env: &Env) -> Vec<HostFile> {
    use Format::Jsonc;
    let cwd = &env.cwd;
    let f = |path: PathBuf, format, dialect| file(HostId::Opencode, path, format, dialect);
    let mut dirs = vec![env.xdg_config().join("opencode")];
    dirs.extend(env.var_path("OPENCODE_CONFIG_DIR"));
    let mut files: Vec<HostFile> = env
        .var_path("OPENCODE_CONFIG")
        .map(|p| f(p, Jsonc, dialect::OPENCODE))
        .into_iter()
        .collect();
    for dir in dirs {
        for name in ["opencode.jsonc", "opencode.json", "config.json"] {
            files.push(f(dir.join(name), Jsonc, dialect::OPENCODE));
        }
    }
    for dir in [cwd.clone(), cwd.join(".opencode")] {
        for name in ["opencode.jsonc", "opencode.json"] {
            files.push(project(f(dir.join(name), Jsonc, dialect::OPENCODE)));
        }
    }
    files
}

/// `~/.claude.json` (or `$CLAUDE_CONFIG_DIR/.claude.json`: sources disagree, so both), and
/// the `.mcp.json` of the current directory and of every project it names.
fn claude_code(env: &Env) -> Vec<HostFile> {
    let mut users = vec![env.home.join(".claude.json")];
    if let Some(dir) = env.var_path("CLAUDE_CONFIG_DIR") {
        users.insert(0, dir.join(".claude.json"));
    }
    let mut projects = vec![env.cwd.clone()];
    let mut files = Vec::new();
    for user in users {
        projects.extend(project_dirs(&user));
        let mut f = file(
            HostId::ClaudeCode,
            user,
            Format::Json,
            dialect::CLAUDE_CODE_USER,
        );
        f.live = true;
        files.push(f);
    }
    for dir in projects {
        files.push(project(file(
            HostId::ClaudeCode,
            dir.join(".mcp.json"),
            Format::Json,
            dialect::CLAUDE_CODE_PROJECT,
        )));
    }
    files
}

/// The project directories `~/.claude.json` names (its `projects` keys).
fn project_dirs(user: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(user) else {
        return Vec::new();
    };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    value
        .get("projects")
        .and_then(serde_json::Value::as_object)
        .map(|p| {
            p.keys()
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .collect()
        })
        .unwrap_or_default()
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    children(dir, Path::is_dir)
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    children(dir, Path::is_file)
}

/// The entries of `dir` that pass `keep`, sorted.
fn children(dir: &Path, keep: fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| keep(p))
        .collect();
    out.sort();
    out
}

/// Managed policy files that key on a server's command line, so that a wrapped server may be
/// blocked: `(host, file)` for each that exists under `root` (`/` outside tests).
pub fn allowlists(env: &Env, root: &Path) -> Vec<(HostId, PathBuf)> {
    let codex = env
        .var_path("CODEX_HOME")
        .unwrap_or_else(|| env.home.join(".codex"));
    let candidates = [
        (
            HostId::ClaudeCode,
            root.join("etc/claude-code/managed-mcp.json"),
        ),
        (
            HostId::ClaudeCode,
            root.join("etc/claude-code/managed-settings.json"),
        ),
        (
            HostId::ClaudeCode,
            root.join("Library/Application Support/ClaudeCode/managed-mcp.json"),
        ),
        (
            HostId::ClaudeCode,
            root.join("Library/Application Support/ClaudeCode/managed-settings.json"),
        ),
        (HostId::Codex, root.join("etc/codex/requirements.toml")),
        (HostId::Codex, root.join("etc/codex/managed_config.toml")),
        (HostId::Codex, codex.join("requirements.toml")),
    ];
    candidates
        .into_iter()
        .filter(|(_, p)| p.is_file())
        .collect()
}
