//! The service configuration: `$XDG_CONFIG_HOME/mcp-consent/config.toml` (or `--config`), read
//! only, never written by the service. Every key is optional; the defaults below apply.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::access_files::Holds;
use crate::i18n::Lang;
use crate::notify::ChannelConfigs;
use crate::public_url::PublicUrl;
pub use crate::review::Budgets;
use crate::sampling::{Catalog, CatalogError, ModelConfig, RoutingConfig, RoutingConfigError};
use crate::tools::ToolsConfig;

/// Errors reading the configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file named by `--config` does not exist or cannot be read.
    #[error("cannot read config file {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file's content is refused by [`Config::parse`].
    #[error("invalid config file {path}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong: [`ConfigError::Toml`], [`ConfigError::Models`] or
        /// [`ConfigError::Routing`].
        #[source]
        source: Box<ConfigError>,
    },
    /// The text is not valid TOML or has unknown keys or wrong types. The text never quotes
    /// the file or a value in it: the line may hold a secret (an `api_key = "sk-…"` typed in by
    /// mistake, or pasted as an enum value), so it names the place, the key and what is
    /// expected, with every value elided.
    #[error("line {line}, column {column}: {message}")]
    Toml {
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// What is wrong: the dotted key when known, then the parser's message with values
        /// replaced by `"…"` or `` `…` ``.
        message: String,
    },
    /// The config file, or a file it names that grants access, may be changed, replaced or
    /// (for a secret) read by someone else; see [`crate::access_files`].
    #[error(transparent)]
    Untrusted(#[from] crate::paths::PathError),
    /// `listen` names a non-loopback address without `allow_non_loopback = true`. The value is
    /// not quoted (a config error never quotes one: it may be a secret pasted in the wrong line).
    #[error(
        "the listen address is not a loopback one (127.0.0.1, [::1] or localhost, with a port); set allow_non_loopback = true to allow it"
    )]
    NotLoopback,
    /// A `[[models]]` table is invalid (score outside [0, 1], duplicate id, negative price, …).
    #[error(transparent)]
    Models(#[from] CatalogError),
    /// `[routing]` is invalid.
    #[error(transparent)]
    Routing(#[from] RoutingConfigError),
}

/// Service settings. Unknown keys are an error so a typo does not silently fall back to a
/// default.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address the web UI and API listen on. Default `"127.0.0.1:7777"`; port 0 picks a free
    /// port.
    pub listen: String,
    /// Allow `listen` on a non-loopback address. Default `false`: the service holds prompts and
    /// answers and is meant for the local user only.
    pub allow_non_loopback: bool,
    /// Seconds a question waits for an answer before it expires (the server then gets
    /// `-32603` naming the expiry). Default `900` (15 minutes).
    pub question_timeout_secs: u64,
    /// Most questions one server may have pending at once; more are refused with `-32603`
    /// naming the limit, so one server cannot flood the queue. Default `100`.
    pub max_pending_per_server: u64,
    /// Most bytes of requests one server's questions of the last hour may hold in the store
    /// (whatever became of them: a server that withdraws each question at once still stores
    /// it until retention); more are refused with `-32603` naming the limit, so one server
    /// cannot fill the disk. Default `268435456` (256 MiB).
    pub max_stored_bytes_per_server: u64,
    /// Most bytes the questions opened and the tool-call decisions reported through one door
    /// may add to the store in an hour: the owner-only socket (the proxies and the CLI on this
    /// machine) and the API token over TCP are counted apart. A caller holding the token
    /// names the server itself, so the per-server limit alone cannot bound it. Beyond, a
    /// question is refused with `-32603` naming the limit and a decision report answers
    /// `429` with `Retry-After`. Default `1073741824` (1 GiB, four servers at their own
    /// limit).
    pub max_stored_bytes_per_door: u64,
    /// Make every form question person-only (audience `human`: hidden from the API's lists
    /// and refused over the API), not only forms that look like they ask for a secret. Default
    /// `false`: that look is a heuristic, so set this when no script should ever answer a form.
    pub forms_person_only: bool,
    /// Largest body accepted when opening a question, in bytes (images and audio travel
    /// base64). Default `16777216` (16 MiB). Other API bodies are limited to 1 MiB.
    pub max_request_bytes: usize,
    /// File holding the argon2id PHC hash of a login passphrase (made by `mcp-consent passwd`).
    /// When set (here or by `MCP_CONSENT_PASSPHRASE_HASH_FILE`), `/login` also accepts the
    /// passphrase. Default: none (login by one-time link only).
    pub passphrase_hash_file: Option<PathBuf>,
    /// File holding a bearer token that `GET /metrics` then requires (from any address).
    /// Default: none, and `/metrics` answers loopback clients without credentials.
    pub metrics_token_file: Option<PathBuf>,
    /// `postgres://USER@HOST:PORT/DB?sslmode=…`: keep the questions in this PostgreSQL
    /// database, one queue shared by every instance pointed at it (docs/scale.md);
    /// `MCP_CONSENT_DATABASE_URL` wins over it. `sslmode` as libpq spells it (`verify-full`
    /// off one machine). Default: none, and the embedded SQLite store in the state directory.
    pub database_url: Option<String>,
    /// File holding the password for `database_url` (owner-only and the user's own, like every
    /// credential file; a trailing newline is dropped). Default: none (a password in the URL,
    /// or libpq's own means such as `~/.pgpass`).
    pub database_password_file: Option<PathBuf>,
    /// Pruning of decided questions.
    pub retention: Retention,
    /// `[[models]]`: the models sampling requests may be run on (see
    /// [`crate::sampling::ModelConfig`] for the keys). Default: none, and the person writes
    /// every sampling response.
    pub models: Vec<ModelConfig>,
    /// `[budgets]`: limits on sampling tool loops and on each server's daily use.
    pub budgets: Budgets,
    /// `[routing]`: route policy settings (see [`crate::sampling::RoutingConfig`]). Default: no
    /// per-request cost cap.
    pub routing: RoutingConfig,
    /// `[notifications]`: telling the person a question waits.
    pub notifications: NotificationSettings,
    /// `[tools]`: the person's rules for the host's tool calls (see
    /// [`crate::tools::ToolsConfig`]). Default: every call allowed, as before tool rules.
    pub tools: ToolsConfig,
    /// Where the person reaches the pages from another device: an `https://` URL served by a
    /// TLS reverse proxy in front of the loopback listener (see `web::public`). Links
    /// in notices point there. Default: none, and nothing but loopback is answered.
    pub public_url: Option<PublicUrl>,
}

/// `[notifications]`: how the person is told that a question opened.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NotificationSettings {
    /// Show a desktop notification (server name and kind only) when a question opens. Default
    /// `true`; skipped where there is no session bus (Linux) and no macOS notification centre.
    pub desktop: bool,
    /// The language of the notifications' text (`"en"`, `"zh-CN"`, `"pt-BR"`). Default: the
    /// system locale (`LC_ALL`, `LC_MESSAGES`, `LANG`; see [`crate::notify::system_lang`]).
    #[serde(deserialize_with = "language")]
    pub language: Option<Lang>,
    /// `[[notifications.channels]]`: notices to other devices (webhook, ntfy, Slack, email; see
    /// [`crate::notify::ChannelConfig`]). Default: none.
    pub channels: ChannelConfigs,
}

impl NotificationSettings {
    /// The language notifications are written in: [`NotificationSettings::language`], else
    /// the system locale's.
    pub fn lang(&self) -> Lang {
        self.language.unwrap_or_else(crate::notify::system_lang)
    }
}

impl Default for NotificationSettings {
    fn default() -> Self {
        NotificationSettings {
            desktop: true,
            language: None,
            channels: ChannelConfigs::default(),
        }
    }
}

/// Reads a language tag the pages speak; any other is an error naming the three.
fn language<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Lang>, D::Error> {
    let tag = String::deserialize(d)?;
    Lang::from_tag(&tag).map(Some).ok_or_else(|| {
        serde::de::Error::custom("unknown language, expected `en`, `zh-CN` or `pt-BR`")
    })
}

/// `[retention]`: how long decided questions are kept. Pending questions are never pruned.
/// (Serialized too: `mcp-consent prune` hands its bounds to the running service.)
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Retention {
    /// Delete terminal questions decided more than this many days ago. Default `30`.
    pub max_age_days: u64,
    /// Keep at most this many terminal questions (newest by decision time). Default `1000`.
    pub max_terminal: u64,
    /// Seconds between pruning runs. Default `3600`.
    pub interval_secs: u64,
    /// Delete audit-log entries older than this many days (the audit outlives the questions
    /// it describes). Default `365`.
    pub audit_max_age_days: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: "127.0.0.1:7777".to_owned(),
            allow_non_loopback: false,
            question_timeout_secs: 900,
            max_pending_per_server: 100,
            max_stored_bytes_per_server: 256 * 1024 * 1024,
            max_stored_bytes_per_door: 1024 * 1024 * 1024,
            forms_person_only: false,
            max_request_bytes: 16 * 1024 * 1024,
            metrics_token_file: None,
            passphrase_hash_file: None,
            database_url: None,
            database_password_file: None,
            retention: Retention::default(),
            models: Vec::new(),
            budgets: Budgets::default(),
            routing: RoutingConfig::default(),
            notifications: NotificationSettings::default(),
            tools: ToolsConfig::default(),
            public_url: None,
        }
    }
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_age_days: 30,
            max_terminal: 1000,
            interval_secs: 3600,
            audit_max_age_days: 365,
        }
    }
}

impl Config {
    /// The default config file: `$XDG_CONFIG_HOME/mcp-consent/config.toml` (macOS:
    /// `~/Library/Application Support/mcp-consent/config.toml`).
    pub fn default_path() -> Option<PathBuf> {
        dirs::config_dir().map(|d| d.join("mcp-consent").join("config.toml"))
    }

    /// Loads `explicit` (which must exist), else the default file if it exists, else the
    /// defaults.
    ///
    /// # Errors
    /// [`ConfigError::Read`] for an unreadable file, [`ConfigError::Parse`] for bad TOML.
    pub fn load(explicit: Option<&Path>) -> Result<Config, ConfigError> {
        let Some(path) = Self::file_to_read(explicit) else {
            return Ok(Config::default());
        };
        let text = match crate::access_files::read(&path, Holds::Settings) {
            Ok(text) => text,
            Err(crate::paths::PathError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                return Err(ConfigError::Read { path, source });
            }
            Err(e) => return Err(ConfigError::Untrusted(e)),
        };
        let config = Self::parse(&text).map_err(|e| ConfigError::Parse {
            path,
            source: Box::new(e),
        })?;
        config.check_access_files()?;
        Ok(config)
    }

    /// The files this config names that grant access, with what each holds: every one must pass
    /// [`crate::access_files::check`] at start and on every reload. A key naming such a file is
    /// added here.
    pub fn access_files(&self) -> Vec<(&Path, Holds)> {
        let mut files = Vec::new();
        if let Some(p) = &self.passphrase_hash_file {
            files.push((p.as_path(), Holds::Secret));
        }
        if let Some(p) = &self.metrics_token_file {
            files.push((p.as_path(), Holds::Secret));
        }
        if let Some(p) = &self.database_password_file {
            files.push((p.as_path(), Holds::Secret));
        }
        for model in &self.models {
            if let Some(p) = &model.api_key_file {
                files.push((p.as_path(), Holds::Secret));
            }
        }
        for channel in &self.notifications.channels.0 {
            files.extend(
                channel
                    .secret_files()
                    .into_iter()
                    .map(|p| (p, Holds::Secret)),
            );
        }
        files
    }

    /// Checks every file of [`Config::access_files`].
    ///
    /// # Errors
    /// [`ConfigError::Untrusted`] naming the first file that fails.
    pub fn check_access_files(&self) -> Result<(), ConfigError> {
        for (path, holds) in self.access_files() {
            crate::access_files::check(path, holds)?;
        }
        Ok(())
    }

    /// The file [`Config::load`] reads: `explicit`, else the default path when it exists;
    /// `None` when the defaults apply.
    pub fn file_to_read(explicit: Option<&Path>) -> Option<PathBuf> {
        match explicit {
            Some(p) => Some(p.to_path_buf()),
            None => Self::default_path().filter(|p| p.exists()),
        }
    }

    /// Parses TOML text and validates `[[models]]` and `[routing]`.
    ///
    /// # Errors
    /// [`ConfigError::Toml`], [`ConfigError::Models`] or [`ConfigError::Routing`].
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| toml_error(&e, text))?;
        config.catalog()?;
        Ok(config)
    }

    /// The validated model catalog (empty when no model is configured).
    ///
    /// # Errors
    /// [`ConfigError::Models`] for an invalid `[[models]]` table, [`ConfigError::Routing`] for
    /// an invalid `[routing]` table.
    pub fn catalog(&self) -> Result<Catalog, ConfigError> {
        self.routing.validate()?;
        Ok(Catalog::new(self.models.clone())?)
    }

    /// Checks the listen address against the loopback rule.
    ///
    /// # Errors
    /// [`ConfigError::NotLoopback`].
    pub fn check_listen(&self, listen: &str) -> Result<(), ConfigError> {
        let loopback = listen
            .parse::<std::net::SocketAddr>()
            .map(|a| a.ip().is_loopback())
            .unwrap_or_else(|_| listen.starts_with("localhost:"));
        if loopback || self.allow_non_loopback {
            Ok(())
        } else {
            Err(ConfigError::NotLoopback)
        }
    }
}

/// A TOML error as [`ConfigError::Toml`]: where, which key, and the message without any value.
fn toml_error(e: &toml::de::Error, text: &str) -> ConfigError {
    let at = e.span().map_or(0, |span| span.start).min(text.len());
    let before = text.get(..at).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    let message = elide_values(e.message());
    ConfigError::Toml {
        line,
        column,
        message: match error_key(e) {
            Some(key) => format!("{key}: {message}"),
            None => message,
        },
    }
}

/// The dotted key an error is in (`tools.default`): the parser names it only in its text
/// without the file, as a last line ``in `tools.default` ``.
fn error_key(e: &toml::de::Error) -> Option<String> {
    let mut bare = e.clone();
    bare.set_input(None);
    let shown = bare.to_string();
    let key = shown
        .strip_prefix(e.message())?
        .trim()
        .strip_prefix("in `")?;
    key.strip_suffix('`')
        .filter(|k| !k.contains('`'))
        .map(str::to_owned)
}

/// `message` on one line with every value elided: a double-quoted one (serde names a wrong
/// string as `invalid type: string "sk-…"`), and a backquoted one unless it names a key (after
/// "field", "key" or "in") or what is expected (after "expected"): serde backquotes the wrong
/// value of an enum (``unknown variant `sk-…` ``) and a number (``integer `5` ``).
fn elide_values(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut chars = message.chars();
    // Within the clause after "expected", where the quoted words are the program's own.
    let mut expected = false;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(inner) = chars.next() {
                    match inner {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                out.push_str("\"…\"");
            }
            '`' => {
                let quoted: String = chars.by_ref().take_while(|&q| q != '`').collect();
                let names_key = ["field ", "key ", "in "].iter().any(|w| out.ends_with(w));
                if expected || names_key {
                    out.push('`');
                    out.push_str(&quoted);
                    out.push('`');
                } else {
                    out.push_str("`…`");
                }
            }
            ':' | ';' | '\n' => {
                expected = false;
                out.push(c);
            }
            _ => out.push(c),
        }
        expected |= out.ends_with("expected ");
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_gives_documented_defaults() {
        let c = Config::parse("").unwrap();
        assert_eq!(c.listen, "127.0.0.1:7777");
        assert_eq!(c.question_timeout_secs, 900);
        assert_eq!(c.max_request_bytes, 16_777_216);
        assert!(!c.forms_person_only);
        assert!(c.notifications.desktop);
        assert!(
            !Config::parse("[notifications]\ndesktop = false")
                .unwrap()
                .notifications
                .desktop
        );
        assert_eq!(
            Config::parse("[notifications]\nlanguage = \"pt-BR\"")
                .unwrap()
                .notifications
                .lang(),
            Lang::PtBr
        );
        assert!(Config::parse("[notifications]\nlanguage = \"de\"").is_err());
        assert!(
            Config::parse("forms_person_only = true")
                .unwrap()
                .forms_person_only
        );
        assert_eq!(
            c.retention,
            Retention {
                max_age_days: 30,
                max_terminal: 1000,
                interval_secs: 3600,
                audit_max_age_days: 365
            }
        );
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(Config::parse("question_timeout = 5").is_err());
        let c = Config::parse("question_timeout_secs = 5\n[retention]\nmax_terminal = 3").unwrap();
        assert_eq!((c.question_timeout_secs, c.retention.max_terminal), (5, 3));
    }

    #[test]
    fn models_and_routing_parse_and_validate() {
        let c = Config::parse("").unwrap();
        assert!(c.models.is_empty() && c.routing.max_request_cost_usd.is_none());
        let text = r#"
            [routing]
            max_request_cost_usd = 0.05

            [[models]]
            id = "llama3.2"
            provider = "openai"
            base_url = "http://127.0.0.1:11434/v1/"
            speed = 0.7
            intelligence = 0.3

            [[models]]
            id = "claude-sonnet-4-5"
            provider = "anthropic"
            base_url = "https://api.anthropic.com/v1/"
            api_key_env = "ANTHROPIC_API_KEY"
            input_usd_per_mtok = 3.0
            output_usd_per_mtok = 15.0
            tools = true
            images = true
            aliases = ["sonnet", "gpt-4o"]
            servers = ["everything"]
        "#;
        let c = Config::parse(text).unwrap();
        assert_eq!(c.models.len(), 2);
        assert_eq!(c.models[0].intelligence, 0.3);
        assert_eq!(
            c.models[1].servers.as_deref(),
            Some(&["everything".to_owned()][..])
        );
        assert_eq!(c.catalog().unwrap().models().len(), 2);
        assert!(Config::parse(&text.replace("speed = 0.7", "speed = 7")).is_err());
        assert!(Config::parse(&text.replace("0.05", "-1")).is_err());
        assert!(Config::parse(&text.replace("tools = true", "tool = true")).is_err());
    }

    #[test]
    fn non_loopback_needs_opt_in() {
        let c = Config::default();
        assert!(c.check_listen("127.0.0.1:0").is_ok());
        assert!(c.check_listen("[::1]:7777").is_ok());
        assert!(c.check_listen("0.0.0.0:7777").is_err());
    }

    #[test]
    fn a_refused_listen_address_is_not_quoted() {
        let err = Config::default()
            .check_listen("127.0.0.1:99999sk-live-4f1c9d2e7a")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("sk-") && !err.contains("99999"), "{err}");
        assert!(err.contains("listen address"), "{err}");
    }

    #[test]
    fn errors_name_the_key_and_what_is_expected_never_a_value() {
        let secret = "sk-live-4f1c9d2e7a";
        let model = |id: &str, provider: &str, base_url: &str| {
            format!(
                "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nbase_url = \"{base_url}\"\n"
            )
        };
        for (text, names) in [
            (
                format!("[tools]\ndefault = \"{secret}\"\n"),
                "tools.default",
            ),
            (
                format!("[tools]\nrules = [{{ action = \"{secret}\" }}]\n"),
                "`allow`, `ask`",
            ),
            (model("m", secret, "http://x/"), "`openai` or `anthropic`"),
            (model("m", "openai", secret), "base_url"),
            (model(secret, "openai", "x"), "models[0]: base_url"),
            (
                format!("question_timeout_secs = \"{secret}\"\n"),
                "question_timeout_secs",
            ),
            (
                format!("api_key = \"{secret}\"\n"),
                "unknown field `api_key`",
            ),
            (
                format!("[notifications]\nlanguage = \"{secret}\"\n"),
                "`pt-BR`",
            ),
            (
                format!("[[notifications.channels]]\nkind = \"{secret}\"\n"),
                "`ntfy`",
            ),
            (
                format!("[[notifications.channels]]\nkind = \"ntfy\"\nurl = \"{secret}\"\n"),
                "channel 1",
            ),
            (
                format!("public_url = \"https://{secret}.example/x\"\n"),
                "public_url",
            ),
        ] {
            let err = Config::parse(&text).expect_err(&text).to_string();
            assert!(!err.contains("sk-"), "{text}: {err}");
            assert!(err.contains(names), "{text}: {err}");
        }
        let err = Config::parse("question_timeout_secs = -5\n")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("-5"), "{err}");
        assert!(err.contains("expected u64"), "{err}");
    }
}
