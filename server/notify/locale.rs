//! The language of the notices' text when the config does not name one: the system locale, read
//! as gettext reads it.

use crate::i18n::Lang;

/// The language of the system locale, as gettext picks the messages' locale: the first of
/// `LC_ALL`, `LC_MESSAGES`, `LANG` that is set and not empty ([`lang_of_locale`]).
pub fn system_lang() -> Lang {
    lang_of_env(|name| std::env::var(name).ok())
}

/// [`system_lang`] over any environment (`get` reads a variable).
pub fn lang_of_env(get: impl Fn(&str) -> Option<String>) -> Lang {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .into_iter()
        .find_map(|name| get(name).filter(|v| !v.is_empty()))
        .map_or(Lang::En, |v| lang_of_locale(&v))
}

/// The language of a POSIX locale name (`language[_territory][.codeset][@modifier]`):
/// `pt_BR.UTF-8` is pt-BR, `zh_CN.UTF-8` is zh-CN; other territories of the two languages
/// find them as `Accept-Language` does on the pages (`pt_PT` → pt-BR); `C`, `POSIX` and every
/// other language are English.
pub fn lang_of_locale(locale: &str) -> Lang {
    let name = locale
        .split(['.', '@'])
        .next()
        .unwrap_or_default()
        .replace('_', "-");
    if name.is_empty() || name == "C" || name == "POSIX" {
        return Lang::En;
    }
    Lang::negotiate(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_locale_is_read_like_gettext() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert_eq!(lang_of_env(env(&[("LANG", "pt_BR.UTF-8")])), Lang::PtBr);
        assert_eq!(lang_of_env(env(&[("LANG", "zh_CN.UTF-8")])), Lang::ZhCn);
        assert_eq!(lang_of_env(env(&[("LANG", "de_DE.UTF-8")])), Lang::En);
        assert_eq!(lang_of_env(env(&[("LANG", "C.UTF-8")])), Lang::En);
        assert_eq!(lang_of_env(env(&[])), Lang::En);
        // LC_ALL wins over LC_MESSAGES, which wins over LANG; an empty one does not count.
        assert_eq!(
            lang_of_env(env(&[
                ("LC_ALL", "zh_CN.UTF-8"),
                ("LC_MESSAGES", "pt_BR.UTF-8"),
                ("LANG", "en_US.UTF-8"),
            ])),
            Lang::ZhCn
        );
        assert_eq!(
            lang_of_env(env(&[
                ("LC_ALL", ""),
                ("LC_MESSAGES", "pt_BR.UTF-8"),
                ("LANG", "zh_CN.UTF-8"),
            ])),
            Lang::PtBr
        );
        assert_eq!(
            lang_of_env(env(&[("LC_MESSAGES", "C"), ("LANG", "pt_BR.UTF-8")])),
            Lang::En
        );
        assert_eq!(lang_of_locale("pt_BR.UTF-8@euro"), Lang::PtBr);
        assert_eq!(lang_of_locale("POSIX"), Lang::En);
    }
}
