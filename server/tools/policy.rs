//! The person's rules for the host's tool calls: `[tools]` in the config (a default and
//! ordered rules, first match wins) and the grants made from a question page. Pure: the
//! proxy judges every `tools/call` with a cached [`Policy`], the service serves it.
//!
//! Tool annotations (`readOnlyHint`, `destructiveHint`) are claims of an untrusted server: a
//! rule the person writes may match on them (`read_only = true`), but they never allow a
//! call on their own.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use wildmatch::WildMatch;

/// What a rule does with a matching call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolAction {
    /// Passes to the server unchanged, with no question.
    #[default]
    Allow,
    /// Opens a `tool_call` question; the server gets the call only once the person accepts.
    Ask,
    /// Never reaches the server; the host gets an `isError` result saying so.
    Deny,
}

impl ToolAction {
    /// The config's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolAction::Allow => "allow",
            ToolAction::Ask => "ask",
            ToolAction::Deny => "deny",
        }
    }
}

/// One `[[tools.rules]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolRule {
    /// The proxy's `--name`, a glob (`*` any run of characters, `?` one). Default `*`.
    #[serde(default = "any")]
    pub server: String,
    /// The tool's name, a glob. Default `*`.
    #[serde(default = "any")]
    pub tool: String,
    /// What to do with a matching call.
    pub action: ToolAction,
    /// Match only tools whose server claims `readOnlyHint` equal to this (`read_only` in the
    /// config). Absent: any.
    #[serde(default, alias = "read_only", skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// Match only tools whose server claims `destructiveHint` equal to this (`destructive` in
    /// the config). Absent: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
}

fn any() -> String {
    "*".to_owned()
}

/// `[tools]`: the default for calls no rule matches, and the rules in order.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsConfig {
    /// For calls that no rule matches. Default `allow` (existing setups keep working; one line
    /// `default = "ask"` asks about every call).
    pub default: ToolAction,
    /// `[[tools.rules]]`, tried in order; the first match wins.
    pub rules: Vec<ToolRule>,
}

/// A standing "allow this tool on this server" made from a question page: it answers what a
/// rule would ask (never what a rule denies), until it expires or is revoked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    /// The grant's id.
    pub id: String,
    /// The server's name, exactly.
    pub server: String,
    /// The tool's name, exactly.
    pub tool: String,
    /// When it stops applying; `None`: until revoked.
    pub expires_at: Option<DateTime<Utc>>,
}

impl Grant {
    fn applies(&self, server: &str, tool: &str, now: DateTime<Utc>) -> bool {
        self.server == server && self.tool == tool && self.expires_at.is_none_or(|t| t > now)
    }
}

/// What the server claims about a tool in `tools/list` (`annotations`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hints {
    /// `readOnlyHint`.
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    pub destructive: Option<bool>,
}

/// Everything a proxy needs to judge calls: `GET /api/v1/tools/policy`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Policy {
    /// `[tools]` of the config.
    pub tools: ToolsConfig,
    /// Grants in force.
    #[serde(default)]
    pub grants: Vec<Grant>,
}

/// What decided a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecidedBy {
    /// `[[tools.rules]]` entry number (1-based, in the file's order).
    Rule(usize),
    /// `[tools] default`.
    Default,
    /// A grant, by id.
    Grant(String),
}

impl DecidedBy {
    /// The audit's name for it (an actor `rule:…`): `tools.rules[N]`, `tools.default`,
    /// `grant:ID`.
    pub fn name(&self) -> String {
        match self {
            DecidedBy::Rule(n) => format!("tools.rules[{n}]"),
            DecidedBy::Default => "tools.default".to_owned(),
            DecidedBy::Grant(id) => format!("grant:{id}"),
        }
    }
}

/// The outcome of judging one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// What happens to it.
    pub action: ToolAction,
    /// What decided.
    pub by: DecidedBy,
}

impl Policy {
    /// Judges a call of `tool` on `server`: the first matching rule (else the default); a call
    /// it would ask about is allowed when a grant in force names this server and tool.
    pub fn judge(&self, server: &str, tool: &str, hints: Hints, now: DateTime<Utc>) -> Judgement {
        let (action, by) = self
            .tools
            .rules
            .iter()
            .enumerate()
            .find(|(_, rule)| rule.matches(server, tool, hints))
            .map_or((self.tools.default, DecidedBy::Default), |(i, rule)| {
                (rule.action, DecidedBy::Rule(i + 1))
            });
        if action == ToolAction::Ask
            && let Some(grant) = self.grants.iter().find(|g| g.applies(server, tool, now))
        {
            return Judgement {
                action: ToolAction::Allow,
                by: DecidedBy::Grant(grant.id.clone()),
            };
        }
        Judgement { action, by }
    }
}

impl ToolRule {
    fn matches(&self, server: &str, tool: &str, hints: Hints) -> bool {
        WildMatch::new(&self.server).matches(server)
            && WildMatch::new(&self.tool).matches(tool)
            && self
                .read_only
                .is_none_or(|want| hints.claims_read_only() == want)
            && self
                .destructive
                .is_none_or(|want| hints.claims_destructive() == want)
    }
}

impl Hints {
    /// What the server claims, read with the spec's defaults: `readOnlyHint` is `false` when
    /// absent (d:2025-06-18/schema.ts ToolAnnotations).
    fn claims_read_only(self) -> bool {
        self.read_only.unwrap_or(false)
    }

    /// `destructiveHint` is `true` when absent, and means nothing for a read-only tool (which
    /// changes nothing): so a tool that says nothing is matched by `destructive = true`.
    fn claims_destructive(self) -> bool {
        !self.claims_read_only() && self.destructive.unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> ToolsConfig {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn the_first_matching_rule_wins_and_the_default_catches_the_rest() {
        let policy = Policy {
            tools: rules(
                r#"
                default = "ask"
                [[rules]]
                server = "github"
                tool = "delete_*"
                action = "deny"
                [[rules]]
                server = "git?ub"
                action = "allow"
                "#,
            ),
            grants: vec![],
        };
        let now = Utc::now();
        let judge = |s, t| policy.judge(s, t, Hints::default(), now);
        assert_eq!(judge("github", "delete_repo").action, ToolAction::Deny);
        assert_eq!(judge("github", "delete_repo").by, DecidedBy::Rule(1));
        assert_eq!(judge("github", "list_issues").by, DecidedBy::Rule(2));
        assert_eq!(judge("gitlab", "x").action, ToolAction::Ask);
        assert_eq!(judge("gitlab", "x").by, DecidedBy::Default);
    }

    #[test]
    fn a_tool_that_says_nothing_is_read_with_the_specs_defaults() {
        let policy = Policy {
            tools: rules(
                r#"
                [[rules]]
                destructive = true
                action = "deny"
                [[rules]]
                read_only = false
                action = "ask"
                "#,
            ),
            grants: vec![],
        };
        let now = Utc::now();
        let judge = |hints| policy.judge("s", "t", hints, now).action;
        // No annotations: destructive by default, so the deny rule holds it back.
        assert_eq!(judge(Hints::default()), ToolAction::Deny);
        let not_destructive = Hints {
            read_only: None,
            destructive: Some(false),
        };
        assert_eq!(judge(not_destructive), ToolAction::Ask);
        // A read-only claim makes the destructive hint meaningless: neither rule matches.
        let read_only = Hints {
            read_only: Some(true),
            destructive: Some(true),
        };
        assert_eq!(judge(read_only), ToolAction::Allow);
    }

    #[test]
    fn hints_match_only_rules_that_ask_for_them_and_never_allow_alone() {
        let policy = Policy {
            tools: rules(
                r#"
                default = "ask"
                [[rules]]
                read_only = true
                action = "allow"
                "#,
            ),
            grants: vec![],
        };
        let now = Utc::now();
        let claimed = Hints {
            read_only: Some(true),
            destructive: None,
        };
        assert_eq!(
            policy.judge("s", "t", claimed, now).action,
            ToolAction::Allow
        );
        assert_eq!(
            policy.judge("s", "t", Hints::default(), now).action,
            ToolAction::Ask
        );
        // Without a rule that names them, hints change nothing.
        let plain = Policy {
            tools: rules(r#"default = "ask""#),
            grants: vec![],
        };
        assert_eq!(plain.judge("s", "t", claimed, now).action, ToolAction::Ask);
    }

    #[test]
    fn a_grant_answers_what_would_be_asked_until_it_expires_never_a_deny() {
        let now = Utc::now();
        let grant = |tool: &str, expires_at| Grant {
            id: format!("g-{tool}"),
            server: "github".into(),
            tool: tool.into(),
            expires_at,
        };
        let policy = Policy {
            tools: rules(
                r#"
                default = "ask"
                [[rules]]
                tool = "drop_*"
                action = "deny"
                "#,
            ),
            grants: vec![
                grant("merge", Some(now + chrono::Duration::hours(1))),
                grant("close", Some(now - chrono::Duration::seconds(1))),
                grant("drop_db", None),
                grant("comment", None),
            ],
        };
        let judge = |t| policy.judge("github", t, Hints::default(), now);
        assert_eq!(judge("merge").by, DecidedBy::Grant("g-merge".into()));
        assert_eq!(judge("close").action, ToolAction::Ask, "expired");
        assert_eq!(
            judge("drop_db").action,
            ToolAction::Deny,
            "a grant never beats a deny"
        );
        assert_eq!(judge("comment").action, ToolAction::Allow);
        assert_eq!(
            policy
                .judge("gitlab", "merge", Hints::default(), now)
                .action,
            ToolAction::Ask,
            "a grant names one server"
        );
    }

    #[test]
    fn unknown_keys_and_actions_are_refused() {
        assert!(toml::from_str::<ToolsConfig>(r#"default = "maybe""#).is_err());
        assert!(
            toml::from_str::<ToolsConfig>("[[rules]]\naction = \"allow\"\nservr = \"x\"").is_err()
        );
        assert_eq!(ToolsConfig::default().default, ToolAction::Allow);
    }
}
