//! `mcp-consent login`: prints a one-time link that logs a browser in.

use crate::client::{ClientError, ServiceClient};

/// Asks the service for a login link and prints it.
///
/// # Errors
/// [`ClientError`]: the service could not be reached or refused.
pub async fn run(client: &ServiceClient) -> Result<(), ClientError> {
    let link = client.login_link().await?;
    println!("Open this link in your browser (it works once, for 10 minutes):");
    println!("{}", link.url);
    // With public_url the link above is for any device; the same link at the loopback
    // address skips the proxy on this machine.
    if let Some(local) = link.local_url {
        println!("or, on this computer:");
        println!("{local}");
    }
    Ok(())
}
