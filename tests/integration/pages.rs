//! The pages as a browser uses them: login link, cookie flags, CSRF, Host checks, the confirm
//! step, escaping.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn login_link_sets_a_strict_httponly_cookie_and_works_once() {
    let app = spawn_app().await;
    let res = app.create_login_link().await;
    let url = res.json::<serde_json::Value>().await.unwrap()["url"]
        .as_str()
        .unwrap()
        .to_owned();
    let browser = http_client();
    let res = browser.get(&url).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let cookie = res.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert_eq!(
        browser
            .get(format!("{}/", app.base))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );

    let again = http_client().get(&url).send().await.unwrap();
    assert_eq!(again.status(), StatusCode::UNAUTHORIZED);
    let anonymous = http_client()
        .get(format!("{}/", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::SEE_OTHER);
    assert_eq!(anonymous.headers()["location"], "/login");
}

#[tokio::test]
async fn foreign_host_and_origin_are_refused() {
    let app = spawn_app().await;
    let res = app
        .client
        .get(format!("{}/healthz", app.base))
        .header("Host", "evil.example:80")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    let browser = app.login().await;
    let res = browser
        .post(format!("{}/logout", app.base))
        .header("Origin", "http://evil.example")
        .form(&[("csrf", "x")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn answering_needs_the_csrf_token_and_a_confirm_step() {
    let app = spawn_app().await;
    let id = app.open_ok(form_request(5)).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(page.contains("test-server"), "the asking server is named");
    assert!(
        page.contains("value=\"30\""),
        "the integer default is pre-filled"
    );
    let csrf = csrf_of(&page);

    let url = format!("{}/questions/{id}/answer", app.base);
    let no_csrf = browser
        .post(&url)
        .form(&[("action", "decline")])
        .send()
        .await
        .unwrap();
    assert_eq!(no_csrf.status(), StatusCode::FORBIDDEN);
    assert_eq!(app.question(&id).await["state"], "pending");

    // Invalid input is kept and marked; nothing is sent.
    let res = browser
        .post(&url)
        .form(&[
            ("csrf", csrf.as_str()),
            ("field.name", "A"),
            ("field.age", "200"),
            ("action", "accept"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = res.text().await.unwrap();
    assert!(
        html.contains("value=\"200\"") && html.contains("field-error"),
        "{html}"
    );

    // Accept shows the confirm page; the question is still pending until Send.
    let res = browser
        .post(&url)
        .form(&[
            ("csrf", csrf.as_str()),
            ("field.name", "Ada <b>"),
            ("field.age", "40"),
            ("field.color", "#00f"),
            ("action", "accept"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let confirm = res.text().await.unwrap();
    assert!(confirm.contains("id=\"payload\""));
    assert!(
        confirm.contains("Ada &lt;b&gt;") || confirm.contains("Ada &#60;b&#62;"),
        "escaped: {confirm}"
    );
    assert_eq!(app.question(&id).await["state"], "pending");

    let payload =
        json!({"action": "accept", "content": {"name": "Ada <b>", "age": 40, "color": "#00f"}})
            .to_string();
    let res = browser
        .post(format!("{}/questions/{id}/send", app.base))
        .form(&[
            ("csrf", csrf.as_str()),
            ("payload", payload.as_str()),
            ("action", "send"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let (_, body) = app.response(&id, 0).await;
    assert_eq!(body["response"]["result"]["content"]["name"], "Ada <b>");
}

#[tokio::test]
async fn a_sampling_page_shows_the_prompt_and_an_image_byte_exact() {
    let app = spawn_app().await;
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": {
        "systemPrompt": "Be brief.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Describe <this>"}, {"type": "image", "data": png, "mimeType": "image/png"}]}],
        "maxTokens": 50, "modelPreferences": {"hints": [{"name": "sonnet"}], "costPriority": 0.3}}});
    let id = app.open_ok(request).await;
    let stored = app.question(&id).await;
    assert_eq!(stored["request"]["messages"][0]["content"][1]["data"], png);

    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(page.contains("Be brief."));
    assert!(page.contains("Describe &lt;this&gt;") || page.contains("Describe &#60;this&#62;"));
    assert!(
        page.contains(&format!("src=\"data:image/png;base64,{png}\"")),
        "{page}"
    );
    assert!(page.contains("sonnet") && page.contains("0.3") && page.contains("maxTokens"));
}

#[tokio::test]
async fn a_request_with_tools_can_be_answered_with_tool_use_as_json() {
    let app = spawn_app().await;
    let request = json!({"jsonrpc": "2.0", "id": 2, "method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}}], "maxTokens": 100,
        "tools": [{"name": "get_weather", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}});
    let id = app.open_ok(request).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(
        page.contains("get_weather") && page.contains("tool_use") && page.contains("toolUse"),
        "skeleton offers tool_use"
    );
    let csrf = csrf_of(&page);

    let result = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}], "model": "human-written", "stopReason": "toolUse"});
    let text = result.to_string();
    let url = format!("{}/questions/{id}/answer", app.base);
    let res = browser
        .post(&url)
        .form(&[
            ("csrf", csrf.as_str()),
            ("mode", "json"),
            ("resultJson", text.as_str()),
            ("action", "accept"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK, "the confirm page");
    assert!(res.text().await.unwrap().contains("Paris"));

    // Not JSON: the input is kept and nothing is sent.
    let res = browser
        .post(&url)
        .form(&[
            ("csrf", csrf.as_str()),
            ("mode", "json"),
            ("resultJson", "{oops"),
            ("action", "accept"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(res.text().await.unwrap().contains("{oops"));
    assert_eq!(app.question(&id).await["state"], "pending");
}

#[tokio::test]
async fn tool_use_is_refused_for_a_request_without_tools() {
    let app = spawn_app().await;
    let id = app.open_ok(sampling_request(3, "plain")).await;
    let result = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "x", "input": {}}], "model": "m", "stopReason": "toolUse"});
    let (status, body) = app
        .answer(&id, json!({"action": "accept", "result": result}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(app.question(&id).await["state"], "pending");
}

#[tokio::test]
async fn an_empty_form_is_a_confirmation_that_sends_empty_content() {
    let app = spawn_app().await;
    let request = json!({"jsonrpc": "2.0", "id": 4, "method": "elicitation/create", "params": {
        "message": "Proceed with the deployment?", "requestedSchema": {"type": "object", "properties": {}}}});
    let id = app.open_ok(request).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(page.contains("Proceed with the deployment?") && page.contains("nothing to fill in"));
    for action in ["accept", "decline", "cancel"] {
        assert!(
            page.contains(&format!("name=\"action\" value=\"{action}\"")),
            "{action}"
        );
    }
    let csrf = csrf_of(&page);
    let confirm = browser
        .post(format!("{}/questions/{id}/answer", app.base))
        .form(&[("csrf", csrf.as_str()), ("action", "accept")])
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let payload = r#"{"action":"accept","content":{}}"#;
    assert!(
        confirm.contains("&quot;content&quot;:{}") || confirm.contains("&#34;content&#34;:{}"),
        "{confirm}"
    );
    browser
        .post(format!("{}/questions/{id}/send", app.base))
        .form(&[
            ("csrf", csrf.as_str()),
            ("payload", payload),
            ("action", "send"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(
        app.response(&id, 0).await.1["response"]["result"],
        json!({"action": "accept", "content": {}})
    );
}

#[tokio::test]
async fn a_titled_one_of_without_type_is_a_select_that_sends_consts() {
    let app = spawn_app().await;
    let request = json!({"jsonrpc": "2.0", "id": 5, "method": "elicitation/create", "params": {
        "message": "Pick", "requestedSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {
            "color": {"oneOf": [{"const": "#f00", "title": "Red"}, {"const": "#00f", "title": "Blue"}]}}}}});
    let id = app.open_ok(request).await;
    assert_eq!(
        app.question(&id).await["request"]["requestedSchema"]["$schema"],
        "https://json-schema.org/draft/2020-12/schema",
        "$schema kept verbatim"
    );
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(
        page.contains("<select id=\"field.color\" name=\"field.color\""),
        "{page}"
    );
    assert!(page.contains(">Red</option>") && page.contains("value=\"#f00\""));
    let (status, body) = app
        .answer(
            &id,
            json!({"action": "accept", "content": {"color": "Red"}}),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "a title is not a value: {body}"
    );
    let (status, _) = app
        .answer(
            &id,
            json!({"action": "accept", "content": {"color": "#00f"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_passphrase_made_by_passwd_logs_in_and_a_wrong_one_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    // Into a directory that does not exist yet, as on a fresh machine.
    let hash_file = tmp.path().join("config/mcp-consent/passphrase.hash");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-consent"))
        .arg("passwd")
        .arg("--output")
        .arg(&hash_file)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use tokio::io::AsyncWriteExt;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"correct horse battery\n")
        .await
        .unwrap();
    assert!(child.wait().await.unwrap().success());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&hash_file).unwrap().permissions().mode() & 0o777,
        0o600
    );

    let app = spawn_with(mcp_consent::config::Config {
        passphrase_hash_file: Some(hash_file),
        ..Default::default()
    })
    .await;
    let browser = http_client();
    let page = app.html(&browser, "/login").await;
    assert!(page.contains("type=\"password\""));
    let wrong = browser
        .post(format!("{}/login", app.base))
        .form(&[("passphrase", "wrong horse battery")])
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        browser
            .get(format!("{}/", app.base))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::SEE_OTHER
    );
    let right = browser
        .post(format!("{}/login", app.base))
        .form(&[("passphrase", "correct horse battery")])
        .send()
        .await
        .unwrap();
    assert_eq!(right.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        browser
            .get(format!("{}/", app.base))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
}
