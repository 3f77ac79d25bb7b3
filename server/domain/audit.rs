//! The audit's vocabulary: what an entry records ([`AuditAction`]), who acted ([`Actor`]) and
//! through which door ([`Via`]), and the two together ([`Decider`]).

use std::fmt;
use std::str::FromStr;

use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::expression::AsExpression;
use diesel::pg::Pg;
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::Text;
use diesel::sqlite::Sqlite;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::UnknownName;

vocabulary! {
    /// What an audit-log entry records.
    AuditAction ("audit action") {
        /// A request was approved to run.
        Approved = "approved",
        /// A request was edited into a new revision.
        Edited = "edited",
        /// A response was regenerated.
        Regenerated = "regenerated",
        /// A request or response was rejected.
        Rejected = "rejected",
        /// A rule approved a step.
        AutoApproved = "auto_approved",
        /// A response was delivered to the server.
        Delivered = "delivered",
        /// A person or agent wrote the response in place of a model (sampling) or the content of
        /// a form, and it was delivered.
        Answered = "answered",
        /// A person or agent declined the request (sampling: answered `-1` without a model run).
        Declined = "declined",
        /// A person or agent cancelled the request (dismissed it without a decision).
        Cancelled = "cancelled",
        /// A person opened a URL question's link (their consent; the server got accept).
        Opened = "opened",
        /// A person or agent created an auto-approve rule.
        RuleCreated = "rule_created",
        /// A person or agent revoked an auto-approve rule.
        RuleRevoked = "rule_revoked",
        /// A tool call passed by a rule or a grant.
        ToolAllowed = "tool_allowed",
        /// A tool call refused by a rule.
        ToolDenied = "tool_denied",
        /// The person accepted a tool call as it was.
        ToolAccepted = "tool_accepted",
        /// The person accepted a tool call with edited arguments.
        ToolEdited = "tool_edited",
        /// The person declined (or cancelled) a tool call.
        ToolDeclined = "tool_declined",
        /// Nobody answered a tool call's question in time.
        ToolExpired = "tool_expired",
        /// The person made a grant (an expiring "allow this tool on this server").
        GrantMade = "grant_made",
        /// The person revoked a grant.
        GrantRevoked = "grant_revoked",
        /// New requests of a server are refused for an hour (the per-server pause).
        ServerPaused = "server_paused",
        /// A server's pause was ended early.
        ServerResumed = "server_resumed",
        /// New requests of a server are refused until the block is lifted.
        ServerBlocked = "server_blocked",
        /// A server's block was lifted.
        ServerUnblocked = "server_unblocked",
        /// No notice is sent for a server's questions.
        ServerMuted = "server_muted",
        /// Notices of a server's questions are sent again.
        ServerUnmuted = "server_unmuted",
    }
}

impl AuditAction {
    /// Whether the entry is about a server's controls (no question, rule or tool).
    pub fn is_server_control(self) -> bool {
        matches!(
            self,
            AuditAction::ServerPaused
                | AuditAction::ServerResumed
                | AuditAction::ServerBlocked
                | AuditAction::ServerUnblocked
                | AuditAction::ServerMuted
                | AuditAction::ServerUnmuted
        )
    }
}

vocabulary! {
    /// The door a decision came through, as the audit and the history name it: the page (a
    /// browser session, on a page or over the JSON API), the CLI (the API token over the
    /// owner-only Unix socket, which is how `mcp-consent questions` reaches the service) or
    /// the API token over TCP (a script, or the CLI given `--url`). Rules, expiry and
    /// withdrawal have no door: their actor says what decided.
    Via ("door") {
        /// A logged-in browser session.
        Browser = "browser",
        /// The API token over the owner-only Unix socket.
        Cli = "cli",
        /// The API token over TCP.
        Token = "token",
    }
}

impl Via {
    /// Who acts through this door: a person in the browser, else a script or agent.
    pub fn actor(self) -> Actor {
        match self {
            Via::Browser => Actor::Human,
            Via::Cli | Via::Token => Actor::Agent,
        }
    }

    /// Whether a script or agent (not a person in the browser) acts.
    pub fn is_agent(self) -> bool {
        self != Via::Browser
    }
}

/// Who made a revision, a decision or an audit entry: stored as `server`, `human`, `agent` or
/// `rule:<rule id>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, AsExpression, FromSqlRow)]
#[diesel(sql_type = Text)]
pub enum Actor {
    /// The asking server (revision 1 is what it sent).
    Server,
    /// A person in the browser.
    Human,
    /// A script or agent over the API or CLI.
    Agent,
    /// An auto-approve rule, by its id.
    Rule(String),
}

impl Actor {
    /// The prefix of a rule actor's stored name.
    const RULE_PREFIX: &'static str = "rule:";

    /// Whether a rule (not a person or script) acted.
    pub fn is_rule(&self) -> bool {
        matches!(self, Actor::Rule(_))
    }
}

/// Who decides and through which door: what an audit entry of a decision records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decider {
    /// Who acted.
    pub actor: Actor,
    /// The door it came through; `None` for a rule (or the service itself).
    pub via: Option<Via>,
}

impl From<Via> for Decider {
    fn from(via: Via) -> Decider {
        Decider {
            actor: via.actor(),
            via: Some(via),
        }
    }
}

impl From<Actor> for Decider {
    /// An actor without a door (a rule).
    fn from(actor: Actor) -> Decider {
        Decider { actor, via: None }
    }
}

impl FromStr for Actor {
    type Err = UnknownName;

    fn from_str(s: &str) -> Result<Actor, UnknownName> {
        match s {
            "server" => Ok(Actor::Server),
            "human" => Ok(Actor::Human),
            "agent" => Ok(Actor::Agent),
            _ => match s.strip_prefix(Actor::RULE_PREFIX) {
                Some(id) if !id.is_empty() => Ok(Actor::Rule(id.to_owned())),
                _ => Err(UnknownName::new("actor", s)),
            },
        }
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Actor::Server => f.write_str("server"),
            Actor::Human => f.write_str("human"),
            Actor::Agent => f.write_str("agent"),
            Actor::Rule(id) => write!(f, "{}{id}", Actor::RULE_PREFIX),
        }
    }
}

impl Serialize for Actor {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Actor {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl ToSql<Text, Sqlite> for Actor {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(self.to_string());
        Ok(IsNull::No)
    }
}

impl FromSql<Text, Sqlite> for Actor {
    fn from_sql(bytes: <Sqlite as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        let text = <String as FromSql<Text, Sqlite>>::from_sql(bytes)?;
        Ok(text.parse::<Actor>()?)
    }
}

impl ToSql<Text, Pg> for Actor {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        use std::io::Write;
        write!(out, "{self}")?;
        Ok(IsNull::No)
    }
}

impl FromSql<Text, Pg> for Actor {
    fn from_sql(bytes: <Pg as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        let text = <String as FromSql<Text, Pg>>::from_sql(bytes)?;
        Ok(text.parse::<Actor>()?)
    }
}
