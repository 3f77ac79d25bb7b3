//! Safe URL handling for URL-mode elicitation: the scheme allow-list, the host's registrable
//! domain (from the public suffix list) to emphasise, and the findings a person must see before
//! consenting (Punycode / non-ASCII hosts, plain HTTP, credentials in the URL, IP hosts).
//! Pure functions, no I/O: nothing here fetches the URL.
//!
//! Rules: MCP 2025-11-25 `client/elicitation.mdx` §Safe URL Handling (ES7): show the full URL,
//! SHOULD highlight the domain, SHOULD warn on ambiguous/suspicious URIs such as Punycode, MUST
//! NOT pre-fetch, MUST NOT open without explicit consent.
//!
//! Display follows the browsers' IDN policy (Unicode TS #39): a host is shown in Unicode only
//! when every label is single-script, made of characters allowed in identifiers, and not a
//! whole-script look-alike of an ASCII name; otherwise the emphasised domain (and the Open
//! button) show the ASCII (Punycode) form and the look-alike is named in the warning.

use url::{Host, Url};

use super::local_host::{is_local_name, is_local_v4, is_local_v6};
use super::lookalike;

/// Re-exported where the address rules were first written, for callers outside `protocol`.
pub use super::local_host::is_local_ip;

/// Schemes that may be shown as a link and opened.
pub const ALLOWED_SCHEMES: &[&str] = &["https", "http"];

/// Why a URL cannot be offered at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not an absolute URL.
    #[error("url is not a valid absolute URL: {0}")]
    Invalid(String),
    /// A scheme other than https/http (e.g. `javascript:`, `file:`, `data:`).
    #[error("url scheme {0:?} is not allowed (only https and http)")]
    SchemeNotAllowed(String),
    /// An http(s) URL without a host.
    #[error("url has no host")]
    NoHost,
}

/// Something the person should know before opening the URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finding {
    /// The URL holds invisible characters ([`is_hidden_char`]): text-direction controls that can
    /// show `exe.pdf` for `fdp.exe`, or zero-width characters. The page shows them as code points.
    HiddenCharacters,
    /// The registrable domain reads as a well-known one it is not (the same confusable skeleton,
    /// [`UrlReview::imitates`]).
    Imitates,
    /// A well-known name stands in the subdomain part (`login.microsoftonline.com.evil.example`,
    /// [`UrlReview::posing_as`]): the address belongs to its registrable domain, not that site.
    PosingInSubdomain,
    /// The server's message names a well-known brand whose domain this address is not on
    /// ([`UrlReview::brand`]).
    BrandMismatch,
    /// `http:`: the page and anything typed into it travel unencrypted.
    NotHttps,
    /// The host has a Punycode (`xn--`) label (the server may have written it in Unicode): it
    /// may imitate another name (e.g. Cyrillic "а" for Latin "a").
    InternationalizedHost,
    /// The host's Unicode form mixes scripts, uses characters not allowed in identifiers, or
    /// reads as an ASCII name it is not: it is shown in its ASCII form.
    Lookalike,
    /// The URL carries a user name or password before the host (`https://bank.com@evil.net`).
    Credentials,
    /// The host is an IP address, not a name.
    IpHost,
    /// The host has no registrable domain under the public suffix list (e.g. `localhost`).
    NoRegistrableDomain,
    /// The host is this computer or a private network: a loopback, private, link-local or
    /// unspecified address, or a name such as `localhost` or `*.local`. Whatever listens there
    /// receives the service's session cookie too (cookies are not port-scoped), so the page asks
    /// for a second confirmation before the Open button works.
    LocalNetwork,
}

impl Finding {
    /// Whether this is a warning of deception (shown as a warning, and going back becomes the
    /// main button) rather than a note about the address.
    pub fn is_danger(self) -> bool {
        !matches!(
            self,
            Finding::InternationalizedHost | Finding::NoRegistrableDomain | Finding::IpHost
        )
    }

    /// The warning shown to the person.
    pub fn message(self) -> &'static str {
        match self {
            Finding::HiddenCharacters => {
                "This address holds invisible characters (shown as code points) that can change how it reads."
            }
            Finding::Imitates => "This domain looks like a well-known one but is not it.",
            Finding::PosingInSubdomain => {
                "A well-known name stands at the start of this address, but the address belongs to another domain."
            }
            Finding::BrandMismatch => {
                "The message names a brand whose domain this address is not on."
            }
            Finding::NotHttps => {
                "Not HTTPS: this page and anything you type into it travel unencrypted."
            }
            Finding::InternationalizedHost => {
                "This address uses international characters (Punycode). It may imitate a familiar name: compare both forms of the host."
            }
            Finding::Lookalike => {
                "Look-alike host: its Unicode form imitates another name (mixed scripts or letters that look like Latin ones), so it is shown in its ASCII form. Do not trust the name it appears to be."
            }
            Finding::Credentials => {
                "This address carries a user name or password before the host; the real host is the part after \"@\"."
            }
            Finding::IpHost => "This address is a bare IP address, not a name.",
            Finding::NoRegistrableDomain => {
                "This host has no registrable domain (it is not a public internet name)."
            }
            Finding::LocalNetwork => {
                "This address points at this computer or a private network, not the internet. Whatever listens there receives this browser's cookies for that host, including mcp-consent's own session."
            }
        }
    }
}

/// What the review page shows about a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlReview {
    /// The URL exactly as the server sent it.
    pub verbatim: String,
    /// The URL in its normalised ASCII form (Punycode host, percent-encoded path): what the
    /// browser is redirected to.
    pub normalized: String,
    /// `https` or `http`.
    pub scheme: String,
    /// The host in ASCII (Punycode) form.
    pub host_ascii: String,
    /// The host in Unicode form (equal to `host_ascii` for plain names).
    pub host_unicode: String,
    /// The host as the page shows it: `host_unicode` when it is safe to display (see the module
    /// documentation), else `host_ascii`.
    pub host_display: String,
    /// The part of the displayed host before the registrable domain, with its trailing dot
    /// (e.g. `accounts.example.com.`), empty when none.
    pub subdomain: String,
    /// The registrable domain in displayed form (e.g. `login-check.example.net`), or the whole
    /// host when it has none.
    pub registrable: String,
    /// The registrable domain in ASCII form (what [`UrlReview::registrable`] shows), empty for
    /// an IP address or a one-label name.
    pub registrable_ascii: String,
    /// Warnings, most serious first.
    pub findings: Vec<Finding>,
    /// The well-known domain the registrable domain imitates ([`Finding::Imitates`]).
    pub imitates: Option<&'static str>,
    /// The well-known name standing in the subdomain part ([`Finding::PosingInSubdomain`]).
    pub posing_as: Option<String>,
    /// The well-known domain of the brand the message names ([`Finding::BrandMismatch`]).
    pub brand: Option<&'static str>,
}

impl UrlReview {
    /// Whether opening the URL takes a second, explicit confirmation: its host is this computer
    /// or a private network ([`Finding::LocalNetwork`]), or a bare IP address
    /// ([`Finding::IpHost`]). Cookies are not port-scoped, so a local listener would receive
    /// the service's session cookie; a bare IP hides who the host is.
    pub fn needs_second_confirmation(&self) -> bool {
        self.findings
            .iter()
            .any(|f| matches!(f, Finding::LocalNetwork | Finding::IpHost))
    }

    /// Whether going back (declining) is the main action rather than opening: any warning of
    /// deception ([`Finding::is_danger`]) but plain HTTP alone.
    pub fn back_is_primary(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.is_danger() && *f != Finding::NotHttps)
    }

    /// The review with what the server's `message` says about the address: a brand it names
    /// that the address is not on ([`Finding::BrandMismatch`]).
    pub fn with_message(mut self, message: &str) -> Self {
        if let Some(brand) = lookalike::brand_mismatch(message, &self.registrable_ascii) {
            self.brand = Some(brand);
            self.findings.insert(0, Finding::BrandMismatch);
        }
        self
    }
}

/// Whether `c` is invisible in a URL and can change how it reads: every character
/// [`super::invisible::is_invisible`] names (text-direction controls, zero-width characters,
/// variation selectors, tag characters, controls — a URL parser drops tabs and line feeds, so
/// they count too).
pub fn is_hidden_char(c: char) -> bool {
    super::invisible::is_invisible(c)
}

/// Reviews a URL for display.
///
/// # Errors
/// [`UrlError`] when the URL is not absolute, its scheme is not https/http, or it has no host.
pub fn review(raw: &str) -> Result<UrlReview, UrlError> {
    let url = parse_allowed(raw)?;
    let host = HostForms::of(&url)?;
    let domain = Registrable::of(&host);
    let imitates = (!domain.ascii.is_empty())
        .then(|| lookalike::imitated(&idna::domain_to_unicode(&domain.ascii).0))
        .flatten();
    let posing_as = host
        .ascii
        .trim_end_matches('.')
        .strip_suffix(&domain.ascii)
        .filter(|_| !domain.ascii.is_empty())
        .and_then(lookalike::posing_in_subdomain);
    let findings = findings(
        raw,
        &url,
        &host,
        domain.known,
        imitates.is_some(),
        posing_as.is_some(),
    );
    Ok(UrlReview {
        normalized: url.as_str().to_owned(),
        verbatim: raw.to_owned(),
        scheme: url.scheme().to_owned(),
        host_ascii: host.ascii,
        host_unicode: host.unicode,
        host_display: host.display,
        subdomain: domain.subdomain,
        registrable: domain.display,
        registrable_ascii: domain.ascii,
        findings,
        imitates,
        posing_as,
        brand: None,
    })
}

/// Parses `raw` as an absolute URL with an allowed scheme.
fn parse_allowed(raw: &str) -> Result<Url, UrlError> {
    // The URL parser silently drops tabs and line breaks; a URL carrying them would be shown as
    // one thing and opened as another, so it is refused outright.
    if raw.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(UrlError::Invalid(
            "it contains whitespace or control characters".into(),
        ));
    }
    let url = Url::parse(raw).map_err(|e| UrlError::Invalid(e.to_string()))?;
    if !ALLOWED_SCHEMES.contains(&url.scheme()) {
        return Err(UrlError::SchemeNotAllowed(url.scheme().to_owned()));
    }
    Ok(url)
}

/// A URL's host in its ASCII, Unicode and displayed forms, with what kind of host it is.
struct HostForms {
    ascii: String,
    unicode: String,
    display: String,
    is_ip: bool,
    local: bool,
    /// The host has a Punycode label or a Unicode form.
    idn: bool,
    /// The Unicode form may be shown ([`displayable_label`] for every label).
    unicode_ok: bool,
}

impl HostForms {
    fn of(url: &Url) -> Result<Self, UrlError> {
        let host = url.host().ok_or(UrlError::NoHost)?;
        let (ascii, is_ip, local) = match host {
            Host::Domain(d) => (d.to_owned(), false, is_local_name(d)),
            Host::Ipv4(ip) => (ip.to_string(), true, is_local_v4(ip)),
            Host::Ipv6(ip) => (format!("[{ip}]"), true, is_local_v6(ip)),
        };
        let unicode = if is_ip {
            ascii.clone()
        } else {
            idna::domain_to_unicode(&ascii).0
        };
        // The parser has already turned a Unicode host into Punycode, so this looks at the host
        // only (a non-ASCII path or query is not a host warning).
        let idn = ascii.split('.').any(|l| l.starts_with("xn--")) || unicode != ascii;
        let unicode_ok = !idn || unicode.split('.').all(displayable_label);
        let display = if unicode_ok {
            unicode.clone()
        } else {
            ascii.clone()
        };
        Ok(Self {
            ascii,
            unicode,
            display,
            is_ip,
            local,
            idn,
            unicode_ok,
        })
    }
}

/// The domain to emphasise and the subdomain before it, in displayed form.
struct Registrable {
    /// Empty for an IP address or a one-label name.
    ascii: String,
    /// The whole displayed host when there is no registrable domain.
    display: String,
    subdomain: String,
    /// The public suffix list knows the host's suffix.
    known: bool,
}

impl Registrable {
    /// The registrable domain under the public suffix list; under a suffix the list does not
    /// know (`evil.example`), the last two labels all the same, so a long host is never
    /// emphasised whole (and a note says it is not a public name).
    fn of(host: &HostForms) -> Self {
        let domain = (!host.is_ip)
            .then(|| psl::domain(host.ascii.trim_end_matches('.').as_bytes()))
            .flatten();
        let known = host.is_ip || domain.is_some_and(|d| d.suffix().is_known());
        let ascii = domain
            .and_then(|d| std::str::from_utf8(d.as_bytes()).ok())
            .map(str::to_owned)
            .unwrap_or_default();
        if ascii.is_empty() {
            return Self {
                ascii,
                display: host.display.clone(),
                subdomain: String::new(),
                known,
            };
        }
        let display = if host.unicode_ok {
            idna::domain_to_unicode(&ascii).0
        } else {
            ascii.clone()
        };
        let subdomain = host
            .display
            .trim_end_matches('.')
            .strip_suffix(&display)
            .unwrap_or_default()
            .to_owned();
        Self {
            ascii,
            display,
            subdomain,
            known,
        }
    }
}

/// The findings about a URL, most serious first.
fn findings(
    raw: &str,
    url: &Url,
    host: &HostForms,
    suffix_known: bool,
    imitates: bool,
    posing: bool,
) -> Vec<Finding> {
    let rules = [
        (posing, Finding::PosingInSubdomain),
        (imitates, Finding::Imitates),
        (raw.chars().any(is_hidden_char), Finding::HiddenCharacters),
        (host.idn && !host.unicode_ok, Finding::Lookalike),
        (host.idn, Finding::InternationalizedHost),
        (host.local, Finding::LocalNetwork),
        (
            !url.username().is_empty() || url.password().is_some(),
            Finding::Credentials,
        ),
        (url.scheme() == "http", Finding::NotHttps),
        (host.is_ip, Finding::IpHost),
        (!suffix_known, Finding::NoRegistrableDomain),
    ];
    rules
        .into_iter()
        .filter_map(|(applies, finding)| applies.then_some(finding))
        .collect()
}

/// Whether one Unicode label may be shown as it is (UTS #39, as browsers apply it to IDNs): a
/// single script, only characters allowed in identifiers, and a confusable skeleton that is not
/// plain ASCII (a label whose skeleton is ASCII reads as an ASCII name, e.g. Cyrillic "аррӏе").
fn displayable_label(label: &str) -> bool {
    use unicode_security::{GeneralSecurityProfile, MixedScript};
    if label.is_ascii() {
        return true;
    }
    label.is_single_script()
        && label
            .chars()
            .all(|c| c.is_ascii() || c.identifier_allowed())
        && !unicode_security::skeleton(label).all(|c| c.is_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lookalike_host_is_emphasised_in_ascii_and_named() {
        let r = review("https://www.xn--80ak6aa92e.com/login").unwrap();
        assert_eq!(r.host_ascii, "www.xn--80ak6aa92e.com");
        assert_eq!(r.host_unicode, "www.аррӏе.com");
        assert_eq!(r.host_display, "www.xn--80ak6aa92e.com");
        assert!(r.findings.contains(&Finding::Lookalike));
        assert!(r.findings.contains(&Finding::InternationalizedHost));
        assert_eq!(r.registrable, "xn--80ak6aa92e.com");
        assert_eq!(r.subdomain, "www.");
        assert_eq!(r.imitates, Some("apple.com"));
        assert!(r.back_is_primary());
        // One Cyrillic letter among Latin ones (mixed script).
        let r = review("https://xn--pple-43d.com/").unwrap();
        assert_eq!(r.registrable, "xn--pple-43d.com");
        assert!(r.findings.contains(&Finding::Lookalike));
    }

    #[test]
    fn an_honest_idn_is_shown_in_unicode_and_a_non_ascii_path_is_no_host_warning() {
        let r = review("https://münchen.de/stadtplan").unwrap();
        assert_eq!(r.registrable, "münchen.de");
        assert!(r.findings.contains(&Finding::InternationalizedHost));
        assert!(!r.findings.contains(&Finding::Lookalike));
        let r = review("https://example.com/ä?q=ü").unwrap();
        assert!(r.findings.is_empty(), "{:?}", r.findings);
    }

    #[test]
    fn the_registrable_domain_is_the_real_one_not_a_lookalike_prefix() {
        let r = review("https://accounts.example.com.login-check.example.net/verify").unwrap();
        // example.net is the registrable domain (eTLD+1); the look-alike "example.com" is only a
        // subdomain label and is never emphasised.
        assert_eq!(r.registrable, "example.net");
        assert_eq!(r.subdomain, "accounts.example.com.login-check.");
        // …and the well-known name in the subdomain is named.
        assert_eq!(r.findings, vec![Finding::PosingInSubdomain]);
        assert_eq!(r.posing_as.as_deref(), Some("example.com"));
    }

    #[test]
    fn hidden_characters_a_posing_subdomain_and_a_named_brand_are_warned() {
        let r = review("https://files.example.com/invoice_\u{202E}fdp.exe").unwrap();
        assert_eq!(r.findings, vec![Finding::HiddenCharacters]);
        assert!(r.back_is_primary());
        let r = review("https://login.microsoftonline.com.evil.example/").unwrap();
        // Not the whole host: the last two labels under an unknown suffix.
        assert_eq!(r.registrable, "evil.example");
        assert_eq!(r.posing_as.as_deref(), Some("microsoftonline.com"));
        assert!(r.findings.contains(&Finding::PosingInSubdomain));
        let r = review("https://login.microsoftonline.com.account-verify.net/")
            .unwrap()
            .with_message("Sign in to Microsoft 365");
        assert_eq!(r.registrable, "account-verify.net");
        assert_eq!(r.brand, Some("microsoft.com"));
        assert_eq!(
            r.findings,
            vec![Finding::BrandMismatch, Finding::PosingInSubdomain]
        );
        let r = review("https://www.microsoft.com/").unwrap();
        assert!(!r.back_is_primary(), "{:?}", r.findings);
    }

    #[test]
    fn http_is_flagged_and_other_schemes_refused() {
        assert_eq!(
            review("http://example.org/x").unwrap().findings,
            vec![Finding::NotHttps]
        );
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "data:text/html,hi",
            "ftp://example.org/",
        ] {
            assert!(
                matches!(review(bad), Err(UrlError::SchemeNotAllowed(_))),
                "{bad}"
            );
        }
        assert!(matches!(review("not a url"), Err(UrlError::Invalid(_))));
        assert!(matches!(
            review("https://a.example/\r\nSet-Cookie: x=1"),
            Err(UrlError::Invalid(_))
        ));
        assert_eq!(
            review("https://münchen.de/ä").unwrap().normalized,
            "https://xn--mnchen-3ya.de/%C3%A4"
        );
    }

    #[test]
    fn credentials_and_ip_hosts_are_flagged() {
        let r = review("https://bank.example.com@evil.example.net/").unwrap();
        assert!(r.findings.contains(&Finding::Credentials));
        assert_eq!(r.registrable, "example.net");
        let r = review("https://10.0.0.1/").unwrap();
        assert!(r.findings.contains(&Finding::IpHost));
    }

    #[test]
    fn loopback_private_and_local_names_are_flagged() {
        for local in [
            "http://127.0.0.1:8080/",
            "http://localhost:3000/x",
            "https://printer.local/",
            "https://192.168.1.1/",
            "https://10.1.2.3/",
            "https://172.16.0.5/",
            "https://169.254.169.254/latest",
            "https://[::1]/",
            "https://[fe80::1]/",
            "https://[fd00::1]/",
            "https://[::ffff:127.0.0.1]/",
            "https://0.0.0.0/",
        ] {
            let r = review(local).unwrap();
            assert!(r.findings.contains(&Finding::LocalNetwork), "{local}");
            assert!(r.needs_second_confirmation(), "{local}");
        }
        assert!(
            review("https://8.8.8.8/")
                .unwrap()
                .needs_second_confirmation(),
            "a bare public IP too"
        );
        assert!(
            !review("https://example.com/")
                .unwrap()
                .needs_second_confirmation()
        );
        for public in [
            "https://example.com/",
            "https://8.8.8.8/",
            "https://[2001:db8::1]/",
        ] {
            assert!(
                !review(public)
                    .unwrap()
                    .findings
                    .contains(&Finding::LocalNetwork),
                "{public}"
            );
        }
    }
}
