//! `public_url`, the value: an `https` origin at which the person reaches the pages from
//! another device. What the pages do with it is `web::public`; this leaf is what the
//! configuration reads.

use serde::{Deserialize, Deserializer};

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
