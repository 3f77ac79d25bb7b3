//! What the page shows about a URL question's link.

use crate::broker::Kind;
use crate::broker::Question;
use crate::i18n::Arg;
use crate::i18n::I18n;
use crate::protocol::invisible::code_point;
use crate::protocol::url_safety;
use crate::protocol::url_safety::Finding;
use serde_json::Value;

/// One piece of the URL as the page shows it: text as written, or an invisible character shown
/// as its code point (`U+202E`), so the address reads in its real order.
pub enum UrlPiece {
    /// Visible text, shown as it is (inside an LTR isolate).
    Text(String),
    /// An invisible character ([`url_safety::is_hidden_char`]), e.g. `U+202E`.
    Hidden(String),
    /// A line feed or a tab in a multi-line value ([`text_pieces`]): its visible mark (`↵`,
    /// `→`), its code point (the mark's title) and the character itself, so the value keeps
    /// its lines and a person still sees every break.
    Layout(&'static str, String, char),
}

/// The host of a URL question's link as a preview shows it: the subdomain plain, the
/// registrable domain (the part that decides who owns the site) emphasised, as the question
/// page's URL box does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlHost {
    /// `login.` of `login.example.com` (with its dot; empty when none).
    pub subdomain: String,
    /// `example.com`.
    pub registrable: String,
}

/// The [`UrlHost`] of `q` when it is a URL question whose link names a host (`None` for the
/// other kinds and for a link the service would refuse to open).
pub fn url_host(q: &Question) -> Option<UrlHost> {
    if q.kind != Kind::Url {
        return None;
    }
    let raw = q.request.get("url").and_then(Value::as_str)?;
    let r = url_safety::review(raw).ok()?;
    (!r.registrable.is_empty()).then_some(UrlHost {
        subdomain: r.subdomain,
        registrable: r.registrable,
    })
}

/// What the page shows about a URL question's link.
pub struct UrlView {
    pub verbatim: String,
    /// The URL in pieces, its invisible characters made visible.
    pub pieces: Vec<UrlPiece>,
    pub subdomain: String,
    pub registrable: String,
    pub host_ascii: String,
    pub host_unicode: String,
    pub idn: bool,
    /// Warnings of deception, in the page's language: shown as warnings, first.
    pub warnings: Vec<String>,
    /// Notes about the address (international characters, not a public name, a bare IP).
    pub notes: Vec<String>,
    /// The link may be opened (its scheme is https/http).
    pub openable: bool,
    /// Opening takes a second confirmation: the host is this computer, a private network or a
    /// bare IP ([`url_safety::UrlReview::needs_second_confirmation`]).
    pub confirm_first: bool,
    /// Going back (Decline) is the main button and opening the secondary one
    /// ([`url_safety::UrlReview::back_is_primary`]).
    pub back_primary: bool,
}

/// The catalogue's name of a finding (`url-finding` selects its warning on it).
fn finding_word(f: Finding) -> &'static str {
    match f {
        Finding::HiddenCharacters => "hidden-characters",
        Finding::Imitates => "imitates",
        Finding::PosingInSubdomain => "posing-in-subdomain",
        Finding::BrandMismatch => "brand-mismatch",
        Finding::NotHttps => "not-https",
        Finding::InternationalizedHost => "internationalized-host",
        Finding::Lookalike => "lookalike",
        Finding::Credentials => "credentials",
        Finding::IpHost => "ip-host",
        Finding::NoRegistrableDomain => "no-registrable-domain",
        Finding::LocalNetwork => "local-network",
    }
}

/// `raw` in pieces, each invisible character its own piece named by its code point (for URLs,
/// argument names and tool names: a hidden override, zero-width character or control must not
/// make a value read as something it is not).
pub fn pieces(raw: &str) -> Vec<UrlPiece> {
    split(raw, false)
}

/// [`pieces`] for a value that may span lines (a tool-call argument): a line feed or a tab is
/// a [`UrlPiece::Layout`] (a mark and the break), every other invisible character hidden.
pub fn text_pieces(raw: &str) -> Vec<UrlPiece> {
    split(raw, true)
}

/// Whether `pieces` hold a [`UrlPiece::Hidden`] (the page warns).
pub fn any_hidden(pieces: &[UrlPiece]) -> bool {
    pieces.iter().any(|p| matches!(p, UrlPiece::Hidden(_)))
}

/// `text` with each invisible character replaced by its code point in brackets (`[U+202E]`),
/// for a place that holds plain text only (a heading's message).
pub fn inline_code_points(text: &str) -> String {
    split(text, false)
        .into_iter()
        .map(|p| match p {
            UrlPiece::Text(t) => t,
            UrlPiece::Hidden(c) | UrlPiece::Layout(_, c, _) => format!("[{c}]"),
        })
        .collect()
}

fn split(raw: &str, layout: bool) -> Vec<UrlPiece> {
    let mut out = Vec::new();
    let mut text = String::new();
    for c in raw.chars() {
        if !url_safety::is_hidden_char(c) {
            text.push(c);
            continue;
        }
        if !text.is_empty() {
            out.push(UrlPiece::Text(std::mem::take(&mut text)));
        }
        out.push(match c {
            '\n' if layout => UrlPiece::Layout("↵", code_point(c), c),
            '\t' if layout => UrlPiece::Layout("→", code_point(c), c),
            _ => UrlPiece::Hidden(code_point(c)),
        });
    }
    if !text.is_empty() {
        out.push(UrlPiece::Text(text));
    }
    out
}

/// What the page shows about the URL `raw` that the server's `message` asks to open, its
/// warnings in `i18n`'s language.
pub fn url_view(i18n: &I18n, raw: &str, message: &str) -> UrlView {
    match url_safety::review(raw) {
        Ok(r) => {
            let r = r.with_message(message);
            let said = |f: Finding| {
                let domain = Arg::server(&r.registrable);
                match f {
                    Finding::Imitates => i18n
                        .msg("url-warning-imitates")
                        .arg("known", r.imitates.unwrap_or_default())
                        .arg("domain", domain)
                        .to_string(),
                    Finding::PosingInSubdomain => i18n
                        .msg("url-warning-posing")
                        .arg(
                            "known",
                            Arg::server(r.posing_as.as_deref().unwrap_or_default()),
                        )
                        .arg("domain", domain)
                        .to_string(),
                    Finding::BrandMismatch => {
                        let known = r.brand.unwrap_or_default();
                        let label = known.split('.').next().unwrap_or(known);
                        let mut brand = label.chars();
                        let brand: String = brand
                            .next()
                            .map(|c| c.to_uppercase().chain(brand).collect())
                            .unwrap_or_default();
                        i18n.msg("url-warning-brand")
                            .arg("brand", Arg::from(brand))
                            .arg("known", Arg::from(known))
                            .arg("domain", domain)
                            .to_string()
                    }
                    other => i18n
                        .msg("url-finding")
                        .arg("finding", finding_word(other))
                        .to_string(),
                }
            };
            let (danger, notes): (Vec<Finding>, Vec<Finding>) =
                r.findings.iter().partition(|f| f.is_danger());
            UrlView {
                confirm_first: r.needs_second_confirmation(),
                back_primary: r.back_is_primary(),
                idn: r.findings.contains(&Finding::InternationalizedHost),
                warnings: danger.into_iter().map(said).collect(),
                notes: notes.into_iter().map(said).collect(),
                pieces: pieces(&r.verbatim),
                verbatim: r.verbatim,
                subdomain: r.subdomain,
                registrable: r.registrable,
                host_ascii: r.host_ascii,
                host_unicode: r.host_unicode,
                openable: true,
            }
        }
        // Refused at open time; a stored one can only come from an older version.
        Err(e) => UrlView {
            pieces: pieces(raw),
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
            notes: Vec::new(),
            openable: false,
            confirm_first: false,
            back_primary: true,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_become_code_points() {
        assert_eq!(
            inline_code_points("https://a.example/x_\u{202E}fdp.exe\u{E0100}\n"),
            "https://a.example/x_[U+202E]fdp.exe[U+E0100][U+000A]"
        );
    }

    #[test]
    fn a_value_keeps_its_lines_and_shows_every_break() {
        let p = text_pieces("a\tb\nc\u{1b}");
        assert!(matches!(&p[1], UrlPiece::Layout("→", c, '\t') if c == "U+0009"));
        assert!(matches!(&p[3], UrlPiece::Layout("↵", c, '\n') if c == "U+000A"));
        assert!(matches!(&p[5], UrlPiece::Hidden(c) if c == "U+001B"));
        assert!(any_hidden(&p) && !any_hidden(&text_pieces("a\nb")));
    }
}
