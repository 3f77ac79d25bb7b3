//! The home-manager module (`nix/hm-module.nix`) declares the config keys the binary reads, with
//! the binary's defaults. nixpkgs is not reachable here, so this reads the module as text: every
//! `name = lib.mkOption {` with its `default = …;`, and the `key = cfg.…;` lines that map the
//! camelCase options to config keys. The defaults are written out as TOML and parsed by the
//! binary's own `Config::parse` (which refuses unknown keys), so renaming a key on either side
//! fails here.

use std::collections::BTreeMap;

use mcp_consent::config::Config;

fn module_text() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("nix/hm-module.nix");
    std::fs::read_to_string(path).unwrap()
}

/// Option name → its `default = …;` literal, for every `lib.mkOption` that has one.
fn option_defaults(text: &str) -> BTreeMap<String, String> {
    let mut defaults = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if let Some(name) = line.strip_suffix(" = lib.mkOption {") {
            current = Some(name.to_owned());
        } else if let (Some(name), Some(value)) = (
            &current,
            line.strip_prefix("default = ")
                .and_then(|v| v.strip_suffix(';')),
        ) {
            defaults.insert(name.clone(), value.to_owned());
            current = None;
        }
    }
    defaults
}

/// Config key → option path, from lines such as `max_age_days = cfg.retention.maxAgeDays;`.
fn key_mappings(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let (key, value) = l.trim().split_once(" = cfg.")?;
            Some((key.to_owned(), value.strip_suffix(';')?.to_owned()))
        })
        .collect()
}

/// The config keys the module sets and their default literals, as (table, key) → value.
fn module_config_defaults(text: &str) -> BTreeMap<(String, String), String> {
    let defaults = option_defaults(text);
    let mut keys = BTreeMap::new();
    for (key, option) in key_mappings(text) {
        let (table, leaf) = match option.rsplit_once('.') {
            Some((table, leaf)) => (table.to_owned(), leaf),
            None => (String::new(), option.as_str()),
        };
        let value = defaults
            .get(leaf)
            .unwrap_or_else(|| panic!("option {option} (for key {key}) has no default"));
        keys.insert((table, key), value.clone());
    }
    // The typed suboptions of `settings` are config keys by name.
    for key in [
        "allow_non_loopback",
        "question_timeout_secs",
        "max_request_bytes",
    ] {
        if let Some(value) = defaults.get(key) {
            keys.insert((String::new(), key.to_owned()), value.clone());
        }
    }
    keys
}

fn to_toml(keys: &BTreeMap<(String, String), String>) -> String {
    let mut top = String::new();
    let mut tables: BTreeMap<&str, String> = BTreeMap::new();
    for ((table, key), value) in keys {
        let line = format!("{key} = {value}\n");
        if table.is_empty() {
            top.push_str(&line);
        } else {
            tables.entry(table).or_default().push_str(&line);
        }
    }
    for (table, body) in tables {
        top.push_str(&format!("[{table}]\n{body}"));
    }
    top
}

#[test]
fn module_declares_every_config_key_with_the_binarys_default() {
    let text = module_text();
    let keys = module_config_defaults(&text);
    let names: Vec<String> = keys
        .keys()
        .map(|(t, k)| {
            if t.is_empty() {
                k.clone()
            } else {
                format!("{t}.{k}")
            }
        })
        .collect();
    assert_eq!(
        names,
        [
            "allow_non_loopback",
            "listen",
            "max_request_bytes",
            "question_timeout_secs",
            "retention.interval_secs",
            "retention.max_age_days",
            "retention.max_terminal",
        ],
        "config keys the module declares"
    );
    let toml = to_toml(&keys);
    let parsed = Config::parse(&toml)
        .unwrap_or_else(|e| panic!("the binary refuses the module's keys: {e}\n{toml}"));
    assert_eq!(parsed, Config::default(), "module defaults differ:\n{toml}");
}

#[test]
fn a_renamed_or_changed_key_is_caught() {
    let text = module_text();
    let renamed = text.replace("max_terminal = cfg.", "max_kept = cfg.");
    assert_ne!(renamed, text);
    assert!(Config::parse(&to_toml(&module_config_defaults(&renamed))).is_err());

    let changed = text.replace("default = 900;", "default = 901;");
    assert_ne!(changed, text);
    let parsed = Config::parse(&to_toml(&module_config_defaults(&changed))).unwrap();
    assert_ne!(parsed, Config::default());
}

#[test]
fn module_passes_the_passphrase_file_by_environment() {
    let text = module_text();
    assert!(text.contains("MCP_CONSENT_PASSPHRASE_HASH_FILE = toString cfg.passphraseHashFile;"));
    assert!(text.contains(&format!(
        "Label = \"{}\";",
        mcp_consent::cli::service::LAUNCHD_LABEL
    )));
}

/// The unit's hardening and the agent's fixed keys are kept once, in
/// `templates/units/service.toml`: the module imports that file (the binary compiles it in) and
/// sets none of its keys itself, so a second, drifting copy cannot creep back. The flake's
/// `hm-module` check compares the module's rendered unit with the binary's line by line.
#[test]
fn module_takes_the_fixed_part_from_the_binarys_file() {
    let text = module_text();
    assert!(
        text.contains("fixed = lib.importTOML ../templates/units/service.toml;"),
        "the module must read the shared file"
    );
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/units/service.toml");
    let fixed: toml::Table = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut keys = Vec::new();
    for table in fixed["systemd"].as_table().unwrap().values() {
        keys.extend(table.as_table().unwrap().keys().cloned());
    }
    keys.extend(fixed["launchd"].as_table().unwrap().keys().cloned());
    assert!(keys.iter().any(|k| k == "PrivateUsers") && keys.iter().any(|k| k == "Umask"));
    for key in keys {
        let own = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{key} =")));
        assert!(own.is_none(), "the module sets {key} itself: {own:?}");
    }
    // `sandbox = false` is the module's way to `--no-sandbox`.
    assert!(text.contains("lib.optionalAttrs cfg.sandbox ("));
}

/// The shared database's two options reach the config file as the binary's keys
/// (`database_url`, `database_password_file`), both off by default, the password only as a
/// file path outside the store; the keys as the module writes them parse.
#[test]
fn module_writes_the_database_options_as_config_keys() {
    let text = module_text();
    let defaults = option_defaults(&text);
    assert_eq!(defaults["databaseUrl"], "null");
    assert_eq!(defaults["databasePasswordFile"], "null");
    assert!(text.contains("database_url = toString cfg.databaseUrl;"));
    assert!(text.contains("database_password_file = toString cfg.databasePasswordFile;"));
    assert!(text.contains("type = lib.types.nullOr outsideStorePath;\n      default = null;\n      example = \"/run/secrets/mcp-consent-db-password\";"));
    let parsed = Config::parse(
        "database_url = \"postgres://alice@db.example.org:5432/q?sslmode=verify-full\"\n\
         database_password_file = \"/run/secrets/mcp-consent-db-password\"\n",
    )
    .unwrap();
    assert_eq!(
        parsed.database_url.as_deref(),
        Some("postgres://alice@db.example.org:5432/q?sslmode=verify-full")
    );
    assert_eq!(
        parsed.database_password_file.as_deref(),
        Some(std::path::Path::new("/run/secrets/mcp-consent-db-password"))
    );
}
