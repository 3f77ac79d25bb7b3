//! `mcp-consent service`: the real binary prints a systemd unit that `systemd-analyze verify
//! --user` accepts without a word (with and without the sandbox) and that carries every line of
//! the shared `templates/units/service.toml`, a launchd plist that Python's `plistlib` parses,
//! and `install` writes into a temporary home, refusing to overwrite without `--force`.
//!
//! The tests that run `systemd-analyze` are ignored off Linux (the flake's darwin check), where
//! there is no systemd.

use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-consent");

/// Runs the binary with a private HOME / XDG_CONFIG_HOME / XDG_STATE_HOME under `home`.
fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env_remove("MCP_CONSENT_STATE_DIR")
        .env_remove("MCP_CONSENT_CONFIG")
        .output()
        .unwrap()
}

fn stdout_ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "status {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// `systemd-analyze verify --user` on `unit` named mcp-consent.service; any stderr output is a
/// failure (it only warns, with exit 0, about unknown keys). A missing systemd-analyze fails
/// the test: CI installs it.
fn systemd_verify(unit: &str) {
    let dir = tempfile::tempdir().unwrap();
    let runtime = dir.path().join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    let file = dir.path().join("mcp-consent.service");
    std::fs::write(&file, unit).unwrap();
    let out = Command::new("systemd-analyze")
        .args(["verify", "--user"])
        .arg(&file)
        .env("XDG_RUNTIME_DIR", &runtime)
        .output()
        .expect("systemd-analyze must be installed (Debian package systemd)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.trim().is_empty(),
        "systemd-analyze verify: {:?}\n{stderr}\n--- unit:\n{unit}",
        out.status
    );
}

/// The plist as JSON via Python's plistlib (which rejects malformed plists).
fn parse_plist(plist: &str) -> serde_json::Value {
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import json,plistlib,sys; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(plist.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "plistlib: {}\n--- plist:\n{plist}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn line<'a>(unit: &'a str, key: &str) -> Vec<&'a str> {
    unit.lines()
        .filter_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .collect()
}

#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "systemd-analyze exists only on Linux"
)]
fn systemd_unit_verifies_and_is_hardened() {
    let home = tempfile::tempdir().unwrap();
    let unit = stdout_ok(&run(home.path(), &["service", "print", "systemd"]));
    systemd_verify(&unit);
    let state = home.path().join("state").join("mcp-consent");
    assert_eq!(
        line(&unit, "ExecStart"),
        [format!("{BIN} serve --state-dir {}", state.display())]
    );
    assert_eq!(line(&unit, "ReadWritePaths"), [state.display().to_string()]);
    for (key, value) in [
        ("UMask", "0077"),
        ("NoNewPrivileges", "yes"),
        ("RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6"),
        ("Restart", "on-failure"),
        ("MemoryDenyWriteExecute", "yes"),
        ("SystemCallArchitectures", "native"),
        ("PrivateUsers", "yes"),
        ("PrivateTmp", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "read-only"),
        ("WantedBy", "default.target"),
    ] {
        assert_eq!(line(&unit, key), [value], "{key}");
    }
    // Options a user manager cannot apply even with PrivateUsers= are left out.
    for key in ["ProtectControlGroups", "ProtectProc", "RemoveIPC"] {
        assert!(line(&unit, key).is_empty(), "{key}");
    }
}

#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "systemd-analyze exists only on Linux"
)]
fn systemd_unit_carries_options_and_quotes_them() {
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join("my state");
    let config = home.path().join("conf 100%.toml");
    let out = run(
        home.path(),
        &[
            "--state-dir",
            state.to_str().unwrap(),
            "service",
            "print",
            "systemd",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:7778",
        ],
    );
    let unit = stdout_ok(&out);
    systemd_verify(&unit);
    assert_eq!(
        line(&unit, "ExecStart"),
        [format!(
            "{BIN} serve --state-dir \"{}\" --config \"{}\" --listen 127.0.0.1:7778",
            state.display(),
            config.display().to_string().replace('%', "%%")
        )]
    );
    assert_eq!(
        line(&unit, "ReadWritePaths"),
        [format!("\"{}\"", state.display())]
    );
}

/// `templates/units/service.toml`, the fixed part the binary and the home-manager module share.
fn shared_fixed_part() -> toml::Table {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/units/service.toml");
    toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `key=value` lines of a `[systemd.*]` table of the shared file (a list gives one line each).
fn shared_lines(fixed: &toml::Table, table: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for (key, value) in fixed["systemd"][table].as_table().unwrap() {
        match value {
            toml::Value::String(v) => lines.push(format!("{key}={v}")),
            toml::Value::Array(vs) => {
                lines.extend(vs.iter().map(|v| format!("{key}={}", v.as_str().unwrap())));
            }
            other => panic!("{table}.{key}: {other:?} is not a string or a list"),
        }
    }
    lines
}

#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "systemd-analyze exists only on Linux"
)]
fn the_unit_carries_the_shared_lines_and_no_sandbox_drops_only_the_namespace_ones() {
    let fixed = shared_fixed_part();
    let home = tempfile::tempdir().unwrap();
    let sandboxed = stdout_ok(&run(home.path(), &["service", "print", "systemd"]));
    let plain = stdout_ok(&run(
        home.path(),
        &["service", "print", "systemd", "--no-sandbox"],
    ));
    systemd_verify(&plain);
    let has = |unit: &str, line: &str| unit.lines().any(|l| l == line);
    for table in ["Unit", "Service", "Install"] {
        for line in shared_lines(&fixed, table) {
            assert!(has(&sandboxed, &line), "{line} missing:\n{sandboxed}");
            assert!(
                has(&plain, &line),
                "{line} missing with --no-sandbox:\n{plain}"
            );
        }
    }
    let namespace = shared_lines(&fixed, "sandbox");
    assert!(namespace.contains(&"PrivateUsers=yes".to_owned()));
    for line in &namespace {
        assert!(has(&sandboxed, line), "{line} missing:\n{sandboxed}");
        assert!(
            !has(&plain, line),
            "{line} kept with --no-sandbox:\n{plain}"
        );
    }
    assert!(line(&plain, "ReadWritePaths").is_empty(), "{plain}");
    assert_eq!(line(&plain, "ExecStart"), line(&sandboxed, "ExecStart"));
}

#[test]
fn launchd_plist_parses_with_the_agent_fields() {
    let home = tempfile::tempdir().unwrap();
    let plist = stdout_ok(&run(
        home.path(),
        &["service", "print", "launchd", "--listen", "127.0.0.1:7778"],
    ));
    let p = parse_plist(&plist);
    let logs = home.path().join("Library/Logs/mcp-consent");
    assert_eq!(p["Label"], "mcp-consent");
    assert_eq!(
        p["ProgramArguments"],
        serde_json::json!([BIN, "serve", "--listen", "127.0.0.1:7778"])
    );
    assert_eq!(p["RunAtLoad"], true);
    assert_eq!(
        p["KeepAlive"],
        serde_json::json!({"Crashed": true, "SuccessfulExit": false})
    );
    assert_eq!(p["ProcessType"], "Background");
    assert_eq!(p["Umask"], 63);
    // Every fixed key comes from the shared file.
    for (key, value) in shared_fixed_part()["launchd"].as_table().unwrap() {
        assert_eq!(p[key], serde_json::to_value(value).unwrap(), "{key}");
    }
    assert_eq!(
        p["StandardOutPath"],
        logs.join("stdout.log").to_str().unwrap()
    );
    assert_eq!(
        p["StandardErrorPath"],
        logs.join("stderr.log").to_str().unwrap()
    );
}

#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "systemd-analyze exists only on Linux"
)]
fn install_writes_once_and_overwrites_only_with_force() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("config/systemd/user/mcp-consent.service");

    let dry = stdout_ok(&run(
        home.path(),
        &["service", "install", "--manager", "systemd", "--dry-run"],
    ));
    assert!(dry.contains(target.to_str().unwrap()), "{dry}");
    assert!(!target.exists());

    let first = stdout_ok(&run(
        home.path(),
        &["service", "install", "--manager", "systemd"],
    ));
    assert!(
        first.contains(&format!("wrote {}", target.display())),
        "{first}"
    );
    assert!(
        first.contains(
            "systemctl --user daemon-reload && systemctl --user enable --now mcp-consent"
        ),
        "{first}"
    );
    let written = std::fs::read_to_string(&target).unwrap();
    systemd_verify(&written);
    let state = home.path().join("state/mcp-consent");
    assert!(state.is_dir(), "install creates the state directory");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&state).unwrap().permissions().mode() & 0o777,
        0o700
    );

    // A second install (different content) refuses and leaves the file as it was.
    std::fs::write(&target, "edited by hand\n").unwrap();
    let again = run(
        home.path(),
        &[
            "service",
            "install",
            "--manager",
            "systemd",
            "--listen",
            "127.0.0.1:7778",
        ],
    );
    assert!(!again.status.success());
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains("already exists") && stderr.contains("--force"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "edited by hand\n"
    );

    let forced = stdout_ok(&run(
        home.path(),
        &[
            "service",
            "install",
            "--manager",
            "systemd",
            "--force",
            "--listen",
            "127.0.0.1:7778",
        ],
    ));
    assert!(forced.contains("wrote"), "{forced}");
    let replaced = std::fs::read_to_string(&target).unwrap();
    assert!(replaced.contains("--listen 127.0.0.1:7778"), "{replaced}");
    systemd_verify(&replaced);
}

#[test]
fn install_launchd_goes_to_launch_agents() {
    let home = tempfile::tempdir().unwrap();
    let out = stdout_ok(&run(
        home.path(),
        &["service", "install", "--manager", "launchd"],
    ));
    let target = home.path().join("Library/LaunchAgents/mcp-consent.plist");
    assert!(
        out.contains(&format!("wrote {}", target.display())),
        "{out}"
    );
    assert!(out.contains("launchctl bootstrap"), "{out}");
    let p = parse_plist(&std::fs::read_to_string(&target).unwrap());
    assert_eq!(p["Label"], "mcp-consent");
    assert!(home.path().join("Library/Logs/mcp-consent").is_dir());
    let again = run(home.path(), &["service", "install", "--manager", "launchd"]);
    assert!(!again.status.success());
}
