//! The tool rules this proxy judges the host's `tools/call`s by: one task owns the cached
//! [`Policy`] and publishes it through a watch channel; every judgement reads the latest
//! without a round trip. The task asks the service (`GET /api/v1/tools/policy`: the config's
//! `[tools]` and the grants in force) every [`POLL`], so a config reload or a new grant is
//! followed within two seconds. Until the service has answered once, the policy is read from
//! the same config file the service reads (the one it last started with, recorded in
//! `<state>/config-path`; else `MCP_CONSENT_CONFIG` or the default location): an
//! `allow` keeps working without the service, an `ask` fails closed. A config file that cannot
//! be read makes every call an `ask` (the person's rules are unknown, so nothing passes
//! unjudged).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::client::ServiceClient;
use crate::config::Config;
use crate::tools::{Policy, ToolAction, ToolsConfig};

/// How often the service is asked for the policy.
const POLL: Duration = Duration::from_secs(1);
/// How long the proxy waits for the first answer before it judges calls by the file alone.
const FIRST_ANSWER: Duration = Duration::from_secs(2);

/// The latest policy, as the judging side reads it.
pub(super) type PolicyView = watch::Receiver<Arc<Policy>>;

/// The policy from the config file the service read (`recorded`), else the one it would read.
fn from_config_file(recorded: Option<&std::path::Path>) -> Policy {
    let explicit = recorded
        .map(std::path::Path::to_path_buf)
        .or_else(|| std::env::var_os("MCP_CONSENT_CONFIG").map(std::path::PathBuf::from));
    let tools = match Config::load(explicit.as_deref()) {
        Ok(config) => config.tools,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the config's [tools]; every tool call will be asked about");
            ToolsConfig {
                default: ToolAction::Ask,
                rules: Vec::new(),
            }
        }
    };
    Policy {
        tools,
        grants: Vec::new(),
    }
}

/// Starts the task that keeps the policy; returns once the service answered (or did not
/// within [`FIRST_ANSWER`]), so the first call is judged by the person's current rules.
pub(super) async fn start(
    client: ServiceClient,
    recorded: Option<std::path::PathBuf>,
) -> PolicyView {
    let first = tokio::time::timeout(FIRST_ANSWER, client.tool_policy()).await;
    let initial = match first {
        Ok(Ok(policy)) => policy,
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "the service did not give the tool policy; using the config file");
            from_config_file(recorded.as_deref())
        }
        Err(_) => from_config_file(recorded.as_deref()),
    };
    let (tx, rx) = watch::channel(Arc::new(initial));
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(POLL).await;
            if tx.is_closed() {
                return;
            }
            match client.tool_policy().await {
                Ok(policy) => {
                    tx.send_if_modified(|current| {
                        let changed = **current != policy;
                        if changed {
                            *current = Arc::new(policy);
                        }
                        changed
                    });
                }
                // The last known policy stays: an `ask` then fails closed when it cannot open.
                Err(e) => tracing::debug!(error = %e, "could not refresh the tool policy"),
            }
        }
    });
    rx
}
