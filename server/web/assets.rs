//! CSS and the small JS, embedded in the binary so one file is the whole service.

use actix_web::{HttpResponse, get, web};

use super::AppState;

const STYLE: &str = include_str!("../../static/style.css");
const APP_JS: &str = include_str!("../../static/app.js");
const QUESTION_JS: &str = include_str!("../../static/question.js");

/// Registers `/static/*` and `/healthz`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(static_file).service(healthz);
}

#[get("/static/{name}")]
async fn static_file(name: web::Path<String>) -> HttpResponse {
    let (body, mime) = match name.as_str() {
        "style.css" => (STYLE, "text/css; charset=utf-8"),
        "app.js" => (APP_JS, "text/javascript; charset=utf-8"),
        "question.js" => (QUESTION_JS, "text/javascript; charset=utf-8"),
        _ => return HttpResponse::NotFound().finish(),
    };
    HttpResponse::Ok()
        .content_type(mime)
        .insert_header(("Cache-Control", "no-cache"))
        .body(body)
}

/// `ok` while the service can serve; 503 while its shared database cannot be reached (the
/// embedded store is part of the process and is not asked).
#[get("/healthz")]
async fn healthz(state: web::Data<AppState>) -> HttpResponse {
    if state.broker.store_reachable().await {
        HttpResponse::Ok().content_type("text/plain").body("ok\n")
    } else {
        HttpResponse::ServiceUnavailable()
            .content_type("text/plain")
            .body("database unreachable\n")
    }
}
