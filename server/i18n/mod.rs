//! The languages of the pages: English, Simplified Chinese and Brazilian Portuguese.
//!
//! [`Lang`] is the vocabulary (a language the pages speak) and its negotiation from an
//! `Accept-Language` header; [`I18n`] is what a page renders its words with: Fluent messages
//! from the catalogues in `i18n/<tag>.ftl` (embedded in the binary, see [`catalog`]), numbers
//! and money in the language's own notation (ICU4X decimal formatting), relative times. No
//! HTTP here: `web::lang` picks the language of a request.
//!
//! Protocol names (`CreateMessageResult`, `stopReason`, …) stay English inside the messages;
//! text a server sent is never translated, only placed into messages as an argument.

pub mod catalog;
pub mod translator;

use std::fmt;

use fluent_langneg::{NegotiationStrategy, negotiate_languages};
use unic_langid::LanguageIdentifier;

pub use translator::{Arg, I18n, Parts, Parts3};

/// A language the pages are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Lang {
    /// English (`en`), the fallback.
    #[default]
    En,
    /// Simplified Chinese (`zh-CN`).
    ZhCn,
    /// Brazilian Portuguese (`pt-BR`).
    PtBr,
}

impl Lang {
    /// Every language, in the order the switcher lists them.
    pub const ALL: [Lang; 3] = [Lang::En, Lang::ZhCn, Lang::PtBr];

    /// The BCP 47 tag (`<html lang>`, the cookie, `i18n/<tag>.ftl`).
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::ZhCn => "zh-CN",
            Lang::PtBr => "pt-BR",
        }
    }

    /// The language's name in itself, as the switcher shows it.
    pub fn endonym(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::ZhCn => "简体中文",
            Lang::PtBr => "Português (Brasil)",
        }
    }

    /// Position in [`Lang::ALL`].
    pub fn index(self) -> usize {
        match self {
            Lang::En => 0,
            Lang::ZhCn => 1,
            Lang::PtBr => 2,
        }
    }

    /// The language a tag names exactly (case-insensitive: `pt-br` is `pt-BR`), `None` for
    /// any other tag. For what a browser asks for, use [`Lang::negotiate`].
    pub fn from_tag(tag: &str) -> Option<Lang> {
        Lang::ALL
            .into_iter()
            .find(|l| l.tag().eq_ignore_ascii_case(tag.trim()))
    }

    /// The best language for an `Accept-Language` header (RFC 9110 §12.5.4): the ranges in
    /// order of their `q` weight (ties keep the header's order; `q=0` means "not this one"),
    /// matched by Fluent's language negotiation (`zh` and `zh-Hans-CN` find `zh-CN`, `pt`
    /// finds `pt-BR`); English when nothing matches.
    pub fn negotiate(accept_language: &str) -> Lang {
        let mut ranges: Vec<(f32, LanguageIdentifier)> = accept_language
            .split(',')
            .filter_map(|item| {
                let mut parts = item.split(';');
                let tag = parts.next()?.trim();
                let q = parts
                    .filter_map(|p| p.trim().strip_prefix("q="))
                    .find_map(|q| q.trim().parse::<f32>().ok())
                    .unwrap_or(1.0);
                let id = tag.parse::<LanguageIdentifier>().ok()?;
                (q > 0.0 && tag != "*").then_some((q, id))
            })
            .collect();
        // Stable: equal weights keep the header's order.
        ranges.sort_by(|a, b| b.0.total_cmp(&a.0));
        let requested: Vec<LanguageIdentifier> = ranges.into_iter().map(|(_, id)| id).collect();
        let available: Vec<LanguageIdentifier> = Lang::ALL.iter().map(|l| l.langid()).collect();
        negotiate_languages(&requested, &available, None, NegotiationStrategy::Lookup)
            .first()
            .and_then(|id| Lang::from_tag(&id.to_string()))
            .unwrap_or_default()
    }

    /// The Unicode language identifier of [`Lang::tag`].
    pub fn langid(self) -> LanguageIdentifier {
        // The three tags are well-formed (tested); the default (`und`) is unreachable.
        self.tag().parse().unwrap_or_default()
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tag())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_language_is_negotiated_with_english_as_fallback() {
        assert_eq!(Lang::negotiate("zh-CN,zh;q=0.9,en;q=0.8"), Lang::ZhCn);
        assert_eq!(Lang::negotiate("zh"), Lang::ZhCn);
        assert_eq!(Lang::negotiate("pt-BR"), Lang::PtBr);
        assert_eq!(Lang::negotiate("pt"), Lang::PtBr);
        assert_eq!(Lang::negotiate("pt-PT"), Lang::PtBr);
        assert_eq!(Lang::negotiate("zh-Hans"), Lang::ZhCn);
        assert_eq!(Lang::negotiate("zh-SG"), Lang::ZhCn);
        assert_eq!(Lang::negotiate("en-GB,zh-CN;q=0.5"), Lang::En);
        assert_eq!(Lang::negotiate("de-DE,fr;q=0.5"), Lang::En);
        assert_eq!(Lang::negotiate(""), Lang::En);
        assert_eq!(Lang::negotiate("garbage;;,"), Lang::En);
        // Weights decide, not the order; q=0 excludes.
        assert_eq!(Lang::negotiate("en;q=0.3,pt-BR;q=0.9"), Lang::PtBr);
        assert_eq!(Lang::negotiate("zh-CN;q=0,de"), Lang::En);
    }

    #[test]
    fn tags_round_trip() {
        for l in Lang::ALL {
            assert_eq!(Lang::from_tag(l.tag()), Some(l));
            assert_eq!(l.langid().to_string(), l.tag());
            assert_eq!(Lang::ALL[l.index()], l);
        }
        assert_eq!(Lang::from_tag("PT-br"), Some(Lang::PtBr));
        assert_eq!(Lang::from_tag("de"), None);
    }
}
