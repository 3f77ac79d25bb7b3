//! Every message call of the pages and notices, read from the source: the key is in the
//! catalogue and the named arguments are exactly the variables its message uses (in any of the
//! languages). A misspelt argument name would otherwise render as `{$name}` in one language
//! only, and no compiler sees it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::variables;
use crate::i18n::Lang;

/// One call found in the source: its key and the names it passes (arguments and slots).
#[derive(Debug)]
struct Call {
    at: String,
    key: String,
    names: BTreeSet<String>,
}

/// The string literal at the start of `text` (after optional whitespace), and what follows it.
fn literal(text: &str) -> Option<(&str, &str)> {
    let rest = text.trim_start().strip_prefix('"')?;
    let end = rest.find('"')?;
    Some((&rest[..end], &rest[end + 1..]))
}

/// `text` after the call whose `(` was just consumed, balanced over parentheses and strings.
fn after_call(text: &str) -> &str {
    let (mut depth, mut quoted, mut escaped) = (0_i32, false, false);
    for (i, c) in text.char_indices() {
        match (quoted, c) {
            (true, '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (true, '"') if !escaped => quoted = false,
            (false, '"') => quoted = true,
            (false, '(') => depth += 1,
            (false, ')') if depth == 0 => return &text[i + 1..],
            (false, ')') => depth -= 1,
            _ => {}
        }
        escaped = false;
    }
    ""
}

/// The calls in one file's text.
fn calls_in(path: &Path, text: &str) -> Vec<Call> {
    let mut calls = Vec::new();
    let at = |offset: usize| {
        format!(
            "{}:{}",
            path.display(),
            text[..offset].matches('\n').count() + 1
        )
    };
    // A call named in a comment (an example in a doc comment) is no call.
    let in_comment = |offset: usize| {
        let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
        text[start..offset].trim_start().starts_with("//")
    };
    for (offset, _) in text.match_indices(".msg(") {
        if in_comment(offset) {
            continue;
        }
        let Some((key, mut rest)) = literal(&text[offset + 5..]) else {
            continue;
        };
        rest = rest.trim_start().strip_prefix(')').unwrap_or(rest);
        let mut names = BTreeSet::new();
        loop {
            let r = rest.trim_start();
            if let Some(args) = r.strip_prefix(".arg(") {
                if let Some((name, _)) = literal(args) {
                    names.insert(name.to_owned());
                }
                rest = after_call(args);
            } else if let Some(args) = r.strip_prefix(".parts(") {
                if let Some((slot, _)) = literal(args) {
                    names.insert(slot.to_owned());
                }
                break;
            } else {
                break;
            }
        }
        calls.push(Call {
            at: at(offset),
            key: key.to_owned(),
            names,
        });
    }
    // Calls naming their slots or arguments in fixed places: `.t("key")` (none),
    // `i18n.parts("key", "slot")`, `.parts2("key", "a", "b")`, `.word("group", …)` (`word`).
    for (marker, slots, fixed) in [
        (".t(", 0, None),
        ("i18n.parts(", 1, None),
        (".parts2(", 2, None),
        (".word(", 0, Some("word")),
    ] {
        for (offset, _) in text.match_indices(marker) {
            if in_comment(offset) {
                continue;
            }
            let Some((key, mut rest)) = literal(&text[offset + marker.len()..]) else {
                continue;
            };
            let mut names: BTreeSet<String> = fixed.iter().map(|s| (*s).to_owned()).collect();
            for _ in 0..slots {
                let Some((slot, after)) = rest.trim_start().strip_prefix(',').and_then(literal)
                else {
                    break;
                };
                names.insert(slot.to_owned());
                rest = after;
            }
            calls.push(Call {
                at: at(offset),
                key: key.to_owned(),
                names,
            });
        }
    }
    calls
}

/// Every source file that renders messages: the templates and the Rust code of the service.
fn sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    let mut dirs = vec![root.join("templates"), root.join("server")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "html" || e == "rs")
                && !path.ends_with("calls_check.rs")
            {
                files.push(path);
            }
        }
    }
    files
}

#[test]
fn every_call_passes_exactly_the_variables_of_its_message() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for path in sources() {
        let text = std::fs::read_to_string(&path).unwrap();
        for call in calls_in(&path, &text) {
            let mut used = BTreeSet::new();
            let mut known = false;
            for lang in Lang::ALL {
                if let Some(vars) = variables(lang, &call.key) {
                    known = true;
                    used.extend(vars);
                }
            }
            checked += 1;
            if !known {
                problems.push(format!("{}: no message {}", call.at, call.key));
                continue;
            }
            for missing in used.difference(&call.names) {
                problems.push(format!(
                    "{}: {} uses ${missing}, the call does not pass it",
                    call.at, call.key
                ));
            }
            for extra in call.names.difference(&used) {
                problems.push(format!(
                    "{}: {} has no variable ${extra}, the call passes it",
                    call.at, call.key
                ));
            }
        }
    }
    assert!(checked > 300, "the scan found the calls ({checked})");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_scan_reads_names_and_slots_of_a_call() {
    let text = r#"i18n.msg("queue-count-filtered").arg("shown", f(a, ")")).arg("count", 2)
        .to_string(); i18n.msg("outcome-next").arg("kind", k).parts("server")"#;
    let calls = calls_in(Path::new("x.rs"), text);
    let names: Vec<Vec<&str>> = calls
        .iter()
        .map(|c| c.names.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(names, [vec!["count", "shown"], vec!["kind", "server"]]);
    assert_eq!(
        variables(Lang::En, "queue-count-filtered").unwrap(),
        ["count", "shown"].map(str::to_owned).into()
    );
}
