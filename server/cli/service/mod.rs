//! Running the service under the user's own service manager without Nix: `mcp-consent service
//! print systemd|launchd` renders a systemd user unit or a launchd agent from one
//! [`ServiceSettings`], and `mcp-consent service install` writes it to the user's unit or agent
//! directory, never over an existing file unless asked to.
//!
//! The fixed part of both (hardening, restart policy, keep-alive…) is kept once, in
//! `templates/units/service.toml`, which `nix/hm-module.nix` reads as well (see [`render`]); the
//! module adds only what is per user, as this file does, plus its restart trigger and the
//! passphrase environment. The systemd unit is hardened as far as a user manager allows: the
//! namespace options only work there together with `PrivateUsers=yes`, which the unit therefore
//! sets unless `--no-sandbox` asks for a unit without them (see docs/service.md).

use std::fmt::Write as _;
use std::fs::{self, DirBuilder, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::paths::{PathError, StateDir};

mod render;

/// The systemd unit's file name.
pub const SYSTEMD_UNIT: &str = "mcp-consent.service";
/// The launchd agent's label (its file is `~/Library/LaunchAgents/<label>.plist`).
pub const LAUNCHD_LABEL: &str = "mcp-consent";
/// The launchd agent's `Umask`: 077 in decimal (property lists have no octal).
pub const LAUNCHD_UMASK: u32 = 0o077;

/// Errors rendering or installing a unit.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The path of the running binary is unknown.
    #[error("cannot find the path of this binary")]
    CurrentExe(#[source] std::io::Error),
    /// No home directory (`HOME` unset and none in the user database).
    #[error("cannot find the home directory: set HOME")]
    NoHome,
    /// A relative path could not be made absolute.
    #[error("cannot make {0} absolute")]
    Absolute(PathBuf, #[source] std::io::Error),
    /// The default state directory cannot be determined.
    #[error(transparent)]
    State(#[from] PathError),
    /// A value cannot be written into a unit file (not UTF-8, or a control character).
    #[error("{what} {value:?} cannot be written into a unit file: {reason}")]
    Unrepresentable {
        /// Which setting ("binary path", "--config", …).
        what: &'static str,
        /// The value, lossily printed.
        value: String,
        /// Why.
        reason: &'static str,
    },
    /// `templates/units/service.toml`, compiled in, does not parse (a build defect).
    #[error("the built-in unit settings do not parse")]
    Fixed(#[source] Box<toml::de::Error>),
    /// The systemd unit template failed to render.
    #[error("cannot render the systemd unit")]
    Render(#[source] askama::Error),
    /// The launchd property list could not be written.
    #[error("cannot write the launchd property list")]
    Plist(#[source] plist::Error),
    /// The target file exists and `--force` was not given.
    #[error("{0} already exists; pass --force to overwrite it")]
    Exists(PathBuf),
    /// Creating a directory or writing the file failed.
    #[error("cannot write {path}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// Which service manager a unit is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Manager {
    /// A systemd user unit (Linux).
    Systemd,
    /// A launchd agent (macOS).
    Launchd,
}

impl Manager {
    /// The manager of the platform this binary was built for.
    pub fn native() -> Manager {
        if cfg!(target_os = "macos") {
            Manager::Launchd
        } else {
            Manager::Systemd
        }
    }
}

/// `mcp-consent service …`.
#[derive(Debug, clap::Subcommand)]
pub enum ServiceCommand {
    /// Print the systemd user unit or the launchd agent that runs `mcp-consent serve`.
    Print {
        /// Which service manager.
        #[arg(value_enum)]
        manager: Manager,
        #[command(flatten)]
        options: UnitOptions,
    },
    /// Write the unit (Linux: ~/.config/systemd/user/mcp-consent.service; macOS:
    /// ~/Library/LaunchAgents/mcp-consent.plist) and print the command that starts it.
    Install {
        /// Overwrite an existing file.
        #[arg(long)]
        force: bool,
        /// Print where the file would go and its content; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Which service manager (default: this platform's).
        #[arg(long, value_enum)]
        manager: Option<Manager>,
        #[command(flatten)]
        options: UnitOptions,
    },
}

/// What `serve` is started with, besides `--state-dir`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct UnitOptions {
    /// Config file for `serve` (default: the service reads its default config file).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Listen address for `serve` (default: from the config).
    #[arg(long)]
    pub listen: Option<String>,
    /// systemd: leave out `PrivateUsers=` and the namespace options, for kernels without
    /// unprivileged user namespaces (where the unit fails with status 226/NAMESPACE).
    #[arg(long)]
    pub no_sandbox: bool,
}

/// Everything a unit is rendered from. Paths are absolute.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceSettings {
    /// The `mcp-consent` binary.
    pub program: PathBuf,
    /// `--config` for `serve`, if set.
    pub config: Option<PathBuf>,
    /// `--state-dir` for `serve`, if set explicitly.
    pub state_dir: Option<PathBuf>,
    /// `--listen` for `serve`, if set.
    pub listen: Option<String>,
    /// The user's home directory (launchd logs go to `~/Library/Logs/mcp-consent/`).
    pub home: PathBuf,
    /// The state directory `serve` uses when none is set. The systemd unit always names its
    /// state directory, because `ProtectSystem=strict` needs it listed as writable.
    pub default_state_dir: PathBuf,
    /// Whether the systemd unit sets `PrivateUsers=` and the namespace options
    /// (`--no-sandbox` turns them off).
    pub sandbox: bool,
}

impl ServiceSettings {
    /// Settings for this binary (`std::env::current_exe()`), this user's home and default state
    /// directory, and the given options. Relative paths are made absolute.
    ///
    /// # Errors
    /// [`ServiceError::CurrentExe`], [`ServiceError::NoHome`], [`ServiceError::State`],
    /// [`ServiceError::Absolute`].
    pub fn from_env(
        options: &UnitOptions,
        state_dir: Option<&Path>,
    ) -> Result<ServiceSettings, ServiceError> {
        let program = std::env::current_exe().map_err(ServiceError::CurrentExe)?;
        let home = dirs::home_dir().ok_or(ServiceError::NoHome)?;
        let absolute =
            |p: &Path| std::path::absolute(p).map_err(|e| ServiceError::Absolute(p.into(), e));
        Ok(ServiceSettings {
            program,
            config: options.config.as_deref().map(absolute).transpose()?,
            state_dir: state_dir.map(absolute).transpose()?,
            listen: options.listen.clone(),
            home,
            default_state_dir: StateDir::default_root()?,
            sandbox: !options.no_sandbox,
        })
    }

    /// The state directory the systemd unit runs `serve` with and makes writable.
    pub fn systemd_state_dir(&self) -> &Path {
        self.state_dir.as_deref().unwrap_or(&self.default_state_dir)
    }

    /// `serve` and its options, after the program.
    fn serve_args(&self, state_dir: Option<&Path>) -> Result<Vec<String>, ServiceError> {
        let mut args = vec!["serve".to_owned()];
        if let Some(dir) = state_dir {
            args.push("--state-dir".to_owned());
            args.push(text("--state-dir", dir)?.to_owned());
        }
        if let Some(config) = &self.config {
            args.push("--config".to_owned());
            args.push(text("--config", config)?.to_owned());
        }
        if let Some(listen) = &self.listen {
            args.push("--listen".to_owned());
            args.push(checked("--listen", listen)?.to_owned());
        }
        Ok(args)
    }

    /// Renders the unit or agent for `manager`.
    ///
    /// # Errors
    /// [`ServiceError::Unrepresentable`] for a path or value the file format cannot carry.
    pub fn render(&self, manager: Manager) -> Result<String, ServiceError> {
        match manager {
            Manager::Systemd => self.systemd_unit(),
            Manager::Launchd => self.launchd_plist(),
        }
    }

    /// The systemd user unit `mcp-consent.service`.
    ///
    /// # Errors
    /// [`ServiceError::Unrepresentable`].
    pub fn systemd_unit(&self) -> Result<String, ServiceError> {
        let state = self.systemd_state_dir();
        let mut exec = systemd_quote(text("binary path", &self.program)?, true);
        for arg in self.serve_args(Some(state))? {
            exec.push(' ');
            exec.push_str(&systemd_quote(&arg, true));
        }
        let state = systemd_quote(text("--state-dir", state)?, false);
        render::systemd_unit(&exec, self.sandbox.then_some(state.as_str()))
    }

    /// The launchd agent property list (label [`LAUNCHD_LABEL`]).
    ///
    /// # Errors
    /// [`ServiceError::Unrepresentable`].
    pub fn launchd_plist(&self) -> Result<String, ServiceError> {
        let mut program = vec![text("binary path", &self.program)?.to_owned()];
        program.extend(self.serve_args(self.state_dir.as_deref())?);
        let logs = self.launchd_logs_dir();
        render::launchd_plist(program, text("home directory", &logs)?)
    }

    /// `~/Library/Logs/mcp-consent`.
    pub fn launchd_logs_dir(&self) -> PathBuf {
        self.home.join("Library").join("Logs").join("mcp-consent")
    }

    /// Where `install` writes the file for `manager`: `$XDG_CONFIG_HOME/systemd/user/` (default
    /// `~/.config/systemd/user/`) or `~/Library/LaunchAgents/`.
    pub fn install_path(&self, manager: Manager) -> PathBuf {
        match manager {
            Manager::Systemd => {
                let config_home = std::env::var_os("XDG_CONFIG_HOME")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .unwrap_or_else(|| self.home.join(".config"));
                config_home.join("systemd").join("user").join(SYSTEMD_UNIT)
            }
            Manager::Launchd => self
                .home
                .join("Library")
                .join("LaunchAgents")
                .join(format!("{LAUNCHD_LABEL}.plist")),
        }
    }
}

/// Runs `mcp-consent service …`, writing what it did to `out`.
///
/// # Errors
/// Any [`ServiceError`]; an I/O error on `out` is a [`ServiceError::Write`] naming `-`.
pub fn run(
    command: &ServiceCommand,
    state_dir: Option<&Path>,
    out: &mut dyn std::io::Write,
) -> Result<(), ServiceError> {
    let stdout_err = |source| ServiceError::Write {
        path: PathBuf::from("-"),
        source,
    };
    match command {
        ServiceCommand::Print { manager, options } => {
            let settings = ServiceSettings::from_env(options, state_dir)?;
            out.write_all(settings.render(*manager)?.as_bytes())
                .map_err(stdout_err)
        }
        ServiceCommand::Install {
            force,
            dry_run,
            manager,
            options,
        } => {
            let manager = manager.unwrap_or_else(Manager::native);
            let settings = ServiceSettings::from_env(options, state_dir)?;
            let content = settings.render(manager)?;
            let path = settings.install_path(manager);
            let report = if *dry_run {
                format!("would write {}:\n{content}", path.display())
            } else {
                install(&settings, manager, &path, &content, *force)?
            };
            out.write_all(report.as_bytes()).map_err(stdout_err)
        }
    }
}

/// Writes `content` to `path` (refusing to replace an existing file unless `force`), creates the
/// directories the unit needs, and returns what was done and the next command.
fn install(
    settings: &ServiceSettings,
    manager: Manager,
    path: &Path,
    content: &str,
    force: bool,
) -> Result<String, ServiceError> {
    let write_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ServiceError::Write { path, source }
    };
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(write_err(parent))?;
    }
    let mut report = String::new();
    if force {
        // Write beside the target, then rename: an interrupted install leaves the old file.
        let tmp = path.with_extension("tmp");
        fs::write(&tmp, content).map_err(write_err(&tmp))?;
        fs::rename(&tmp, path).map_err(write_err(path))?;
    } else {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(path)
            .map_err(|source| {
                if source.kind() == std::io::ErrorKind::AlreadyExists {
                    ServiceError::Exists(path.to_path_buf())
                } else {
                    ServiceError::Write {
                        path: path.to_path_buf(),
                        source,
                    }
                }
            })?;
        file.write_all(content.as_bytes())
            .map_err(write_err(path))?;
    }
    let _ = writeln!(report, "wrote {}", path.display());
    let dir = match manager {
        Manager::Systemd => settings.systemd_state_dir().to_path_buf(),
        Manager::Launchd => settings.launchd_logs_dir(),
    };
    if !dir.is_dir() {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(write_err(&dir))?;
        let _ = writeln!(report, "created {}", dir.display());
    }
    let next = match (manager, force) {
        (Manager::Systemd, false) => {
            "systemctl --user daemon-reload && systemctl --user enable --now mcp-consent".to_owned()
        }
        (Manager::Systemd, true) => {
            "systemctl --user daemon-reload && systemctl --user enable mcp-consent && systemctl --user restart mcp-consent".to_owned()
        }
        (Manager::Launchd, _) => format!(
            "launchctl bootout gui/$(id -u)/{LAUNCHD_LABEL} 2>/dev/null; launchctl bootstrap gui/$(id -u) {}",
            shell_quote(&path.to_string_lossy())
        ),
    };
    let _ = writeln!(report, "next: {next}");
    Ok(report)
}

/// The path as UTF-8 without control characters.
fn text<'a>(what: &'static str, path: &'a Path) -> Result<&'a str, ServiceError> {
    let s = path.to_str().ok_or_else(|| ServiceError::Unrepresentable {
        what,
        value: path.to_string_lossy().into_owned(),
        reason: "not UTF-8",
    })?;
    checked(what, s)
}

/// `value` unless it holds a control character (a newline would end the unit line).
fn checked<'a>(what: &'static str, value: &'a str) -> Result<&'a str, ServiceError> {
    if value.chars().any(char::is_control) {
        return Err(ServiceError::Unrepresentable {
            what,
            value: value.to_owned(),
            reason: "contains a control character",
        });
    }
    Ok(value)
}

/// One word of a systemd setting, double-quoted when needed. `%` is a specifier and `$` (in
/// `Exec*=` lines) a variable, so both are doubled.
fn systemd_quote(word: &str, exec: bool) -> String {
    let mut escaped = String::with_capacity(word.len());
    for c in word.chars() {
        match c {
            '%' => escaped.push_str("%%"),
            '$' if exec => escaped.push_str("$$"),
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            c => escaped.push(c),
        }
    }
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:+@,=%".contains(c));
    if plain {
        escaped
    } else {
        format!("\"{escaped}\"")
    }
}

/// A POSIX shell word.
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:+@,=".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> ServiceSettings {
        ServiceSettings {
            program: "/opt/mcp consent/bin/mcp-consent".into(),
            config: Some("/home/u/100%/config.toml".into()),
            state_dir: None,
            listen: Some("127.0.0.1:7777".into()),
            home: "/home/u".into(),
            default_state_dir: "/home/u/.local/state/mcp-consent".into(),
            sandbox: true,
        }
    }

    #[test]
    fn exec_start_quotes_and_escapes_specifiers() {
        let unit = settings().systemd_unit().unwrap();
        assert!(unit.contains(
            "ExecStart=\"/opt/mcp consent/bin/mcp-consent\" serve --state-dir \
             /home/u/.local/state/mcp-consent --config /home/u/100%%/config.toml --listen \
             127.0.0.1:7777\n"
        ));
        assert!(unit.contains("ReadWritePaths=/home/u/.local/state/mcp-consent\n"));
    }

    #[test]
    fn launchd_names_state_dir_only_when_set_and_escapes_xml() {
        let mut s = settings();
        s.listen = Some("a&b".into());
        let plist = s.launchd_plist().unwrap();
        assert!(!plist.contains("--state-dir"));
        assert!(plist.contains("<string>a&amp;b</string>"));
        assert!(plist.contains("<integer>63</integer>"));
        s.state_dir = Some("/s".into());
        assert!(s.launchd_plist().unwrap().contains("<string>/s</string>"));
    }

    #[test]
    fn control_characters_are_refused() {
        let mut s = settings();
        s.listen = Some("x\nExecStartPre=/bin/evil".into());
        assert!(matches!(
            s.systemd_unit(),
            Err(ServiceError::Unrepresentable { .. })
        ));
    }
}
