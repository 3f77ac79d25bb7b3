//! The question pages' accessibility contract as HTML: the skip link, the decision
//! area as a named dialog, the Escape confirmation's markup, the error summary linked to the
//! fields, the cost described for Approve, the diff of a prompt edit, and the tool-use review
//! saying what Send allows.

use mcp_consent::sampling::RoutingConfig;
use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;
use crate::model_review::{
    FakeModel, app_with_models, approve_request, hinted, phase_becomes, weather_round,
};

#[tokio::test]
async fn a_form_page_has_a_skip_link_a_named_dialog_and_an_escape_confirmation() {
    let app = spawn_app().await;
    let id = app.open_ok(form_request(1)).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    let body = &page[page.find("<body>").unwrap()..];
    let first = &body[..body.find("</a>").unwrap()];
    assert!(
        first.contains("href=\"#main\"") && first.contains("Skip to content"),
        "the skip link comes first: {first}"
    );
    assert!(
        page.contains("<main id=\"main\" tabindex=\"-1\">"),
        "{page}"
    );
    assert!(
        page.contains("role=\"dialog\" aria-labelledby=\"decision-title\"")
            && page.contains("id=\"decision-title\""),
        "{page}"
    );
    assert!(
        !page.contains("aria-modal"),
        "the decision area is not modal"
    );
    // Escape asks first; what it confirms is the form's own Decline button.
    assert!(page.contains("<dialog class=\"escape-confirm\""), "{page}");
    assert!(page.contains("Decline this question?"), "{page}");
    assert!(
        page.contains("value=\"decline\" formnovalidate data-escape>Decline"),
        "{page}"
    );
}

#[tokio::test]
async fn a_refused_form_gets_an_error_summary_linked_to_each_invalid_field() {
    let app = spawn_app().await;
    let id = app.open_ok(form_request(2)).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    let res = browser
        .post(format!("{}/questions/{id}/answer", app.base))
        .form(&[
            ("csrf", csrf_of(&page).as_str()),
            ("field.name", "A"),
            ("field.age", "200"),
            ("action", "accept"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = res.text().await.unwrap();
    let at = html
        .find("class=\"error error-summary\" role=\"alert\"")
        .unwrap_or_else(|| panic!("{html}"));
    let summary = &html[at..];
    let summary = &summary[..summary.find("</div>").unwrap()];
    assert!(
        summary.contains("<a href=\"#field.name\">") && summary.contains("<a href=\"#field.age\">"),
        "{summary}"
    );
    // Each invalid field is marked and tied to its own error text.
    for name in ["name", "age"] {
        let input = &html[html.find(&format!("id=\"field.{name}\" name=")).unwrap()..];
        let input = &input[..input.find('>').unwrap()];
        assert!(
            input.contains("aria-invalid=\"true\"")
                && input.contains(&format!("field.{name}-error\"")),
            "{input}"
        );
        assert!(
            html.contains(&format!("id=\"field.{name}-error\"")),
            "{html}"
        );
    }
}

#[tokio::test]
async fn the_request_review_describes_the_cost_for_approve_and_shows_the_edit_as_a_diff() {
    let fake = FakeModel::start().await;
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    let id = app.open_ok(hinted(3, &["mini"])).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(
        page.contains("aria-describedby=\"routed-cost\">Approve and run")
            && page.contains("<p id=\"routed-cost\" data-estimate-line>Estimated input"),
        "{page}"
    );
    assert!(
        page.contains("<label for=\"text.0.0\">"),
        "the prompt boxes are labelled"
    );
    assert!(page.contains("Reject this request?"), "{page}");
    assert!(!page.contains("class=\"diff\""), "no diff before an edit");

    let res = app
        .post_json(
            &format!("/api/v1/questions/{id}/revisions"),
            &json!({"baseRevision": 1, "texts": [{"message": 0, "block": 0, "text": "EDITED-31cd"}]}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    let at = page
        .find("<ol class=\"diff\">")
        .unwrap_or_else(|| panic!("{page}"));
    let diff = &page[at..];
    let diff = &diff[..diff.find("</ol>").unwrap()];
    assert!(
        diff.contains(
            "<span class=\"tag\">removed:</span> <del><bdi>SECRET-PROMPT-1f2e</bdi></del>"
        ) && diff.contains("<span class=\"tag\">added:</span> <ins><bdi>EDITED-31cd</bdi></ins>"),
        "{diff}"
    );
    assert!(page.contains("Message 1 (user), block 1:"), "{page}");
    // The edit is audited (digests only).
    let audit = app.html(&browser, "/audit?action=edited").await;
    assert!(
        audit.contains(">edited</a>") && !audit.contains("EDITED-31cd"),
        "{audit}"
    );
}

#[tokio::test]
async fn the_tool_use_review_says_what_send_lets_the_server_do() {
    let fake = FakeModel::start().await;
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    let id = app.open_ok(weather_round(4, &[])).await;
    approve_request(&app, &id).await;
    phase_becomes(&app, &id, "tool_use_review").await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    let at = page
        .find("id=\"send-allows\"")
        .unwrap_or_else(|| panic!("{page}"));
    let allows = &page[at..];
    let send = allows
        .find(">Send</button>")
        .expect("Send comes after the words");
    let allows = &allows[..send];
    assert!(
        allows.contains(
            "Sending lets <bdi class=\"server\">test-server</bdi> run the tool <code><bdi>get_weather</bdi></code> with these arguments"
        ) && allows.contains("Paris"),
        "{allows}"
    );
    assert!(
        page.contains("aria-describedby=\"run-cost send-allows\">Send</button>"),
        "{page}"
    );
}
