//! Running a sampling request on a configured model and turning the answer into a
//! `CreateMessageResult`.
//!
//! Both provider kinds go through the `genai` crate (one maintained client for OpenAI-compatible
//! chat completions and Anthropic Messages, with custom base URLs, tools, tool choice, images,
//! stop reasons and usage), addressed with an explicit [`genai::ServiceTarget`] so the model
//! name is never guessed into another provider. The request is mapped as follows
//! (MCP 2025-11-25 schema.ts `CreateMessageRequestParams`, `SamplingMessage`):
//!
//! | MCP | OpenAI chat completions | Anthropic Messages |
//! |---|---|---|
//! | `systemPrompt` | `system` message | `system` |
//! | `text` block | text part | `text` block |
//! | `image` block (user) | `image_url` data URL | `image` base64 source |
//! | `audio` block (user) | `input_audio` | refused: [`ProviderError::Unsupported`] |
//! | `tool_use` (assistant) | `tool_calls[]` (`arguments` = JSON text) | `tool_use` block |
//! | `tool_result` (user) | `role: "tool"` message per result; its text blocks joined (else `structuredContent` as JSON); images/audio refused | `tool_result` block with `is_error` and text/image content |
//! | `tools[]` (`name`, `description`, `inputSchema`) | `tools[].function` (`parameters`) | `tools[]` (`input_schema`) |
//! | `toolChoice.mode` auto/required/none | `tool_choice` auto/required/none | `tool_choice` auto/any/none |
//! | `maxTokens`, `temperature`, `stopSequences` | `max_tokens` (`max_completion_tokens` for gpt-5/o-series), `temperature`, `stop` | `max_tokens`, `temperature`, `stop_sequences` |
//!
//! `metadata` and `includeContext` are not sent (the spec lets the client ignore them, SA7,
//! SA23). API keys come from the environment variable the model's `api_key_env` names, or from
//! its owner-only `api_key_file`, read once at start ([`Providers::with_key_files`]); a model
//! without either (a local server) is sent the placeholder key `no-key`. Nothing here logs
//! prompts, keys or responses, and errors carry no request or response text beyond the
//! provider's own short error message.
//!
//! Every run reaches its provider through its own [`relay`]: the reply is bounded in size
//! ([`MAX_REPLY_BYTES`], [`ProviderError::TooLarge`]) as the model's `timeout_secs` bounds it in
//! time. The connection goes straight to the `base_url`'s host: no environment HTTP proxy is
//! used for it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use genai::adapter::AdapterKind;
use genai::chat::{
    Binary, ChatMessage, ChatOptions, ChatRequest, ChatRole, ContentPart, CustomPart,
    MessageContent, StopReason, Tool, ToolCall, ToolChoice, ToolResponse,
};
use genai::resolver::{AuthData, Endpoint};
use genai::{ModelIden, ServiceTarget};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::catalog::{ModelConfig, ProviderKind};

mod convert;
mod relay;

use convert::{from_chat_response, to_chat_request};
pub use relay::MAX_REPLY_BYTES;
use relay::{Relay, Upstream};

/// Key sent to models without `api_key_env` (local servers ignore it).
pub const NO_KEY: &str = "no-key";
/// Longest time to open a connection to a provider.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest provider error message kept in a [`ProviderError::Status`], in characters.
const MAX_ERROR_MESSAGE: usize = 300;

/// A model's answer as a `CreateMessageResult`, with usage and cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// `CreateMessageResult` (MCP 2025-11-25 schema.ts): `role: "assistant"`, `content` (one
    /// `text` block, or an array of `text`/`tool_use` blocks with unique ids), `model` (as the
    /// provider reports it, else the configured id) and `stopReason` (`endTurn`, `maxTokens`,
    /// `stopSequence`, `toolUse`, or the provider's own string for anything else, e.g.
    /// `content_filter`). Passes `protocol::sampling::validate_result` for the request.
    pub result: Value,
    /// Input tokens the provider reported (0 when it reported none).
    pub input_tokens: u64,
    /// Output tokens the provider reported (0 when it reported none).
    pub output_tokens: u64,
    /// Whether the provider reported usage at all.
    pub usage_reported: bool,
    /// Cost in USD from the reported usage and the model's prices.
    pub cost_usd: f64,
}

/// Why a completion failed. Messages name the model and never carry prompt or response text.
///
/// A failed run stores it as JSON (`{"code": "timeout", "model": …, "seconds": …}`,
/// [`ProviderError::stored`]), so the pages can say it in each language and the API in English
/// ([`ProviderError::stored_text`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[serde(
    tag = "code",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ProviderError {
    /// The environment variable named by `api_key_env` is unset or empty.
    #[error("model {model:?}: environment variable {env} holding its API key is not set")]
    MissingKey {
        /// Model id.
        model: String,
        /// The variable name.
        env: String,
    },
    /// The model's `api_key_file` is unusable: not owner-only, a symlink, another user's,
    /// unreadable, empty, or not read at start.
    #[error("model {model:?}: API key file {message}")]
    KeyFile {
        /// Model id.
        model: String,
        /// What is wrong, naming the path.
        message: String,
    },
    /// The request could not be sent or the connection failed (DNS, refused, TLS).
    #[error("model {model:?}: cannot reach the provider: {message}")]
    Transport {
        /// Model id.
        model: String,
        /// The transport error.
        message: String,
    },
    /// No complete answer within the model's `timeout_secs` (connecting, waiting and reading
    /// together); the request was abandoned.
    #[error(
        "model {model:?}: the provider did not answer within {seconds} seconds (the model's timeout_secs); the request was abandoned"
    )]
    Timeout {
        /// Model id.
        model: String,
        /// The limit that passed.
        seconds: u64,
    },
    /// The provider started answering and the connection ended before the answer was complete
    /// (the server stopped or crashed mid-answer).
    #[error(
        "model {model:?}: the provider stopped mid-answer (the connection closed before the answer was complete)"
    )]
    Incomplete {
        /// Model id.
        model: String,
    },
    /// The provider answered with a non-success HTTP status.
    #[error("model {model:?}: the provider answered HTTP {status}: {message}")]
    Status {
        /// Model id.
        model: String,
        /// HTTP status code.
        status: u16,
        /// The provider's error message (`error.message` of its JSON body, cut to 300
        /// characters), or the status reason.
        message: String,
    },
    /// The provider answered 2xx with a body that is not a completion.
    #[error("model {model:?}: unparseable provider response: {message}")]
    Unparseable {
        /// Model id.
        model: String,
        /// What was wrong.
        message: String,
    },
    /// The provider's reply went over [`MAX_REPLY_BYTES`]: the connection was cut and nothing
    /// of the reply was kept.
    #[error(
        "model {model:?}: the provider's reply was over the limit of {limit_bytes} bytes; the connection was cut and nothing of it was kept"
    )]
    TooLarge {
        /// Model id.
        model: String,
        /// The limit that was passed, in bytes.
        limit_bytes: u64,
    },
    /// The request holds content this provider kind cannot take (e.g. audio for Anthropic).
    #[error("model {model:?}: {message}")]
    Unsupported {
        /// Model id.
        model: String,
        /// What cannot be sent.
        message: String,
    },
}

impl ProviderError {
    /// The text a failed run stores: this error as JSON.
    pub fn stored(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| self.to_string())
    }

    /// A failed run's stored error read back: the [`ProviderError`] it holds, if it holds one
    /// (other failures, e.g. an answer that is not a valid result, are stored as plain text).
    pub fn from_stored(text: &str) -> Option<ProviderError> {
        serde_json::from_str(text).ok()
    }

    /// A failed run's stored error as an English sentence (the API's `error`).
    pub fn stored_text(text: &str) -> String {
        Self::from_stored(text).map_or_else(|| text.to_owned(), |e| e.to_string())
    }
}

type KeyLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Runs completions: each on its own HTTP client and [`relay`], made for the run and ended
/// with it.
#[derive(Clone)]
pub struct Providers {
    key_lookup: KeyLookup,
    /// Keys read from `api_key_file`s, by model id.
    file_keys: Arc<HashMap<String, String>>,
}

impl std::fmt::Debug for Providers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Providers").finish_non_exhaustive()
    }
}

impl Providers {
    /// Providers reading API keys from the process environment.
    ///
    /// # Errors
    /// [`ProviderError::Transport`] when the HTTP client cannot be built (TLS setup).
    pub fn new() -> Result<Providers, ProviderError> {
        Self::with_key_lookup(|name| std::env::var(name).ok())
    }

    /// Providers reading API keys through `lookup` (given the variable name), for tests and
    /// embedding.
    ///
    /// # Errors
    /// [`ProviderError::Transport`] when the HTTP client cannot be built.
    pub fn with_key_lookup(
        lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Result<Providers, ProviderError> {
        Ok(Providers {
            key_lookup: Arc::new(lookup),
            file_keys: Arc::default(),
        })
    }

    /// Reads the `api_key_file` of every model that has one (through
    /// [`crate::access_files::read`] as a secret: owner-only, the user's own, not reached through
    /// a link to another user's file), trimming surrounding whitespace such as the trailing
    /// newline.
    ///
    /// # Errors
    /// [`ProviderError::KeyFile`] naming the model and the path, for the first file that is
    /// not owner-only, not the user's, reached through another user's link, unreadable or empty.
    pub fn with_key_files(mut self, models: &[ModelConfig]) -> Result<Providers, ProviderError> {
        let mut keys = HashMap::new();
        for model in models {
            let Some(path) = &model.api_key_file else {
                continue;
            };
            let key_file_error = |message: String| ProviderError::KeyFile {
                model: model.id.clone(),
                message,
            };
            let text = crate::access_files::read(path, crate::access_files::Holds::Secret)
                .map_err(|e| key_file_error(e.to_string()))?;
            let key = text.trim();
            if key.is_empty() {
                return Err(key_file_error(format!("{} is empty", path.display())));
            }
            keys.insert(model.id.clone(), key.to_owned());
        }
        self.file_keys = Arc::new(keys);
        Ok(self)
    }

    /// Runs validated `sampling/createMessage` `params` on `model` (see the module docs for
    /// the mapping) and returns the `CreateMessageResult` with usage and cost.
    ///
    /// # Errors
    /// [`ProviderError::MissingKey`], [`ProviderError::KeyFile`], [`ProviderError::Unsupported`]
    /// before anything is sent;
    /// [`ProviderError::Transport`], [`ProviderError::Status`],
    /// [`ProviderError::Unparseable`] from the call.
    pub async fn complete(
        &self,
        model: &ModelConfig,
        params: &Value,
    ) -> Result<Completion, ProviderError> {
        let key =
            match (&model.api_key_env, &model.api_key_file) {
                (Some(env), _) => (self.key_lookup)(env)
                    .filter(|k| !k.is_empty())
                    .ok_or_else(|| ProviderError::MissingKey {
                        model: model.id.clone(),
                        env: env.clone(),
                    })?,
                (None, Some(path)) => self.file_keys.get(&model.id).cloned().ok_or_else(|| {
                    ProviderError::KeyFile {
                        model: model.id.clone(),
                        message: format!("{} was not read at start", path.display()),
                    }
                })?,
                (None, None) => NO_KEY.to_owned(),
            };
        let (request, options) = to_chat_request(model, params)?;
        let adapter = match model.provider {
            ProviderKind::Openai => AdapterKind::OpenAI,
            ProviderKind::Anthropic => AdapterKind::Anthropic,
        };
        let target = ServiceTarget {
            endpoint: Endpoint::from_owned(model.normalized_base_url()),
            auth: AuthData::from_single(key),
            model: ModelIden::new(adapter, model.id.as_str()),
        };
        let transport = |message: String| ProviderError::Transport {
            model: model.id.clone(),
            message,
        };
        let upstream = Upstream::of(&model.base_url)
            .ok_or_else(|| transport("the base_url names no host".to_owned()))?;
        let relay = Relay::start(upstream, MAX_REPLY_BYTES, CONNECT_TIMEOUT)
            .map_err(|e| transport(format!("cannot open the connection: {e}")))?;
        let client = run_client(&relay).map_err(transport)?;
        let limit = Duration::from_secs(model.timeout_secs);
        let answer =
            tokio::time::timeout(limit, client.exec_chat(target, request, Some(&options))).await;
        // The relay's own account comes first: a reply cut for its size, or a provider that
        // could not be reached, reads to genai as a body or connection failure.
        if relay.over_limit() {
            return Err(ProviderError::TooLarge {
                model: model.id.clone(),
                limit_bytes: MAX_REPLY_BYTES,
            });
        }
        let response = match answer {
            Ok(Ok(response)) => response,
            Ok(Err(e)) => {
                return Err(match relay.connect_error() {
                    Some(why) => transport(format!("connection failed: {why}")),
                    None => map_error(model, e),
                });
            }
            Err(_) => {
                return Err(ProviderError::Timeout {
                    model: model.id.clone(),
                    seconds: model.timeout_secs,
                });
            }
        };
        from_chat_response(model, response)
    }
}

/// The HTTP client of one run: every connection through `relay`'s socket (TLS end to end over
/// it), none kept for reuse, and no compressed reply asked for or unpacked (the relay counts
/// the bytes that arrive; an unpacked reply could be any size).
fn run_client(relay: &Relay) -> Result<genai::Client, String> {
    let http = reqwest::Client::builder()
        .unix_socket(relay.socket())
        .pool_max_idle_per_host(0)
        .no_gzip()
        .build()
        .map_err(|e| transport_message(&e))?;
    genai::Client::builder()
        .with_reqwest(http)
        .build()
        .map_err(|e| e.to_string())
}

/// A transport error in words, with its causes (reqwest's own text is "error sending request"
/// alone), never the URL's query.
fn transport_message(e: &reqwest::Error) -> String {
    let mut text = if e.is_connect() {
        "connection failed".to_owned()
    } else {
        "the request could not be sent".to_owned()
    };
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text.chars().take(MAX_ERROR_MESSAGE).collect()
}

/// The provider's `error.message` (OpenAI and Anthropic both use it), cut short.
fn provider_message(body: &str, fallback: &str) -> String {
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.get("error")
                .and_then(|e| e.get("message").or(Some(e)))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| fallback.to_owned());
    message.chars().take(MAX_ERROR_MESSAGE).collect()
}

fn map_error(config: &ModelConfig, error: genai::Error) -> ProviderError {
    use genai::webc::Error as WebError;
    let model = config.id.clone();
    let web = |model: String, e: WebError| match e {
        WebError::ResponseFailedStatus { status, body, .. } => ProviderError::Status {
            model,
            status: status.as_u16(),
            message: provider_message(&body, status.canonical_reason().unwrap_or("error")),
        },
        WebError::ResponseFailedNotJson { content_type, .. } => ProviderError::Unparseable {
            model,
            message: format!("response content type {content_type:?} is not JSON"),
        },
        WebError::ResponseFailedInvalidJson { .. } => ProviderError::Unparseable {
            model,
            message: "response body is not valid JSON (cut short, or not an answer)".to_owned(),
        },
        WebError::Reqwest(e) => match e.status() {
            Some(status) => ProviderError::Status {
                model,
                status: status.as_u16(),
                message: status.canonical_reason().unwrap_or("error").to_owned(),
            },
            None if e.is_timeout() => ProviderError::Timeout {
                model,
                seconds: config.timeout_secs,
            },
            // Headers came, the body did not (all of it): the server stopped mid-answer.
            None if e.is_body() || e.is_decode() => ProviderError::Incomplete { model },
            None => ProviderError::Transport {
                model,
                message: transport_message(&e),
            },
        },
        other => ProviderError::Unparseable {
            model,
            message: other.to_string(),
        },
    };
    match error {
        genai::Error::HttpError { status, body, .. } => ProviderError::Status {
            model,
            status: status.as_u16(),
            message: provider_message(&body, status.canonical_reason().unwrap_or("error")),
        },
        genai::Error::WebModelCall { webc_error, .. }
        | genai::Error::WebAdapterCall { webc_error, .. } => web(model, webc_error),
        genai::Error::RequiresApiKey { .. }
        | genai::Error::NoAuthData { .. }
        | genai::Error::NoAuthResolver { .. } => ProviderError::MissingKey {
            model,
            env: String::new(),
        },
        // These variants' Display may include the request payload: keep only a category.
        genai::Error::ChatResponseGeneration { cause, .. } => ProviderError::Unparseable {
            model,
            message: cause.chars().take(MAX_ERROR_MESSAGE).collect(),
        },
        genai::Error::NoChatResponse { .. }
        | genai::Error::InvalidJsonResponseElement { .. }
        | genai::Error::SerdeJson(_)
        | genai::Error::JsonValueExt(_)
        | genai::Error::ChatResponse { .. } => ProviderError::Unparseable {
            model,
            message: "the response is not a chat completion".to_owned(),
        },
        genai::Error::MessageContentTypeNotSupported { cause, .. } => ProviderError::Unsupported {
            model,
            message: cause.to_owned(),
        },
        other => ProviderError::Transport {
            model,
            message: other.to_string().chars().take(MAX_ERROR_MESSAGE).collect(),
        },
    }
}
