//! `mcp-consent questions …` as a script runs it: the same validation as the API, what will be
//! sent shown before it is sent.

use std::process::Output;

use serde_json::json;

use crate::helpers::*;

async fn cli(app: &TestApp, args: &[&str]) -> Output {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-consent"));
    cmd.env_remove("MCP_CONSENT_BROKER")
        .arg("questions")
        .arg("--state-dir")
        .arg(&app.state)
        .args(args)
        .stdin(std::process::Stdio::null());
    cmd.output().await.unwrap()
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

#[tokio::test]
async fn a_script_lists_previews_and_answers_agent_questions() {
    let app = spawn_app().await;
    let form = app.open_ok(form_request(1)).await;
    let secret = json!({"jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": {"message": "token please",
        "requestedSchema": {"type": "object", "properties": {"token": {"type": "string"}}}}});
    let human = app.open_ok(secret).await;

    let out = cli(&app, &["list"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    assert!(
        listing.contains(&form) && !listing.contains(&human),
        "{listing}"
    );

    // Invalid content: refused with the field named, nothing sent.
    let out = cli(&app, &["answer", &form, "--content", r#"{"name":"A"}"#]).await;
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("name"), "{}", text(&out.stderr));
    assert_eq!(app.question(&form).await["state"], "pending");

    let out = cli(
        &app,
        &["answer", &form, "--content", r#"{"name":"Ada"}"#, "--yes"],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("will receive") && stdout.contains("\"age\": 30"),
        "shows the defaults it adds: {stdout}"
    );
    assert_eq!(
        app.response(&form, 0).await.1["response"]["result"]["content"],
        json!({"name": "Ada", "age": 30, "color": "#f00"})
    );

    let again = cli(&app, &["decline", &form]).await;
    assert!(!again.status.success() && text(&again.stderr).contains("already decided"));

    let out = cli(&app, &["decline", &human]).await;
    assert!(
        !out.status.success() && text(&out.stderr).contains("not allowed"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn declining_a_sampling_question_from_the_cli_gives_the_server_minus_one() {
    let app = spawn_app().await;
    let id = app.open_ok(sampling_request(5, "cli")).await;
    let out = cli(&app, &["decline", &id]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        app.response(&id, 0).await.1["response"]["error"]["code"],
        -1
    );

    let id = app.open_ok(sampling_request(6, "cli")).await;
    let result =
        r#"{"role":"assistant","content":{"type":"text","text":"from a script"},"model":"script"}"#;
    let out = cli(&app, &["answer", &id, "--result", result, "-y"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        app.response(&id, 0).await.1["response"]["result"]["content"]["text"],
        "from a script"
    );
}

#[tokio::test]
async fn no_control_character_a_server_chose_reaches_the_terminal() {
    let app = spawn_app().await;
    // Clear the screen, set the window title, write the clipboard (OSC 52), a C1 CSI, a
    // line break that would fake a row of its own: in the tool's name (the server chose it in
    // tools/list, the host called it) and in the server's text.
    let tool = "read_x\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}]52;c;cm0=\u{7}\u{9b}1m\u{202E}\nFAKE-ROW";
    let res = app
        .post_json(
            "/api/v1/requests",
            &json!({
                "server": "test-server",
                "session": "s1",
                "tool": tool,
                "protocolVersion": "2025-11-25",
                "clientCapabilities": full_caps(),
                "request": sampling_request(5, "x\u{9b}2J\u{E0100}"),
            }),
        )
        .await;
    assert_eq!(res.status(), reqwest::StatusCode::CREATED);
    let id = res.json::<serde_json::Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let clean = |out: &str| {
        !out.chars()
            .any(|c| c != '\n' && (c.is_control() || c == '\u{202E}' || c == '\u{E0100}'))
    };

    let out = cli(&app, &["list"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    assert!(clean(&listing), "{listing:?}");
    let row: Vec<&str> = listing.lines().filter(|l| l.contains(&id)).collect();
    assert_eq!(row.len(), 1, "{listing:?}");
    assert!(
        row[0].contains(
            r"read_x\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}]52;c;cm0=\u{7}\u{9b}1m\u{202e}\u{a}FAKE-ROW"
        ) && row[0].contains(" expires "),
        "{listing:?}"
    );
    assert!(
        !listing.lines().any(|l| l.starts_with("FAKE-ROW")),
        "{listing:?}"
    );

    for (args, planted) in [
        (&["list", "--json"][..], "\u{9b}1m\u{202E}"),
        (&["show", &id][..], "x\u{9b}2J\u{E0100}"),
    ] {
        let out = cli(&app, args).await;
        assert!(out.status.success(), "{}", text(&out.stderr));
        let shown = text(&out.stdout);
        assert!(clean(&shown), "{args:?}: {shown:?}");
        // The same value, escaped the JSON way.
        let value: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert!(value.to_string().contains(planted), "{shown}");
    }
}
