//! Rendering the systemd unit and the launchd agent. The fixed part of both (the unit's
//! hardening, restart policy and install target; the agent's keep-alive, process type and umask)
//! lives in `templates/units/service.toml`, which `nix/hm-module.nix` reads too, so the binary
//! and the home-manager module cannot drift apart. The unit is laid out by the askama template
//! `templates/units/mcp-consent.service`; the agent is written by the `plist` crate.

use std::collections::BTreeMap;

use askama::Template;
use serde::Deserialize;

use super::{LAUNCHD_LABEL, ServiceError};

/// The shared fixed part, compiled in.
const FIXED: &str = include_str!("../../../templates/units/service.toml");

/// `templates/units/service.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fixed {
    systemd: SystemdFixed,
    launchd: plist::Dictionary,
}

/// The `[systemd.*]` tables: unit sections, plus the namespace options that join `[Service]`
/// only while the sandbox is on.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SystemdFixed {
    #[serde(rename = "Unit")]
    unit: Section,
    #[serde(rename = "Service")]
    service: Section,
    sandbox: Section,
    #[serde(rename = "Install")]
    install: Section,
}

/// Directive name → value(s), sorted by name: home-manager writes the module's unit in that
/// order too, so the two units read line for line alike.
type Section = BTreeMap<String, Directive>;

/// A directive's value: one line, or one line per element (as home-manager writes lists).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Directive {
    One(String),
    Many(Vec<String>),
}

impl Fixed {
    fn load() -> Result<Fixed, ServiceError> {
        toml::from_str(FIXED).map_err(|e| ServiceError::Fixed(Box::new(e)))
    }
}

/// `key=value` lines of a section, lists expanded.
fn lines(section: &Section) -> Vec<(&str, &str)> {
    section
        .iter()
        .flat_map(|(key, directive)| {
            let values: &[String] = match directive {
                Directive::One(value) => std::slice::from_ref(value),
                Directive::Many(values) => values,
            };
            values.iter().map(move |v| (key.as_str(), v.as_str()))
        })
        .collect()
}

/// `templates/units/mcp-consent.service`.
#[derive(Template)]
#[template(path = "units/mcp-consent.service", escape = "none")]
struct SystemdUnit<'a> {
    unit: Vec<(&'a str, &'a str)>,
    exec_start: &'a str,
    service: Vec<(&'a str, &'a str)>,
    sandbox: Vec<(&'a str, &'a str)>,
    /// `Some` (the quoted state directory) while the sandbox is on.
    read_write_paths: Option<&'a str>,
    install: Vec<(&'a str, &'a str)>,
}

/// The systemd unit for an already quoted `ExecStart=` line and, with the sandbox on, the
/// quoted state directory for `ReadWritePaths=`.
pub(super) fn systemd_unit(
    exec_start: &str,
    read_write_paths: Option<&str>,
) -> Result<String, ServiceError> {
    let fixed = Fixed::load()?;
    let systemd = &fixed.systemd;
    let unit = SystemdUnit {
        unit: lines(&systemd.unit),
        exec_start,
        service: lines(&systemd.service),
        sandbox: lines(&systemd.sandbox),
        read_write_paths,
        install: lines(&systemd.install),
    };
    unit.render().map_err(ServiceError::Render)
}

/// The launchd agent: label, program arguments, the fixed keys, then the log files in `logs`.
pub(super) fn launchd_plist(program: Vec<String>, logs: &str) -> Result<String, ServiceError> {
    let mut agent = plist::Dictionary::new();
    agent.insert("Label".to_owned(), LAUNCHD_LABEL.into());
    agent.insert(
        "ProgramArguments".to_owned(),
        plist::Value::Array(program.into_iter().map(plist::Value::String).collect()),
    );
    agent.extend(Fixed::load()?.launchd);
    agent.insert(
        "StandardOutPath".to_owned(),
        format!("{logs}/stdout.log").into(),
    );
    agent.insert(
        "StandardErrorPath".to_owned(),
        format!("{logs}/stderr.log").into(),
    );
    let mut xml = Vec::new();
    plist::to_writer_xml(&mut xml, &agent).map_err(ServiceError::Plist)?;
    xml.push(b'\n');
    // Every value is a Rust string, so the XML is UTF-8 and nothing is replaced.
    Ok(String::from_utf8_lossy(&xml).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_part_parses_with_the_namespace_options_apart() {
        let fixed = Fixed::load().unwrap();
        assert!(fixed.systemd.service.contains_key("SystemCallFilter"));
        assert!(!fixed.systemd.service.contains_key("PrivateUsers"));
        assert!(fixed.systemd.sandbox.contains_key("PrivateUsers"));
        assert_eq!(
            fixed
                .launchd
                .get("Umask")
                .and_then(plist::Value::as_unsigned_integer),
            Some(u64::from(super::super::LAUNCHD_UMASK))
        );
    }

    #[test]
    fn lists_become_one_line_each() {
        let section: Section = toml::from_str("WantedBy = [\"a.target\", \"b.target\"]").unwrap();
        assert_eq!(
            lines(&section),
            [("WantedBy", "a.target"), ("WantedBy", "b.target")]
        );
    }
}
