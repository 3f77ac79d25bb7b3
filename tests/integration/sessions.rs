//! Browser sessions as the person manages them: a session lasts 12 hours unless the browser is
//! remembered (30 days, from the passphrase form's checkbox, or the button the queue and the Sessions
//! page offer a 12-hour session such as a link login's); the Sessions
//! page lists them and revokes one or all others at once, behind the CSRF check.

use std::sync::Arc;

use chrono::{Duration, Utc};
use mcp_consent::clock::ManualClock;
use mcp_consent::config::Config;
use reqwest::{Client, StatusCode};

use crate::helpers::*;

/// Where `GET /` sends `browser`: `None` when it is served (logged in).
async fn redirect_of(app: &TestApp, browser: &Client) -> Option<String> {
    let res = browser.get(format!("{}/", app.base)).send().await.unwrap();
    match res.status() {
        StatusCode::OK => None,
        StatusCode::SEE_OTHER => Some(res.headers()["location"].to_str().unwrap().to_owned()),
        other => panic!("GET / answered {other}"),
    }
}

/// POSTs a form with the page's CSRF token (`csrf`: the token to send).
async fn post(app: &TestApp, browser: &Client, path: &str, csrf: &str) -> reqwest::Response {
    browser
        .post(format!("{}{path}", app.base))
        .form(&[("csrf", csrf)])
        .send()
        .await
        .unwrap()
}

fn max_age(res: &reqwest::Response) -> String {
    let cookie = res.headers()["set-cookie"].to_str().unwrap();
    cookie
        .split(';')
        .find_map(|p| p.trim().strip_prefix("Max-Age="))
        .unwrap_or_else(|| panic!("no Max-Age in {cookie}"))
        .to_owned()
}

#[tokio::test]
async fn a_session_lasts_12_hours_and_a_remembered_browser_30_days() {
    let clock = ManualClock::at(Utc::now());
    let dir = tempfile::tempdir().unwrap();
    let hash_file = dir.path().join("hash");
    std::fs::write(
        &hash_file,
        mcp_consent::auth::passphrase::hash("correct horse battery").unwrap(),
    )
    .unwrap();
    owner_only(&hash_file);
    let config = Config {
        passphrase_hash_file: Some(hash_file),
        ..Config::default()
    };
    let app = spawn_with_parts(config, Arc::new(clock.clone()), None).await;

    let daily = http_client();
    let res = daily
        .post(format!("{}/login", app.base))
        .form(&[("passphrase", "correct horse battery")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(max_age(&res), "43200");

    let remembered = http_client();
    let res = remembered
        .post(format!("{}/login", app.base))
        .form(&[("passphrase", "correct horse battery"), ("remember", "1")])
        .send()
        .await
        .unwrap();
    assert_eq!(max_age(&res), "2592000");

    // A link login remembered afterwards from the Sessions page.
    let linked = app.login().await;
    let page = app.html(&linked, "/sessions").await;
    assert!(page.contains("Remember this browser for 30 days"), "{page}");
    let res = post(&app, &linked, "/sessions/remember", &csrf_of(&page)).await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(max_age(&res), "2592000");

    clock.advance(Duration::hours(13));
    assert_eq!(
        redirect_of(&app, &daily).await.as_deref(),
        Some("/login?ended=1")
    );
    assert_eq!(redirect_of(&app, &remembered).await, None);
    assert_eq!(redirect_of(&app, &linked).await, None);

    clock.advance(Duration::days(29));
    assert_eq!(redirect_of(&app, &remembered).await, None, "day 29");
    assert_eq!(redirect_of(&app, &linked).await, None, "day 29");
    clock.advance(Duration::days(1));
    assert!(redirect_of(&app, &remembered).await.is_some(), "day 30");
    assert!(redirect_of(&app, &linked).await.is_some(), "day 30");
}

#[tokio::test]
async fn sessions_are_listed_and_revoked_at_once_behind_csrf() {
    let app = spawn_app().await;
    let mine = app.login().await;
    let other = app.login().await;
    let third = app.login().await;

    let page = app.html(&mine, "/sessions").await;
    assert_eq!(page.matches("/revoke\"").count(), 3, "{page}");
    assert_eq!(page.matches("(this browser)").count(), 1, "{page}");
    assert!(page.contains("href=\"/sessions\""), "linked from the nav");
    let csrf = csrf_of(&page);
    // No secret of a session is on the page: not the CSRF token of another session.
    let other_csrf = csrf_of(&app.html(&other, "/sessions").await);
    assert!(!page.contains(&other_csrf));

    // The handle of a session that is not this browser's.
    let handles: Vec<&str> = page
        .split("action=\"/sessions/")
        .skip(1)
        .filter_map(|rest| rest.split_once("/revoke\""))
        .map(|(handle, _)| handle)
        .collect();
    let own_row = page.split("(this browser)").next().unwrap();
    let own_handle = own_row.rsplit("<tr").next().unwrap();
    assert!(!own_handle.contains("action=\"/sessions/"));
    let foreign: Vec<&str> = handles
        .iter()
        .copied()
        .filter(|h| {
            let row = page.split(&format!("/sessions/{h}/revoke")).next().unwrap();
            !row.rsplit("<tr").next().unwrap().contains("(this browser)")
        })
        .collect();
    assert_eq!(foreign.len(), 2, "{handles:?}");

    // Without the CSRF token nothing is revoked.
    let forged = post(
        &app,
        &mine,
        &format!("/sessions/{}/revoke", foreign[0]),
        "forged",
    )
    .await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    assert_eq!(redirect_of(&app, &other).await, None);
    assert_eq!(redirect_of(&app, &third).await, None);

    let res = post(
        &app,
        &mine,
        &format!("/sessions/{}/revoke", foreign[0]),
        &csrf,
    )
    .await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let ended = [
        redirect_of(&app, &other).await,
        redirect_of(&app, &third).await,
    ];
    assert_eq!(
        ended
            .iter()
            .filter(|r| r.as_deref() == Some("/login?ended=1"))
            .count(),
        1,
        "{ended:?}"
    );
    assert_eq!(redirect_of(&app, &mine).await, None);

    let forged = post(&app, &mine, "/sessions/revoke-others", "forged").await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    let res = post(&app, &mine, "/sessions/revoke-others", &csrf).await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        redirect_of(&app, &other).await.as_deref(),
        Some("/login?ended=1")
    );
    assert_eq!(
        redirect_of(&app, &third).await.as_deref(),
        Some("/login?ended=1")
    );
    assert_eq!(redirect_of(&app, &mine).await, None);
    let page = app.html(&mine, "/sessions").await;
    assert_eq!(page.matches("/revoke\"").count(), 1, "{page}");
}

#[tokio::test]
async fn a_link_login_is_offered_to_remember_the_browser_from_the_queue() {
    let clock = ManualClock::at(Utc::now());
    let app = spawn_with_parts(Config::default(), Arc::new(clock.clone()), None).await;
    let linked = app.login().await;
    let forger = app.login().await;

    // The queue says the link's session lasts 12 hours and offers the 30-day one.
    let queue = app.html(&linked, "/").await;
    assert!(
        queue.contains("You are signed in for 12 hours on this browser."),
        "{queue}"
    );
    assert!(
        queue.contains("action=\"/sessions/remember\"")
            && queue.contains(">Remember this browser for 30 days</button>"),
        "{queue}"
    );

    // Without the page's CSRF token nothing is extended.
    let forged = forger
        .post(format!("{}/sessions/remember", app.base))
        .form(&[("back", "queue")])
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);

    let res = linked
        .post(format!("{}/sessions/remember", app.base))
        .form(&[("csrf", csrf_of(&queue).as_str()), ("back", "queue")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(res.headers()["location"], "/", "back to the queue");
    assert_eq!(max_age(&res), "2592000");
    let queue = app.html(&linked, "/").await;
    assert!(!queue.contains("signed in for 12 hours"), "{queue}");

    // The stored session lasts 30 days too; the forger's stayed a 12-hour one.
    clock.advance(Duration::hours(13));
    assert_eq!(
        redirect_of(&app, &forger).await.as_deref(),
        Some("/login?ended=1")
    );
    assert_eq!(redirect_of(&app, &linked).await, None);
    clock.advance(Duration::days(29) - Duration::hours(13));
    assert_eq!(redirect_of(&app, &linked).await, None, "day 29");
    clock.advance(Duration::days(1) + Duration::hours(1));
    assert_eq!(
        redirect_of(&app, &linked).await.as_deref(),
        Some("/login?ended=1"),
        "day 30"
    );
}
