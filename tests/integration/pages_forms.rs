//! Answering a form as a person: the confirm step in the form's words, Back keeping every
//! value, optional booleans left out unless answered, and a question that goes away while the
//! person answers it.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

fn survey(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": {
        "message": "Survey",
        "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string", "title": "Your name"},
            "color": {"type": "string", "title": "Favourite colour", "oneOf": [{"const": "#f00", "title": "Red"}, {"const": "#00f", "title": "Blue"}]},
            "pets": {"type": "array", "title": "Pets", "items": {"anyOf": [{"const": "c", "title": "Cat"}, {"const": "d", "title": "Dog"}]}},
            "agree": {"type": "boolean", "title": "Agree to the terms"}
        }, "required": ["name"]}}})
}

/// The `value` of the hidden input `name` in `html` (first one), unescaped for `&quot;`.
fn hidden(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html
        .find(&marker)
        .unwrap_or_else(|| panic!("no {name}: {html}"))
        + marker.len();
    html[start..]
        .split('"')
        .next()
        .unwrap()
        .replace("&quot;", "\"")
        .replace("&#34;", "\"")
}

/// Opens `request`, loads its page in a logged-in browser, then has the server withdraw it:
/// the person now holds a page (and its CSRF token) for a question that is gone.
async fn withdrawn_under_the_person(
    app: &TestApp,
    request: Value,
) -> (String, reqwest::Client, String) {
    let id = app.open_ok(request).await;
    let browser = app.login().await;
    let csrf = csrf_of(&app.html(&browser, &format!("/questions/{id}")).await);
    let res = app
        .post_json(&format!("/api/v1/requests/{id}/cancel"), &json!({}))
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    (id, browser, csrf)
}

/// Posts a form as the browser does; returns (status, body).
async fn post_form(
    browser: &reqwest::Client,
    url: String,
    pairs: &[(&str, &str)],
) -> (StatusCode, String) {
    let res = browser.post(url).form(pairs).send().await.unwrap();
    (res.status(), res.text().await.unwrap())
}

#[tokio::test]
async fn the_confirm_page_speaks_the_forms_words_and_back_keeps_every_value() {
    let app = spawn_app().await;
    let id = app.open_ok(survey(1)).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    let csrf = csrf_of(&page);
    let typed = [
        ("csrf", csrf.as_str()),
        ("field.name", "Ada"),
        ("field.color", "#00f"),
        ("field.pets", ""),
        ("field.pets", "c"),
        ("field.pets", "d"),
        ("field.agree", "true"),
    ];
    let mut submit = typed.to_vec();
    submit.push(("action", "accept"));
    let res = browser
        .post(format!("{}/questions/{id}/answer", app.base))
        .form(&submit)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let confirm = res.text().await.unwrap();

    // Enter pressed twice must not send: nothing on the confirm page takes the focus.
    assert!(!confirm.contains("autofocus"), "{confirm}");
    // Labels and the chosen titles, not property names and raw values.
    for shown in [
        "<dt><bdi>Favourite colour</bdi></dt><dd><span class=\"value\" dir=\"auto\">Blue</span>",
        "<dt><bdi>Pets</bdi></dt><dd><span class=\"value\" dir=\"auto\">Cat, Dog</span>",
        "<dt><bdi>Agree to the terms</bdi></dt><dd><span class=\"value\" dir=\"auto\">yes</span>",
    ] {
        assert!(confirm.contains(shown), "{shown} missing: {confirm}");
    }

    // Back is a form posting every value back, not a link that loses them.
    assert!(!confirm.contains(&format!("href=\"/questions/{id}\"")));
    assert!(confirm.contains("name=\"action\" value=\"edit\""));
    assert_eq!(hidden(&confirm, "field.name"), "Ada");
    let back: Vec<(String, String)> = typed
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .chain([("action".to_owned(), "edit".to_owned())])
        .collect();
    let res = browser
        .post(format!("{}/questions/{id}/answer", app.base))
        .form(&back)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let form = res.text().await.unwrap();
    assert!(form.contains("value=\"Ada\""), "{form}");
    assert!(
        form.contains("value=\"#00f\" dir=\"auto\" selected"),
        "{form}"
    );
    assert!(form.contains("value=\"c\" checked") && form.contains("value=\"d\" checked"));
    assert!(form.contains("value=\"true\" checked"), "{form}");
    assert!(!form.contains("field-error"), "Back is no error: {form}");
    assert_eq!(app.question(&id).await["state"], "pending");
}

#[tokio::test]
async fn an_untouched_optional_boolean_without_default_is_left_out() {
    let app = spawn_app().await;
    let id = app.open_ok(survey(2)).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    // Three choices, "not answered" preselected: a lone checkbox cannot say "left alone".
    assert!(
        page.contains("<input type=\"radio\" name=\"field.agree\" value=\"\" checked>"),
        "{page}"
    );
    assert!(!page.contains("<input type=\"hidden\" name=\"field.agree\" value=\"false\">"));
    let csrf = csrf_of(&page);
    let confirm_of = |agree: &'static str| {
        let browser = browser.clone();
        let url = format!("{}/questions/{id}/answer", app.base);
        let csrf = csrf.clone();
        async move {
            let res = browser
                .post(url)
                .form(&[
                    ("csrf", csrf.as_str()),
                    ("field.name", "Ada"),
                    ("field.agree", agree),
                    ("action", "accept"),
                ])
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), StatusCode::OK);
            let html = res.text().await.unwrap();
            serde_json::from_str::<Value>(&hidden(&html, "payload")).unwrap()["content"].clone()
        }
    };
    assert_eq!(confirm_of("").await, json!({"name": "Ada"}), "left out");
    assert_eq!(
        confirm_of("false").await,
        json!({"name": "Ada", "agree": false})
    );
    assert_eq!(
        confirm_of("true").await,
        json!({"name": "Ada", "agree": true})
    );
}

#[tokio::test]
async fn a_question_withdrawn_while_answering_says_so_and_shows_the_input_back() {
    let app = spawn_app().await;
    let (id, browser, csrf) = withdrawn_under_the_person(&app, survey(3)).await;
    let (status, html) = post_form(
        &browser,
        format!("{}/questions/{id}/answer", app.base),
        &[
            ("csrf", csrf.as_str()),
            ("field.name", "Ada <Lovelace>"),
            ("field.color", "#f00"),
            ("action", "accept"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(html.contains("The server withdrew this question"), "{html}");
    assert!(html.contains("Your answer was not sent"), "{html}");
    assert!(
        html.contains("Ada &lt;Lovelace&gt;") || html.contains("Ada &#60;Lovelace&#62;"),
        "the typed text is shown back, escaped: {html}"
    );
    assert!(!html.contains(&format!("action=\"/questions/{id}/answer\"")));

    // A confirmed answer sent after the question went away is shown back too.
    let payload = json!({"action": "accept", "content": {"name": "Grace", "color": "#00f"}});
    let (status, html) = post_form(
        &browser,
        format!("{}/questions/{id}/send", app.base),
        &[
            ("csrf", csrf.as_str()),
            ("payload", payload.to_string().as_str()),
            ("action", "send"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(html.contains("Grace") && html.contains("Blue"), "{html}");

    // The page itself says what happened instead of offering the form.
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(page.contains("The server withdrew this question"), "{page}");
    assert!(!page.contains(&format!("action=\"/questions/{id}/answer\"")));
    assert_eq!(app.question(&id).await["state"], "withdrawn");
}

#[tokio::test]
async fn a_prompt_edit_saved_after_a_withdrawal_is_shown_back() {
    let app = spawn_app().await;
    let (id, browser, csrf) =
        withdrawn_under_the_person(&app, sampling_request(4, "Summarise")).await;
    let (status, html) = post_form(
        &browser,
        format!("{}/questions/{id}/revise", app.base),
        &[
            ("csrf", csrf.as_str()),
            ("baseRevision", "1"),
            ("systemPrompt", "My careful edit"),
            ("text.0.0", "Summarise briefly"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(html.contains("The server withdrew this question"), "{html}");
    assert!(
        html.contains("My careful edit") && html.contains("Message 1, block 1"),
        "{html}"
    );
}

#[tokio::test]
async fn an_expired_question_says_so_and_an_answer_to_it_is_shown_back() {
    let app = spawn_with(mcp_consent::config::Config {
        question_timeout_secs: 1,
        ..Default::default()
    })
    .await;
    let id = app.open_ok(survey(5)).await;
    let browser = app.login().await;
    let csrf = csrf_of(&app.html(&browser, &format!("/questions/{id}")).await);
    let expired = eventually(std::time::Duration::from_secs(10), || async {
        (app.question(&id).await["state"] == "expired").then_some(())
    })
    .await;
    assert!(expired.is_some(), "the question never expired");

    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(page.contains("This question expired"), "{page}");
    assert!(!page.contains(&format!("action=\"/questions/{id}/answer\"")));
    let (status, html) = post_form(
        &browser,
        format!("{}/questions/{id}/answer", app.base),
        &[
            ("csrf", csrf.as_str()),
            ("field.name", "Typed too late"),
            ("action", "accept"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(
        html.contains("This question expired") && html.contains("Typed too late"),
        "{html}"
    );
}

/// The value of attribute `attr` in the first tag of `html` that starts with `tag_start`.
fn attr_of(html: &str, tag_start: &str, attr: &str) -> String {
    let tag = &html[html
        .find(tag_start)
        .unwrap_or_else(|| panic!("no {tag_start}"))..];
    let tag = &tag[..tag.find('>').unwrap()];
    let marker = format!("{attr}=\"");
    let start = tag
        .find(&marker)
        .unwrap_or_else(|| panic!("no {attr} in {tag}"))
        + marker.len();
    tag[start..].split('"').next().unwrap().to_owned()
}

/// The text of the element whose id is `id` (up to its first closing tag).
fn element_text(html: &str, id: &str) -> String {
    let marker = format!("id=\"{id}\"");
    let at = html
        .find(&marker)
        .unwrap_or_else(|| panic!("no element {id}"));
    let rest = &html[at..];
    rest[rest.find('>').unwrap() + 1..rest.find("</").unwrap()].to_owned()
}

/// Screen readers name each group of choices and read each field's description with it: the
/// fieldset of a multi-select is labelled by the field's label, and a field's description is
/// tied to its input.
#[tokio::test]
async fn choice_groups_are_named_and_descriptions_are_tied_to_their_fields() {
    let app = spawn_app().await;
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {
    "message": "Survey",
    "requestedSchema": {"type": "object", "properties": {
        "name": {"type": "string", "title": "Your name", "description": "As on your badge"},
        "pets": {"type": "array", "title": "Pets", "items": {"anyOf": [{"const": "c", "title": "Cat"}, {"const": "d", "title": "Dog"}]}}
    }}}});
    let id = app.open_ok(request).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;

    let group = attr_of(&page, "<fieldset", "aria-labelledby");
    assert!(element_text(&page, &group).contains("Pets"), "{page}");

    let input = attr_of(&page, "<input type=\"text\"", "aria-describedby");
    let described = input.split_whitespace().next().unwrap();
    assert!(
        element_text(&page, described).contains("As on your badge"),
        "{page}"
    );
}

/// A browser sends a textarea's line breaks as CRLF; the server gets the text as the person
/// typed it, with `\n`.
#[tokio::test]
async fn typed_line_breaks_reach_the_server_as_newlines() {
    let app = spawn_app().await;
    let id = app.open_ok(sampling_request(7, "two lines please")).await;
    let browser = app.login().await;
    let csrf = csrf_of(&app.html(&browser, &format!("/questions/{id}")).await);
    let (status, confirm) = post_form(
        &browser,
        format!("{}/questions/{id}/answer", app.base),
        &[
            ("csrf", csrf.as_str()),
            ("text", "line one\r\nline two"),
            ("model", "by-hand"),
            ("stopReason", "endTurn"),
            ("action", "accept"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{confirm}");
    let payload = hidden(&confirm, "payload");
    let (status, _) = post_form(
        &browser,
        format!("{}/questions/{id}/send", app.base),
        &[
            ("csrf", csrf.as_str()),
            ("payload", payload.as_str()),
            ("action", "send"),
        ],
    )
    .await;
    assert!(status.is_success() || status.is_redirection(), "{status}");
    let (_, body) = app.response(&id, 0).await;
    assert_eq!(
        body["response"]["result"]["content"]["text"],
        "line one\nline two"
    );
}
