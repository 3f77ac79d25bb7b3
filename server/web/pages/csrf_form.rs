//! [`CsrfForm`], what every page form post is read through: the logged-in session, the body
//! read within its limit, the CSRF token checked, and the fields deserialized into the form's
//! own type. Handlers start from a checked form instead of repeating the steps.

use std::future::Future;
use std::pin::Pin;

use actix_web::{FromRequest, HttpRequest, web};
use serde::de::DeserializeOwned;

use super::form_pairs;
use crate::web::auth::WebSession;
use crate::web::error::{PageError, Refusal};
use crate::web::views::last;

/// The fields of a form in the order they were posted (repeated names kept), as
/// `Vec<(name, value)>`: the form type of posts whose fields vary (answers, edits).
pub type Fields = Vec<(String, String)>;

/// The form type of a post that carries nothing but its CSRF token (a button).
pub type Checked = serde::de::IgnoredAny;

/// A page form post whose CSRF token matched the session's: the session and the fields as
/// `T` (any serde type; [`Fields`] for all of them as posted). A wrong or missing token is
/// refused (403) before `T` is read; fields that do not make a `T` are an unreadable form.
#[derive(Debug)]
pub struct CsrfForm<T = Fields> {
    /// The logged-in session that posted it.
    pub session: WebSession,
    /// The fields.
    pub form: T,
}

impl<T: DeserializeOwned + 'static> FromRequest for CsrfForm<T> {
    type Error = PageError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut actix_web::dev::Payload) -> Self::Future {
        let session = WebSession::from_request(req, &mut actix_web::dev::Payload::None);
        let body = web::Payload::from_request(req, payload);
        Box::pin(async move {
            let session = session.await?;
            let body = body
                .await
                .map_err(|_| PageError::Refused(Refusal::UnreadableForm))?;
            let pairs = form_pairs(body).await?;
            session.check_csrf(last(&pairs, "csrf"))?;
            // Read again from the pairs as `form_pairs` cleaned them (textarea line breaks).
            let encoded = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(&pairs)
                .finish();
            let form = serde_urlencoded::from_str(&encoded)
                .map_err(|_| PageError::Refused(Refusal::UnreadableForm))?;
            Ok(CsrfForm { session, form })
        })
    }
}
