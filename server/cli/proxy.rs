//! `mcp-consent proxy`: wraps an MCP server (a command, or a remote URL) for a host.

use std::path::PathBuf;

use clap::Args;

use crate::client::ServiceClient;
use crate::proxy::{self, ProxyError, ProxyOptions};

/// `mcp-consent proxy …`.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// The server's name, shown to the person.
    #[arg(long, default_value = "server")]
    name: String,
    /// The service's TCP URL (verified before the token is sent). Default: the owner-only
    /// socket <state>/broker/api.sock.
    #[arg(long, env = "MCP_CONSENT_BROKER")]
    pub(super) broker: Option<String>,
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
}

/// Runs the proxy until the host or the server goes away; returns the exit code.
///
/// # Errors
/// [`ProxyError`]: the server could not be started or reached.
pub async fn run(
    args: ProxyArgs,
    client: ServiceClient,
    state_root: PathBuf,
) -> Result<i32, ProxyError> {
    let options = ProxyOptions {
        name: args.name,
        command: args.command,
        max_line_bytes: args.max_line_bytes,
        config_file: crate::paths::read_private(&crate::paths::config_path_file(&state_root))
            .ok()
            .map(|text| PathBuf::from(text.trim_end_matches('\n'))),
    };
    match args.url {
        Some(url) => {
            let sign_in = proxy::http::SignIn {
                name: options.name.clone(),
                service: client.clone(),
                state_root,
                client: args.client,
            };
            let remote = proxy::http::HttpOptions {
                url,
                headers: args.headers,
                env_headers: args.env_headers,
                max_line_bytes: args.max_line_bytes,
                sign_in: Some(sign_in),
            };
            let upstream = proxy::http::connect(&remote)?;
            proxy::run_with(upstream, options, client).await
        }
        None => proxy::run(options, client).await,
    }
}
