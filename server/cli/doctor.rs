//! `mcp-consent doctor`: checks what a newcomer gets wrong and says how to fix each. The
//! service unreachable or the config invalid is a failure (exit 1); every other finding is a
//! warning.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::client::ServiceClient;
use crate::config::Config;
use crate::domain::State;
use crate::hosts::locate::Env;
use crate::hosts::ops::{self, Selection};
use crate::notify::DesktopNotifier;
use crate::protocol::invisible::escaped;

/// `mcp-consent doctor …`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Config file. Default: $XDG_CONFIG_HOME/mcp-consent/config.toml if it exists.
    #[arg(long, env = "MCP_CONSENT_CONFIG")]
    config: Option<PathBuf>,
    /// The service's TCP URL (verified before the token is sent). Default: the owner-only
    /// socket <state>/broker/api.sock.
    #[arg(long, env = "MCP_CONSENT_BROKER")]
    pub(super) broker: Option<String>,
}

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Ok,
    Warn,
    Fail,
}

struct Report<'a, W: Write> {
    out: &'a mut W,
    failed: bool,
}

impl<W: Write> Report<'_, W> {
    fn line(&mut self, verdict: Verdict, what: &str, fix: Option<&str>) -> std::io::Result<()> {
        let tag = match verdict {
            Verdict::Ok => "ok  ",
            Verdict::Warn => "warn",
            Verdict::Fail => "FAIL",
        };
        self.failed |= verdict == Verdict::Fail;
        // A check's line may name what a host's file or a server chose: no control gets through.
        writeln!(self.out, "{tag}  {}", escaped(what, true))?;
        if let Some(fix) = fix {
            writeln!(self.out, "      fix: {}", escaped(fix, true))?;
        }
        Ok(())
    }
}

/// Runs every check, printing one line each (and how to fix it); returns whether a check
/// failed.
///
/// # Errors
/// The output could not be written.
pub async fn run(
    args: DoctorArgs,
    client: &ServiceClient,
    out: &mut impl Write,
) -> std::io::Result<bool> {
    let mut r = Report { out, failed: false };
    match client.list_questions(Some(State::Pending)).await {
        Ok(pending) => r.line(
            Verdict::Ok,
            &format!("the service answers over {} ({} question(s) pending)", endpoint(client), pending.len()),
            None,
        )?,
        Err(e) => r.line(
            Verdict::Fail,
            &format!("the service is not reachable: {e}"),
            Some("start it with `mcp-consent serve` (or `mcp-consent service install` to run it at login)"),
        )?,
    }
    let config = check_config(&mut r, args.config.as_deref())?;
    check_program(&mut r)?;
    check_hosts(&mut r)?;
    check_notifications(&mut r, config.as_ref())?;
    Ok(r.failed)
}

fn endpoint(client: &ServiceClient) -> String {
    client
        .endpoint()
        .map_or_else(|e| e.to_string(), |e| e.to_string())
}

fn check_config<W: Write>(
    r: &mut Report<'_, W>,
    explicit: Option<&Path>,
) -> std::io::Result<Option<Config>> {
    let file = Config::file_to_read(explicit);
    let config = match Config::load(explicit) {
        Ok(c) => c,
        Err(e) => {
            let text = super::with_causes(&e);
            r.line(
                Verdict::Fail,
                &format!("the config does not load: {text}"),
                Some("correct the file; every key is listed in docs/configuration.md"),
            )?;
            return Ok(None);
        }
    };
    match &file {
        Some(path) => r.line(
            Verdict::Ok,
            &format!("the config {} parses", path.display()),
            None,
        )?,
        None => r.line(Verdict::Ok, "no config file: the defaults apply", None)?,
    }
    // SAFETY: geteuid(2) has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if let Some(path) = &file
        && let Ok(meta) = std::fs::metadata(path)
        && (meta.uid() != me || meta.mode() & 0o022 != 0)
    {
        r.line(
            Verdict::Fail,
            &format!(
                "the config {} belongs to another user or others may write it (mode {:04o})",
                path.display(),
                meta.mode() & 0o777
            ),
            Some(&format!(
                "chown $USER {0} && chmod go-w {0}",
                path.display()
            )),
        )?;
    }
    // Every file the config names that grants access, by the service's own rules.
    for (path, holds) in config.access_files() {
        match crate::access_files::check(path, holds) {
            Ok(()) => r.line(
                Verdict::Ok,
                &format!("{} passes the owner checks", path.display()),
                None,
            )?,
            Err(e) => r.line(
                Verdict::Fail,
                &e.to_string(),
                Some(&format!(
                    "chmod 600 {}, owned by you, not a link to another user's file",
                    path.display()
                )),
            )?,
        }
    }
    Ok(Some(config))
}

/// The program hosts launch is this one, and the one on `PATH`.
fn check_program<W: Write>(r: &mut Report<'_, W>) -> std::io::Result<()> {
    let Ok(me) = super::hosts::program() else {
        return r.line(Verdict::Warn, "cannot find the path of this program", None);
    };
    let on_path = std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("mcp-consent"))
                .find(|c| c.is_file())
        })
        .and_then(|c| std::fs::canonicalize(c).ok());
    match on_path {
        Some(p) if p == me => r.line(Verdict::Ok, &format!("`mcp-consent` on PATH is this program ({})", me.display()), None),
        Some(p) => r.line(
            Verdict::Warn,
            &format!("`mcp-consent` on PATH is {}, not this program ({})", p.display(), me.display()),
            Some("run `mcp-consent hosts wrap` with the installed program, so hosts launch the one you update"),
        ),
        None => r.line(
            Verdict::Warn,
            &format!("no `mcp-consent` on PATH; hosts will launch {}", me.display()),
            Some("install it (e.g. `cargo install --path .` or the Nix package) and wrap again with the installed one"),
        ),
    }
}

fn check_hosts<W: Write>(r: &mut Report<'_, W>) -> std::io::Result<()> {
    let Some(env) = Env::current() else {
        return r.line(Verdict::Warn, "no home directory: hosts not checked", None);
    };
    let me = super::hosts::program().ok();
    let (reports, errors) = ops::list(&env, &Selection::default());
    if reports.is_empty() && errors.is_empty() {
        r.line(
            Verdict::Warn,
            "no MCP host configuration found",
            Some("configure a host first, then run `mcp-consent hosts wrap`"),
        )?;
    }
    for e in errors {
        r.line(
            Verdict::Warn,
            &e.to_string(),
            Some("fix the file by hand; `mcp-consent hosts` leaves it alone until it parses"),
        )?;
    }
    for report in reports {
        let total = report.servers.len();
        let wrapped = report.servers.iter().filter(|s| s.wrapped).count();
        let what = format!(
            "{}: {wrapped} of {total} server(s) wrapped in {}",
            report.host.as_str(),
            report.file.display()
        );
        if wrapped < total {
            let fix = format!("mcp-consent hosts wrap --host {}", report.host.as_str());
            r.line(Verdict::Warn, &what, Some(&fix))?;
        } else {
            r.line(Verdict::Ok, &what, None)?;
        }
        let mut seen: Vec<PathBuf> = Vec::new();
        for program in report.servers.iter().filter_map(|s| s.program.as_ref()) {
            let resolved = std::fs::canonicalize(program).unwrap_or_else(|_| program.clone());
            if me.as_ref() == Some(&resolved) || seen.contains(&resolved) {
                continue;
            }
            seen.push(resolved);
            let what = match &me {
                Some(me) => format!(
                    "{} launches {}, not this program {}",
                    report.file.display(),
                    program.display(),
                    me.display()
                ),
                None => format!("{} launches {}", report.file.display(), program.display()),
            };
            let fix =
                "run `mcp-consent hosts unwrap`, then `hosts wrap` with the installed program";
            let what = if program.is_file() {
                what
            } else {
                format!("{what} (it does not exist)")
            };
            r.line(Verdict::Warn, &what, Some(fix))?;
        }
    }
    Ok(())
}

fn check_notifications<W: Write>(
    r: &mut Report<'_, W>,
    config: Option<&Config>,
) -> std::io::Result<()> {
    let enabled = config.is_none_or(|c| c.notifications.desktop);
    if !enabled {
        return r.line(
            Verdict::Warn,
            "desktop notifications are off ([notifications] desktop = false)",
            Some("set desktop = true, or rely on the browser page"),
        );
    }
    if DesktopNotifier::available() {
        r.line(Verdict::Ok, "desktop notifications have somewhere to show (a session bus or the macOS notification centre)", None)
    } else {
        r.line(
            Verdict::Warn,
            "desktop notifications cannot show: no session bus (DBUS_SESSION_BUS_ADDRESS unset and no $XDG_RUNTIME_DIR/bus)",
            Some("run the service inside your desktop session (the systemd user service does), or keep the queue page open"),
        )
    }
}
