//! Reloading the config while serving (SIGHUP): what can change without a restart is swapped
//! in place, with no question, long-poll or connection dropped; what cannot is named in a
//! warning. An invalid new config is refused and the old one stays.
//!
//! Changed at once: the models, `[routing]` and `[budgets]` (the sampling engine: routes and runs
//! from now on use them; a run under way finishes on the model it started), `[notifications]`,
//! `[retention]` (the pruning job restarts with the new bounds), `forms_person_only`,
//! `question_timeout_secs`, `max_pending_per_server`, `max_stored_bytes_per_server` and `max_stored_bytes_per_door` (for
//! questions opened and decisions reported from now on),
//! `[tools]` (the proxies follow within two seconds).
//! Needing a restart: `listen`, `allow_non_loopback`, `max_request_bytes`,
//! `passphrase_hash_file`, `metrics_token_file`, `public_url`, `database_url` and
//! `database_password_file` (and the state directory, which is not in the config).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::watch;

use crate::broker::{Broker, BrokerSettings};
use crate::config::{Config, ConfigError, Retention};
use crate::notify::{Channel, ChannelError};
use crate::review::{Reviewer, SamplingEngine};
use crate::sampling::{ProviderError, Providers};

/// Why a reload was refused (the old config stays).
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// The file cannot be read or is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The provider clients for the new models could not be set up (an unreadable key file).
    #[error("cannot set up models")]
    Models(#[source] ProviderError),
    /// A notice channel cannot be set up (an unusable secret file).
    #[error(transparent)]
    Channel(#[from] ChannelError),
}

/// The broker settings `config` asks for.
pub fn broker_settings(config: &Config) -> BrokerSettings {
    BrokerSettings {
        question_timeout: Duration::from_secs(config.question_timeout_secs),
        max_pending_per_server: config.max_pending_per_server,
        max_stored_bytes_per_server: config.max_stored_bytes_per_server,
        max_stored_bytes_per_door: config.max_stored_bytes_per_door,
        forms_person_only: config.forms_person_only,
    }
}

/// The sampling engine `config` asks for: `None` without models.
///
/// # Errors
/// [`ReloadError::Config`] for invalid models or routing, [`ReloadError::Models`] when the
/// providers cannot be set up.
pub fn engine(config: &Config) -> Result<Option<SamplingEngine>, ReloadError> {
    if config.models.is_empty() {
        return Ok(None);
    }
    Ok(Some(SamplingEngine {
        catalog: config.catalog()?,
        routing: config.routing.clone(),
        providers: Providers::new()
            .and_then(|p| p.with_key_files(&config.models))
            .map_err(ReloadError::Models)?,
        budgets: config.budgets.clone(),
    }))
}

/// Swaps a new config into a running service. Cheap to clone.
#[derive(Clone)]
pub struct Reloader {
    broker: Broker,
    review: Arc<Reviewer>,
    current: Arc<Mutex<Config>>,
    retention: watch::Sender<Retention>,
    file: Option<PathBuf>,
}

impl Reloader {
    /// Over the running parts, with `config` in force, re-reading `file` (the `--config` file;
    /// `None`: the default file, see [`Config::load`]).
    pub fn new(
        broker: Broker,
        review: Arc<Reviewer>,
        config: Config,
        file: Option<PathBuf>,
    ) -> Reloader {
        Reloader {
            broker,
            review,
            retention: watch::Sender::new(config.retention.clone()),
            current: Arc::new(Mutex::new(config)),
            file,
        }
    }

    /// This reloader re-reading `file`.
    #[must_use]
    pub fn with_file(mut self, file: Option<PathBuf>) -> Reloader {
        self.file = file;
        self
    }

    /// The retention bounds in force, changing on reload.
    pub fn retention(&self) -> watch::Receiver<Retention> {
        self.retention.subscribe()
    }

    /// Re-reads the config file and applies it (SIGHUP), logging the outcome.
    pub fn reload_from_file(&self) {
        match Config::load(self.file.as_deref())
            .map_err(ReloadError::from)
            .and_then(|c| self.apply(c))
        {
            Ok(restart) if restart.is_empty() => tracing::info!("config reloaded"),
            Ok(restart) => tracing::warn!(
                keys = ?restart,
                "config reloaded; changes to these keys need a restart and are not in force"
            ),
            Err(e) => tracing::error!(
                error = %chain(&e),
                "config reload refused; the old config stays in force"
            ),
        }
    }

    /// Applies `new`: returns the keys that changed but need a restart (they keep their old
    /// values).
    ///
    /// # Errors
    /// [`ReloadError`] when `new` cannot be put in force; nothing is changed then.
    pub fn apply(&self, new: Config) -> Result<Vec<&'static str>, ReloadError> {
        let engine = engine(&new)?;
        let channels = Channel::build_all(&new.notifications.channels.0)?;
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        let restart: Vec<&'static str> = [
            ("listen", current.listen != new.listen),
            (
                "allow_non_loopback",
                current.allow_non_loopback != new.allow_non_loopback,
            ),
            (
                "max_request_bytes",
                current.max_request_bytes != new.max_request_bytes,
            ),
            (
                "passphrase_hash_file",
                current.passphrase_hash_file != new.passphrase_hash_file,
            ),
            (
                "metrics_token_file",
                current.metrics_token_file != new.metrics_token_file,
            ),
            ("public_url", current.public_url != new.public_url),
            ("database_url", current.database_url != new.database_url),
            (
                "database_password_file",
                current.database_password_file != new.database_password_file,
            ),
        ]
        .into_iter()
        .filter_map(|(key, changed)| changed.then_some(key))
        .collect();
        self.review.set_engine(engine);
        self.broker.set_settings(broker_settings(&new));
        self.broker.set_tool_rules(new.tools.clone());
        self.broker
            .notifications()
            .set_enabled(new.notifications.desktop);
        self.broker
            .notifications()
            .set_language(new.notifications.lang());
        self.broker.notifications().set_channels(channels);
        if current.retention != new.retention {
            self.retention.send_replace(new.retention.clone());
        }
        // The keys needing a restart keep their old values, so the next reload compares
        // against what is really in force.
        let kept = Config {
            listen: current.listen.clone(),
            allow_non_loopback: current.allow_non_loopback,
            max_request_bytes: current.max_request_bytes,
            passphrase_hash_file: current.passphrase_hash_file.clone(),
            metrics_token_file: current.metrics_token_file.clone(),
            public_url: current.public_url.clone(),
            ..new
        };
        *current = kept;
        Ok(restart)
    }
}

/// `e` and its causes, joined with ": " (the log shows why a file was refused, not only that
/// it was).
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}
