//! `public_url` as a reverse proxy in front of the loopback listener sees it: the public `Host`
//! and `Origin` are answered, any other refused; cookies get `Secure`; forwarded headers count
//! only from the loopback peer, and a request through the proxy is not "this machine" for
//! `/metrics`; login links point at the public URL; a login started on a question's page comes
//! back to it. Without `public_url` none of this changes.

use reqwest::StatusCode;
use reqwest::header::{HOST, LOCATION, ORIGIN, SET_COOKIE};
use serde_json::Value;

use mcp_consent::config::Config;

use crate::helpers::*;

const PUBLIC: &str = "consent.example.ts.net";

async fn public_app() -> TestApp {
    spawn_with(Config::parse(&format!("public_url = \"https://{PUBLIC}\"")).unwrap()).await
}

/// A one-time login token, from the API.
async fn login_token(app: &TestApp) -> (String, Value) {
    let res = app.create_login_link().await;
    assert_eq!(res.status(), StatusCode::CREATED);
    let body: Value = res.json().await.unwrap();
    let url = body["url"].as_str().unwrap();
    let token = url.split("token=").nth(1).unwrap().to_owned();
    (token, body)
}

#[tokio::test]
async fn the_public_host_and_origin_are_answered_and_others_refused() {
    let app = public_app().await;
    let client = http_client();
    let get = |host: &str| {
        client
            .get(format!("{}/login", app.base))
            .header(HOST, host)
            .send()
    };
    assert_eq!(get(PUBLIC).await.unwrap().status(), StatusCode::OK);
    assert_eq!(
        get(&format!("{PUBLIC}:443")).await.unwrap().status(),
        StatusCode::OK
    );
    assert_eq!(
        get("evil.example").await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        get(&format!("{PUBLIC}:8443")).await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    // A forwarded host from the loopback peer must be one the service answers to as well.
    let forwarded = client
        .get(format!("{}/login", app.base))
        .header("X-Forwarded-Host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(forwarded.status(), StatusCode::FORBIDDEN);
    let post = |origin: &str| {
        client
            .post(format!("{}/login", app.base))
            .header(HOST, PUBLIC)
            .header(ORIGIN, origin)
            .form(&[("passphrase", "x")])
            .send()
    };
    // No passphrase is configured: 404 once past the origin check, 403 before it.
    assert_eq!(
        post(&format!("https://{PUBLIC}")).await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        post(&format!("http://{PUBLIC}")).await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        post("https://evil.example").await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn cookies_get_secure_and_login_links_point_at_the_public_url() {
    let app = public_app().await;
    let (token, body) = login_token(&app).await;
    assert_eq!(
        body["url"],
        format!("https://{PUBLIC}/login?token={token}").as_str()
    );
    assert_eq!(
        body["localUrl"],
        format!("{}/login?token={token}", app.base).as_str()
    );
    let res = http_client()
        .get(format!("{}/login?token={token}", app.base))
        .header(HOST, PUBLIC)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let cookie = res.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    assert!(cookie.contains("; Secure"), "{cookie}");
    assert!(cookie.contains("HttpOnly"), "{cookie}");

    // Without public_url: no Secure, and the link is the loopback one alone.
    let plain = spawn_app().await;
    let (token, body) = login_token(&plain).await;
    assert!(body.get("localUrl").is_none(), "{body}");
    let res = http_client()
        .get(format!("{}/login?token={token}", plain.base))
        .send()
        .await
        .unwrap();
    let cookie = res.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    assert!(!cookie.contains("Secure"), "{cookie}");
}

#[tokio::test]
async fn through_the_proxy_metrics_are_not_local() {
    let app = public_app().await;
    let client = http_client();
    let metrics = |host: &str, forwarded: Option<&str>| {
        let mut req = client
            .get(format!("{}/metrics", app.base))
            .header(HOST, host);
        if let Some(f) = forwarded {
            req = req.header("X-Forwarded-For", f);
        }
        req.send()
    };
    let local = app.base.trim_start_matches("http://").to_owned();
    assert_eq!(
        metrics(&local, None).await.unwrap().status(),
        StatusCode::OK
    );
    assert_eq!(
        metrics(&local, Some("203.0.113.9")).await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );
    // A client's own X-Forwarded-For comes first; the proxy appends the address it saw.
    assert_eq!(
        metrics(&local, Some("127.0.0.1, 203.0.113.9"))
            .await
            .unwrap()
            .status(),
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        metrics(PUBLIC, None).await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );
    // Without public_url forwarded headers mean nothing.
    let plain = spawn_app().await;
    let res = client
        .get(format!("{}/metrics", plain.base))
        .header("X-Forwarded-For", "203.0.113.9")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_login_from_a_question_page_returns_to_it_and_nowhere_else() {
    let app = spawn_app().await;
    let id = app.open_ok(form_request(1)).await;
    let res = http_client()
        .get(format!("{}/questions/{id}", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let to = res.headers()[LOCATION].to_str().unwrap().to_owned();
    assert_eq!(to, format!("/login?next=/questions/{id}"));
    let page = http_client()
        .get(format!("{}{to}", app.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // No passphrase configured: no form, so nothing to carry `next`; the page still renders.
    assert!(!page.contains("name=\"next\""), "{page}");
    for bad in [
        "https://evil.example/",
        "//evil.example",
        "/questions/../x",
        "/",
    ] {
        assert_eq!(
            mcp_consent::web::pages::safe_next(Some(bad)),
            None,
            "{bad} must not be a place to return to"
        );
    }
    assert_eq!(
        mcp_consent::web::pages::safe_next(Some(&format!("/questions/{id}"))),
        Some(format!("/questions/{id}").as_str())
    );
}
