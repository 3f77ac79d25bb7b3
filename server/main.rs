//! The `mcp-consent` binary: parses the command line, runs it (see [`mcp_consent::cli`]) and
//! reports a failure once, on stderr, with exit code 1.

use std::process::ExitCode;

use clap::Parser;
use mcp_consent::cli::{self, Cli, Outcome};
use mcp_consent::protocol::invisible::escaped;

#[tokio::main]
async fn main() -> ExitCode {
    match cli::run(Cli::parse()).await {
        Ok(Outcome::Done) => ExitCode::SUCCESS,
        // Exit at once: the runtime would otherwise wait for the blocking read of the host's
        // stdin, which stays open while the host runs.
        Ok(Outcome::ExitNow(code)) => std::process::exit(code),
        Err(e) => {
            // A failure may quote a server's or a host's text: no control reaches the terminal.
            eprintln!("{}", escaped(&e.report(), true));
            ExitCode::FAILURE
        }
    }
}
