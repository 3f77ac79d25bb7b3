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
    /// The findings' warnings, in the page's language.
    pub warnings: Vec<String>,
    /// The link may be opened (its scheme is https/http).
    pub openable: bool,
    /// Opening takes a second confirmation: the host is this computer, a private network or a
    /// bare IP ([`url_safety::UrlReview::needs_second_confirmation`]).
    pub confirm_first: bool,
}

/// The catalogue's name of a finding (`url-finding` selects its warning on it).
fn finding_word(f: Finding) -> &'static str {
    match f {
        Finding::NotHttps => "not-https",
        Finding::InternationalizedHost => "internationalized-host",
        Finding::Lookalike => "lookalike",
        Finding::Credentials => "credentials",
        Finding::IpHost => "ip-host",
        Finding::NoRegistrableDomain => "no-registrable-domain",
        Finding::LocalNetwork => "local-network",
    }
}

/// What the page shows about the URL `raw`, its warnings in `i18n`'s language.
pub fn url_view(i18n: &I18n, raw: &str) -> UrlView {
    match url_safety::review(raw) {
        Ok(r) => UrlView {
            confirm_first: r.needs_second_confirmation(),
            idn: r.findings.contains(&Finding::InternationalizedHost),
            warnings: r
                .findings
                .iter()
                .map(|f| i18n.t1("url-finding", "finding", finding_word(*f)))
                .collect(),
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
            warnings: vec![
                i18n.t(if matches!(e, url_safety::UrlError::SchemeNotAllowed(_)) {
                    "url-not-web"
                } else {
                    "url-invalid"
                }),
            ],
            openable: false,
            confirm_first: false,
        },
    }
}
