//! What the page shows about a URL question's link.

use super::*;

/// What the page shows about a URL question's link.
pub struct UrlView {
    pub verbatim: String,
    pub subdomain: String,
    pub registrable: String,
    pub host_ascii: String,
    pub host_unicode: String,
    pub idn: bool,
    pub warnings: Vec<&'static str>,
    /// The link may be opened (its scheme is https/http).
    pub openable: bool,
    /// Opening takes a second confirmation: the host is this computer, a private network or a
    /// bare IP ([`url_safety::UrlReview::needs_second_confirmation`]).
    pub confirm_first: bool,
}

pub fn url_view(raw: &str) -> UrlView {
    match url_safety::review(raw) {
        Ok(r) => UrlView {
            confirm_first: r.needs_second_confirmation(),
            idn: r.findings.contains(&Finding::InternationalizedHost),
            warnings: r.findings.iter().map(|f| f.message()).collect(),
            verbatim: r.verbatim,
            subdomain: r.subdomain,
            registrable: r.registrable,
            host_ascii: r.host_ascii,
            host_unicode: r.host_unicode,
            openable: true,
        },
        // Refused at open time; a stored one can only come from an older version.
        Err(e) => UrlView {
            verbatim: raw.to_owned(),
            subdomain: String::new(),
            registrable: String::new(),
            host_ascii: String::new(),
            host_unicode: String::new(),
            idn: false,
            warnings: vec![if matches!(e, url_safety::UrlError::SchemeNotAllowed(_)) {
                "This is not a web address (only https and http links are opened)."
            } else {
                "This is not a valid web address."
            }],
            openable: false,
            confirm_first: false,
        },
    }
}
