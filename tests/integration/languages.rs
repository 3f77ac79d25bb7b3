//! The pages in English, Simplified Chinese and Brazilian Portuguese: the language
//! from Accept-Language, the switcher's cookie winning over it, `?lang=` for one page, English
//! for anything else, numbers and money in the language's notation, server text untranslated.

use mcp_consent::config::Config;
use mcp_consent::sampling::{ModelConfig, ProviderKind, RoutingConfig};
use reqwest::{Client, StatusCode};
use serde_json::json;

use crate::helpers::*;

/// The HTML of `path` as `browser` gets it with `Accept-Language: accept`.
async fn page_in(
    app: &TestApp,
    browser: &Client,
    path: &str,
    accept: &str,
) -> (StatusCode, String) {
    let res = browser
        .get(format!("{}{path}", app.base))
        .header("Accept-Language", accept)
        .send()
        .await
        .unwrap();
    (res.status(), res.text().await.unwrap())
}

#[tokio::test]
async fn accept_language_zh_cn_gives_chinese_queue_and_form_with_server_text_untouched() {
    let app = spawn_app().await;
    let id = app.open_ok(form_request(1)).await;
    let browser = app.login().await;

    let (_, queue) = page_in(&app, &browser, "/", "zh-CN,zh;q=0.9,en;q=0.8").await;
    assert!(queue.contains("<html lang=\"zh-CN\">"), "{queue}");
    assert!(queue.contains("<h1>等待你处理</h1>"), "{queue}");
    assert!(queue.contains("1 个问题待处理"), "{queue}");
    assert!(
        queue.contains("<title>(1) 待处理 · mcp-consent</title>"),
        "{queue}"
    );
    assert!(
        queue.contains(">刚刚</time>"),
        "relative times in Chinese: {queue}"
    );
    assert!(
        queue.contains("<bdi>Profile</bdi>"),
        "the server's preview as sent"
    );

    let (_, page) = page_in(&app, &browser, &format!("/questions/{id}"), "zh-CN").await;
    assert!(page.contains("<html lang=\"zh-CN\">"));
    assert!(
        page.contains("<bdi class=\"server\">test-server</bdi> 请你填写信息"),
        "{page}"
    );
    assert!(page.contains("<h2>服务器的消息</h2>"), "{page}");
    assert!(page.contains(">检查并发送…</button>"), "{page}");
    assert!(page.contains("整数，18 到 130"), "the integer hint: {page}");
    // Server text (message, field names, option titles) is never translated.
    assert!(
        page.contains(">Profile</p>") && page.contains(">Red</option>"),
        "{page}"
    );
    assert!(!page.contains("Review and send"), "no English left: {page}");
}

#[tokio::test]
async fn pt_br_writes_a_sampling_cost_with_a_decimal_comma() {
    let model = |id: &str, usd_per_mtok: f64| ModelConfig {
        id: id.to_owned(),
        provider: ProviderKind::Openai,
        base_url: "http://127.0.0.1:1/v1/".to_owned(),
        api_key_env: None,
        api_key_file: None,
        input_usd_per_mtok: usd_per_mtok,
        output_usd_per_mtok: usd_per_mtok * 4.0,
        speed: 0.5,
        intelligence: 0.5,
        tools: false,
        images: false,
        audio: false,
        aliases: vec![],
        servers: None,
        timeout_secs: 300,
    };
    let app = spawn_with(Config {
        models: vec![model("cheap", 1.0)],
        routing: RoutingConfig::default(),
        ..Config::default()
    })
    .await;
    let id = app.open_ok(sampling_request(1, "hello")).await;
    let browser = app.login().await;

    let (_, page) = page_in(
        &app,
        &browser,
        &format!("/questions/{id}"),
        "pt-BR,pt;q=0.9",
    )
    .await;
    assert!(page.contains("<html lang=\"pt-BR\">"), "{page}");
    assert!(page.contains(">Aprovar e executar</button>"), "{page}");
    // maxTokens 100 at $4/Mtok output (+ the prompt): at most $0.0004…, written 0,0004….
    assert!(page.contains("no máximo US$ 0,000"), "{page}");
    assert!(!page.contains("$0.000"), "no English notation: {page}");
    // The protocol's names stay as the spec writes them.
    assert!(page.contains("<dt>maxTokens</dt>") && page.contains("CreateMessageResult"));

    let (_, english) = page_in(&app, &browser, &format!("/questions/{id}"), "en-US").await;
    assert!(english.contains("at most $0.000"), "{english}");
}

#[tokio::test]
async fn the_switchers_cookie_wins_over_accept_language_and_only_goes_back_to_local_paths() {
    let app = spawn_app().await;
    let browser = app.login().await;

    let (_, queue) = page_in(&app, &browser, "/", "zh-CN").await;
    assert!(
        queue.contains(
            "href=\"/language?set=pt-BR&#38;next=%2F\" lang=\"pt-BR\" hreflang=\"pt-BR\""
        ),
        "the switcher links each language: {queue}"
    );
    let res = browser
        .get(format!("{}/language?set=pt-BR&next=/history", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(res.headers()["location"], "/history");

    let (_, queue) = page_in(&app, &browser, "/", "zh-CN").await;
    assert!(queue.contains("<html lang=\"pt-BR\">"), "{queue}");
    assert!(queue.contains("<h1>Aguardando você</h1>"), "{queue}");
    assert!(
        queue.contains("aria-current=\"true\">Português (Brasil)</a>"),
        "{queue}"
    );

    // `?lang=` picks the language of one page, the cookie stays.
    let (_, once) = page_in(&app, &browser, "/?lang=zh-CN", "en").await;
    assert!(once.contains("<h1>等待你处理</h1>"), "{once}");
    let (_, queue) = page_in(&app, &browser, "/", "en").await;
    assert!(queue.contains("<h1>Aguardando você</h1>"));

    // Anything but a path of this service goes back to the queue.
    for next in [
        "//evil.example/",
        "https://evil.example/",
        "/\\evil.example",
    ] {
        let query: String = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("set", "en")
            .append_pair("next", next)
            .finish();
        let res = browser
            .get(format!("{}/language?{query}", app.base))
            .send()
            .await
            .unwrap();
        assert_eq!(res.headers()["location"], "/", "{next}");
    }
    let (_, queue) = page_in(&app, &browser, "/", "zh-CN").await;
    assert!(
        queue.contains("<h1>Waiting for you</h1>"),
        "the cookie now says en"
    );
}

#[tokio::test]
async fn unknown_languages_fall_back_to_english_and_errors_speak_the_language() {
    let app = spawn_app().await;
    let browser = app.login().await;
    let (_, queue) = page_in(&app, &browser, "/", "de-DE,fr;q=0.8").await;
    assert!(queue.contains("<html lang=\"en\">"), "{queue}");
    assert!(queue.contains("<h1>Waiting for you</h1>"));
    let (_, queue) = page_in(&app, &browser, "/", "x-klingon, ;;").await;
    assert!(queue.contains("<html lang=\"en\">"));

    let (status, page) = page_in(&app, &browser, "/no/such/page", "zh-CN").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(page.contains("<html lang=\"zh-CN\">"), "{page}");
    assert!(
        page.contains("404 未找到") && page.contains("此地址没有页面。"),
        "{page}"
    );

    let (_, login) = page_in(&app, &http_client(), "/login?ended=1", "pt-BR").await;
    assert!(login.contains("Sua sessão terminou"), "{login}");
    let res = browser
        .post(format!("{}/logout", app.base))
        .header("Accept-Language", "pt-BR")
        .form(&json!({"csrf": "stale"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    let page = res.text().await.unwrap();
    assert!(
        page.contains("O token de segurança do formulário"),
        "{page}"
    );
}
