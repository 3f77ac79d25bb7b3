//! `public_url`: the address at which the person reaches the pages from another device, through
//! a TLS reverse proxy (Caddy, nginx, `tailscale serve`) in front of the loopback listener.
//!
//! With it set: requests whose `Host` (and, from the loopback peer, `X-Forwarded-Host`) is that
//! URL's host are answered besides loopback ones, and an `Origin` equal to its origin is accepted;
//! every cookie gets `Secure` ([`secure_cookies`]); the client's address is the last
//! `X-Forwarded-For` entry when the peer is loopback (the proxy), never otherwise
//! ([`client_ip`]); a request that came through the proxy is never "local" ([`is_local`]: so
//! `/metrics` without its token answers only this machine). Without it nothing changes.

use std::net::IpAddr;

use super::AppState;
pub use crate::public_url::PublicUrl;
use actix_web::body::BoxBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HOST, HeaderValue, SET_COOKIE};
use actix_web::middleware::Next;
use actix_web::{HttpRequest, web};

/// `X-Forwarded-Host`: the `Host` the browser sent to the reverse proxy.
const FORWARDED_HOST: &str = "x-forwarded-host";
/// `X-Forwarded-For`: the addresses the request came through; the proxy appends its peer.
const FORWARDED_FOR: &str = "x-forwarded-for";

fn public(req: &HttpRequest) -> Option<PublicUrl> {
    req.app_data::<web::Data<AppState>>()
        .and_then(|s| s.public_url.clone())
}

fn header<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

fn peer_is_loopback(req: &HttpRequest) -> bool {
    req.peer_addr().is_some_and(|a| a.ip().is_loopback())
}

/// Every host the request names: `Host`, and `X-Forwarded-Host` when `public_url` is set and
/// the peer is loopback (the reverse proxy). Each must be one the service answers to.
pub fn named_hosts(req: &HttpRequest) -> Vec<String> {
    let mut hosts = vec![header(req, HOST.as_str()).unwrap_or_default().to_owned()];
    if public(req).is_some()
        && peer_is_loopback(req)
        && let Some(forwarded) = header(req, FORWARDED_HOST)
    {
        hosts.extend(forwarded.split(',').map(|h| h.trim().to_owned()));
    }
    hosts
}

/// The client's address: with `public_url` set and a loopback peer, the last `X-Forwarded-For`
/// entry (the address the reverse proxy saw); otherwise the peer's. `None` over the Unix socket.
pub fn client_ip(req: &HttpRequest) -> Option<IpAddr> {
    let peer = req.peer_addr()?.ip();
    if public(req).is_some() && peer.is_loopback() {
        let forwarded = header(req, FORWARDED_FOR)
            .and_then(|list| list.rsplit(',').next())
            .and_then(|last| last.trim().parse::<IpAddr>().ok());
        if let Some(ip) = forwarded {
            return Some(ip);
        }
    }
    Some(peer)
}

/// Whether the request comes from this machine and not through the reverse proxy: a loopback
/// client that names no public host.
pub fn is_local(req: &HttpRequest) -> bool {
    if !client_ip(req).is_some_and(|ip| ip.is_loopback()) {
        return false;
    }
    match public(req) {
        Some(url) => !named_hosts(req).iter().any(|h| url.is_host(h)),
        None => true,
    }
}

/// Adds `Secure` to every cookie the response sets, when `public_url` is set (Chromium and
/// Firefox keep `Secure` cookies from `http://localhost` and `http://127.0.0.1` too).
pub async fn secure_cookies(
    req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let secure = public(req.request()).is_some();
    let mut res = next.call(req).await?;
    if !secure {
        return Ok(res);
    }
    let headers = res.headers_mut();
    let cookies: Vec<HeaderValue> = headers.get_all(SET_COOKIE).cloned().collect();
    if cookies.is_empty() {
        return Ok(res);
    }
    headers.remove(SET_COOKIE);
    for cookie in cookies {
        let text = cookie.to_str().unwrap_or_default();
        let already = text
            .split(';')
            .any(|part| part.trim().eq_ignore_ascii_case("secure"));
        let value = if already || text.is_empty() {
            cookie
        } else {
            HeaderValue::from_str(&format!("{text}; Secure")).unwrap_or(cookie)
        };
        headers.append(SET_COOKIE, value);
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bare_https_sites_are_public_urls() {
        assert!(PublicUrl::parse("https://consent.example.ts.net").is_ok());
        assert!(PublicUrl::parse("https://consent.example.ts.net/").is_ok());
        assert!(PublicUrl::parse("http://consent.example").is_err());
        assert!(PublicUrl::parse("https://consent.example/mcp").is_err());
        assert!(PublicUrl::parse("https://me:pw@consent.example").is_err());
        assert!(PublicUrl::parse("consent.example").is_err());
    }

    #[test]
    fn the_host_matches_with_or_without_the_default_port() {
        let url = PublicUrl::parse("https://Consent.Example.ts.net").unwrap();
        assert_eq!(url.origin(), "https://consent.example.ts.net");
        assert!(url.is_host("consent.example.ts.net"));
        assert!(url.is_host("consent.example.ts.net:443"));
        assert!(!url.is_host("consent.example.ts.net:8443"));
        assert!(!url.is_host("evil.example"));
        let url = PublicUrl::parse("https://127.0.0.1:8443").unwrap();
        assert_eq!(url.base(), "https://127.0.0.1:8443");
        assert!(url.is_host("127.0.0.1:8443"));
        assert!(!url.is_host("127.0.0.1"));
    }
}
