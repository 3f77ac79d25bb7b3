//! The `mcp-consent` command: `serve` runs the service; `proxy` wraps an MCP server for a host;
//! `login` prints a one-time browser login link.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mcp_consent::app::Application;
use mcp_consent::client::ServiceClient;
use mcp_consent::config::Config;
use mcp_consent::paths::StateDir;
use mcp_consent::proxy::{self, ProxyOptions};

/// The human trust boundary for MCP sampling and elicitation requests.
#[derive(Debug, Parser)]
#[command(name = "mcp-consent", version, about)]
struct Cli {
    /// State directory (store, API token, service URL). Default: $XDG_STATE_HOME/mcp-consent.
    #[arg(long, global = true, env = "MCP_CONSENT_STATE_DIR")]
    state_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the service: web UI, JSON API and the question store.
    Serve {
        /// Listen address (default from the config: 127.0.0.1:7777; port 0 picks a free port).
        #[arg(long)]
        listen: Option<String>,
        /// Config file. Default: $XDG_CONFIG_HOME/mcp-consent/config.toml if it exists.
        #[arg(long, env = "MCP_CONSENT_CONFIG")]
        config: Option<PathBuf>,
    },
    /// Wrap an MCP server for a host: `mcp-consent proxy --name NAME -- COMMAND [ARGS...]`, or
    /// a remote one: `mcp-consent proxy --name NAME --url https://…`.
    Proxy {
        /// The server's name, shown to the person.
        #[arg(long, default_value = "server")]
        name: String,
        /// The service's TCP URL (verified before the token is sent). Default: the owner-only
        /// socket <state>/broker/api.sock.
        #[arg(long, env = "MCP_CONSENT_BROKER")]
        broker: Option<String>,
        /// The longest line accepted in either direction, in bytes; a longer server line is
        /// dropped (fail closed) and the request it answered fails.
        #[arg(long, default_value_t = proxy::DEFAULT_MAX_LINE_BYTES)]
        max_line_bytes: usize,
        /// A remote server's MCP endpoint (Streamable HTTP, or HTTP+SSE for 2024-11-05 servers),
        /// instead of a command.
        #[arg(long, conflicts_with = "command")]
        url: Option<String>,
        /// An extra header for the remote server, `'Name: value'`; `${VAR}` in the value is
        /// taken from the environment (so secrets stay out of the host's config). Repeatable.
        #[arg(long = "header", requires = "url")]
        headers: Vec<String>,
        /// An extra header whose whole value is an environment variable, `'Name=ENVVAR'`.
        /// Repeatable.
        #[arg(long = "env-header", requires = "url")]
        env_headers: Vec<String>,
        /// How to identify to the remote server's authorization server when signing in.
        #[command(flatten)]
        client: proxy::http::auth::register::ClientArgs,
        /// The server command and its arguments.
        #[arg(last = true, required_unless_present = "url")]
        command: Vec<String>,
    },
    /// Delete old decided questions now (as the service does hourly) and print what went.
    Prune {
        /// Config file (for the retention bounds).
        #[arg(long, env = "MCP_CONSENT_CONFIG")]
        config: Option<PathBuf>,
    },
    /// List, show and answer questions meant for scripts and agents (same validation as the
    /// pages).
    Questions {
        /// The service's TCP URL (verified before the token is sent). Default: the owner-only
        /// socket <state>/broker/api.sock.
        #[arg(long, env = "MCP_CONSENT_BROKER")]
        broker: Option<String>,
        #[command(subcommand)]
        action: mcp_consent::questions::QuestionsCommand,
    },
    /// Make the argon2id hash of a login passphrase (read from the terminal, or one line of
    /// stdin) and print it, or write it to a file (0600) for `passphrase_hash_file`.
    Passwd {
        /// Write the hash to this file instead of printing it.
        #[arg(long)]
        output: Option<PathBuf>,
    },
    /// Print a one-time link that logs this browser in.
    Login {
        /// The service's TCP URL (verified before the token is sent). Default: the owner-only
        /// socket <state>/broker/api.sock.
        #[arg(long, env = "MCP_CONSENT_BROKER")]
        broker: Option<String>,
    },
    /// Manage the API token: `token rotate` replaces it after a leak.
    Token {
        #[command(subcommand)]
        action: mcp_consent::cli_token::TokenCommand,
    },
    /// Run `serve` under the user's service manager: print or install a systemd user unit or
    /// a launchd agent.
    Service {
        #[command(subcommand)]
        action: mcp_consent::service::ServiceCommand,
    },
}

fn init_tracing(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
}

fn state_root(cli: &Option<PathBuf>) -> Result<PathBuf, String> {
    match cli {
        Some(p) => Ok(p.clone()),
        None => StateDir::default_root().map_err(|e| e.to_string()),
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Shortest passphrase `passwd` accepts, in characters.
const MIN_PASSPHRASE_CHARS: usize = 8;

fn passwd(output: Option<&std::path::Path>) -> Result<(), String> {
    use std::io::{BufRead, IsTerminal};
    let passphrase = if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password("New passphrase: ").map_err(|e| e.to_string())?;
        let again = rpassword::prompt_password("Again: ").map_err(|e| e.to_string())?;
        if first != again {
            return Err("the two passphrases differ".into());
        }
        first
    } else {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        line.trim_end_matches(['\r', '\n']).to_owned()
    };
    if passphrase.chars().count() < MIN_PASSPHRASE_CHARS {
        return Err(format!("use at least {MIN_PASSPHRASE_CHARS} characters"));
    }
    let hash = mcp_consent::auth::passphrase::hash(&passphrase).map_err(|e| e.to_string())?;
    match output {
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                use std::os::unix::fs::DirBuilderExt;
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            }
            mcp_consent::paths::write_private(path, &format!("{hash}\n"))
                .map_err(|e| error_chain(&e))?;
            println!(
                "wrote {}; set passphrase_hash_file = {:?} in config.toml",
                path.display(),
                path
            );
        }
        None => println!("{hash}"),
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = match state_root(&cli.state_dir) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcp-consent: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command {
        Command::Serve { listen, config } => {
            init_tracing("info");
            // SAFETY: umask only changes this process's file-creation mask; it is called before
            // any other thread creates files. Everything the service creates is owner-only.
            unsafe {
                libc::umask(0o077);
            }
            let config = match Config::load(config.as_deref()) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("mcp-consent: {}", error_chain(&e));
                    return ExitCode::FAILURE;
                }
            };
            let listen = listen.unwrap_or_else(|| config.listen.clone());
            let app = match Application::build(&config, root, &listen).await {
                Ok(app) => app,
                Err(e) => {
                    eprintln!("mcp-consent: {}", error_chain(&e));
                    return ExitCode::FAILURE;
                }
            };
            println!("listening on http://{}", app.addr());
            // stdout carries exactly the one line docs/design.md §serve promises; the hint goes
            // to the log.
            tracing::info!("to log in, run `mcp-consent login` and open the link it prints");
            if let Err(e) = app.run_until_stopped().await {
                eprintln!("mcp-consent: {}", error_chain(&e));
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Command::Proxy {
            name,
            broker,
            max_line_bytes,
            url,
            headers,
            env_headers,
            client: oauth_client,
            command,
        } => {
            init_tracing("warn");
            let client = ServiceClient::new(StateDir::at(root.clone()), broker);
            let sign_in = proxy::http::SignIn {
                name: name.clone(),
                service: client.clone(),
                state_root: root,
                client: oauth_client,
            };
            let options = ProxyOptions {
                name,
                command,
                max_line_bytes,
            };
            let run = match url {
                Some(url) => {
                    let remote = proxy::http::HttpOptions {
                        url,
                        headers,
                        env_headers,
                        max_line_bytes,
                        sign_in: Some(sign_in),
                    };
                    match proxy::http::connect(&remote) {
                        Ok(upstream) => proxy::run_with(upstream, options, client).await,
                        Err(e) => Err(e.into()),
                    }
                }
                None => proxy::run(options, client).await,
            };
            match run {
                // Exit at once: the runtime would otherwise wait for the blocking read of the
                // host's stdin, which stays open while the host runs.
                Ok(code) => std::process::exit(code),
                Err(e) => {
                    eprintln!("mcp-consent proxy: {}", error_chain(&e));
                    ExitCode::FAILURE
                }
            }
        }
        Command::Prune { config } => {
            init_tracing("warn");
            // SAFETY: as for `serve`; files created by this process are owner-only.
            unsafe {
                libc::umask(0o077);
            }
            let result = match Config::load(config.as_deref()) {
                Ok(c) => mcp_consent::app::prune(&c, root)
                    .await
                    .map(|r| (c, r))
                    .map_err(|e| error_chain(&e)),
                Err(e) => Err(error_chain(&e)),
            };
            match result {
                Ok((c, r)) => {
                    println!(
                        "pruned {} questions ({} decided more than {} days ago, {} beyond the newest {}); {} expired logins",
                        r.questions(),
                        r.by_age,
                        c.retention.max_age_days,
                        r.by_count,
                        c.retention.max_terminal,
                        r.expired_logins
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("mcp-consent prune: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Questions { broker, action } => {
            init_tracing("warn");
            let client = ServiceClient::new(StateDir::at(root), broker);
            match mcp_consent::questions::run(action, &client, &mut std::io::stdout()).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("mcp-consent questions: {}", error_chain(&e));
                    ExitCode::FAILURE
                }
            }
        }
        Command::Passwd { output } => match passwd(output.as_deref()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("mcp-consent passwd: {e}");
                ExitCode::FAILURE
            }
        },
        Command::Login { broker } => {
            init_tracing("warn");
            let client = ServiceClient::new(StateDir::at(root), broker);
            match client.login_link().await {
                Ok(url) => {
                    println!("Open this link in your browser (it works once, for 10 minutes):");
                    println!("{url}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("mcp-consent login: {}", error_chain(&e));
                    ExitCode::FAILURE
                }
            }
        }
        Command::Token { action } => match mcp_consent::cli_token::run(&action, root).await {
            Ok(line) => {
                println!("{line}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("mcp-consent token: {}", error_chain(&e));
                ExitCode::FAILURE
            }
        },
        Command::Service { action } => {
            let state_dir = cli.state_dir.as_deref();
            match mcp_consent::service::run(&action, state_dir, &mut std::io::stdout()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("mcp-consent service: {}", error_chain(&e));
                    ExitCode::FAILURE
                }
            }
        }
    }
}
