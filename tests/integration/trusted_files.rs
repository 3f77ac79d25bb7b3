//! The config file and the files it names that grant access are refused, naming the file,
//! when someone else could change, replace or (for a secret) read them: at start and on every
//! reload. Config errors never quote a value, so a secret typed into the config stays out of
//! the start error and the log.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use mcp_consent::app::Application;
use mcp_consent::config::Config;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use crate::helpers::*;

/// A uid that is not ours, for files "another user" owns (only when we may chown).
const OTHER_UID: u32 = 4242;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Gives `path` to [`OTHER_UID`]; false when this user may not (not root).
fn give_away(path: &Path) -> bool {
    std::os::unix::fs::chown(path, Some(OTHER_UID), Some(OTHER_UID)).is_ok()
}

fn serve(config: &Path, state: &Path) -> tokio::process::Child {
    Command::new(env!("CARGO_BIN_EXE_mcp-consent"))
        .args(["serve", "--listen", "127.0.0.1:0", "--state-dir"])
        .arg(state)
        .arg("--config")
        .arg(config)
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

/// `serve` with `config` must exit at once, failing; its stderr.
async fn refused_at_start(config: &Path, state: &Path) -> String {
    let child = serve(config, state);
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("serve refused the config and exited")
        .unwrap();
    assert!(!out.status.success(), "serve started");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test]
async fn a_config_others_may_write_or_reached_through_a_link_to_another_users_file_does_not_start()
{
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let config = tmp.path().join("config.toml");
    std::fs::write(&config, "forms_person_only = false\n").unwrap();
    chmod(&config, 0o666);
    let err = refused_at_start(&config, &state).await;
    assert!(err.contains(&config.display().to_string()), "{err}");
    assert!(err.contains("others may change it"), "{err}");

    let foreign = tmp.path().join("theirs.toml");
    std::fs::write(&foreign, "forms_person_only = false\n").unwrap();
    chmod(&foreign, 0o644);
    if give_away(&foreign) {
        let link = tmp.path().join("link.toml");
        std::os::unix::fs::symlink(&foreign, &link).unwrap();
        let err = refused_at_start(&link, &state).await;
        assert!(err.contains(&link.display().to_string()), "{err}");
        assert!(
            err.contains(&format!("belongs to user {OTHER_UID}")),
            "{err}"
        );
    }
}

#[tokio::test]
async fn a_passphrase_hash_or_metrics_token_others_may_read_or_another_user_owns_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let hash = tmp.path().join("passphrase.hash");
    std::fs::write(
        &hash,
        mcp_consent::auth::passphrase::hash("their passphrase").unwrap(),
    )
    .unwrap();
    let token = tmp.path().join("metrics-token");
    std::fs::write(&token, "scrape\n").unwrap();
    let build = |config: Config| async move {
        let state = tempfile::tempdir().unwrap();
        Application::build(&config, state.path().join("s"), "127.0.0.1:0")
            .await
            .err()
            .map(|e| error_chain(&e))
    };
    for (path, config) in [
        (
            &hash,
            Config {
                passphrase_hash_file: Some(hash.clone()),
                ..Config::default()
            },
        ),
        (
            &token,
            Config {
                metrics_token_file: Some(token.clone()),
                ..Config::default()
            },
        ),
    ] {
        chmod(path, 0o644);
        let err = build(config.clone())
            .await
            .expect("refused: others may read it");
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains("owner-only"), "{err}");
        chmod(path, 0o600);
        if give_away(path) {
            let err = build(config).await.expect("refused: another user's file");
            assert!(
                err.contains(&format!("belongs to user {OTHER_UID}")),
                "{err}"
            );
        }
    }
}

#[tokio::test]
async fn a_reload_refuses_a_config_others_may_write_and_never_logs_a_typed_in_secret() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let config = tmp.path().join("config.toml");
    let secret = "sk-live-4f1c9d2e7a";
    std::fs::write(&config, format!("api_key = \"{secret}\"\n")).unwrap();
    let err = refused_at_start(&config, &state).await;
    assert!(err.contains("line 1"), "the place is named: {err}");
    assert!(
        !err.contains(secret),
        "the start error quotes the secret: {err}"
    );
    // Pasted as an enum value or a model's base URL: the key is named, the value is not.
    for (text, key) in [
        (
            format!("[tools]\ndefault = \"{secret}\"\n"),
            "tools.default",
        ),
        (
            format!("[[models]]\nid = \"m\"\nprovider = \"openai\"\nbase_url = \"{secret}\"\n"),
            "base_url",
        ),
    ] {
        std::fs::write(&config, text).unwrap();
        let err = refused_at_start(&config, &state).await;
        assert!(err.contains(key), "the key is named: {err}");
        assert!(
            !err.contains(secret),
            "the start error quotes the secret: {err}"
        );
    }

    std::fs::write(&config, "forms_person_only = false\n").unwrap();
    chmod(&config, 0o600);
    let mut child = serve(&config, &state);
    listening_on(&mut child).await;
    let mut log = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut line_with = async |what: &str| {
        tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let line = log.next_line().await.unwrap().expect("the log goes on");
                if line.contains(what) {
                    return line;
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no log line with {what:?}"))
    };
    line_with("mcp-consent started").await;
    let pid = i32::try_from(child.id().unwrap()).unwrap();
    let hangup = || {
        // SAFETY: sending a signal to our own child process.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGHUP) }, 0);
    };

    std::fs::write(&config, "forms_person_only = true\n").unwrap();
    chmod(&config, 0o666);
    hangup();
    let refused = line_with("config reload refused").await;
    assert!(refused.contains(&config.display().to_string()), "{refused}");

    chmod(&config, 0o600);
    std::fs::write(&config, format!("api_key = \"{secret}\"\n")).unwrap();
    hangup();
    let refused = line_with("config reload refused").await;
    assert!(
        !refused.contains(secret),
        "the log quotes the secret: {refused}"
    );
}

#[tokio::test]
async fn a_listen_value_that_is_refused_or_cannot_be_bound_is_never_quoted() {
    let tmp = tempfile::tempdir().unwrap();
    // Not loopback (not even an address), and loopback-looking but not bindable.
    for listen in [
        "127.0.0.1:99999sk-live-4f1c9d2e7a",
        "localhost:sk-live-4f1c9d2e7a",
    ] {
        let Err(e) = Application::build(&Config::default(), tmp.path().join("state"), listen).await
        else {
            panic!("{listen} was bound");
        };
        let text = error_chain(&e);
        assert!(!text.contains("sk-") && !text.contains("99999"), "{text}");
        assert!(text.contains("listen address"), "{text}");
    }
}
