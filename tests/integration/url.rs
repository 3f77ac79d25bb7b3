//! URL-mode elicitation: only https/http, the domain emphasised, IDN and HTTP warnings, consent
//! only by the person's click on the service's own `/open`, completion notices.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

fn url_request(id: i64, url: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": {
        "mode": "url", "elicitationId": format!("e-{id}"), "url": url, "message": "Please sign in"}})
}

async fn page(app: &TestApp, browser: &reqwest::Client, id: &str) -> String {
    app.html(browser, &format!("/questions/{id}")).await
}

#[tokio::test]
async fn punycode_hosts_are_shown_in_both_forms_with_a_warning() {
    let app = spawn_app().await;
    let id = app
        .open_ok(url_request(1, "https://www.xn--80ak6aa92e.com/login"))
        .await;
    let browser = app.login().await;
    let html = page(&app, &browser, &id).await;
    assert!(
        html.contains("https://www.xn--80ak6aa92e.com/login"),
        "the full URL verbatim"
    );
    assert!(
        html.contains("www.xn--80ak6aa92e.com") && html.contains("www.аррӏе.com"),
        "{html}"
    );
    assert!(html.contains("Punycode"), "a warning");
}

#[tokio::test]
async fn the_registrable_domain_is_emphasised_not_a_lookalike_label() {
    let app = spawn_app().await;
    let id = app
        .open_ok(url_request(
            2,
            "https://accounts.example.com.login-check.example.net/verify",
        ))
        .await;
    let browser = app.login().await;
    let html = page(&app, &browser, &id).await;
    assert!(
        html.contains("<strong class=\"domain\">example.net</strong>"),
        "{html}"
    );
    assert!(
        html.contains("<span class=\"subdomain\">accounts.example.com.login-check.</span>"),
        "{html}"
    );
    assert!(!html.contains("<strong class=\"domain\">example.com"));
    assert!(!html.contains("Not HTTPS"));

    let id = app
        .open_ok(url_request(3, "http://example.org/plain"))
        .await;
    assert!(page(&app, &browser, &id).await.contains("Not HTTPS"));
}

#[tokio::test]
async fn other_schemes_and_undeclared_url_mode_are_refused_before_opening() {
    let app = spawn_app().await;
    for bad in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,<b>x</b>",
    ] {
        let (status, body) = app
            .open(url_request(4, bad), full_caps(), "2025-11-25")
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["response"]["error"]["code"], -32602, "{bad}: {body}");
    }
    // TV-E06: URL mode while the client declared form only.
    let (_, body) = app
        .open(
            url_request(5, "https://mcp.example.com/ui"),
            json!({"elicitation": {}}),
            "2025-11-25",
        )
        .await;
    assert_eq!(body["response"]["error"]["code"], -32602);
    let list: Value = app.get("/api/v1/questions").await.json().await.unwrap();
    assert_eq!(list["questions"], json!([]));
}

#[tokio::test]
async fn opening_the_link_is_the_consent_and_accepts_without_content() {
    let app = spawn_app().await;
    let id = app
        .open_ok(url_request(6, "https://mcp.example.com/connect?x=1"))
        .await;

    // Not over the API (human only), and not as a bare accept from the browser either.
    let (status, _) = app.answer(&id, json!({"action": "accept"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let browser = app.login().await;
    let html = page(&app, &browser, &id).await;
    assert!(
        html.contains(&format!(
            "href=\"/questions/{id}/open\" target=\"_blank\" rel=\"noopener noreferrer\""
        )),
        "{html}"
    );
    assert!(
        !html.contains("href=\"https://mcp.example.com"),
        "the URL itself is never a link"
    );
    assert_eq!(app.question_as(&browser, &id).await["state"], "pending");

    let res = get_open(&app, &browser, &id).await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        res.headers()["location"],
        "https://mcp.example.com/connect?x=1"
    );
    assert_eq!(res.headers()["referrer-policy"], "no-referrer");
    let (_, body) = app.response(&id, 0).await;
    assert_eq!(body["response"]["result"], json!({"action": "accept"}));

    // A completion notice through another door than the one it was opened through (here the
    // socket; it came over TCP) changes nothing.
    let res = app
        .post_json_over_socket("/api/v1/elicitations/e-6/complete", &json!({}))
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(app.question_as(&browser, &id).await["state"], "accepted");
    // The server's completion notice marks it complete; an unknown id is ignored.
    let res = app
        .post_json("/api/v1/elicitations/e-6/complete", &json!({}))
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(app.question_as(&browser, &id).await["state"], "completed");
    let res = app
        .post_json("/api/v1/elicitations/does-not-exist/complete", &json!({}))
        .await;
    assert_eq!(res.status(), StatusCode::OK);
}

/// Declines question `id` from the queue page `queue` (the person's confirmed Decline).
pub(crate) async fn post_decline(
    app: &TestApp,
    browser: &reqwest::Client,
    queue: &str,
    id: &str,
) -> reqwest::Response {
    browser
        .post(format!("{}/questions/decline", app.base))
        .form(&[
            ("csrf", csrf_of(queue).as_str()),
            ("id", id),
            ("confirmed", "1"),
        ])
        .send()
        .await
        .unwrap()
}

/// Follows the question page's Open button (`GET /questions/{id}/open`).
pub(crate) async fn get_open(
    app: &TestApp,
    browser: &reqwest::Client,
    id: &str,
) -> reqwest::Response {
    browser
        .get(format!("{}/questions/{id}/open", app.base))
        .send()
        .await
        .unwrap()
}

/// Posts the second confirmation's form (`confirm` omitted when `None`).
pub(crate) async fn post_open(
    app: &TestApp,
    browser: &reqwest::Client,
    id: &str,
    csrf: &str,
    confirm: Option<&str>,
) -> reqwest::Response {
    let mut form = vec![("csrf", csrf)];
    form.extend(confirm.map(|c| ("confirm", c)));
    browser
        .post(format!("{}/questions/{id}/open", app.base))
        .header("Origin", &app.base)
        .form(&form)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_local_network_url_opens_only_after_a_second_confirmation() {
    let app = spawn_app().await;
    let url = "http://127.0.0.1:8080/callback?code=1";
    let id = app.open_ok(url_request(7, url)).await;
    let browser = app.login().await;
    let html = page(&app, &browser, &id).await;
    assert!(
        html.contains("class=\"warning danger\"") && html.contains("(asks again)"),
        "a strong warning on the question page: {html}"
    );

    // The Open button's link shows the confirmation page instead of redirecting.
    let res = get_open(&app, &browser, &id).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.headers().get("location").is_none());
    let confirm = res.text().await.unwrap();
    assert!(
        confirm.contains("name=\"confirm\" value=\"local-network\""),
        "{confirm}"
    );
    assert!(confirm.contains("cookies"), "{confirm}");
    let csrf = csrf_of(&confirm);
    assert_eq!(app.question_as(&browser, &id).await["state"], "pending");

    // A post without the confirmation, or without the CSRF token, opens nothing.
    let res = post_open(&app, &browser, &id, &csrf, None).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.headers().get("location").is_none());
    let res = post_open(&app, &browser, &id, "forged", Some("local-network")).await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert_eq!(app.question_as(&browser, &id).await["state"], "pending");

    // The confirmation page's own button opens it.
    let res = post_open(&app, &browser, &id, &csrf, Some("local-network")).await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(res.headers()["location"], url);
    assert_eq!(res.headers()["referrer-policy"], "no-referrer");
    let (_, body) = app.response(&id, 0).await;
    assert_eq!(body["response"]["result"], json!({"action": "accept"}));

    // A bare IP asks again too; a public name still opens in one step.
    let id = app
        .open_ok(url_request(8, "https://203.0.113.7/login"))
        .await;
    let res = get_open(&app, &browser, &id).await;
    assert_eq!(res.status(), StatusCode::OK);
    let id = app
        .open_ok(url_request(9, "https://mcp.example.com/connect"))
        .await;
    assert!(!page(&app, &browser, &id).await.contains("warning danger"));
    let res = get_open(&app, &browser, &id).await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn queue_and_history_previews_of_a_url_question_show_its_domain() {
    let app = spawn_app().await;
    let id = app
        .open_ok(
            json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {
            "mode": "url", "elicitationId": "e-1",
            "url": "https://login.microsoftonline.com.evil.example/connect",
            "message": "Sign in to continue"}}),
        )
        .await;
    let browser = app.login().await;
    let queue = app.html(&browser, "/").await;
    let row = queue
        .split(&format!("data-question-id=\"{id}\""))
        .nth(1)
        .and_then(|rest| rest.split("</tr>").next())
        .unwrap_or_else(|| panic!("no row of {id}: {queue}"));
    assert!(
        row.contains("<span class=\"subdomain\">login.microsoftonline.com.</span><strong class=\"domain\">evil.example</strong>"),
        "the registrable domain is the emphasised part: {row}"
    );
    assert_eq!(
        post_decline(&app, &browser, &queue, &id).await.status(),
        StatusCode::SEE_OTHER
    );
    let history = app.html(&browser, "/history").await;
    assert!(
        history.contains("<strong class=\"domain\">evil.example</strong>"),
        "{history}"
    );
}
