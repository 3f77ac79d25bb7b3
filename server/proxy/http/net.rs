//! The leaf every HTTP request to a remote party stands on, the MCP transport and the
//! authorization client alike: whether a URL is this machine, a transport error in words without
//! the URL, a response's media type, and the one bounded body read. It imports nothing of the
//! transport or of authorization, so both can use it without an arrow back up.

use std::net::IpAddr;

use reqwest::Response;
use reqwest::header::CONTENT_TYPE;
use url::Url;

/// Whether `url` points at this machine (`localhost`, `*.localhost`, 127.0.0.0/8, `::1`).
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Whether a connection to `ip` reaches this computer: a loopback address, the unspecified
/// address (`0.0.0.0`, `::`, which a connection takes to mean this computer), or an address of
/// one of this computer's own network interfaces, where every service bound to the wildcard
/// answers. The interfaces are read at each call, so an address added later counts; when they
/// cannot be read, only the first two kinds are recognised. An address routed to this computer
/// without being on an interface (a `local` route) is not recognised.
pub fn is_this_computer(ip: IpAddr) -> bool {
    reaches_this_computer(ip, &this_computers_addresses())
}

/// The addresses of this computer's network interfaces, read now (none when they cannot be
/// read): to judge several addresses with one read ([`reaches_this_computer`]).
pub fn this_computers_addresses() -> Vec<IpAddr> {
    if_addrs::get_if_addrs()
        .map(|interfaces| interfaces.iter().map(|i| i.ip().to_canonical()).collect())
        .unwrap_or_default()
}

/// [`is_this_computer`], with the interfaces' addresses `own` read once by the caller.
pub fn reaches_this_computer(ip: IpAddr, own: &[IpAddr]) -> bool {
    let ip = ip.to_canonical();
    ip.is_loopback() || ip.is_unspecified() || own.contains(&ip)
}

/// A transport error as text, without the URL (it may carry a secret in its query).
pub fn describe(e: &reqwest::Error) -> String {
    use std::error::Error as _;
    let mut text = if e.is_redirect() {
        "refused a redirect".to_owned()
    } else if e.is_connect() {
        "could not be reached".to_owned()
    } else if e.is_timeout() {
        "did not answer in time".to_owned()
    } else {
        "failed".to_owned()
    };
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !s_text.contains("://") {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

/// The media type of a response, lower case without parameters.
pub fn media_type(response: &Response) -> String {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Why a bounded body read stopped short. Nothing read is kept: the caller never sees part of a
/// body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// The body went over `limit` bytes; reading stopped there.
    #[error("sent a body over {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The transfer broke or timed out ([`describe`]'s text).
    #[error("{0}")]
    Transfer(String),
}

/// Reads a whole response body, chunk by chunk, stopping as soon as it passes `limit` bytes (so
/// an endless body costs at most `limit` bytes of memory). How long it may take is the client's
/// or the caller's timeout.
///
/// # Errors
/// [`BodyError::TooLarge`] past `limit`; [`BodyError::Transfer`] when the transfer broke.
pub async fn read_body(mut response: Response, limit: usize) -> Result<Vec<u8>, BodyError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| BodyError::Transfer(describe(&e)))?
    {
        if body.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_computers_addresses_are_its_interfaces_loopback_and_the_wildcard() {
        let own: Vec<IpAddr> = if_addrs::get_if_addrs()
            .unwrap()
            .iter()
            .map(if_addrs::Interface::ip)
            .collect();
        for ip in own.iter().copied().chain(
            [
                "127.0.0.1",
                "127.9.9.9",
                "::1",
                "0.0.0.0",
                "::",
                "::ffff:127.0.0.1",
            ]
            .map(|a| a.parse().unwrap()),
        ) {
            assert!(is_this_computer(ip), "{ip}");
        }
        let elsewhere: IpAddr = "93.184.215.14".parse().unwrap();
        assert!(!own.contains(&elsewhere));
        assert!(!is_this_computer(elsewhere));
    }

    #[test]
    fn loopback_names_and_addresses() {
        for u in [
            "http://localhost:1/",
            "http://LOCALHOST./x",
            "http://a.localhost/",
            "http://127.0.0.2/",
            "http://[::1]:8/",
        ] {
            assert!(is_loopback(&Url::parse(u).unwrap()), "{u}");
        }
        for u in [
            "http://example.com/",
            "http://localhost.example.com/",
            "http://10.0.0.1/",
        ] {
            assert!(!is_loopback(&Url::parse(u).unwrap()), "{u}");
        }
    }
}
