//! The server names the pages offer to pick from (History's filter, the Rules page's
//! suggestions) are the most recent ones, bounded however many names a script made up; a rule
//! for an older name still counts it as one that asked.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn the_pages_list_the_most_recent_server_names_and_still_know_the_older_ones() {
    let app = spawn_app().await;
    for n in 0..260 {
        let res = app
            .post_json(
                "/api/v1/requests",
                &json!({"server": format!("name{n:03}"), "session": "s",
                    "protocolVersion": "2025-11-25", "clientCapabilities": full_caps(),
                    "request": sampling_request(n, "hi")}),
            )
            .await;
        assert_eq!(res.status(), StatusCode::CREATED);
    }
    let browser = app.login().await;
    let history = app.html(&browser, "/history").await;
    let options = history.matches("<option value=\"name").count();
    assert_eq!(options, 200, "the filter lists the 200 most recent names");
    assert!(history.contains("name259") && !history.contains("\"name000\""));
    let rules = app.html(&browser, "/rules").await;
    assert_eq!(rules.matches("<option value=\"name").count(), 200);

    // name000 is not listed, but it asked: a rule for it needs no "never asked" confirmation.
    let csrf = csrf_of(&rules);
    let res = browser
        .post(format!("{}/rules", app.base))
        .form(&[
            ("csrf", csrf.as_str()),
            ("server", "name000"),
            ("scope", "request"),
            ("reason", "old friend"),
            ("days", "7"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
}
