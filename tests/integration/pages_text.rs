//! The pages around the questions: server text isolated and bidi controls flagged, the queue's
//! times, previews and count, the 404 and ended-session pages, dark mode and narrow screens.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

fn form_with(id: i64, message: &str, title: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": {
        "message": message,
        "requestedSchema": {"type": "object", "properties": {"f": {"type": "string", "title": title}}}}})
}

/// Whether `html` shows a time with milliseconds (`10:45:00.123Z`), as the pages once did.
fn has_millisecond_time(html: &str) -> bool {
    html.as_bytes().windows(6).any(|w| {
        w[0] == b'.' && w[1..4].iter().all(u8::is_ascii_digit) && (w[4] == b'Z' || w[4] == b'+')
    })
}

#[tokio::test]
async fn server_text_is_isolated_and_bidi_controls_are_flagged() {
    let app = spawn_app().await;
    let tricky = app
        .open_ok(form_with(1, "Open invoice\u{202E}fdp.exe", "Name\u{2067}"))
        .await;
    let plain = app
        .open_ok(form_with(2, "שלום, what is your name?", "Name"))
        .await;
    let browser = app.login().await;

    let page = app.html(&browser, &format!("/questions/{tricky}")).await;
    assert!(
        page.contains("<bdi class=\"server\">test-server</bdi> asks"),
        "{page}"
    );
    assert!(page.contains("<p class=\"message\" dir=\"auto\">Open invoice\u{202E}fdp.exe</p>"));
    assert!(
        page.contains("<label id=\"field.f-label\" for=\"field.f\"><bdi>Name\u{2067}</bdi>"),
        "{page}"
    );
    assert!(page.contains("Hidden characters in the server"), "{page}");
    assert!(page.contains("message (U+202E)"), "{page}");
    assert!(
        page.contains("requestedSchema/properties/f/title (U+2067)"),
        "{page}"
    );
    // A plain name needs no invisible isolates in the title.
    assert!(page.contains("<title>form from test-server ·"), "{page}");

    // Right-to-left text without controls is ordinary text: isolated, not flagged.
    let page = app.html(&browser, &format!("/questions/{plain}")).await;
    assert!(
        page.contains("<p class=\"message\" dir=\"auto\">שלום"),
        "{page}"
    );
    assert!(!page.contains("Hidden characters in the server"));

    let queue = app.html(&browser, "/").await;
    assert!(
        queue.contains("<bdi>Open invoice[U+202E]fdp.exe</bdi>"),
        "{queue}"
    );
}

#[tokio::test]
async fn a_non_ascii_path_is_no_punycode_warning_on_the_page() {
    let app = spawn_app().await;
    let request = json!({"jsonrpc": "2.0", "id": 3, "method": "elicitation/create", "params": {
        "mode": "url", "message": "Read the menu", "url": "https://example.com/café/menü", "elicitationId": "e-1"}});
    let id = app.open_ok(request).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(page.contains("café/menü"), "the URL as sent: {page}");
    assert!(
        !page.contains("Punycode") && !page.contains("Look-alike"),
        "{page}"
    );
}

#[tokio::test]
async fn the_queue_shows_relative_times_a_preview_and_the_count_in_the_title() {
    let app = spawn_app().await;
    app.open_ok(form_request(1)).await;
    let long = format!(
        "\n  First line of a {} prompt\nsecond line",
        "very ".repeat(30)
    );
    app.open_ok(sampling_request(2, &long)).await;
    let browser = app.login().await;
    let queue = app.html(&browser, "/").await;
    assert!(
        queue.contains("<title>(2) Waiting · mcp-consent</title>"),
        "{queue}"
    );
    assert!(
        queue.contains("<bdi>Profile</bdi>"),
        "form message preview: {queue}"
    );
    assert!(
        queue.contains("<bdi>First line of a very very") && queue.contains("…</bdi>"),
        "first prompt line, cut: {queue}"
    );
    assert!(!queue.contains("second line"), "one line only");
    assert!(
        queue.contains(">just now</time>") && queue.contains(">in 15 min</time>"),
        "{queue}"
    );
    assert!(queue.contains("<div class=\"table-wrap\">"));
    assert!(!has_millisecond_time(&queue), "{queue}");

    let empty = spawn_app().await;
    let b = empty.login().await;
    assert!(
        empty
            .html(&b, "/")
            .await
            .contains("<title>Waiting · mcp-consent</title>")
    );
}

#[tokio::test]
async fn no_page_shows_raw_utc_with_milliseconds() {
    let app = spawn_app().await;
    let id = app.open_ok(form_request(1)).await;
    let browser = app.login().await;
    app.post_json(&format!("/api/v1/requests/{id}/cancel"), &json!({}))
        .await;
    for path in [
        format!("/questions/{id}"),
        "/history".into(),
        "/rules".into(),
        "/audit".into(),
    ] {
        let html = app.html(&browser, &path).await;
        assert!(!has_millisecond_time(&html), "{path}: {html}");
    }
}

#[tokio::test]
async fn unknown_routes_get_the_styled_404_page_and_the_api_its_json() {
    let app = spawn_app().await;
    let res = http_client()
        .get(format!("{}/no/such/page", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let html = res.text().await.unwrap();
    assert!(
        html.contains("/static/style.css") && html.contains("There is no page at this address."),
        "{html}"
    );

    let res = app.get("/api/v1/no-such-route").await;
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        res.json::<Value>().await.unwrap()["error"],
        "no such API route"
    );
}

#[tokio::test]
async fn an_ended_session_is_told_so_on_the_login_page() {
    let app = spawn_app().await;
    let res = http_client()
        .get(format!("{}/", app.base))
        .header("Cookie", "mcp_consent_session=expired-or-revoked")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(res.headers()["location"], "/login?ended=1");
    let page = app.html(&http_client(), "/login?ended=1").await;
    assert!(page.contains("Your session has ended"), "{page}");
    assert!(page.contains("mcp-consent login"));
    // No cookie at all is a plain login, not "ended".
    let res = http_client()
        .get(format!("{}/", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["location"], "/login");
}

#[tokio::test]
async fn the_stylesheet_has_dark_mode_and_a_narrow_screen_layout() {
    let app = spawn_app().await;
    let css = app.get("/static/style.css").await.text().await.unwrap();
    assert!(css.contains("@media (prefers-color-scheme: dark)"));
    assert!(css.contains("@media (max-width: 40rem)") && css.contains(".table-wrap"));
}

/// The question page of a `tools/call` of `tool` with `arguments`, which the rules ask about.
async fn tool_call_page(tool: &str, arguments: Value) -> String {
    use crate::tool_calls::{pending_call, rules, started};
    let app = spawn_with(rules("default = \"ask\"\n")).await;
    let browser = app.login().await;
    let mut proxy = started(&app, 0).await;
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments}});
    proxy.send(&call.to_string()).await;
    let q = pending_call(&app, &browser).await;
    app.html(
        &browser,
        &format!("/questions/{}", q["id"].as_str().unwrap()),
    )
    .await
}

/// The text of `html` after the first `start` and before the next `end`.
fn between<'a>(html: &'a str, start: &str, end: &str) -> &'a str {
    let after = html.split(start).nth(1).unwrap();
    after.split(end).next().unwrap()
}

#[tokio::test]
async fn a_tool_calls_arguments_show_their_invisible_characters_as_code_points() {
    // Read as "invoice_exe.pdf" with the override, a zero-width space in the other.
    let html = tool_call_page(
        "delete_file",
        json!({"path": "invoice_\u{202E}fdp.exe", "note": "ok\u{200B}ay"}),
    )
    .await;
    let arguments = between(&html, "<dl class=\"arguments\">", "</dl>");
    assert!(
        !arguments.contains('\u{202E}') && !arguments.contains('\u{200B}'),
        "{arguments}"
    );
    assert!(
        arguments.contains(">U+202E<") && arguments.contains(">U+200B<"),
        "{arguments}"
    );
    assert!(arguments.contains("invisible characters"), "{arguments}");
}

#[tokio::test]
async fn every_invisible_character_in_a_tool_call_is_shown_as_a_code_point_and_warned() {
    // One byte a character, unseen: the variation selectors supplement ("emoji smuggling"),
    // the deprecated format characters, musical format controls, C0 and C1 controls, a
    // line separator, interlinear annotation; a tag character in a key and in the tool's name.
    let values = [
        ("vs", "lunch \u{1F600}\u{E0131}\u{E0132}", "U+E0131"),
        ("fmt", "rm\u{206A}\u{206F} -rf", "U+206F"),
        ("music", "a\u{1D173}b", "U+1D173"),
        ("c0", "safe\u{8}\u{8}evil \u{1b}[2K", "U+001B"),
        ("c1", "x\u{85}\u{9B}y", "U+009B"),
        ("sep", "first\u{2028}second", "U+2028"),
        ("note", "a\u{FFF9}hidden\u{FFFB}", "U+FFF9"),
    ];
    let mut arguments: serde_json::Map<String, Value> = values
        .iter()
        .map(|(k, v, _)| ((*k).to_owned(), json!(v)))
        .collect();
    arguments.insert("ke\u{E0041}y".to_owned(), json!("plain"));
    arguments.insert("lines".to_owned(), json!("one\ntwo"));
    let html = tool_call_page("send\u{E0100}_mail", Value::Object(arguments)).await;
    let section = between(&html, "<section class=\"tool-call\"", "</section>");
    let arguments = between(section, "<dl class=\"arguments\">", "</dl>");
    for (name, _, code) in values {
        let dd = between(arguments, &format!("{name}</bdi>"), "</dd>");
        assert!(dd.contains(&format!(">{code}<")), "{name}: {dd}");
        assert!(dd.contains("invisible characters"), "{name}: {dd}");
    }
    assert!(arguments.contains(">U+E0041<"), "{arguments}");
    // A line feed is a visible mark and the break itself, and no warning by itself.
    let lines = between(arguments, "lines</bdi>", "</dd>");
    assert!(lines.contains("title=\"U+000A\">↵</span>\ntwo"), "{lines}");
    assert!(!lines.contains("invisible characters"), "{lines}");
    // The tool's name: its code point in the heading, and the page's warning names it.
    assert!(section.contains("send[U+E0100]_mail"), "{section}");
    assert!(html.contains("tool (U+E0100)"), "{html}");
    let planted: Vec<char> = values
        .iter()
        .flat_map(|(_, v, _)| v.chars())
        .chain(['\u{E0041}', '\u{E0100}'])
        .filter(|c| !c.is_ascii_graphic() && !matches!(c, ' ' | '\u{1F600}'))
        .collect();
    // Nowhere in the tool-call part, the edit box included (JSON escapes there).
    let left: Vec<String> = section
        .chars()
        .filter(|c| planted.contains(c))
        .map(|c| format!("U+{:04X}", u32::from(c)))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test]
async fn the_queue_shows_a_previews_invisible_characters_as_code_points() {
    let app = spawn_app().await;
    app.open_ok(form_with(
        1,
        "Pick\u{E0100}\u{E0101} a topic\u{202E}",
        "Name",
    ))
    .await;
    let browser = app.login().await;
    let queue = app.html(&browser, "/").await;
    assert!(
        queue.contains("Pick[U+E0100][U+E0101] a topic[U+202E]"),
        "{queue}"
    );
    assert!(
        !queue.contains('\u{E0100}') && !queue.contains('\u{202E}'),
        "{queue}"
    );
}

/// A server's name is shown with its invisible characters as code points wherever it appears:
/// the queue's rows, its server filter and controls, the question page and History.
#[tokio::test]
async fn a_servers_invisible_characters_are_shown_as_code_points_on_every_page() {
    let app = spawn_app().await;
    let (status, body) = app
        .post_json(
            "/api/v1/requests",
            &json!({"server": "files\u{200B}\u{202E}exe", "session": "s\u{200B}1",
                "protocolVersion": "2025-11-25", "clientCapabilities": full_caps(),
                "request": form_with(1, "Pick one", "Name")}),
        )
        .await
        .json::<serde_json::Value>()
        .await
        .map(|b| (b["id"].is_string(), b))
        .unwrap();
    assert!(status, "{body}");
    let id = body["id"].as_str().unwrap();
    let second = app
        .post_json(
            "/api/v1/requests",
            &json!({"server": "files\u{200B}\u{202E}exe", "session": "s",
                "protocolVersion": "2025-11-25", "clientCapabilities": full_caps(),
                "request": form_with(2, "Pick another", "Name")}),
        )
        .await;
    assert_eq!(second.status(), reqwest::StatusCode::CREATED);
    let browser = app.login().await;
    // Raw only in attributes (a form's value, a row's data), never as text: not in the
    // title, the headings, the status line or the button to the next question.
    let shown_marked = |path: &str, page: &str| {
        assert!(page.contains("files[U+200B][U+202E]exe"), "{path}: {page}");
        let raw = page.matches("files\u{200B}").count();
        let in_attributes = page.matches("=\"files\u{200B}").count();
        assert_eq!(raw, in_attributes, "{path}: the name shown raw: {page}");
    };
    for path in ["/".to_owned(), format!("/questions/{id}")] {
        shown_marked(&path, &app.html(&browser, &path).await);
    }
    // The host session in "Why am I being asked" too.
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(
        page.contains("s[U+200B]1") && !page.contains("s\u{200B}1"),
        "{page}"
    );
    app.answer(id, json!({"action": "decline"})).await;
    for path in [format!("/questions/{id}"), "/history".to_owned()] {
        shown_marked(&path, &app.html(&browser, &path).await);
    }
    let decided = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(decided.contains("class=\"next\""), "{decided}");
    // The rules page offers no suggestion that hides what it holds.
    let rules = app.html(&browser, "/rules").await;
    assert!(!rules.contains("files\u{200B}"), "{rules}");
}
