//! [`I18n`], the translator a page renders with: messages of the catalogues ([`super::catalog`])
//! with their arguments ([`Arg`]), messages split around markup ([`Parts`]), numbers, money,
//! relative times and durations in the page's language.

use std::borrow::Cow;
use std::fmt;

use fluent_bundle::FluentArgs;
use fluent_bundle::FluentValue;
use fluent_bundle::types::{FluentNumber, FluentNumberOptions};

use super::Lang;
use super::catalog::bundle_of;

/// A value placed into a message: a number (formatted per language, and what plural
/// selection looks at) or text (server text isolated by [`Arg::server`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Arg<'a> {
    /// A number; `fraction` = digits after the separator at least and at most (default 0 and 3).
    /// Without it the number also selects exact variants (`[0]`, `[404]`): Fluent matches
    /// them only with default options.
    Number {
        /// The value.
        value: f64,
        /// Fraction digits always shown and at most shown (rounded).
        fraction: Option<(usize, usize)>,
    },
    /// Text, placed as it is (the template escapes the whole message).
    Text(Cow<'a, str>),
}

impl<'a> Arg<'a> {
    /// Text a server wrote, wrapped in U+2068 FIRST STRONG ISOLATE … U+2069 POP DIRECTIONAL
    /// ISOLATE so a direction override in it cannot reorder the message around it (for
    /// places that cannot hold `<bdi>`, such as `<title>` or an attribute).
    pub fn server(text: &str) -> Arg<'static> {
        Arg::Text(Cow::Owned(format!("\u{2068}{text}\u{2069}")))
    }

    /// An amount with exactly `digits` fraction digits.
    pub fn fixed(value: f64, digits: usize) -> Arg<'static> {
        Arg::Number {
            value,
            fraction: Some((digits, digits)),
        }
    }

    fn value(&self) -> FluentValue<'a> {
        match self {
            Arg::Number { value, fraction } => FluentValue::Number(FluentNumber::new(
                *value,
                match fraction {
                    Some((min, max)) => FluentNumberOptions {
                        minimum_fraction_digits: Some(*min),
                        maximum_fraction_digits: Some(*max),
                        ..FluentNumberOptions::default()
                    },
                    None => FluentNumberOptions::default(),
                },
            )),
            Arg::Text(t) => FluentValue::String(t.clone()),
        }
    }
}

macro_rules! number_args {
    ($($t:ty),*) => {$(
        impl From<$t> for Arg<'static> {
            #[allow(clippy::cast_precision_loss, clippy::cast_lossless)]
            fn from(v: $t) -> Self {
                Arg::Number { value: v as f64, fraction: None }
            }
        }
        impl From<&$t> for Arg<'static> {
            fn from(v: &$t) -> Self {
                Arg::from(*v)
            }
        }
        // Templates pass a loop variable by reference once more.
        impl From<&&$t> for Arg<'static> {
            fn from(v: &&$t) -> Self {
                Arg::from(**v)
            }
        }
    )*};
}
number_args!(i32, i64, u32, u64, usize, f64);

impl<'a> From<&'a str> for Arg<'a> {
    fn from(v: &'a str) -> Self {
        Arg::Text(Cow::Borrowed(v))
    }
}

impl<'a> From<&&'a str> for Arg<'a> {
    fn from(v: &&'a str) -> Self {
        Arg::Text(Cow::Borrowed(v))
    }
}

impl<'a> From<&'a String> for Arg<'a> {
    fn from(v: &'a String) -> Self {
        Arg::Text(Cow::Borrowed(v))
    }
}

impl From<String> for Arg<'static> {
    fn from(v: String) -> Self {
        Arg::Text(Cow::Owned(v))
    }
}

/// A message split around one placeable, so the page can put markup (a `<bdi>` holding
/// server text, a `<strong>`) there while askama escapes both halves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts {
    /// The text before the placeable.
    pub before: String,
    /// The text after it.
    pub after: String,
}

/// A message split around two placeables that every language keeps in the same order
/// ([`I18n::parts2`]; the catalogue test checks the order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts3 {
    /// The text before the first placeable.
    pub before: String,
    /// The text between them.
    pub middle: String,
    /// The text after the second.
    pub after: String,
}

/// What marks the second placeable of [`I18n::parts2`].
const SLOT2: &str = "\u{E001}";

/// What marks the placeable of [`I18n::parts`] while the message is formatted (a private-use
/// character no catalogue holds).
const SLOT: &str = "\u{E000}";

/// A message with its named arguments ([`I18n::msg`]), shown by its `Display` or split around
/// a placeable by [`Message::parts`].
#[derive(Debug, Clone)]
#[must_use]
pub struct Message<'t, 'a> {
    i18n: &'t I18n,
    key: &'t str,
    args: Vec<(&'t str, Arg<'a>)>,
}

impl<'t, 'a> Message<'t, 'a> {
    /// The same message with the argument `name` set to `value`.
    pub fn arg(mut self, name: &'t str, value: impl Into<Arg<'a>>) -> Message<'t, 'a> {
        self.args.push((name, value.into()));
        self
    }

    /// The message split where its placeable `slot` goes ([`Parts`]), the other arguments set.
    pub fn parts(&self, slot: &str) -> Parts {
        self.i18n.parts_with(self.key, slot, &self.args)
    }
}

impl fmt::Display for Message<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.i18n.message(self.key, &self.args))
    }
}

/// The translator of one page: its language, the messages and the formatting of numbers,
/// money and relative times, and the page's own address for the language switcher.
/// Templates call it as `{{ i18n.t("key") }}`; askama escapes what it returns like any other
/// text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct I18n {
    /// The language the page is in.
    pub lang: Lang,
    /// The page's path and query, where the switcher comes back to (`/` when unknown).
    pub here: String,
}

impl I18n {
    /// The translator for `lang`.
    pub fn new(lang: Lang) -> I18n {
        I18n {
            lang,
            here: "/".to_owned(),
        }
    }

    /// The same translator for the page at `here` (a path and query of this service).
    pub fn at(self, here: &str) -> I18n {
        I18n {
            here: here.to_owned(),
            ..self
        }
    }

    /// The switcher's link to this page in `lang`.
    pub fn switch_href(&self, lang: &Lang) -> String {
        let query: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("set", lang.tag())
            .append_pair("next", &self.here)
            .finish();
        format!("/language?{query}")
    }

    /// The language's tag, for `<html lang>`.
    pub fn tag(&self) -> &'static str {
        self.lang.tag()
    }

    /// The message `key` with `args`; the key itself (logged) when the catalogue lacks it.
    fn message(&self, key: &str, args: &[(&str, Arg<'_>)]) -> String {
        let bundle = bundle_of(self.lang);
        let Some(pattern) = bundle.get_message(key).and_then(|m| m.value()) else {
            tracing::warn!(
                lang = self.lang.tag(),
                key,
                "message missing from the catalogue"
            );
            return key.to_owned();
        };
        let mut fluent_args = FluentArgs::new();
        for (name, value) in args {
            fluent_args.set(*name, value.value());
        }
        let mut errors = Vec::new();
        let text = bundle.format_pattern(pattern, Some(&fluent_args), &mut errors);
        if !errors.is_empty() {
            tracing::warn!(
                lang = self.lang.tag(),
                key,
                ?errors,
                "message formatted with errors"
            );
        }
        text.into_owned()
    }

    /// The message `key` (no arguments).
    pub fn t(&self, key: &str) -> String {
        self.message(key, &[])
    }

    /// The message `key` with named arguments, the one way a page passes values into a
    /// message: `i18n.msg("queue-count").arg("count", total)` renders (it is [`fmt::Display`])
    /// or splits around a placeable ([`Message::parts`]). The catalogue test checks every
    /// call's argument names against the variables of its message.
    pub fn msg<'t, 'a>(&'t self, key: &'t str) -> Message<'t, 'a> {
        Message {
            i18n: self,
            key,
            args: Vec::new(),
        }
    }

    /// The message `key` split where its placeable `slot` goes ([`Parts`]).
    pub fn parts(&self, key: &str, slot: &str) -> Parts {
        self.parts_with(key, slot, &[])
    }

    /// [`I18n::parts`] of a message that has other arguments too.
    fn parts_with(&self, key: &str, slot: &str, args: &[(&str, Arg<'_>)]) -> Parts {
        let mut all: Vec<(&str, Arg<'_>)> = args.to_vec();
        all.push((slot, Arg::Text(Cow::Borrowed(SLOT))));
        let text = self.message(key, &all);
        match text.split_once(SLOT) {
            Some((before, after)) => Parts {
                before: before.to_owned(),
                after: after.to_owned(),
            },
            None => Parts {
                before: text,
                after: String::new(),
            },
        }
    }

    /// The message `key` split where its placeables `first` and `second` go, in that order
    /// ([`Parts3`]). A message holding them the other way round keeps both marks in
    /// `before` (the test of the catalogues rules that out).
    pub fn parts2(&self, key: &str, first: &str, second: &str) -> Parts3 {
        let text = self.message(
            key,
            &[
                (first, Arg::Text(Cow::Borrowed(SLOT))),
                (second, Arg::Text(Cow::Borrowed(SLOT2))),
            ],
        );
        match text
            .split_once(SLOT)
            .map(|(b, rest)| (b, rest.split_once(SLOT2)))
        {
            Some((before, Some((middle, after)))) => Parts3 {
                before: before.to_owned(),
                middle: middle.to_owned(),
                after: after.to_owned(),
            },
            _ => Parts3 {
                before: text,
                middle: String::new(),
                after: String::new(),
            },
        }
    }

    /// A number in the language's notation (grouping, decimal separator), e.g. `1.234` in pt-BR.
    pub fn number<'a>(&self, value: impl Into<Arg<'a>>) -> String {
        self.msg("number").arg("value", value).to_string()
    }

    /// An amount in US dollars rounded for people ([`crate::sampling::Usd`]: cents from ten
    /// cents up, else two significant digits, at most six decimals): `$0.00013`, `$10.46`,
    /// pt-BR `US$ 0,00013`; "less than $0.000001" above zero below that; "unknown" when there
    /// is none.
    pub fn usd(&self, amount: Option<f64>) -> String {
        let Some(v) = amount else {
            return self.t("money-unknown");
        };
        let usd = crate::sampling::Usd(v);
        let (key, value) = if usd.is_below_shown() {
            ("money-usd-under", crate::sampling::money::SMALLEST_SHOWN)
        } else {
            ("money-usd", v)
        };
        let (min, max) = crate::sampling::Usd(value).fraction_digits();
        self.msg(key)
            .arg(
                "amount",
                Arg::Number {
                    value,
                    fraction: Some((min, max)),
                },
            )
            .to_string()
    }

    /// `seconds` from now (negative: past) in words, rounded to the largest unit: "just now",
    /// "3 min ago", "in 2 h", "2 days ago" (each language in its own words and plurals).
    pub fn relative(&self, seconds: i64) -> String {
        // Zero counts as past: a moment read back a few milliseconds later truncates to 0.
        let past = seconds <= 0;
        let s = seconds.unsigned_abs();
        if s < 45 {
            return self.t(if past { "time-just-now" } else { "time-soon" });
        }
        // Rounded to the nearest unit, not cut: a 7-day rule read a second after it was made
        // expires "in 7 days", not "in 6 days".
        let (unit, n) = if s < 90 {
            ("min", 1)
        } else if s < 3_570 {
            ("min", (s + 30) / 60)
        } else if s < 84_600 {
            ("h", (s + 1_800) / 3_600)
        } else {
            ("day", (s + 43_200) / 86_400)
        };
        self.message(
            if past { "time-ago" } else { "time-in" },
            &[("unit", Arg::from(unit)), ("n", Arg::from(n))],
        )
    }

    /// A duration in words ("5 minutes", "1 hour", "30 seconds"): whole hours or minutes when
    /// it has them, else seconds.
    pub fn duration(&self, secs: i64) -> String {
        let (unit, n) = if secs >= 3_600 && secs % 3_600 == 0 {
            ("hour", secs / 3_600)
        } else if secs >= 60 && secs % 60 == 0 {
            ("minute", secs / 60)
        } else {
            ("second", secs)
        };
        self.message(
            "duration",
            &[("unit", Arg::from(unit)), ("n", Arg::from(n))],
        )
    }

    /// A vocabulary word (a [`crate::domain`] enum's wire name, e.g. a kind or a state) in the
    /// page's language: the message `<group>` selects on it (`kind`, `state`, …); the word
    /// itself when the catalogue has no variant for it.
    pub fn word(&self, group: &str, word: &impl std::fmt::Display) -> String {
        self.msg(group).arg("word", word.to_string()).to_string()
    }

    /// Who acted (an audit entry, a rule's author) in the page's language; a rule keeps its id.
    pub fn actor(&self, actor: &crate::domain::Actor) -> String {
        match actor {
            crate::domain::Actor::Rule(id) => {
                self.msg("actor-rule").arg("id", id.as_str()).to_string()
            }
            other => self.word("actor", other),
        }
    }

    /// Whether the page is in `lang` (the switcher marks it).
    pub fn is(&self, lang: &Lang) -> bool {
        self.lang == *lang
    }

    /// The languages the switcher offers.
    pub fn languages(&self) -> [Lang; 3] {
        Lang::ALL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_money_follow_the_language() {
        let en = I18n::new(Lang::En);
        let pt = I18n::new(Lang::PtBr);
        let zh = I18n::new(Lang::ZhCn);
        assert_eq!(en.usd(Some(0.0007)), "$0.0007");
        assert_eq!(en.usd(Some(0.000127)), "$0.00013");
        assert_eq!(pt.usd(Some(0.000127)), "US$ 0,00013");
        assert_eq!(zh.usd(Some(10.46)), "US$10.46");
        assert_eq!(en.usd(Some(0.0)), "$0.00");
        assert_eq!(en.usd(Some(1e-9)), "less than $0.000001");
        assert_eq!(pt.number(1234_i64), "1.234");
        assert_eq!(en.number(1234_i64), "1,234");
        assert_eq!(en.number(2.5_f64), "2.5");
        assert_eq!(pt.number(2.5_f64), "2,5");
        // Exact numeric variants match numbers passed in.
        assert_eq!(
            en.msg("error-title").arg("status", 404_u32).to_string(),
            "Not Found"
        );
        assert_eq!(
            en.msg("queue-title").arg("count", 0_i64).to_string(),
            "Waiting"
        );
    }

    #[test]
    fn relative_times_read_like_a_person_says_them() {
        let en = I18n::new(Lang::En);
        assert_eq!(en.relative(-10), "just now");
        assert_eq!(en.relative(0), "just now");
        assert_eq!(en.relative(20), "in under a minute");
        assert_eq!(en.relative(-180), "3 min ago");
        assert_eq!(en.relative(600), "in 10 min");
        assert_eq!(en.relative(-7_300), "2 h ago");
        assert_eq!(en.relative(-86_400), "1 day ago");
        assert_eq!(en.relative(3 * 86_400), "in 3 days");
        assert_eq!(en.relative(7 * 86_400 - 1), "in 7 days");
        assert_eq!(en.relative(3_600 - 5), "in 1 h");
        assert_eq!(en.relative(-(86_400 - 60)), "1 day ago");
        let pt = I18n::new(Lang::PtBr);
        assert_eq!(pt.relative(-180), "há 3 min");
        assert_eq!(pt.relative(-86_400), "há 1 dia");
        assert_eq!(pt.relative(3 * 86_400), "em 3 dias");
        let zh = I18n::new(Lang::ZhCn);
        assert_eq!(zh.relative(-180), "3 分钟前");
        assert_eq!(zh.relative(3 * 86_400), "3 天后");
    }

    #[test]
    fn plurals_follow_each_languages_rules() {
        let en = I18n::new(Lang::En);
        assert_eq!(en.duration(60), "1 minute");
        assert_eq!(en.duration(7_200), "2 hours");
        assert_eq!(en.duration(45), "45 seconds");
        let pt = I18n::new(Lang::PtBr);
        assert_eq!(pt.duration(3_600), "1 hora");
        assert_eq!(pt.duration(90), "90 segundos");
    }

    #[test]
    fn parts_split_a_message_around_markup_and_server_text_is_isolated() {
        let en = I18n::new(Lang::En);
        let p = en
            .msg("question-heading")
            .arg("kind", "form")
            .parts("server");
        assert_eq!(p.before, "");
        assert_eq!(p.after, " asks for your input");
        // Messages split around two placeables keep them in the same order in every language.
        for lang in Lang::ALL {
            let i18n = I18n::new(lang);
            for (key, a, b) in [
                ("open-local-heading", "domain", "server"),
                ("rules-intro", "request", "both"),
            ] {
                let p = i18n.parts2(key, a, b);
                assert!(
                    !p.before.contains(SLOT) && !p.before.contains(SLOT2) && !p.middle.is_empty(),
                    "{lang} {key}: {p:?}"
                );
            }
        }
        let title = en
            .msg("question-title")
            .arg("kind", "form")
            .arg("server", Arg::server("x\u{202E}y"))
            .to_string();
        assert!(title.contains("\u{2068}x\u{202E}y\u{2069}"), "{title}");
    }
}
