//! The wrapped command line: `ABSOLUTE/PATH/mcp-consent proxy --name SERVER -- COMMAND ARGS…`
//! for a local server, `… proxy --name SERVER --url URL --env-header 'Name=VAR'…` for a remote
//! one, and how a wrapped entry is recognised by its command (never by a marker field, which
//! some hosts refuse).

use std::path::Path;

use super::Transport;
use super::dialect::{Header, HeaderSource};

/// The name of the program hosts launch.
pub const PROGRAM: &str = "mcp-consent";

/// The proxy's arguments for a local server `command args…`.
pub fn stdio_args(name: &str, command: &str, args: &[String]) -> Vec<String> {
    let mut out = vec![
        "proxy".to_owned(),
        "--name".to_owned(),
        name.to_owned(),
        "--".to_owned(),
        command.to_owned(),
    ];
    out.extend(args.iter().cloned());
    out
}

/// The proxy's arguments for a remote server, and the variables the wrapped entry's
/// environment must hold: header values never go on the command line, where `ps` shows them.
pub fn remote_args(
    name: &str,
    url: &str,
    headers: &[Header],
) -> (Vec<String>, Vec<(String, String)>) {
    let mut args = vec![
        "proxy".to_owned(),
        "--name".to_owned(),
        name.to_owned(),
        "--url".to_owned(),
        url.to_owned(),
    ];
    let mut env = Vec::new();
    for header in headers {
        match &header.source {
            HeaderSource::Verbatim(value) => {
                let var = header_var(&header.name);
                args.push("--env-header".to_owned());
                args.push(format!("{}={var}", header.name));
                env.push((var, value.clone()));
            }
            HeaderSource::Reference(template) => {
                args.push("--header".to_owned());
                args.push(format!("{}: {template}", header.name));
            }
            HeaderSource::EnvVar(var) => {
                args.push("--env-header".to_owned());
                args.push(format!("{}={var}", header.name));
            }
        }
    }
    (args, env)
}

/// The environment variable a header's value travels in: `MCP_CONSENT_HEADER_` and the
/// header's name in capitals, other characters as `_`.
pub fn header_var(header: &str) -> String {
    let tail: String = header
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("MCP_CONSENT_HEADER_{tail}")
}

/// A recognised wrapped command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrapped {
    /// The program the host launches (some `mcp-consent`).
    pub program: String,
    /// How the proxy reaches the server.
    pub transport: Transport,
    /// For a local server, the original command and its arguments (what follows `--`).
    pub inner: Option<(String, Vec<String>)>,
}

/// Recognises `PATH/mcp-consent proxy …`: a program named `mcp-consent` (any absolute path),
/// first argument `proxy`.
pub fn recognise(command: &str, args: &[String]) -> Option<Wrapped> {
    let program = Path::new(command).file_name()?;
    if program != PROGRAM || args.first().map(String::as_str) != Some("proxy") {
        return None;
    }
    let rest = &args[1..];
    if let Some(at) = rest.iter().position(|a| a == "--") {
        let inner = rest
            .get(at + 1)
            .map(|c| (c.clone(), rest[at + 2..].to_vec()));
        return Some(Wrapped {
            program: command.to_owned(),
            transport: Transport::Stdio,
            inner,
        });
    }
    let transport = if rest.iter().any(|a| a == "--url") {
        Transport::Http
    } else {
        Transport::Stdio
    };
    Some(Wrapped {
        program: command.to_owned(),
        transport,
        inner: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_wrapped_command_is_recognised_by_program_and_first_argument() {
        let args = stdio_args("fs", "npx", &strings(&["-y", "pkg", "--"]));
        let seen = recognise("/opt/bin/mcp-consent", &args).unwrap();
        assert_eq!(seen.transport, Transport::Stdio);
        assert_eq!(
            seen.inner,
            Some(("npx".to_owned(), strings(&["-y", "pkg", "--"])))
        );
        assert_eq!(recognise("/opt/bin/npx", &args), None);
        assert_eq!(
            recognise("/opt/bin/mcp-consent", &strings(&["serve"])),
            None
        );
    }

    #[test]
    fn header_values_travel_in_the_environment_never_in_arguments() {
        let headers = [
            Header {
                name: "Authorization".to_owned(),
                source: HeaderSource::Verbatim("Bearer s3cret".to_owned()),
            },
            Header {
                name: "X-Team".to_owned(),
                source: HeaderSource::Reference("${TEAM}".to_owned()),
            },
        ];
        let (args, env) = remote_args("gh", "https://x.example/mcp", &headers);
        assert!(!args.iter().any(|a| a.contains("s3cret")), "{args:?}");
        assert!(args.contains(&"Authorization=MCP_CONSENT_HEADER_AUTHORIZATION".to_owned()));
        assert!(args.contains(&"X-Team: ${TEAM}".to_owned()));
        assert_eq!(
            env,
            vec![(
                "MCP_CONSENT_HEADER_AUTHORIZATION".to_owned(),
                "Bearer s3cret".to_owned()
            )]
        );
        let seen = recognise("/x/mcp-consent", &args).unwrap();
        assert_eq!((seen.transport, seen.inner), (Transport::Http, None));
    }
}
