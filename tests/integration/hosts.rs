//! `mcp-consent hosts` on a temporary HOME holding every host's configuration in its real shape
//! (tests/fixtures/hosts: comments, variables, per-project entries, remote entries with
//! headers): list, dry-run, wrap, wrap again, unwrap byte for byte; broken, linked and
//! concurrently changed files.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hosts");
const CLINE_VSCODE: &str =
    "home/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json";

/// Every file of the fixture tree: host, file (under the tree), servers with their transport,
/// skipped entries.
/// `(host, file, servers as (name, transport), skipped names)`.
type Expected = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
);

#[rustfmt::skip]
const EXPECTED: &[Expected] = &[
    ("claude-desktop", "home/.config/Claude/claude_desktop_config.json", &[("filesystem", "stdio"), ("sqlite", "stdio")], &["notes"]),
    ("claude-code", "home/.claude.json", &[("github", "http"), ("memory", "stdio"), ("sentry", "http")], &[]),
    ("claude-code", "project/.mcp.json", &[("db", "stdio")], &["helper"]),
    ("cursor", "home/.cursor/mcp.json", &[("browser", "stdio"), ("linear", "http")], &[]),
    ("cursor", "project/.cursor/mcp.json", &[("workspace-tool", "stdio")], &[]),
    ("vscode", "home/.config/Code/User/mcp.json", &[("perplexity", "stdio"), ("github", "http")], &["local-socket"]),
    ("vscode", "project/.vscode/mcp.json", &[("everything", "stdio")], &[]),
    ("windsurf", "home/.codeium/windsurf/mcp_config.json", &[("git", "stdio"), ("figma", "http")], &[]),
    ("zed", "home/.config/zed/settings.json", &[("postgres", "stdio"), ("legacy", "stdio"), ("remote", "http")], &["mcp-server-github"]),
    ("zed", "project/.zed/settings.json", &[("project-tool", "stdio")], &[]),
    ("codex", "home/.codex/config.toml", &[("context7", "stdio"), ("figma", "http"), ("docs", "http")], &[]),
    ("codex", "project/.codex/config.toml", &[("local", "stdio")], &[]),
    ("gemini", "home/.gemini/settings.json", &[("pythonTools", "stdio"), ("httpServer", "http")], &["extension-override"]),
    ("goose", "home/.config/goose/config.yaml", &[("github", "stdio"), ("remote_docs", "http")], &["developer"]),
    ("cline", CLINE_VSCODE, &[("weather", "stdio"), ("remote-sse", "http"), ("streamable", "http")], &[]),
    ("cline", "home/.cline/data/settings/cline_mcp_settings.json", &[("cli-time", "stdio")], &[]),
    ("continue", "home/.continue/config.yaml", &[("SQLite MCP", "stdio"), ("Remote Search", "http")], &["anthropic/memory-mcp"]),
    ("continue", "project/.continue/mcpServers/copied.json", &[("copied", "stdio")], &[]),
    ("continue", "project/.continue/mcpServers/playwright.yaml", &[("Browser search", "stdio")], &[]),
    ("lmstudio", "home/.lmstudio/mcp.json", &[("hf-mcp-server", "http"), ("playwright", "stdio")], &[]),
    ("opencode", "home/.config/opencode/opencode.jsonc", &[("everything", "stdio"), ("context7", "http")], &[]),
    ("opencode", "project/opencode.json", &[("jira", "http"), ("local-v2", "stdio")], &[]),
];

/// A temporary HOME and project directory holding the fixtures.
struct Tree {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        copy_dir(Path::new(FIXTURES), &root);
        let claude = root.join("home/.claude.json");
        let text = fs::read_to_string(&claude).unwrap();
        let project = root.join("project").display().to_string();
        fs::write(&claude, text.replace("@PROJECT@", &project)).unwrap();
        fs::set_permissions(&claude, fs::Permissions::from_mode(0o600)).unwrap();
        fs::set_permissions(
            root.join("home/.codex/config.toml"),
            fs::Permissions::from_mode(0o640),
        )
        .unwrap();
        // A dotfile manager's link: the host names the link, the text lives elsewhere.
        let cursor = root.join("home/.cursor/mcp.json");
        fs::create_dir_all(root.join("home/dotfiles")).unwrap();
        fs::rename(&cursor, root.join("home/dotfiles/cursor-mcp.json")).unwrap();
        std::os::unix::fs::symlink(root.join("home/dotfiles/cursor-mcp.json"), &cursor).unwrap();
        Tree { _tmp: tmp, root }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_mcp-consent"))
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path("home"))
            .env("XDG_CONFIG_HOME", self.path("home/.config"))
            .env("MCP_CONSENT_STATE_DIR", self.path("state"))
            .current_dir(self.path("project"))
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    }

    fn list(&self) -> Vec<Value> {
        serde_json::from_str::<Value>(&self.ok(&["hosts", "list", "--json"]))
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }

    /// Every configuration file's bytes (the link's target for a link).
    fn snapshot(&self) -> BTreeMap<String, Vec<u8>> {
        EXPECTED
            .iter()
            .map(|(_, rel, _, _)| ((*rel).to_owned(), fs::read(self.path(rel)).unwrap()))
            .collect()
    }

    fn json(&self, rel: &str) -> Value {
        serde_json::from_str(&fs::read_to_string(self.path(rel)).unwrap()).unwrap()
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The listing as `(host, file) → (servers as (name, transport, wrapped), skipped names)`.
type Listing = BTreeMap<(String, String), (BTreeSet<(String, String, bool)>, BTreeSet<String>)>;

fn listing(tree: &Tree, list: &[Value]) -> Listing {
    let root = format!("{}/", tree.root.display());
    list.iter()
        .map(|f| {
            let file = f["file"]
                .as_str()
                .unwrap()
                .trim_start_matches(&root)
                .to_owned();
            let servers = f["servers"].as_array().unwrap().iter().map(|s| {
                (
                    s["name"].as_str().unwrap().to_owned(),
                    s["transport"].as_str().unwrap().to_owned(),
                    s["wrapped"].as_bool().unwrap(),
                )
            });
            let skipped = f["skipped"].as_array().unwrap().iter().map(|s| {
                assert!(!s["reason"].as_str().unwrap().is_empty(), "{s}");
                s["name"].as_str().unwrap().to_owned()
            });
            (
                (f["host"].as_str().unwrap().to_owned(), file),
                (servers.collect(), skipped.collect()),
            )
        })
        .collect()
}

fn expected(wrapped: bool) -> Listing {
    EXPECTED
        .iter()
        .map(|(host, file, servers, skipped)| {
            let servers = servers
                .iter()
                .map(|(n, t)| ((*n).to_owned(), (*t).to_owned(), wrapped));
            let skipped = skipped.iter().map(|s| (*s).to_owned());
            (
                ((*host).to_owned(), (*file).to_owned()),
                (servers.collect(), skipped.collect()),
            )
        })
        .collect()
}

/// The variable references of a text: `${…}`, `${{ … }}`, `{env:…}`, `{file:…}`, `$NAME`.
fn references(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for start in ["${{", "${", "{env:", "{file:"] {
        for (at, _) in text.match_indices(start) {
            if let Some(end) = text[at..].find('}') {
                out.push(text[at..at + end + 1].to_owned());
            }
        }
    }
    for (at, _) in text.match_indices('$') {
        let name: String = text[at + 1..]
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.push(format!("${name}"));
        }
    }
    out
}

fn comments(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("//") || l.starts_with('#') || l.starts_with("/*"))
        .chain(
            text.lines()
                .filter_map(|l| l.find(" # ").map(|at| &l[at..])),
        )
        .collect()
}

#[test]
fn every_host_is_listed_wrapped_and_restored_byte_for_byte() {
    let tree = Tree::new();
    let original = tree.snapshot();
    assert_eq!(listing(&tree, &tree.list()), expected(false));

    // --dry-run: a unified diff per file, nothing changed.
    let diff = tree.ok(&["hosts", "wrap", "--dry-run"]);
    for (_, rel, _, _) in EXPECTED {
        let path = tree.path(rel).display().to_string();
        assert!(
            diff.contains(&format!("--- {path}")) && diff.contains(&format!("+++ {path}")),
            "{rel}:\n{diff}"
        );
    }
    assert!(diff.contains("+      \"command\": \""), "{diff}");
    assert_eq!(tree.snapshot(), original, "--dry-run changed nothing");
    assert!(
        !tree.path("state/hosts/backups").exists()
            || fs::read_dir(tree.path("state/hosts/backups"))
                .unwrap()
                .count()
                == 0
    );

    let said = tree.ok(&["hosts", "wrap"]);
    assert!(
        said.contains("restart") && said.contains("Claude Code") && said.contains("Codex"),
        "{said}"
    );
    assert_eq!(listing(&tree, &tree.list()), expected(true));
    let wrapped = tree.snapshot();
    for (rel, before) in &original {
        let (before, after) = (text(before), text(&wrapped[rel]));
        assert_ne!(before, after, "{rel} was wrapped");
        for comment in comments(&before) {
            assert!(after.contains(comment), "{rel} keeps {comment:?}:\n{after}");
        }
        for reference in references(&before) {
            // Goose expands `$VAR` in headers but not in a stdio entry: the proxy gets `${VAR}`.
            let braced = format!("${{{}}}", reference.trim_start_matches('$'));
            let kept =
                after.contains(&reference) || (rel.contains("goose") && after.contains(&braced));
            assert!(kept, "{rel} keeps {reference} verbatim:\n{after}");
        }
    }
    let exe = fs::canonicalize(env!("CARGO_BIN_EXE_mcp-consent"))
        .unwrap()
        .display()
        .to_string();
    wrapped_entries_launch_the_proxy(&tree, &exe);
    assert!(
        fs::symlink_metadata(tree.path("home/.cursor/mcp.json"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link stays a link"
    );
    assert_ne!(
        fs::read(tree.path("home/dotfiles/cursor-mcp.json")).unwrap(),
        original["home/.cursor/mcp.json"]
    );
    let mode = |rel: &str| fs::metadata(tree.path(rel)).unwrap().permissions().mode() & 0o777;
    assert_eq!(
        (mode("home/.codex/config.toml"), mode("home/.claude.json")),
        (0o640, 0o600),
        "modes kept"
    );

    let backups: Vec<_> = fs::read_dir(tree.path("state/hosts/backups"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(
        backups.len(),
        EXPECTED.len(),
        "one backup per file written: {backups:?}"
    );
    for backup in &backups {
        assert_eq!(
            fs::metadata(backup).unwrap().permissions().mode() & 0o777,
            0o600,
            "{backup:?}"
        );
        let name = backup.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            EXPECTED
                .iter()
                .any(|(host, _, _, _)| name.starts_with(&format!("{host}-"))),
            "{name}"
        );
        assert!(name.ends_with('Z'), "named by UTC time: {name}");
    }

    // Wrapping again changes nothing: wrapped entries are recognised by their command.
    assert!(tree.ok(&["hosts", "wrap"]).contains("nothing to change"));
    assert_eq!(tree.snapshot(), wrapped);

    tree.ok(&["hosts", "unwrap"]);
    for (rel, bytes) in tree.snapshot() {
        assert_eq!(
            text(&bytes),
            text(&original[&rel]),
            "{rel} is back byte for byte"
        );
    }
    assert_eq!(listing(&tree, &tree.list()), expected(false));
}

/// What a host launches after `wrap`: this program, `proxy --name NAME`, then the original
/// command (stdio) or the URL with header values in the environment (remote).
fn wrapped_entries_launch_the_proxy(tree: &Tree, exe: &str) {
    let desktop =
        &tree.json("home/.config/Claude/claude_desktop_config.json")["mcpServers"]["filesystem"];
    assert_eq!(
        desktop,
        &json!({"command": exe, "args": ["proxy", "--name", "filesystem", "--", "npx", "-y",
            "@modelcontextprotocol/server-filesystem", "/home/user/Desktop"]}),
        "a stdio entry gains nothing but the wrapper"
    );
    let claude = tree.json("home/.claude.json");
    let project = tree.path("project").display().to_string();
    let sentry = &claude["projects"][&project]["mcpServers"]["sentry"];
    assert_eq!(
        sentry,
        &json!({"type": "stdio", "command": exe,
            "args": ["proxy", "--name", "sentry", "--url", "https://mcp.sentry.dev/sse", "--env-header", "X-Token=MCP_CONSENT_HEADER_X_TOKEN"],
            "env": {"MCP_CONSENT_HEADER_X_TOKEN": "literal-secret-123"}}),
        "a literal secret moves into the environment"
    );
    assert_eq!(
        claude["mcpServers"]["github"]["env"]["MCP_CONSENT_HEADER_AUTHORIZATION"],
        "Bearer ${GITHUB_PAT}"
    );
    assert_eq!(
        claude["projects"][&project]["enabledMcpjsonServers"],
        json!(["db"])
    );

    let vscode = fs::read_to_string(tree.path("home/.config/Code/User/mcp.json")).unwrap();
    assert!(
        vscode.contains("\"MCP_CONSENT_HEADER_AUTHORIZATION\": \"Bearer ${input:github-token}\""),
        "{vscode}"
    );
    assert!(
        vscode.contains("\"id\": \"perplexity-key\""),
        "inputs kept: {vscode}"
    );

    let codex: toml::Table = fs::read_to_string(tree.path("home/.codex/config.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let figma = &codex["mcp_servers"]["figma"];
    assert!(
        figma.get("url").is_none() && figma.get("bearer_token_env_var").is_none(),
        "Codex refuses http keys on stdio: {figma}"
    );
    let args: Vec<&str> = figma["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        args.contains(&"Authorization: Bearer ${FIGMA_OAUTH_TOKEN}"),
        "{args:?}"
    );
    assert_eq!(
        figma["env_vars"].as_array().unwrap()[0].as_str(),
        Some("FIGMA_OAUTH_TOKEN")
    );
    assert_eq!(
        codex["mcp_servers"]["docs"]["tools"]["search"]["approval_mode"].as_str(),
        Some("approve")
    );

    let opencode = fs::read_to_string(tree.path("home/.config/opencode/opencode.jsonc")).unwrap();
    assert!(
        opencode.contains("\"type\": \"local\"") && !opencode.contains("\"type\": \"remote\""),
        "{opencode}"
    );
    let goose = fs::read_to_string(tree.path("home/.config/goose/config.yaml")).unwrap();
    assert!(
        goose.contains("Authorization: ${DOCS_TOKEN}")
            || goose.contains("Authorization: Bearer ${DOCS_TOKEN}"),
        "{goose}"
    );
    for secret in [
        "literal-secret-123",
        "cline-token",
        "hf_literal_token",
        "zed-literal-token",
        "fixed-value",
    ] {
        for (_, rel, _, _) in EXPECTED {
            let t = fs::read_to_string(tree.path(rel)).unwrap();
            for line in t.lines().filter(|l| l.contains(secret)) {
                assert!(
                    !line.contains("--"),
                    "{secret} is never an argument ({rel}): {line}"
                );
            }
        }
    }
}

#[test]
fn one_host_and_one_server_at_a_time() {
    let tree = Tree::new();
    let original = tree.snapshot();
    tree.ok(&["hosts", "wrap", "--host", "codex", "--server", "figma"]);
    let after = tree.snapshot();
    for (rel, bytes) in &after {
        assert_eq!(
            bytes != &original[rel],
            rel == "home/.codex/config.toml",
            "{rel}"
        );
    }
    let servers = listing(&tree, &tree.list());
    let codex = &servers[&("codex".to_owned(), "home/.codex/config.toml".to_owned())].0;
    let wrapped: Vec<_> = codex.iter().filter(|s| s.2).map(|s| s.0.as_str()).collect();
    assert_eq!(wrapped, ["figma"]);
    tree.ok(&["hosts", "wrap", "--host", "codex", "--server", "docs"]);
    tree.ok(&["hosts", "unwrap", "--host", "codex", "--server", "docs"]);
    assert_eq!(
        tree.snapshot(),
        after,
        "each write undone by its own backup"
    );
    tree.ok(&["hosts", "unwrap", "--host", "codex"]);
    assert_eq!(tree.snapshot(), original);
}

#[test]
fn unwrap_after_the_host_changed_the_file_restores_the_entries_and_keeps_the_change() {
    let tree = Tree::new();
    let rel = "home/.config/Claude/claude_desktop_config.json";
    let before = tree.json(rel);
    tree.ok(&["hosts", "wrap", "--host", "claude-desktop"]);
    let mut changed = tree.json(rel);
    changed["globalShortcut"] = json!("Alt+Space");
    fs::write(
        tree.path(rel),
        serde_json::to_string_pretty(&changed).unwrap(),
    )
    .unwrap();
    tree.ok(&["hosts", "unwrap", "--host", "claude-desktop"]);
    let after = tree.json(rel);
    assert_eq!(after["mcpServers"], before["mcpServers"]);
    assert_eq!(after["globalShortcut"], "Alt+Space");
}

#[test]
fn a_broken_file_is_left_alone_with_a_clear_message() {
    let tree = Tree::new();
    let broken = tree.path("home/.codeium/windsurf/mcp_config.json");
    fs::write(
        &broken,
        "{\"mcpServers\": {\"git\": {\"command\": \"uvx\",}\n",
    )
    .unwrap();
    let out = tree.run(&["hosts", "wrap"]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&broken.display().to_string()) && err.contains("does not parse"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(&broken).unwrap(),
        "{\"mcpServers\": {\"git\": {\"command\": \"uvx\",}\n"
    );
    let servers = listing(&tree, &tree.list());
    assert!(
        servers[&("lmstudio".to_owned(), "home/.lmstudio/mcp.json".to_owned())]
            .0
            .iter()
            .all(|s| s.2),
        "the other files were wrapped"
    );
    let listed = tree.run(&["hosts", "list"]);
    assert!(text(&listed.stderr).contains("does not parse"));
}

#[test]
fn a_file_changed_between_read_and_write_is_not_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mcp.json");
    fs::write(&path, "{\"mcpServers\": {}}\n").unwrap();
    let loaded = mcp_consent::hosts::file::read(&path).unwrap();
    fs::write(&path, "{\"mcpServers\": {\"new\": {\"command\": \"x\"}}}\n").unwrap();
    let err = loaded.replace("{}\n").unwrap_err();
    assert!(
        matches!(err, mcp_consent::hosts::HostsError::Changed { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("not overwritten"), "{err}");
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "{\"mcpServers\": {\"new\": {\"command\": \"x\"}}}\n"
    );
}

#[test]
fn doctor_names_the_unreachable_service_and_the_unwrapped_hosts() {
    let tree = Tree::new();
    let out = tree.run(&["doctor"]);
    assert!(!out.status.success(), "no service: exit non-zero");
    let said = text(&out.stdout);
    assert!(
        said.contains("FAIL") && said.contains("mcp-consent serve"),
        "{said}"
    );
    assert!(
        said.contains("claude-code: 0 of 3 server(s) wrapped")
            && said.contains("hosts wrap --host claude-code"),
        "{said}"
    );
    assert!(said.contains("notifications"), "{said}");
    tree.ok(&["hosts", "wrap"]);
    let said = text(&tree.run(&["doctor"]).stdout);
    assert!(
        said.contains("claude-code: 3 of 3 server(s) wrapped"),
        "{said}"
    );
}
