//! The references in `docs/` kept equal to the code they describe: docs/configuration.md names
//! every key the config file accepts, and no key it does not (the keys are found by asking the
//! config parser itself, table by table, so the list cannot drift from the serde structs);
//! docs/metrics.md lists exactly the metrics, their types and their labels that `/metrics`
//! exposes on a running service; docs/cli.md names every command and long flag the command
//! line defines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use mcp_consent::config::{Config, ConfigError};
use serde_json::json;
use toml::Value;

use crate::helpers::*;

/// A key no struct has: where the parser names it unknown, it also lists the keys it knows.
const PROBE: &str = "__probe";

/// One step from the top of the config file to a table.
#[derive(Debug, Clone)]
enum Step {
    /// `name = …` in the table above.
    Key(String),
    /// An element of the array of tables above (`[[name]]`).
    Element,
    /// That element's tag key set to one variant (`kind = "webhook"`).
    Tagged(String, String),
}

/// The TOML document with `leaf` placed at `path` (each step's table otherwise empty).
fn document(path: &[Step], leaf: toml::Table) -> Value {
    let Some((first, rest)) = path.split_first() else {
        return Value::Table(leaf);
    };
    match first {
        Step::Key(name) => {
            let mut table = toml::Table::new();
            table.insert(name.clone(), document(rest, leaf));
            Value::Table(table)
        }
        Step::Element => Value::Array(vec![document(rest, leaf)]),
        Step::Tagged(tag, variant) => {
            let Value::Table(mut table) = document(rest, leaf) else {
                unreachable!("a tag is set on a table")
            };
            table.insert(tag.clone(), Value::String(variant.clone()));
            Value::Table(table)
        }
    }
}

/// What [`Config::parse`] says of `leaf` at `path`.
fn refusal(path: &[Step], leaf: toml::Table) -> String {
    let text = toml::to_string(&document(path, leaf)).unwrap();
    match Config::parse(&text) {
        Ok(_) => String::new(),
        Err(ConfigError::Toml { message, .. }) => message,
        Err(other) => other.to_string(),
    }
}

fn probe_table() -> toml::Table {
    let mut t = toml::Table::new();
    t.insert(PROBE.to_owned(), Value::Integer(1));
    t
}

/// The backquoted names serde lists after "expected" (`one of `a`, `b``, `` `a` or `b` ``,
/// `` `a` ``; none for "there are no fields").
fn expected_names(message: &str, marker: &str) -> Option<Vec<String>> {
    let after = &message[message.find(marker)? + marker.len()..];
    // Up to where the message names the key it is in (`in `kind``), if it does.
    let list = after.lines().next().unwrap_or_default();
    let list = list.split(" in `").next().unwrap_or_default();
    let list = list.split_once("expected").map_or("", |(_, l)| l);
    Some(
        list.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect(),
    )
}

/// The keys of the table at `path`, or `None` when no table of the config lives there.
fn table_keys(path: &[Step]) -> Option<Vec<String>> {
    expected_names(
        &refusal(path, probe_table()),
        &format!("unknown field `{PROBE}`"),
    )
}

/// Every leaf key the config accepts, as (table, key): the table as its TOML header names it
/// (`""` for the top, `retention`, `models`, `notifications.channels`), with `#variant` for the
/// keys of one variant of a tagged table.
fn accepted_keys() -> BTreeSet<(String, String)> {
    let mut keys = BTreeSet::new();
    walk(&[], &mut keys);
    keys
}

fn table_name(path: &[Step]) -> String {
    let mut name = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !name.is_empty() {
                    name.push('.');
                }
                name.push_str(k);
            }
            Step::Element => {}
            Step::Tagged(_, variant) => {
                name.push('#');
                name.push_str(variant);
            }
        }
    }
    name
}

fn walk(path: &[Step], keys: &mut BTreeSet<(String, String)>) {
    let fields = table_keys(path).unwrap_or_else(|| panic!("no table at {path:?}"));
    for field in fields {
        let mut below = path.to_vec();
        below.push(Step::Key(field.clone()));
        if table_keys(&below).is_some() {
            walk(&below, keys);
            continue;
        }
        below.push(Step::Element);
        if table_keys(&below).is_some() {
            walk(&below, keys);
            continue;
        }
        // An array of tables told apart by a tag: an element without it names the tag.
        let message = refusal(&below, probe_table());
        if let Some(tag) = expected_tag(&message) {
            keys.insert((table_name(&below), tag.clone()));
            let mut unknown = toml::Table::new();
            unknown.insert(tag.clone(), Value::String(PROBE.to_owned()));
            // The refusal never repeats the value; it lists the variants it expected.
            let variants = expected_names(&refusal(&below, unknown), "unknown variant `…`")
                .unwrap_or_else(|| panic!("no variants of {tag} at {below:?}"));
            for variant in variants {
                let mut tagged = below.clone();
                tagged.push(Step::Tagged(tag.clone(), variant));
                walk(&tagged, keys);
            }
            continue;
        }
        keys.insert((table_name(path), field));
    }
}

/// The tag a tagged table asks for (`missing field `kind``), if that is what `message` says.
fn expected_tag(message: &str) -> Option<String> {
    let after = &message[message.find("missing field `")? + "missing field `".len()..];
    after.split('`').next().map(str::to_owned)
}

/// (table, key) for every row of docs/configuration.md: a heading naming a TOML header in
/// backquotes (`` `[retention]` ``, `` `[[models]]` ``, with `` `kind = "ntfy"` `` for one
/// variant, or that alone under its table) opens a table, "Top-level keys" the top; a row whose first cell is a backquoted key
/// belongs to the table above it and must give its type, default and meaning.
fn documented_keys(text: &str) -> BTreeSet<(String, String)> {
    let mut keys = BTreeSet::new();
    let mut table: Option<String> = None;
    for line in text.lines() {
        if line.starts_with('#') {
            let base = table.as_deref().map(|t| t.split('#').next().unwrap_or(t));
            table = heading_table(line, base);
            continue;
        }
        let Some(row) = line.strip_prefix("| `") else {
            continue;
        };
        let Some(current) = &table else { continue };
        let key = row.split('`').next().unwrap_or_default().to_owned();
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
        assert!(
            cells.len() >= 4 && cells.iter().all(|c| !c.trim().is_empty()),
            "docs/configuration.md: the row of {key} in [{current}] needs key | type | default | meaning: {line}"
        );
        keys.insert((current.clone(), key));
    }
    keys
}

/// The table a heading opens; a heading naming only a variant (`` `kind = "ntfy"` ``) is one of
/// the table above (`base`).
fn heading_table(line: &str, base: Option<&str>) -> Option<String> {
    if line.to_lowercase().contains("top-level keys") {
        return Some(String::new());
    }
    let quoted: Vec<&str> = line.split('`').skip(1).step_by(2).collect();
    let variant = quoted.iter().find_map(|q| q.strip_prefix("kind = \""));
    let mut name = match quoted.iter().find(|q| q.starts_with('[')) {
        Some(header) => header.trim_matches(['[', ']']).to_owned(),
        None if variant.is_some() => base?.to_owned(),
        None => return None,
    };
    if let Some(variant) = variant {
        name.push('#');
        name.push_str(variant.trim_end_matches('"'));
    }
    Some(name)
}

fn read_doc(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_configuration_reference_names_every_key_the_config_accepts_and_no_other() {
    let accepted = accepted_keys();
    // The walk itself must have found the tables: a parser message it no longer understands
    // would otherwise give an empty list and a vacuous comparison.
    for (table, key) in [
        ("", "listen"),
        ("retention", "max_age_days"),
        ("models", "api_key_file"),
        ("tools.rules", "action"),
        ("notifications.channels", "kind"),
        ("notifications.channels#email", "smtp_url"),
    ] {
        assert!(
            accepted.contains(&(table.to_owned(), key.to_owned())),
            "the walk of the config found no {table}.{key}: {accepted:?}"
        );
    }
    let documented = documented_keys(&read_doc("configuration.md"));
    let missing: Vec<_> = accepted.difference(&documented).collect();
    let stale: Vec<_> = documented.difference(&accepted).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "docs/configuration.md is out of step with the config parser.\n\
         accepted but not documented (table, key): {missing:?}\n\
         documented but not accepted: {stale:?}"
    );
}

/// One metric family: its type and the names of its labels.
type Families = BTreeMap<String, (String, BTreeSet<String>)>;

/// The families of a Prometheus text exposition: `# TYPE` lines give name and type, the samples
/// their labels (a histogram's `_bucket`, `_sum` and `_count` belong to it; `le` is the bucket's
/// bound, not a label of the family).
fn exposed_families(text: &str) -> Families {
    let mut families = Families::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            families.insert(name.to_owned(), (kind.to_owned(), BTreeSet::new()));
        }
    }
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let series = line.split(' ').next().unwrap();
        let (name, labels) = series.split_once('{').unwrap_or((series, ""));
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| {
                name.strip_suffix(s)
                    .filter(|f| families.get(*f).is_some_and(|(k, _)| k == "histogram"))
            })
            .unwrap_or(name);
        let (_, names) = families
            .get_mut(family)
            .unwrap_or_else(|| panic!("a sample of no family: {line}"));
        for pair in labels.trim_end_matches('}').split("\",") {
            if let Some((label, _)) = pair.split_once('=')
                && label != "le"
            {
                names.insert(label.to_owned());
            }
        }
    }
    families
}

/// The rows of docs/metrics.md's tables: `` | `name` | type | `label`, … or — | meaning | ``.
fn documented_families(text: &str) -> Families {
    let mut families = Families::new();
    for line in text.lines() {
        let Some(row) = line.strip_prefix("| `") else {
            continue;
        };
        let name = row.split('`').next().unwrap().to_owned();
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
        assert!(
            cells.len() >= 4,
            "docs/metrics.md: the row of {name} needs metric | type | labels | meaning"
        );
        let labels = cells[2]
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect();
        families.insert(name, (cells[1].trim().to_owned(), labels));
    }
    families
}

#[tokio::test]
async fn the_metrics_reference_lists_exactly_the_metrics_and_labels_the_service_exposes() {
    // A labelled family shows only once it has a series: make each happen. A channel whose
    // port nobody listens on fails its notice.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let config = Config::parse(&format!(
        "[[notifications.channels]]\nkind = \"ntfy\"\nurl = \"http://{closed}/topic\"\n"
    ))
    .unwrap();
    let app = spawn_with(config).await;
    let id = app.open_ok(form_request(1)).await;
    let (status, _) = app.answer(&id, json!({"action": "decline"})).await;
    assert_eq!(status, reqwest::StatusCode::OK);
    app.open(
        json!({"jsonrpc": "2.0", "id": 2, "method": "sampling/createMessage", "params": {"messages": []}}),
        full_caps(),
        "2025-11-25",
    )
    .await;
    let dropped = app
        .post_json(
            "/api/v1/proxy/dropped",
            &json!({"reason": "unparseable", "count": 1}),
        )
        .await;
    assert!(dropped.status().is_success(), "{}", dropped.status());

    let documented = documented_families(&read_doc("metrics.md"));
    assert!(
        documented.contains_key("mcp_consent_questions_pending"),
        "docs/metrics.md has no metric table: {documented:?}"
    );
    let exposed = eventually(Duration::from_secs(10), || async {
        let text = app.get("/metrics").await.text().await.unwrap();
        let families = exposed_families(&text);
        documented
            .keys()
            .filter(|name| cfg!(target_os = "linux") || !name.starts_with("process_"))
            .all(|name| families.contains_key(name))
            .then_some(families)
    })
    .await;
    let Some(exposed) = exposed else {
        let text = app.get("/metrics").await.text().await.unwrap();
        panic!(
            "docs/metrics.md lists metrics /metrics never exposed: {:?}\nexposed:\n{text}",
            documented
                .keys()
                .filter(|n| !exposed_families(&text).contains_key(*n))
                .collect::<Vec<_>>()
        );
    };
    let documented: Families = documented
        .into_iter()
        .filter(|(name, _)| cfg!(target_os = "linux") || !name.starts_with("process_"))
        .collect();
    assert_eq!(
        exposed, documented,
        "docs/metrics.md (right) differs from /metrics (left) in a name, type or label"
    );
}

/// Every command path (`questions answer`) with its long flags, from the command line's own
/// definition.
fn commands(cmd: &clap::Command, path: &str, out: &mut Vec<(String, Vec<String>)>) {
    let flags = cmd
        .get_arguments()
        .filter(|a| !a.is_global_set())
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .filter(|l| l != "--help" && l != "--version")
        .collect();
    if !path.is_empty() {
        out.push((path.to_owned(), flags));
    }
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let below = format!("{path} {}", sub.get_name());
        commands(sub, below.trim(), out);
    }
}

#[test]
fn the_command_line_reference_names_every_command_and_flag() {
    use clap::CommandFactory;
    let mut all = Vec::new();
    commands(&mcp_consent::cli::Cli::command(), "", &mut all);
    assert!(
        all.iter().any(|(c, _)| c == "hosts wrap"),
        "the walk found the subcommands: {all:?}"
    );
    let doc = read_doc("cli.md");
    let rows: Vec<&str> = doc.lines().filter(|l| l.starts_with("| `")).collect();
    let mut missing = Vec::new();
    for (command, flags) in &all {
        // A command's row starts with it in backquotes (arguments may follow inside them).
        let Some(row) = rows.iter().find(|r| {
            r.split('`')
                .nth(1)
                .is_some_and(|c| c == command || c.starts_with(&format!("{command} ")))
        }) else {
            missing.push(command.clone());
            continue;
        };
        for flag in flags {
            if !row.contains(&format!("`{flag}")) && !row.contains(&format!("/`{flag}")) {
                missing.push(format!("{command} {flag}"));
            }
        }
    }
    assert!(
        doc.contains("`--state-dir"),
        "docs/cli.md names the global --state-dir"
    );
    assert!(
        missing.is_empty(),
        "docs/cli.md lacks these commands or flags: {missing:?}"
    );
}
