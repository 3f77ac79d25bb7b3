//! What is wrong, in the page's language: a refused form answer's field messages and a refused
//! review step come from the catalogues (zh-CN, pt-BR), still linked from the error summary to
//! their fields, while the JSON API's 422 keeps its English words.

use mcp_consent::config::Config;
use mcp_consent::sampling::{ModelConfig, ProviderKind, RoutingConfig};
use reqwest::{Client, StatusCode};
use serde_json::json;

use crate::helpers::*;

/// Posts the form of `form_request` with `name` and `age` typed in, on the page in `lang`
/// (`?lang=`); returns the 422 page.
async fn refused_form(app: &TestApp, browser: &Client, id: &str, lang: &str) -> String {
    let page = app.html(browser, &format!("/questions/{id}")).await;
    let res = browser
        .post(format!("{}/questions/{id}/answer?lang={lang}", app.base))
        .form(&[
            ("csrf", csrf_of(&page).as_str()),
            ("field.name", "A"),
            ("field.age", "1200"),
            ("action", "accept"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
    res.text().await.unwrap()
}

/// The error summary of a 422 page.
fn summary_of(html: &str) -> &str {
    let at = html
        .find("class=\"error error-summary\" role=\"alert\"")
        .unwrap_or_else(|| panic!("no error summary: {html}"));
    let summary = &html[at..];
    &summary[..summary.find("</div>").unwrap()]
}

#[tokio::test]
async fn a_refused_form_says_what_is_wrong_in_chinese_and_portuguese() {
    let app = spawn_app().await;
    let id = app.open_ok(form_request(1)).await;
    let browser = app.login().await;

    let zh = refused_form(&app, &browser, &id, "zh-CN").await;
    assert!(zh.contains("<html lang=\"zh-CN\">"), "{zh}");
    let summary = summary_of(&zh);
    assert!(summary.contains("至少需要 2 个字符。"), "{summary}");
    assert!(summary.contains("不能大于 130。"), "{summary}");
    // Still linked to the fields, and each field tied to its own message.
    assert!(
        summary.contains("<a href=\"#field.name\">") && summary.contains("<a href=\"#field.age\">"),
        "{summary}"
    );
    let error = &zh[zh.find("id=\"field.name-error\"").unwrap()..];
    assert!(
        error[..error.find("</").unwrap()].contains("至少需要 2 个字符。"),
        "{error}"
    );
    assert!(!zh.contains("must be"), "no English left: {zh}");

    let pt = refused_form(&app, &browser, &id, "pt-BR").await;
    let summary = summary_of(&pt);
    assert!(
        summary.contains("Deve ter pelo menos 2 caracteres."),
        "{summary}"
    );
    assert!(summary.contains("Deve ser no máximo 130."), "{summary}");
    assert!(!pt.contains("must be"), "no English left: {pt}");

    let en = refused_form(&app, &browser, &id, "en").await;
    assert!(
        summary_of(&en).contains("Must be at least 2 characters long."),
        "{en}"
    );

    // A number the person typed that is not one is named in their language too.
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    let res = browser
        .post(format!("{}/questions/{id}/answer?lang=pt-BR", app.base))
        .form(&[
            ("csrf", csrf_of(&page).as_str()),
            ("field.name", "Ana"),
            ("field.age", "abc"),
            ("action", "accept"),
        ])
        .send()
        .await
        .unwrap();
    let html = res.text().await.unwrap();
    assert!(
        summary_of(&html).contains("Deve ser um número inteiro."),
        "{html}"
    );
}

#[tokio::test]
async fn the_api_keeps_its_english_field_messages() {
    let app = spawn_app().await;
    let id = app.open_ok(form_request(1)).await;
    let res = app
        .post_json(
            &format!("/api/v1/questions/{id}/answer"),
            &json!({"action": "accept", "content": {"name": "A", "age": 1200, "color": "#0f0"}}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(
        body,
        json!({"errors": [
            {"field": "name", "message": "must be at least 2 characters"},
            {"field": "age", "message": "must be at most 130"},
            {"field": "color", "message": "\"#0f0\" is not one of the options"},
        ]})
    );
}

fn model(id: &str) -> ModelConfig {
    ModelConfig {
        id: id.to_owned(),
        provider: ProviderKind::Openai,
        base_url: "http://127.0.0.1:1/v1/".to_owned(),
        api_key_env: None,
        api_key_file: None,
        input_usd_per_mtok: 1.0,
        output_usd_per_mtok: 4.0,
        speed: 0.5,
        intelligence: 0.5,
        tools: false,
        images: false,
        audio: false,
        aliases: vec![],
        servers: None,
        timeout_secs: 300,
    }
}

#[tokio::test]
async fn a_refused_review_step_is_said_in_the_pages_language() {
    let app = spawn_with(Config {
        models: vec![model("cheap")],
        routing: RoutingConfig::default(),
        ..Config::default()
    })
    .await;
    let id = app.open_ok(sampling_request(1, "hello")).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;

    // An approval of a revision the question no longer has (a stale page): refused, the
    // question stays open, and the page says so in Portuguese.
    let res = browser
        .post(format!("{}/questions/{id}/decide?lang=pt-BR", app.base))
        .form(&[
            ("csrf", csrf_of(&page).as_str()),
            ("approvalId", format!("{id}:request:9").as_str()),
            ("decision", "approve"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = res.text().await.unwrap();
    assert!(html.contains("<html lang=\"pt-BR\">"), "{html}");
    assert!(
        summary_of(&html).contains(
            "Esta aprovação da solicitação está desatualizada: a pergunta mudou. Recarregue a \
             página e decida de novo."
        ),
        "{html}"
    );
    assert!(!html.contains("is outdated"), "no English left: {html}");

    // A model that is not configured, in Chinese.
    let res = browser
        .post(format!("{}/questions/{id}/decide?lang=zh-CN", app.base))
        .form(&[
            ("csrf", csrf_of(&page).as_str()),
            ("approvalId", format!("{id}:request:1").as_str()),
            ("decision", "approve"),
            ("model", "nowhere"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = res.text().await.unwrap();
    assert!(
        summary_of(&html).contains("没有名为“nowhere”的已配置模型。"),
        "{html}"
    );
    assert_eq!(app.question(&id).await["state"], json!("pending"));

    // The API says the same refusal in its English words.
    let res = app
        .post_json(
            &format!("/api/v1/questions/{id}/approvals"),
            &json!({"approvalId": format!("{id}:request:9"), "decision": "approve"}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(
        body["errors"][0]["message"],
        "this request approval is outdated: the question moved on; reload and decide again"
    );
}
