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

use actix_web::body::BoxBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HOST, HeaderValue, SET_COOKIE};
use actix_web::middleware::Next;
use actix_web::{HttpRequest, web};
use serde::{Deserialize, Deserializer};

use super::AppState;

/// `X-Forwarded-Host`: the `Host` the browser sent to the reverse proxy.
const FORWARDED_HOST: &str = "x-forwarded-host";
/// `X-Forwarded-For`: the addresses the request came through; the proxy appends its peer.
const FORWARDED_FOR: &str = "x-forwarded-for";

/// An `https` URL without path, query, fragment or login: where the pages are reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl(url::Url);

impl PublicUrl {
    /// Parses `text`.
    ///
    /// # Errors
    /// What is wrong with it.
    pub fn parse(text: &str) -> Result<PublicUrl, String> {
        let url = url::Url::parse(text).map_err(|e| format!("public_url is not a URL: {e}"))?;
        if url.scheme() != "https" {
            return Err(
                "public_url must be an https:// URL (put a TLS reverse proxy in front of the service)"
                    .to_owned(),
            );
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err("public_url has no host".to_owned());
        }
        if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
            return Err(
                "public_url must be the address of the site alone (no path, query or fragment): the pages live at its root"
                    .to_owned(),
            );
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err("public_url must not hold a login".to_owned());
        }
        Ok(PublicUrl(url))
    }

    /// The base of links: `https://host[:port]` (no trailing slash).
    pub fn base(&self) -> String {
        self.origin()
    }

    /// The origin browsers send in `Origin`.
    pub fn origin(&self) -> String {
        self.0.origin().ascii_serialization()
    }

    /// Whether `host` (a `Host` header value) names this URL: its host, with its port or
    /// without one when the port is the default.
    pub fn is_host(&self, host: &str) -> bool {
        let Some(name) = self.0.host_str() else {
            return false;
        };
        let port = self.0.port_or_known_default().unwrap_or(443);
        let with_port = format!("{name}:{port}");
        host.eq_ignore_ascii_case(&with_port)
            || (self.0.port().is_none() && host.eq_ignore_ascii_case(name))
    }
}

impl<'de> Deserialize<'de> for PublicUrl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        PublicUrl::parse(&String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

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
