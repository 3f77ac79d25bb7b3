//! Who may answer a question. `human` questions (every URL question, forms that look like they
//! ask for a secret, forms whose request asks for a person ([`PERSON_ONLY_META`]), and every
//! form when `forms_person_only` is set) are hidden from the API's
//! lists and cannot be answered over the API; `agent` questions may be answered by a script or
//! a person.
//!
//! Forms must not ask for secrets (MCP 2025-11-25 `client/elicitation.mdx` Warning, ES2), but
//! nothing stops a server from doing so; such a form goes to the person, never to an agent.
//! Recognising one is a heuristic, a safety net and not a guarantee: the texts a server wrote
//! (the message, each field's name, title and description, the labels of its choices) are
//! folded before matching, so look-alike letters (Cyrillic "а" for Latin "a", a digit zero for
//! "o"), case, accents and invisible characters (zero-width spaces, joiners, soft hyphens) do not
//! hide a word: lower case, then the UTS #39 confusable skeleton (which also drops default
//! ignorable code points), then combining marks removed.

use std::sync::LazyLock;

use unicode_normalization::char::is_combining_mark;
use unicode_security::confusable_detection::skeleton;

pub use crate::domain::Audience;
use crate::protocol::elicitation::{FieldKind, FormSchema};

/// Words and phrases that mark a secret wherever they appear (separators and case ignored), in
/// English, German, French, Spanish, Portuguese, Russian, Chinese and Japanese.
const SECRET_PHRASES: &[&str] = &[
    // Passwords and keys.
    "password",
    "passphrase",
    "passwd",
    "passcode",
    "token",
    "secret",
    "api key",
    "credential",
    "private key",
    "privkey",
    "passwort",
    "kennwort",
    "privater schlüssel",
    "mot de passe",
    "clé privée",
    "contraseña",
    "clave privada",
    "senha",
    "chave privada",
    "пароль",
    "приватный ключ",
    "закрытый ключ",
    "секретный ключ",
    "密码",
    "密钥",
    "私钥",
    "パスワード",
    "パスコード",
    "秘密鍵",
    // One-time and verification codes.
    "one time code",
    "one time password",
    "one time pin",
    "verification code",
    "confirmation code",
    "authentication code",
    "authorization code",
    "auth code",
    "access code",
    "sms code",
    "code we sent",
    "code sent to",
    "einmalcode",
    "bestätigungscode",
    "verifizierungscode",
    "sicherheitscode",
    "code à usage unique",
    "code de vérification",
    "code de confirmation",
    "code de sécurité",
    "código de verificación",
    "código de un solo uso",
    "código de seguridad",
    "código de verificação",
    "código de segurança",
    "одноразовый код",
    "код подтверждения",
    "код проверки",
    "код безопасности",
    "验证码",
    "校验码",
    "动态码",
    "安全码",
    "確認コード",
    "認証コード",
    "ワンタイム",
    "セキュリティコード",
    // PINs and card data.
    "pin code",
    "pin码",
    "пин-код",
    "暗証番号",
    "geheimzahl",
    "security code",
    "card number",
    "credit card",
    "card verification",
    "kartenprüfnummer",
    "cryptogramme",
    "social security",
    // Recovery codes, seed phrases, mnemonics.
    "recovery code",
    "recovery phrase",
    "recovery key",
    "recovery words",
    "backup code",
    "backup phrase",
    "seed phrase",
    "seed words",
    "mnemoni", // mnemonic, mnémonique, mnemónica, mnemônica, Mnemonik
    "wiederherstellungscode",
    "wiederherstellungsphrase",
    "wiederherstellungsschlüssel",
    "code de récupération",
    "phrase de récupération",
    "código de recuperación",
    "frase de recuperación",
    "frase semilla",
    "código de recuperação",
    "frase de recuperação",
    "frase semente",
    "код восстановления",
    "фраза восстановления",
    "сид-фраза",
    "мнемони",
    "恢复码",
    "助记词",
    "种子短语",
    "恢复短语",
    "リカバリーコード",
    "リカバリーフレーズ",
    "復元フレーズ",
    "シードフレーズ",
];

/// Harmless words that contain a phrase above; removed before matching.
const HARMLESS_WORDS: &[&str] = &["secretary", "secretaria", "secretário", "secrétaire"];

/// Short words and word sequences that only count as whole words ("pin" must not match
/// "shipping", "12 words" must not match "112 wordsmiths").
const SECRET_WORDS: &[&str] = &[
    "pin",
    "pw",
    "pwd",
    "otp",
    "totp",
    "hotp",
    "cvv",
    "cvv2",
    "cvc",
    "cvc2",
    "ssn",
    "2fa",
    "mfa",
    "tan",
    "12 words",
    "24 words",
    "12 word",
    "24 word",
    "twelve words",
    "twenty four words",
    "12 wörter",
    "24 wörter",
    "12 mots",
    "24 mots",
    "12 palabras",
    "24 palabras",
    "12 palavras",
    "24 palavras",
    "12 слов",
    "24 слова",
];

/// The phrase lists, folded once: phrases squashed, words split.
struct Folded {
    phrases: Vec<String>,
    harmless: Vec<String>,
    words: Vec<Vec<String>>,
}

static FOLDED: LazyLock<Folded> = LazyLock::new(|| Folded {
    phrases: SECRET_PHRASES
        .iter()
        .map(|p| words(p, false).concat())
        .collect(),
    harmless: HARMLESS_WORDS
        .iter()
        .map(|p| words(p, false).concat())
        .collect(),
    words: SECRET_WORDS.iter().map(|p| words(p, false)).collect(),
});

/// The `_meta` key (of an `elicitation/create` form request's params) that asks for the
/// person's answer: `true` makes the form person-only. mcp-consent's own questions set it (the
/// proxy's consent before registering with an authorization server); a server may set it too,
/// which only takes the answer away from scripts.
pub const PERSON_ONLY_META: &str = "io.github.mcp-consent/personOnly";

/// Whether the request `params` ask for the person's answer ([`PERSON_ONLY_META`] is `true`).
pub fn asks_for_a_person(params: &serde_json::Value) -> bool {
    params["_meta"][PERSON_ONLY_META] == true
}

/// The audience of a form question: `human` when `person_only` (the `forms_person_only`
/// setting) or when the form looks like it asks for a secret, else `agent`.
pub fn of_form(message: &str, schema: &FormSchema, person_only: bool) -> Audience {
    if person_only || form_asks_for_secret(message, schema) {
        Audience::Human
    } else {
        Audience::Agent
    }
}

/// True when a form that can carry a secret (a field other than a yes/no) looks like it asks
/// for one: in its message, in a field's name, title or description, or in a choice's label.
pub fn form_asks_for_secret(message: &str, schema: &FormSchema) -> bool {
    !secret_hints(message, schema).is_empty()
}

/// Where a form's text matched, for showing the person why it is person-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HintPlace {
    /// The form's message.
    Message,
    /// The name of the field.
    FieldName(String),
    /// The title of the field.
    FieldTitle(String),
    /// The description of the field.
    FieldDescription(String),
    /// A choice label of the field.
    Choice(String),
}

/// One reason a form looks like it asks for a secret: the listed word or phrase that matched
/// (the list's own spelling, not the server's text) and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretHint {
    /// The listed word, e.g. `"pin"` or `"password"`.
    pub word: &'static str,
    /// Where it was found.
    pub place: HintPlace,
}

/// Every place a form that can carry a secret looks like it asks for one (empty: it does not),
/// so a person can tell a false alarm ("do not give us your pin") from a real request.
pub fn secret_hints(message: &str, schema: &FormSchema) -> Vec<SecretHint> {
    let carriers: Vec<_> = schema
        .fields
        .iter()
        .filter(|f| !matches!(f.kind, FieldKind::Boolean { .. }))
        .collect();
    let mut hints = Vec::new();
    if carriers.is_empty() {
        return hints;
    }
    let mut note = |text: &str, whole_words: bool, place: HintPlace| {
        if let Some(word) = secret_word(text, whole_words) {
            hints.push(SecretHint { word, place });
        }
    };
    note(message, true, HintPlace::Message);
    for f in carriers {
        let field = || f.name.clone();
        note(&f.name, true, HintPlace::FieldName(field()));
        if let Some(t) = &f.title {
            note(t, true, HintPlace::FieldTitle(field()));
        }
        if let Some(d) = &f.description {
            note(d, true, HintPlace::FieldDescription(field()));
        }
        for c in choices(&f.kind) {
            note(&c.title, false, HintPlace::Choice(field()));
            note(&c.value, false, HintPlace::Choice(field()));
        }
    }
    hints.dedup();
    hints
}

fn choices(kind: &FieldKind) -> &[crate::protocol::elicitation::Choice] {
    match kind {
        FieldKind::Select { options, .. } | FieldKind::MultiSelect { options, .. } => options,
        _ => &[],
    }
}

/// The secret phrase `text` holds, or (`whole_words`) the short secret word, as listed. Choice
/// labels skip the short words: "Tan" is a colour there, not a transaction number.
fn secret_word(text: &str, whole_words: bool) -> Option<&'static str> {
    let folded = &*FOLDED;
    let plain: Vec<String> = words(text, false)
        .into_iter()
        .map(|mut w| {
            for harmless in &folded.harmless {
                w = w.replace(harmless.as_str(), "");
            }
            w
        })
        .filter(|w| !w.is_empty())
        .collect();
    if let Some(i) = folded.phrases.iter().position(|p| holds_phrase(&plain, p)) {
        return SECRET_PHRASES.get(i).copied();
    }
    if !whole_words {
        return None;
    }
    // Both splits: camelCase humps find `bankPin`, plain words find a mixed-case `PіN`.
    [plain, words(text, true)].iter().find_map(|words| {
        folded
            .words
            .iter()
            .position(|seq| words.windows(seq.len()).any(|w| w == seq.as_slice()))
            .and_then(|i| SECRET_WORDS.get(i).copied())
    })
}

/// Whether the squashed `phrase` occurs in `words` joined, either inside one word (`newPassword`,
/// `passwords`) or starting at a word and ending at a word's end or one letter before it (`pass
/// word`, `p a s s w o r d`, `API keys`): not across a word boundary mid-word, so prose such as
/// "go to Kenya" or "stop in code review" does not read as "token" or "PIN code".
fn holds_phrase(words: &[String], phrase: &str) -> bool {
    let joined = words.concat();
    let mut bounds = Vec::with_capacity(words.len());
    let mut at = 0;
    for w in words {
        bounds.push((at, at + w.len()));
        at += w.len();
    }
    let word_at = |i: usize| bounds.iter().find(|(s, e)| *s <= i && i < *e).copied();
    joined.match_indices(phrase).any(|(start, _)| {
        let end = start + phrase.len();
        let Some((first_start, first_end)) = word_at(start) else {
            return false;
        };
        if end <= first_end {
            return true;
        }
        let last_end = word_at(end - 1).map_or(end, |(_, e)| e);
        first_start == start && joined[end..last_end].chars().count() <= 1
    })
}

/// The folded words of `text`: split at separators and, with `camel`, at camelCase humps
/// (`bankPin` → `bank`, `pin`), each character lower-cased, mapped to its confusable skeleton, and stripped of
/// combining marks; characters that fold to nothing (zero-width and other invisible characters,
/// lone accents) neither count nor split a word.
fn words(text: &str, camel: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if camel && c.is_uppercase() && prev_lower && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        let lower: String = c.to_lowercase().collect();
        let mut folded = false;
        for f in skeleton(&lower)
            .filter(|f| !is_combining_mark(*f))
            .flat_map(char::to_lowercase)
        {
            folded = true;
            if f.is_alphanumeric() {
                current.push(f);
            } else if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
        }
        if folded {
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::era::Era;
    use serde_json::{Value, json};

    fn schema(v: Value) -> FormSchema {
        FormSchema::parse(Era::V2025_11_25, &v).unwrap()
    }

    fn titled(title: &str) -> FormSchema {
        schema(json!({"type":"object","properties":{"x":{"type":"string","title": title}}}))
    }

    #[test]
    fn api_key_form_is_for_humans_only() {
        let s = schema(json!({"type":"object","properties":{"apiKey":{"type":"string"}}}));
        assert!(form_asks_for_secret("", &s));
        let s = schema(json!({"type":"object","properties":{"shipping":{"type":"string"}}}));
        assert!(!form_asks_for_secret("", &s));
    }

    const SECRETS: &[&str] = &[
        "pw",
        "otp",
        "one_time_code",
        "ssn",
        "bankPin",
        "Passwort",
        "mot de passe",
        "Enter your bank PIN",
        // One-time and verification codes.
        "Verification code",
        "Enter the code we sent to your phone",
        "TOTP",
        "Bestätigungscode",
        "Code de vérification",
        "Código de verificación",
        "Código de segurança",
        "Код подтверждения",
        "验证码",
        "認証コード",
        // PINs and card data.
        "PIN-Code",
        "Your card's CVV",
        "cvc2",
        "Пин-код",
        "请输入PIN码",
        "暗証番号",
        // Recovery and seed phrases, private keys.
        "Recovery code",
        "recoveryPhrase",
        "Seed phrase",
        "Wallet mnemonic",
        "Your 12 words",
        "the 24-word phrase",
        "Frase semilla",
        "Phrase de récupération",
        "Wiederherstellungsschlüssel",
        "Сид-фраза",
        "助记词",
        "Private key",
        "API keys",
        "Recovery codes",
        "Enter your p a s s w o r d",
        "newpassword",
        "Clé privée",
        "Приватный ключ",
        "秘密鍵",
    ];

    const HARMLESS: &[&str] = &[
        "Shipping address",
        "Spinning class",
        "Your name",
        "Topic",
        "Opinion",
        "Pineapple count",
        "Postal code",
        "Discount code",
        "Country",
        "Random seed",
        "Secretary's name",
        "Recovery email",
        "Tangent",
        "Favourite words",
        "Go to Kenya",
        "Stop in code review",
        "Keep assets",
    ];

    #[test]
    fn secrets_are_found_in_every_listed_language_and_harmless_fields_are_not() {
        for secret in SECRETS {
            assert!(form_asks_for_secret("", &titled(secret)), "{secret}");
        }
        for harmless in HARMLESS {
            assert!(!form_asks_for_secret("", &titled(harmless)), "{harmless}");
        }
    }

    #[test]
    fn look_alike_letters_accents_and_invisible_characters_do_not_hide_a_word() {
        for disguised in [
            "p\u{0430}ssword",           // Cyrillic а
            "p\u{200b}assword",          // zero-width space
            "pass\u{00ad}word",          // soft hyphen
            "PASSW0RD",                  // digit zero
            "p\u{0430}ss\u{200d}wоrd",   // Cyrillic а and о, zero-width joiner
            "ＰＡＳＳＷＯＲＤ",          // fullwidth
            "P\u{0456}N",                // Cyrillic і
            "s\u{0435}\u{0435}d phrase", // Cyrillic е
            "contrasena",
            "CONTRASEÑA",
            "Kartenpru\u{0308}fnummer", // decomposed ü
        ] {
            assert!(
                form_asks_for_secret("", &titled(disguised)),
                "{disguised:?}"
            );
        }
        assert!(
            !form_asks_for_secret("", &titled("Sp\u{200b}inning class")),
            "an invisible character does not split a word either"
        );
    }

    #[test]
    fn the_message_and_choice_labels_count_too() {
        let plain = schema(json!({"type":"object","properties":{"value":{"type":"string"}}}));
        assert!(form_asks_for_secret("Please enter your password", &plain));
        assert!(form_asks_for_secret("Введите пароль", &plain));
        assert!(!form_asks_for_secret("What should we call you?", &plain));

        let pin =
            schema(json!({"type":"object","properties":{"code":{"type":"integer","title":"PIN"}}}));
        assert!(
            form_asks_for_secret("", &pin),
            "a number field can carry a PIN"
        );

        let one_of = schema(
            json!({"type":"object","properties":{"pick":{"type":"string",
            "oneOf":[{"const":"a","title":"My seed phrase starts with abandon"},{"const":"b","title":"Other"}]}}}),
        );
        assert!(form_asks_for_secret("", &one_of));
        let any_of = schema(json!({"type":"object","properties":{"pick":{"type":"array",
            "items":{"anyOf":[{"const":"a","title":"Recovery code 1"},{"const":"b","title":"Other"}]}}}}));
        assert!(form_asks_for_secret("", &any_of));
        let enum_names = schema(
            json!({"type":"object","properties":{"pick":{"type":"string",
            "enum":["a","b"],"enumNames":["One-time password","Other"]}}}),
        );
        assert!(form_asks_for_secret("", &enum_names));
        let colours = schema(
            json!({"type":"object","properties":{"pick":{"type":"string",
            "oneOf":[{"const":"r","title":"Red"},{"const":"t","title":"Tan"}]}}}),
        );
        assert!(!form_asks_for_secret("Pick a colour", &colours));

        let yes_no = schema(
            json!({"type":"object","properties":{"ok":{"type":"boolean","title":"Reset my password"}}}),
        );
        assert!(
            !form_asks_for_secret("Reset your password?", &yes_no),
            "a yes/no answer cannot carry a secret"
        );
    }

    #[test]
    fn the_switch_makes_every_form_person_only() {
        let s = titled("Topic");
        assert_eq!(of_form("Pick a topic", &s, false), Audience::Agent);
        assert_eq!(of_form("Pick a topic", &s, true), Audience::Human);
        assert_eq!(of_form("", &titled("Password"), false), Audience::Human);
    }

    #[test]
    fn the_hints_name_the_listed_word_and_where_it_was_found() {
        let s = schema(json!({"type":"object","properties":{
            "name":{"type":"string","description":"Do not give us your PIN"}}}));
        assert_eq!(
            secret_hints("Your name?", &s),
            vec![SecretHint {
                word: "pin",
                place: HintPlace::FieldDescription("name".into())
            }]
        );
    }
}
