//! The model catalog: the models the person configured (`[[models]]` in the config), validated
//! once at load, and its version (a digest every route receipt names).
//!
//! With no model configured the catalog is empty and the person writes sampling responses
//! themselves, as before.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The API a model is reached through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI-compatible chat completions (`POST {base_url}chat/completions`): OpenAI, Ollama,
    /// llama.cpp, vLLM, LM Studio.
    Openai,
    /// Anthropic Messages (`POST {base_url}messages`).
    Anthropic,
}

impl ProviderKind {
    /// The name used in config, receipts and pages: `openai` or `anthropic`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }
}

/// One `[[models]]` table: a model the service may run a sampling request on.
///
/// ```toml
/// [[models]]
/// id = "llama3.2"                       # the provider's model name, sent as `model`
/// provider = "openai"                   # openai (OpenAI-compatible) | anthropic
/// base_url = "http://127.0.0.1:11434/v1/"
/// input_usd_per_mtok = 0.0
/// output_usd_per_mtok = 0.0
/// speed = 0.6
/// intelligence = 0.3
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// The provider's model name, sent as `model` and matched against hints
    /// (MCP 2025-11-25 schema.ts `ModelHint.name`, SA10). Required, unique in the catalog.
    pub id: String,
    /// `openai` (OpenAI-compatible chat completions) or `anthropic` (Messages). Required.
    pub provider: ProviderKind,
    /// Base URL of the API, ending in the version segment, e.g.
    /// `https://api.openai.com/v1/`, `http://127.0.0.1:11434/v1/` (Ollama),
    /// `https://api.anthropic.com/v1/`. A missing trailing `/` is added. Required.
    pub base_url: String,
    /// Name of the environment variable holding the API key (the key itself never goes in the
    /// config). Default: none, for local servers that need no key.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// File holding the API key (trailing newline trimmed), read once at start; it must be
    /// owner-only (mode 0600 or 0400), belong to the user and not be a symlink, or the service
    /// refuses to start naming the path. Default: none. At most one of `api_key_env` and
    /// `api_key_file`.
    #[serde(default)]
    pub api_key_file: Option<PathBuf>,
    /// Price of one million input tokens in USD. Default `0.0`; must be ≥ 0.
    #[serde(default)]
    pub input_usd_per_mtok: f64,
    /// Price of one million output tokens in USD. Default `0.0`; must be ≥ 0.
    #[serde(default)]
    pub output_usd_per_mtok: f64,
    /// How fast the model is, in [0, 1] (1 = fastest you have). Default `0.5`.
    #[serde(default = "half")]
    pub speed: f64,
    /// How capable the model is, in [0, 1] (1 = most capable you have). Default `0.5`.
    #[serde(default = "half")]
    pub intelligence: f64,
    /// The model can call tools (requests with `tools`). Default `false`.
    #[serde(default)]
    pub tools: bool,
    /// The model accepts image input. Default `false`.
    #[serde(default)]
    pub images: bool,
    /// The model accepts audio input. Default `false`.
    #[serde(default)]
    pub audio: bool,
    /// Other names this model answers to when a server's hint names another provider's model
    /// or family (MCP SA11), e.g. `["gemini-1.5-flash", "haiku"]`. Default empty.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Servers (proxy `--name`) allowed to use this model. Default: none given = every server.
    #[serde(default)]
    pub servers: Option<Vec<String>>,
    /// Longest one run may take, in seconds, from connecting to the last byte of the answer;
    /// then the run fails and the question goes back to request review. Default `300`
    /// (a small local model on a slow CPU can take minutes); 1 to 3600.
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
}

fn half() -> f64 {
    0.5
}

/// The default [`ModelConfig::timeout_secs`].
pub const DEFAULT_TIMEOUT_SECS: u64 = 300;

fn default_timeout_secs() -> u64 {
    DEFAULT_TIMEOUT_SECS
}

impl ModelConfig {
    /// `base_url` with exactly one trailing `/`, as the provider clients join paths onto it.
    pub fn normalized_base_url(&self) -> String {
        format!("{}/", self.base_url.trim_end_matches('/'))
    }

    /// Whether `server` may use this model (`servers` absent = all).
    pub fn allows_server(&self, server: &str) -> bool {
        self.servers
            .as_ref()
            .is_none_or(|list| list.iter().any(|s| s == server))
    }
}

/// A problem in the `[[models]]` tables, found at config load. A model is named by its position
/// and the key by its name, never by a value (an `id` or `base_url` may be a pasted secret).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CatalogError {
    /// A model has an empty `id`.
    #[error("models[{index}]: id must not be empty")]
    EmptyId {
        /// Position in `[[models]]`.
        index: usize,
    },
    /// Two models share an `id`.
    #[error("models[{index}]: id repeats the id of models[{first}]; each model needs its own")]
    DuplicateId {
        /// Position in `[[models]]` of the second one.
        index: usize,
        /// Position of the first one.
        first: usize,
    },
    /// A score is outside [0, 1] or not a number.
    #[error("models[{index}]: {field} must be within [0, 1]")]
    ScoreOutOfRange {
        /// Position in `[[models]]`.
        index: usize,
        /// `speed` or `intelligence`.
        field: &'static str,
    },
    /// A price is negative or not finite.
    #[error("models[{index}]: {field} must be a non-negative number")]
    InvalidPrice {
        /// Position in `[[models]]`.
        index: usize,
        /// `input_usd_per_mtok` or `output_usd_per_mtok`.
        field: &'static str,
    },
    /// `base_url` is not an absolute `http`/`https` URL.
    #[error("models[{index}]: base_url must be an absolute http:// or https:// URL")]
    InvalidBaseUrl {
        /// Position in `[[models]]`.
        index: usize,
    },
    /// `api_key_env` is given but empty.
    #[error("models[{index}]: api_key_env must not be empty")]
    EmptyKeyEnv {
        /// Position in `[[models]]`.
        index: usize,
    },
    /// `timeout_secs` is 0 or more than an hour.
    #[error("models[{index}]: timeout_secs must be within 1 to 3600")]
    InvalidTimeout {
        /// Position in `[[models]]`.
        index: usize,
    },
    /// Both `api_key_env` and `api_key_file` are given, or `api_key_file` is empty.
    #[error("models[{index}]: give api_key_env or a non-empty api_key_file, not both")]
    KeySource {
        /// Position in `[[models]]`.
        index: usize,
    },
}

/// The validated models, in configuration order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    models: Vec<ModelConfig>,
    version: String,
}

impl Catalog {
    /// Validates `models` and computes the catalog version.
    ///
    /// # Errors
    /// The first [`CatalogError`] found: empty or duplicate id, a score outside [0, 1], a
    /// negative or non-finite price, a base URL that is not `http(s)`, a `timeout_secs` outside
    /// 1 to 3600, an empty `api_key_env`,
    /// both key sources or an empty `api_key_file`.
    pub fn new(models: Vec<ModelConfig>) -> Result<Catalog, CatalogError> {
        let mut ids = BTreeMap::new();
        for (index, m) in models.iter().enumerate() {
            if m.id.trim().is_empty() {
                return Err(CatalogError::EmptyId { index });
            }
            if let Some(&first) = ids.get(m.id.as_str()) {
                return Err(CatalogError::DuplicateId { index, first });
            }
            ids.insert(m.id.as_str(), index);
            for (field, value) in [("speed", m.speed), ("intelligence", m.intelligence)] {
                if !(0.0..=1.0).contains(&value) {
                    return Err(CatalogError::ScoreOutOfRange { index, field });
                }
            }
            for (field, value) in [
                ("input_usd_per_mtok", m.input_usd_per_mtok),
                ("output_usd_per_mtok", m.output_usd_per_mtok),
            ] {
                if !value.is_finite() || value < 0.0 {
                    return Err(CatalogError::InvalidPrice { index, field });
                }
            }
            let url_ok = url::Url::parse(&m.base_url)
                .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host());
            if !url_ok {
                return Err(CatalogError::InvalidBaseUrl { index });
            }
            if !(1..=3600).contains(&m.timeout_secs) {
                return Err(CatalogError::InvalidTimeout { index });
            }
            if m.api_key_env
                .as_deref()
                .is_some_and(|e| e.trim().is_empty())
            {
                return Err(CatalogError::EmptyKeyEnv { index });
            }
            let empty_file = m
                .api_key_file
                .as_ref()
                .is_some_and(|f| f.as_os_str().is_empty());
            if empty_file || (m.api_key_env.is_some() && m.api_key_file.is_some()) {
                return Err(CatalogError::KeySource { index });
            }
        }
        let version = digest_models(&models);
        Ok(Catalog { models, version })
    }

    /// The models in configuration order.
    pub fn models(&self) -> &[ModelConfig] {
        &self.models
    }

    /// The model with this id.
    pub fn get(&self, id: &str) -> Option<&ModelConfig> {
        self.models.iter().find(|m| m.id == id)
    }

    /// True when no model is configured (the person writes responses).
    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }

    /// SHA-256 (lowercase hex) of the RFC 8785 canonical JSON of the models sorted by id, so
    /// the version does not depend on the order of the `[[models]]` tables but changes with
    /// any field of any model.
    pub fn version(&self) -> &str {
        &self.version
    }
}

fn digest_models(models: &[ModelConfig]) -> String {
    let mut sorted: Vec<&ModelConfig> = models.iter().collect();
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    // Serializing plain structs of strings, numbers and bools cannot fail; fall back to the
    // Debug text so a version always exists.
    let canonical = serde_jcs::to_vec(&sorted).unwrap_or_else(|_| format!("{sorted:?}").into());
    hex::encode(Sha256::digest(canonical))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn model(id: &str) -> ModelConfig {
        ModelConfig {
            id: id.to_owned(),
            provider: ProviderKind::Openai,
            base_url: "http://127.0.0.1:11434/v1".to_owned(),
            api_key_env: None,
            api_key_file: None,
            input_usd_per_mtok: 1.0,
            output_usd_per_mtok: 2.0,
            speed: 0.5,
            intelligence: 0.5,
            tools: false,
            images: false,
            audio: false,
            aliases: vec![],
            servers: None,
            timeout_secs: DEFAULT_TIMEOUT_SECS,
        }
    }

    #[test]
    fn validation_names_the_problem() {
        let mut bad = model("a");
        bad.speed = 1.5;
        assert!(matches!(
            Catalog::new(vec![bad]),
            Err(CatalogError::ScoreOutOfRange { field: "speed", .. })
        ));
        let mut bad = model("a");
        bad.output_usd_per_mtok = -1.0;
        assert!(matches!(
            Catalog::new(vec![bad]),
            Err(CatalogError::InvalidPrice { .. })
        ));
        assert_eq!(
            Catalog::new(vec![model("a"), model("a")]),
            Err(CatalogError::DuplicateId { index: 1, first: 0 })
        );
        let mut bad = model("a");
        bad.api_key_env = Some("KEY".into());
        bad.api_key_file = Some("/run/key".into());
        assert!(matches!(
            Catalog::new(vec![bad]),
            Err(CatalogError::KeySource { .. })
        ));
        let mut bad = model("a");
        bad.base_url = "ftp://x".into();
        assert!(matches!(
            Catalog::new(vec![bad]),
            Err(CatalogError::InvalidBaseUrl { .. })
        ));
    }

    #[test]
    fn version_ignores_order_but_not_content() {
        let a = Catalog::new(vec![model("a"), model("b")]).unwrap();
        let b = Catalog::new(vec![model("b"), model("a")]).unwrap();
        assert_eq!(a.version(), b.version());
        assert_eq!(a.version().len(), 64);
        let mut changed = model("b");
        changed.speed = 0.9;
        let c = Catalog::new(vec![model("a"), changed]).unwrap();
        assert_ne!(a.version(), c.version());
    }

    #[test]
    fn base_url_gets_one_trailing_slash() {
        let mut m = model("a");
        assert_eq!(m.normalized_base_url(), "http://127.0.0.1:11434/v1/");
        m.base_url = "http://h/v1//".into();
        assert_eq!(m.normalized_base_url(), "http://h/v1/");
    }
}
