//! The person's consent before dynamic client registration: nothing beyond the server's own
//! metadata is contacted before the person agrees to sign in. When the proxy has neither a
//! pre-registered client nor a client ID metadata document the authorization server accepts,
//! signing in needs a registration (RFC 7591), and the sign-in's URL question needs the
//! `client_id` it returns; so the proxy first asks the person, in a form question with no
//! fields (accept or decline) meant for them alone, whether it may register there, and sends
//! the registration only once they accepted.
//!
//! The question's text is in the person's language as the system locale names it (`LC_ALL`,
//! `LC_MESSAGES`, `LANG`, as the notices pick theirs): the proxy runs in the person's session
//! and the question is mcp-consent's own words, not a server's.

use serde_json::json;
use url::Url;

use super::AuthError;
use super::signin::{SIGN_IN_TIME, answered, open_own};
use crate::broker::audience::PERSON_ONLY_META;
use crate::client::ServiceClient;
use crate::i18n::I18n;

/// Asks the person whether mcp-consent may register as a client at `registration` to sign in
/// to the server `name` at `authorize`; `opened` is told the question's id as soon as it
/// exists. `Ok` once they accepted.
///
/// # Errors
/// [`AuthError::Question`] when the question cannot be opened, is declined or cancelled,
/// expires or is withdrawn; [`AuthError::TimedOut`] after ten minutes.
pub async fn ask(
    service: &ServiceClient,
    name: &str,
    authorize: &Url,
    registration: &Url,
    opened: impl FnOnce(&str),
) -> Result<(), AuthError> {
    let params = json!({
        "mode": "form",
        "message": message(&I18n::new(crate::notify::system_lang()), name, authorize, registration),
        "requestedSchema": {"type": "object", "properties": {}},
        "_meta": {PERSON_ONLY_META: true},
    });
    let question = open_own(service, name, params, opened).await?;
    let decided = tokio::time::timeout(SIGN_IN_TIME, answered(service, &question)).await;
    if decided.is_err() {
        let _ = service.cancel(&question).await;
    }
    decided.map_err(|_| AuthError::TimedOut)?
}

/// The consent question's text in `i18n`'s language: which server asks to sign in at which
/// host, and that mcp-consent will first register there, with public details only.
fn message(i18n: &I18n, name: &str, authorize: &Url, registration: &Url) -> String {
    let host = |url: &Url| url.host_str().unwrap_or_default().to_owned();
    i18n.msg("sign-in-consent")
        .arg("server", name.to_owned())
        .arg("host", host(authorize))
        .arg("registration", host(registration))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;

    #[test]
    fn the_consent_names_the_server_the_hosts_and_what_is_sent_in_each_language() {
        let authorize = Url::parse("https://auth.example.com/authorize").unwrap();
        let register = Url::parse("https://reg.example.com/register").unwrap();
        for lang in Lang::ALL {
            let text = message(&I18n::new(lang), "remote", &authorize, &register);
            for part in [
                "remote",
                "auth.example.com",
                "reg.example.com",
                "mcp-consent",
            ] {
                assert!(text.contains(part), "{lang}: {text}");
            }
        }
        let english = message(&I18n::new(Lang::En), "remote", &authorize, &register);
        assert!(english.contains("public details only"), "{english}");
    }
}
