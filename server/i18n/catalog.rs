//! The message catalogues (`i18n/en.ftl`, `i18n/zh-CN.ftl`, `i18n/pt-BR.ftl`, embedded at
//! build time) as Fluent bundles, and how they write numbers; [`super::I18n`] renders with them.
//!
//! Plural forms are Fluent's own selection (CLDR plural rules per language); numbers shown in
//! a message go through ICU4X's decimal formatter, so pt-BR writes `0,000700` and `1.234`.
//! Bidi isolation of placeables is off: server text is isolated explicitly ([`Arg::server`]),
//! and the pages isolate it with `<bdi>` where it sits in markup ([`I18n::parts`]).

use std::sync::LazyLock;

use fixed_decimal::Decimal;
use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentResource, FluentValue};
use icu_decimal::DecimalFormatter;
use icu_locale_core::{Locale, locale};
use intl_memoizer::concurrent::IntlLangMemoizer;

use super::Lang;

/// The catalogue sources, in the order of [`Lang::ALL`].
pub const SOURCES: [&str; 3] = [
    include_str!("../../i18n/en.ftl"),
    include_str!("../../i18n/zh-CN.ftl"),
    include_str!("../../i18n/pt-BR.ftl"),
];

/// A bundle per language, built once from [`SOURCES`] on first use. The catalogues are part
/// of the binary and checked by the tests (parse errors, keys identical across languages), so
/// a problem found here can only be a build that skipped them: it is logged and the message
/// falls back to its key rather than taking the service down.
static BUNDLES: LazyLock<Vec<FluentBundle<FluentResource>>> = LazyLock::new(|| {
    Lang::ALL
        .into_iter()
        .map(|lang| {
            let (bundle, problems) = bundle(lang);
            for p in problems {
                tracing::error!(lang = lang.tag(), "message catalogue: {p}");
            }
            bundle
        })
        .collect()
});

/// The bundle of `lang`, built on first use.
pub(super) fn bundle_of(lang: Lang) -> &'static FluentBundle<FluentResource> {
    &BUNDLES[lang.index()]
}

/// The bundle of `lang` and any problem building it (parse errors, duplicate ids).
fn bundle(lang: Lang) -> (FluentBundle<FluentResource>, Vec<String>) {
    let mut problems = Vec::new();
    let resource = match FluentResource::try_new(SOURCES[lang.index()].to_owned()) {
        Ok(r) => r,
        Err((r, errors)) => {
            problems.extend(errors.iter().map(|e| format!("{e:?}")));
            r
        }
    };
    let mut bundle = FluentBundle::new_concurrent(vec![lang.langid()]);
    bundle.set_use_isolating(false);
    bundle.set_formatter(Some(FORMATTERS[lang.index()]));
    if let Err(errors) = bundle.add_resource(resource) {
        problems.extend(errors.iter().map(|e| format!("{e:?}")));
    }
    (bundle, problems)
}

type Formatter = fn(&FluentValue, &IntlLangMemoizer) -> Option<String>;

/// One number formatter per language, in the order of [`Lang::ALL`] (a bundle takes a plain
/// function, so the language is a const parameter).
const FORMATTERS: [Formatter; 3] = [format_value::<0>, format_value::<1>, format_value::<2>];

fn format_value<const L: usize>(v: &FluentValue, _: &IntlLangMemoizer) -> Option<String> {
    match v {
        FluentValue::Number(n) => decimal(
            Lang::ALL[L],
            n.value,
            n.options.minimum_fraction_digits.unwrap_or(0),
            n.options.maximum_fraction_digits.unwrap_or(3),
        ),
        _ => None,
    }
}

/// `value` in the notation of `lang` (decimal separator, digit grouping), rounded to at most
/// `max_fraction` digits after the separator and padded to at least `min_fraction`. `None`
/// when the number cannot be written (NaN, infinite).
pub fn decimal(lang: Lang, value: f64, min_fraction: usize, max_fraction: usize) -> Option<String> {
    if !value.is_finite() {
        return None;
    }
    let max_fraction = max_fraction.max(min_fraction).min(20);
    let mut d: Decimal = format!("{value:.max_fraction$}").parse().ok()?;
    d.absolute.trim_end();
    d.absolute
        .pad_end(-i16::try_from(min_fraction.min(20)).unwrap_or(0));
    let locale: Locale = match lang {
        Lang::En => locale!("en"),
        Lang::ZhCn => locale!("zh-CN"),
        Lang::PtBr => locale!("pt-BR"),
    };
    let formatter = DecimalFormatter::try_new((&locale).into(), Default::default()).ok()?;
    Some(formatter.format(&d).to_string())
}

/// The variables the message `key` of `lang` refers to (`{ $name }`, in every variant and
/// in the messages it references); `None` when the catalogue has no such message.
pub fn variables(lang: Lang, key: &str) -> Option<std::collections::BTreeSet<String>> {
    use fluent_syntax::ast::{Entry, Expression, InlineExpression, Pattern, PatternElement};
    fn inline(e: &InlineExpression<&str>, out: &mut Vec<String>, refs: &mut Vec<String>) {
        match e {
            InlineExpression::VariableReference { id } => out.push(id.name.to_owned()),
            InlineExpression::FunctionReference { arguments, .. } => {
                for a in &arguments.positional {
                    inline(a, out, refs);
                }
                for a in &arguments.named {
                    inline(&a.value, out, refs);
                }
            }
            InlineExpression::MessageReference { id, .. } => refs.push(id.name.to_owned()),
            InlineExpression::Placeable { expression } => expr(expression, out, refs),
            _ => {}
        }
    }
    fn expr(e: &Expression<&str>, out: &mut Vec<String>, refs: &mut Vec<String>) {
        match e {
            Expression::Select { selector, variants } => {
                inline(selector, out, refs);
                for v in variants {
                    pattern(&v.value, out, refs);
                }
            }
            Expression::Inline(i) => inline(i, out, refs),
        }
    }
    fn pattern(p: &Pattern<&str>, out: &mut Vec<String>, refs: &mut Vec<String>) {
        for el in &p.elements {
            if let PatternElement::Placeable { expression } = el {
                expr(expression, out, refs);
            }
        }
    }
    let ast = match fluent_syntax::parser::parse(SOURCES[lang.index()]) {
        Ok(ast) | Err((ast, _)) => ast,
    };
    let find = |name: &str| {
        ast.body.iter().find_map(|e| match e {
            Entry::Message(m) if m.id.name == name => Some(m.value.clone()),
            _ => None,
        })
    };
    let mut found = std::collections::BTreeSet::new();
    let mut pending = vec![key.to_owned()];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(name) = pending.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let value = find(&name);
        if name == key && value.is_none() {
            return None;
        }
        let (mut vars, mut refs) = (Vec::new(), Vec::new());
        if let Some(Some(p)) = value {
            pattern(&p, &mut vars, &mut refs);
        }
        found.extend(vars);
        pending.extend(refs);
    }
    Some(found)
}

/// Every catalogue's problems: parse errors, duplicate ids, and ids (messages and terms) one
/// language has and another lacks. Empty when all three agree.
pub fn problems() -> Vec<String> {
    use fluent_syntax::ast::Entry;
    let mut problems = Vec::new();
    let mut keys: Vec<(Lang, std::collections::BTreeSet<String>)> = Vec::new();
    for lang in Lang::ALL {
        let (_, found) = bundle(lang);
        problems.extend(found.into_iter().map(|p| format!("{lang}: {p}")));
        let ids = match fluent_syntax::parser::parse(SOURCES[lang.index()]) {
            Ok(ast) | Err((ast, _)) => ast
                .body
                .iter()
                .filter_map(|e| match e {
                    Entry::Message(m) => Some(m.id.name.to_owned()),
                    Entry::Term(t) => Some(format!("-{}", t.id.name)),
                    _ => None,
                })
                .collect(),
        };
        keys.push((lang, ids));
    }
    let (_, english) = &keys[0];
    for (lang, ids) in &keys[1..] {
        for missing in english.difference(ids) {
            problems.push(format!("{lang}: missing {missing}"));
        }
        for extra in ids.difference(english) {
            problems.push(format!("{lang}: extra {extra} (not in en)"));
        }
    }
    problems
}

#[cfg(test)]
mod calls_check;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::I18n;

    #[test]
    fn catalogues_parse_and_have_the_same_keys() {
        let problems = problems();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn every_key_the_pages_name_exists() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files: Vec<std::path::PathBuf> = Vec::new();
        // `server` for the desktop notifications (`notify.rs`).
        for dir in [
            "templates",
            "server",
            "server/web",
            "server/web/pages",
            "server/web/views",
        ] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "html" || e == "rs") {
                    files.push(path);
                }
            }
        }
        let en = I18n::new(Lang::En);
        let mut missing = Vec::new();
        let mut seen = 0;
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            for marker in [
                ".t(\"",
                ".msg(\"",
                "i18n.parts(\"",
                ".parts2(\"",
                ".word(\"",
            ] {
                for (at, _) in text.match_indices(marker) {
                    let rest = &text[at + marker.len()..];
                    let key = &rest[..rest.find('"').unwrap()];
                    seen += 1;
                    if bundle_of(Lang::En).get_message(key).is_none() {
                        missing.push(format!("{}: {key}", path.display()));
                    }
                }
            }
        }
        assert!(seen > 200, "the scan found the keys ({seen})");
        assert!(
            missing.is_empty(),
            "missing from en.ftl:\n{}",
            missing.join("\n")
        );
        assert_eq!(en.t("nav-queue"), "Queue");
    }
}
