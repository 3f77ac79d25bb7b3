//! A typed client of the service's JSON API for the local commands (`proxy`, `login`,
//! `questions`, `token rotate`). It reaches the service over the owner-only Unix socket
//! `<state>/broker/api.sock`, or over TCP when given `--broker URL` / `MCP_CONSENT_BROKER`, and
//! then only after the service proved it holds the token's key ([`transport`]). It authenticates
//! with the token in `<state>/api-token`, read without following links.

pub mod transport;

use hyper::{Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::domain::State;
use crate::paths::{PathError, StateDir, read_private};
pub use crate::wire::Opened;
use crate::wire::{
    Answer, Answered, ErrorBody, Invalid, LoginLink, OpenRequest, Preview, QuestionDetail,
    QuestionList, ResponseBody, Summary,
};
pub use transport::{Endpoint, TransportError};

/// Errors talking to the service.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The service could not be reached (not running, wrong address, restarting), or a TCP
    /// listener did not prove it is the service ([`TransportError::Unverified`]).
    #[error("mcp-consent service unreachable at {url}: {source}")]
    Unreachable {
        /// The endpoint tried.
        url: String,
        /// The cause.
        #[source]
        source: TransportError,
    },
    /// The API token file could not be read (the service has never run for this state dir).
    #[error("cannot read the API token (has `mcp-consent serve` run with this state directory?)")]
    NoToken(#[source] PathError),
    /// The request body was over the service's limit.
    #[error("request too large for the service")]
    TooLarge,
    /// The question does not exist (any more).
    #[error("no such question")]
    NotFound,
    /// The answer failed validation; the question stays open.
    #[error("the answer is not valid: {}", .0.iter().map(|(f, m)| if f.is_empty() { m.clone() } else { format!("{f}: {m}") }).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<(String, String)>),
    /// The question was already decided.
    #[error("the question was already decided")]
    Conflict,
    /// The question is for a person in the browser, or the endpoint needs other credentials.
    #[error("not allowed: {0}")]
    Forbidden(String),
    /// 429: over an hourly budget (`max_stored_bytes_per_door`); nothing was taken.
    #[error("the service is over a budget: {message}")]
    TooManyRequests {
        /// The service's words.
        message: String,
        /// Its `Retry-After` (a minute when it gave none).
        retry_after: std::time::Duration,
    },
    /// Any other unexpected status.
    #[error("mcp-consent service answered {status}: {body}")]
    Status {
        /// HTTP status.
        status: StatusCode,
        /// Response body (an `{"error"}` object, usually).
        body: String,
    },
}

/// Outcome of one long-poll.
#[derive(Debug, Clone)]
pub enum Waited {
    /// The JSON-RPC response to give the server.
    Response(Value),
    /// Still pending.
    Pending,
    /// Closed without a response (withdrawn).
    Closed,
}

/// The API client.
#[derive(Debug, Clone)]
pub struct ServiceClient {
    state: StateDir,
    explicit_url: Option<String>,
}

impl ServiceClient {
    /// A client for the service of `state` (over its socket), or at `explicit_url` (TCP,
    /// verified before the token is sent).
    pub fn new(state: StateDir, explicit_url: Option<String>) -> ServiceClient {
        ServiceClient {
            state,
            explicit_url,
        }
    }

    /// Where calls go: the explicit URL's TCP address, else the state directory's socket.
    ///
    /// # Errors
    /// [`TransportError::BadUrl`] for an explicit URL that is not `http://HOST:PORT`.
    pub fn endpoint(&self) -> Result<Endpoint, TransportError> {
        match &self.explicit_url {
            Some(url) => Endpoint::from_url(url),
            None => Ok(Endpoint::Socket(self.state.api_socket())),
        }
    }

    fn describe(&self) -> String {
        match (&self.explicit_url, self.endpoint()) {
            (_, Ok(endpoint)) => endpoint.to_string(),
            (Some(url), Err(_)) => url.clone(),
            (None, Err(_)) => self.state.api_socket().display().to_string(),
        }
    }

    fn token(&self) -> Result<String, ClientError> {
        read_private(&self.state.api_token_file())
            .map(|t| t.trim().to_owned())
            .map_err(ClientError::NoToken)
    }

    /// Sends one call; returns the status and the body text of a success, or the error the
    /// status stands for.
    async fn send<B: Serialize + ?Sized>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<(StatusCode, String), ClientError> {
        let unreachable = |source| ClientError::Unreachable {
            url: self.describe(),
            source,
        };
        let endpoint = self.endpoint().map_err(unreachable)?;
        let token = self.token()?;
        let body = match body {
            Some(b) => Some(serde_json::to_vec(b).map_err(|e| ClientError::Status {
                status: StatusCode::BAD_REQUEST,
                body: format!("cannot encode the request: {e}"),
            })?),
            None => None,
        };
        let reply = transport::call(&endpoint, method, path, &token, body)
            .await
            .map_err(unreachable)?;
        let transport::Reply {
            status,
            body: text,
            retry_after,
        } = reply;
        let error_text = || match serde_json::from_str::<ErrorBody>(&text) {
            Ok(body) => body.error,
            Err(_) => text.clone(),
        };
        match status {
            StatusCode::PAYLOAD_TOO_LARGE => Err(ClientError::TooLarge),
            StatusCode::NOT_FOUND => Err(ClientError::NotFound),
            StatusCode::CONFLICT => Err(ClientError::Conflict),
            StatusCode::FORBIDDEN => Err(ClientError::Forbidden(error_text())),
            StatusCode::TOO_MANY_REQUESTS => Err(ClientError::TooManyRequests {
                message: error_text(),
                retry_after: retry_after.unwrap_or(std::time::Duration::from_secs(60)),
            }),
            StatusCode::UNPROCESSABLE_ENTITY => {
                // A 422 without the usual body still says the answer was refused.
                let errors = serde_json::from_str::<Invalid>(&text)
                    .map(|body| body.errors)
                    .unwrap_or_default();
                Err(ClientError::Invalid(
                    errors.into_iter().map(|p| (p.field, p.message)).collect(),
                ))
            }
            s if s.is_success() => Ok((s, text)),
            status => Err(ClientError::Status { status, body: text }),
        }
    }

    /// [`send`](Self::send), decoding a success body as `T`.
    async fn call<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<(StatusCode, T), ClientError> {
        let (status, text) = self.send(method, path, body).await?;
        let decoded = serde_json::from_str(&text).map_err(|_| ClientError::Status {
            status,
            body: text.clone(),
        })?;
        Ok((status, decoded))
    }

    /// `POST /api/v1/requests`: opens a question (or learns the request was refused).
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn open_request(&self, request: &OpenRequest) -> Result<Opened, ClientError> {
        Ok(self
            .call(Method::POST, "/api/v1/requests", Some(request))
            .await?
            .1)
    }

    /// `GET /api/v1/requests/{id}/response?wait=SECONDS`.
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn wait(&self, id: &str, wait_secs: u64) -> Result<Waited, ClientError> {
        let path = format!("/api/v1/requests/{id}/response?wait={wait_secs}");
        let (status, body) = self
            .call::<(), ResponseBody>(Method::GET, &path, None)
            .await?;
        Ok(match body {
            ResponseBody::Response { response } => Waited::Response(response),
            ResponseBody::State { .. } if status == StatusCode::ACCEPTED => Waited::Pending,
            ResponseBody::State { .. } => Waited::Closed,
        })
    }

    /// `POST /api/v1/requests/{id}/cancel`.
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn cancel(&self, id: &str) -> Result<(), ClientError> {
        self.send::<()>(Method::POST, &format!("/api/v1/requests/{id}/cancel"), None)
            .await
            .map(|_| ())
    }

    /// `POST /api/v1/proxy/dropped`: reports lines the proxy dropped (counts only).
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn report_dropped(
        &self,
        report: &crate::wire::DropReport,
    ) -> Result<(), ClientError> {
        self.send(reqwest::Method::POST, "/api/v1/proxy/dropped", Some(report))
            .await
            .map(|_| ())
    }

    /// `GET /api/v1/tools/policy`: the tool rules and grants a proxy judges calls by.
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn tool_policy(&self) -> Result<crate::tools::Policy, ClientError> {
        Ok(self
            .call::<(), _>(Method::GET, "/api/v1/tools/policy", None)
            .await?
            .1)
    }

    /// `POST /api/v1/tools/decisions`: the tool calls a proxy decided alone, for the audit.
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn report_tools(
        &self,
        report: &crate::tools::report::ToolDecisionReport,
    ) -> Result<(), ClientError> {
        self.send(Method::POST, "/api/v1/tools/decisions", Some(report))
            .await
            .map(|_| ())
    }

    /// `POST /api/v1/elicitations/{elicitationId}/complete`.
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn complete(&self, elicitation_id: &str) -> Result<(), ClientError> {
        let eid: String = form_urlencoded::byte_serialize(elicitation_id.as_bytes()).collect();
        self.send::<()>(
            Method::POST,
            &format!("/api/v1/elicitations/{eid}/complete"),
            None,
        )
        .await
        .map(|_| ())
    }

    /// `GET /api/v1/questions?state=…`: summaries, oldest first.
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn list_questions(&self, state: Option<State>) -> Result<Vec<Summary>, ClientError> {
        let path = match state {
            Some(s) => format!("/api/v1/questions?state={s}"),
            None => "/api/v1/questions".to_owned(),
        };
        let (_, list) = self
            .call::<(), QuestionList>(Method::GET, &path, None)
            .await?;
        Ok(list.questions)
    }

    /// `GET /api/v1/questions/{id}`: the full view.
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn question(&self, id: &str) -> Result<QuestionDetail, ClientError> {
        Ok(self
            .call::<(), QuestionDetail>(Method::GET, &format!("/api/v1/questions/{id}"), None)
            .await?
            .1)
    }

    /// `POST /api/v1/questions/{id}/preview`: the JSON-RPC response `answer` would send.
    ///
    /// # Errors
    /// [`ClientError`] ([`ClientError::Invalid`] with the field errors).
    pub async fn preview(&self, id: &str, answer: &Answer) -> Result<Value, ClientError> {
        let (_, preview) = self
            .call::<_, Preview>(
                Method::POST,
                &format!("/api/v1/questions/{id}/preview"),
                Some(answer),
            )
            .await?;
        Ok(preview.response)
    }

    /// `POST /api/v1/questions/{id}/answer`: returns the new state.
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn answer(&self, id: &str, answer: &Answer) -> Result<State, ClientError> {
        let (_, answered) = self
            .call::<_, Answered>(
                Method::POST,
                &format!("/api/v1/questions/{id}/answer"),
                Some(answer),
            )
            .await?;
        Ok(answered.state)
    }

    /// `POST /api/v1/login-links`: a one-time login URL.
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn login_link(&self) -> Result<LoginLink, ClientError> {
        let (_, link) = self
            .call::<(), LoginLink>(Method::POST, "/api/v1/login-links", None)
            .await?;
        Ok(link)
    }
}

impl ServiceClient {
    /// `POST /api/v1/token/rotate` (socket only): the service makes a new token, keeps only its
    /// digest and refuses the old one at once.
    ///
    /// # Errors
    /// [`ClientError`]; [`ClientError::Unreachable`] when no service listens on the socket.
    pub async fn rotate_token(&self) -> Result<(), ClientError> {
        self.send::<()>(Method::POST, "/api/v1/token/rotate", None)
            .await
            .map(|_| ())
    }
}

impl ServiceClient {
    /// `POST /api/v1/retention/run` (socket only): the service runs retention now with
    /// `policy`'s bounds, in its own batches.
    ///
    /// # Errors
    /// [`ClientError`]; [`ClientError::Unreachable`] when no service listens on the socket.
    pub async fn prune(
        &self,
        policy: &crate::config::Retention,
    ) -> Result<crate::jobs::retention::PruneReport, ClientError> {
        self.call(Method::POST, "/api/v1/retention/run", Some(policy))
            .await
            .map(|(_, report)| report)
    }
}
