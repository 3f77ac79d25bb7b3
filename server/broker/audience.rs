//! Who may answer a question. `human` questions (every URL question, and forms whose fields
//! look like they ask for secrets) are hidden from the API's lists and cannot be answered over
//! the API; `agent` questions may be answered by a script or a person.
//!
//! Forms must not ask for secrets (MCP 2025-11-25 `client/elicitation.mdx` Warning, ES2), but
//! nothing stops a server from doing so; such a form goes to the person, never to an agent.

pub use crate::domain::Audience;
use crate::protocol::elicitation::{FieldKind, FormSchema};

/// Words that mark a field as asking for a secret when they appear anywhere in its name, title
/// or description (case and separators ignored), in English and a few common languages.
const SECRET_SUBSTRINGS: &[&str] = &[
    "password",
    "passphrase",
    "passwd",
    "passcode",
    "token",
    "secret",
    "apikey",
    "credential",
    "cardnumber",
    "creditcard",
    "securitycode",
    "privatekey",
    "onetimecode",
    "onetimepassword",
    "socialsecurity",
    "passwort",
    "kennwort",
    "motdepasse",
    "contrasena",
    "contraseña",
    "senha",
    "пароль",
    "密码",
    "パスワード",
];

/// Short words that only count as whole words ("pin" must not match "shipping").
const SECRET_WORDS: &[&str] = &[
    "pin", "pw", "pwd", "otp", "cvv", "cvc", "ssn", "2fa", "mfa", "tan",
];

/// True when a text field of the form looks like it asks for a secret.
pub fn form_asks_for_secret(schema: &FormSchema) -> bool {
    schema.fields.iter().any(|f| {
        matches!(f.kind, FieldKind::Text { .. })
            && [
                Some(f.name.as_str()),
                f.title.as_deref(),
                f.description.as_deref(),
            ]
            .into_iter()
            .flatten()
            .any(looks_secret)
    })
}

fn looks_secret(text: &str) -> bool {
    let squashed: String = text
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    if SECRET_SUBSTRINGS.iter().any(|w| squashed.contains(w)) {
        return true;
    }
    words(text)
        .iter()
        .any(|w| SECRET_WORDS.contains(&w.as_str()))
}

/// Lower-case words of `text`, split at non-alphanumerics and camelCase humps
/// (`bankPin` → `bank`, `pin`).
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
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
    use serde_json::json;

    #[test]
    fn api_key_form_is_for_humans_only() {
        let s = FormSchema::parse(
            Era::V2025_11_25,
            &json!({"type":"object","properties":{"apiKey":{"type":"string"}}}),
        )
        .unwrap();
        assert!(form_asks_for_secret(&s));
        let s = FormSchema::parse(
            Era::V2025_11_25,
            &json!({"type":"object","properties":{"shipping":{"type":"string"}}}),
        )
        .unwrap();
        assert!(!form_asks_for_secret(&s));
        for secret in [
            "pw",
            "otp",
            "one_time_code",
            "ssn",
            "bankPin",
            "Passwort",
            "mot de passe",
            "Enter your bank PIN",
        ] {
            let s = FormSchema::parse(
                Era::V2025_11_25,
                &json!({"type":"object","properties":{"x":{"type":"string","title": secret}}}),
            )
            .unwrap();
            assert!(form_asks_for_secret(&s), "{secret}");
        }
        for harmless in ["Shipping address", "Spinning class", "Your name", "Topic"] {
            let s = FormSchema::parse(
                Era::V2025_11_25,
                &json!({"type":"object","properties":{"x":{"type":"string","title": harmless}}}),
            )
            .unwrap();
            assert!(!form_asks_for_secret(&s), "{harmless}");
        }
    }
}
