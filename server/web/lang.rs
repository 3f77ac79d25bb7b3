//! The language of a page request: `?lang=` for one page, else the `mcp_consent_lang` cookie
//! the switcher sets (`GET /language?set=TAG&next=PATH`), else the browser's
//! `Accept-Language`, else English ([`crate::i18n::Lang::negotiate`]). Also renders error pages
//! in that language ([`localize_errors`]), since an error's own rendering has no request.

use std::future::{Ready, ready};

use actix_web::body::BoxBody;
use actix_web::cookie::{Cookie, SameSite, time::Duration as CookieDuration};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{ACCEPT_LANGUAGE, LOCATION};
use actix_web::middleware::Next;
use actix_web::{FromRequest, HttpRequest, HttpResponse, web};
use serde::Deserialize;

use super::error::PageError;
use crate::i18n::{I18n, Lang};

/// Name of the cookie holding the language the person chose.
pub const LANG_COOKIE: &str = "mcp_consent_lang";

/// How long the choice is kept (one year).
const LANG_COOKIE_DAYS: i64 = 365;

/// The language of `req` (see the module documentation for the order).
pub fn request_lang(req: &HttpRequest) -> Lang {
    let from_query = form_urlencoded::parse(req.query_string().as_bytes())
        .filter(|(k, _)| k == "lang")
        .find_map(|(_, v)| Lang::from_tag(&v));
    from_query
        .or_else(|| {
            req.cookie(LANG_COOKIE)
                .and_then(|c| Lang::from_tag(c.value()))
        })
        .unwrap_or_else(|| {
            Lang::negotiate(
                req.headers()
                    .get(ACCEPT_LANGUAGE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default(),
            )
        })
}

/// The translator of `req`: its language, and its own path as the switcher's way back.
pub fn request_i18n(req: &HttpRequest) -> I18n {
    // A page answering a POST is not at its URL; its handler says where it is
    // ([`I18n::at`]), else the switcher goes back to the queue.
    let here = match req.uri().path_and_query() {
        Some(pq) if req.method() == actix_web::http::Method::GET => pq.as_str().to_owned(),
        _ => "/".to_owned(),
    };
    I18n::new(request_lang(req)).at(&here)
}

impl FromRequest for I18n {
    type Error = actix_web::Error;
    type Future = Ready<Result<I18n, actix_web::Error>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        ready(Ok(request_i18n(req)))
    }
}

/// Registers `GET /language`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/language", web::get().to(set_language));
}

/// The switcher's link.
#[derive(Deserialize)]
pub struct LanguageQuery {
    /// The tag chosen (`en`, `zh-CN`, `pt-BR`); anything else forgets the choice, so the
    /// browser's `Accept-Language` decides again.
    pub set: Option<String>,
    /// Where to go back to: a path on this service; anything else goes to the queue.
    pub next: Option<String>,
}

/// `GET /language?set=TAG&next=PATH`: keeps the choice in a cookie (a preference, not a
/// secret: no session needed, so the login page has the switcher too) and goes back to
/// `next`, only ever a path of this service.
pub async fn set_language(query: web::Query<LanguageQuery>) -> HttpResponse {
    let chosen = query.set.as_deref().and_then(Lang::from_tag);
    let mut cookie = Cookie::build(LANG_COOKIE, chosen.map_or("", Lang::tag).to_owned())
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .max_age(CookieDuration::days(LANG_COOKIE_DAYS))
        .finish();
    if chosen.is_none() {
        cookie.make_removal();
    }
    HttpResponse::SeeOther()
        .insert_header((LOCATION, local_path(query.next.as_deref())))
        .insert_header(("Cache-Control", "no-store"))
        .cookie(cookie)
        .finish()
}

/// `next` when it is a path of this service (`/…`, not `//host` or `/\host`, which browsers
/// read as another site, and no control characters), else `/`.
pub fn local_path(next: Option<&str>) -> &str {
    match next {
        Some(p)
            if p.starts_with('/')
                && !p.starts_with("//")
                && !p.starts_with("/\\")
                && !p.chars().any(|c| c.is_control() || c == '\\') =>
        {
            p
        }
        _ => "/",
    }
}

/// Middleware: an error page ([`PageError`]) is rendered again in the request's language
/// (`ResponseError::error_response` has no request, so it writes English).
pub async fn localize_errors(
    req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let i18n = request_i18n(req.request());
    let res = next.call(req).await?;
    if i18n.lang == Lang::En {
        return Ok(res);
    }
    let localized = res
        .response()
        .error()
        .and_then(|e| e.as_error::<PageError>())
        .map(|e| e.render(&i18n));
    Ok(match localized {
        Some(page) => res.into_response(page),
        None => res,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_local_paths_are_followed_back() {
        assert_eq!(local_path(Some("/questions/1?x=2")), "/questions/1?x=2");
        assert_eq!(local_path(Some("//evil.example/")), "/");
        assert_eq!(local_path(Some("/\\evil.example")), "/");
        assert_eq!(local_path(Some("https://evil.example/")), "/");
        assert_eq!(local_path(Some("/a\nb")), "/");
        assert_eq!(local_path(None), "/");
    }
}
