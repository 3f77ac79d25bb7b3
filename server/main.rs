//! The `mcp-consent` binary: parses the command line, runs it (see [`mcp_consent::cli`]) and
//! reports a failure once, on stderr, with exit code 1.

use std::process::ExitCode;

use clap::Parser;
use mcp_consent::cli::{self, Cli, Outcome};

#[tokio::main]
async fn main() -> ExitCode {
    match cli::run(Cli::parse()).await {
        Ok(Outcome::Done) => ExitCode::SUCCESS,
        // Exit at once: the runtime would otherwise wait for the blocking read of the host's
        // stdin, which stays open while the host runs.
        Ok(Outcome::ExitNow(code)) => std::process::exit(code),
        Err(e) => {
            eprintln!("{}", e.report());
            ExitCode::FAILURE
        }
    }
}
