//! The vocabulary as types: what a question asks for ([`Kind`]), where it is in its life
//! ([`State`], [`Phase`]), who may answer it ([`Audience`]), who acted ([`Actor`]), and the ids
//! of questions and approval decisions.
//!
//! Each name is spelled once, here: the store (via diesel `ToSql`/`FromSql` on `Text`), the
//! `/api/v1` JSON (serde), the events, the templates (`{% match %}`) and the metrics labels all
//! go through these types. The migration `2026-12-01-000000_vocabulary_checks` holds the same
//! lists as SQL `CHECK` constraints; a unit test below keeps the two in step.

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

/// A stored or wire name that is not one of the vocabulary's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value:?} is not a valid {what}")]
pub struct UnknownName {
    /// What was being parsed (`kind`, `state`, ...).
    pub what: &'static str,
    /// The rejected text.
    pub value: String,
}

impl UnknownName {
    fn new(what: &'static str, value: &str) -> UnknownName {
        UnknownName {
            what,
            value: value.to_owned(),
        }
    }
}

/// Declares a closed vocabulary: the enum, its one spelling of each word (`as_str`, `ALL`),
/// `FromStr`, `Display`, serde and diesel `Text` conversions.
macro_rules! vocabulary {
    (
        $(#[$meta:meta])*
        $name:ident ($what:literal) {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, AsExpression, FromSqlRow)]
        #[diesel(sql_type = Text)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every word, in declaration order (the migration's `CHECK` lists the same).
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stored and wire spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl FromStr for $name {
            type Err = UnknownName;

            fn from_str(s: &str) -> Result<Self, UnknownName> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownName::new($what, s)),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }

        impl ToSql<Text, Sqlite> for $name {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
                out.set_value(self.as_str());
                Ok(IsNull::No)
            }
        }

        impl FromSql<Text, Sqlite> for $name {
            fn from_sql(bytes: <Sqlite as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
                let text = <String as FromSql<Text, Sqlite>>::from_sql(bytes)?;
                Ok(text.parse::<$name>()?)
            }
        }

        impl ToSql<Text, Pg> for $name {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
                <str as ToSql<Text, Pg>>::to_sql(self.as_str(), &mut out.reborrow())
            }
        }

        impl FromSql<Text, Pg> for $name {
            fn from_sql(bytes: <Pg as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
                let text = <String as FromSql<Text, Pg>>::from_sql(bytes)?;
                Ok(text.parse::<$name>()?)
            }
        }
    };
}

vocabulary! {
    /// What a question asks for.
    Kind ("kind") {
        /// `sampling/createMessage`.
        Sampling = "sampling",
        /// Form-mode `elicitation/create`.
        Form = "form",
        /// URL-mode `elicitation/create`.
        Url = "url",
        /// A host's `tools/call` that the person's rules say to ask about.
        ToolCall = "tool_call",
    }
}

vocabulary! {
    /// Where a question is in its life (docs/design.md glossary, "state").
    State ("state") {
        /// Waiting for an answer.
        Pending = "pending",
        /// Answered with accept; the response carries the result.
        Accepted = "accepted",
        /// Answered with decline.
        Declined = "declined",
        /// Answered with cancel.
        Cancelled = "cancelled",
        /// Nobody answered before the deadline; the server got `-32603`.
        Expired = "expired",
        /// The server cancelled the request; no response is sent.
        Withdrawn = "withdrawn",
        /// A URL question the server reported complete.
        Completed = "completed",
    }
}

impl State {
    /// Whether a URL question in this state may have its link opened (again) through
    /// `/questions/{id}/open`: while pending (the click is the consent) and after it was
    /// accepted or completed. The page shows the "Open" button by the same rule.
    pub fn url_may_open(self) -> bool {
        matches!(self, State::Pending | State::Accepted | State::Completed)
    }
}

vocabulary! {
    /// Where a pending sampling question run on a configured model is in its two-step review.
    Phase ("phase") {
        /// Waiting for the person (or a rule) to approve, edit or reject the request.
        RequestReview = "request_review",
        /// A model call is under way.
        Running = "running",
        /// The model answered; waiting for the response to be sent, regenerated or rejected.
        ResponseReview = "response_review",
        /// As response review, for an answer holding `tool_use`.
        ToolUseReview = "tool_use_review",
    }
}

impl Phase {
    /// A response is under review (plain or with `tool_use`).
    pub fn reviews_response(self) -> bool {
        matches!(self, Phase::ResponseReview | Phase::ToolUseReview)
    }
}

vocabulary! {
    /// The state of one model run.
    RunState ("run state") {
        /// The model call is under way.
        Running = "running",
        /// The model answered with a valid `CreateMessageResult`.
        Done = "done",
        /// The call failed, timed out or gave an invalid result.
        Failed = "failed",
    }
}

vocabulary! {
    /// Who may answer a question.
    Audience ("audience") {
        /// Only a person, in the browser.
        Human = "human",
        /// A script over the API/CLI, or a person.
        Agent = "agent",
    }
}

vocabulary! {
    /// The person's or agent's choice (the spec's `ElicitResult.action`; for sampling, decline
    /// and cancel both become error `-1`).
    Action ("action") {
        /// Send the content/result.
        Accept = "accept",
        /// Explicitly refuse.
        Decline = "decline",
        /// Dismiss without a choice.
        Cancel = "cancel",
    }
}

vocabulary! {
    /// What an auto-approve rule covers.
    RuleScope ("rule scope") {
        /// The request step only: the response still waits for the person.
        Request = "request",
        /// Both the request and the response step.
        Both = "both",
    }
}

vocabulary! {
    /// Which review an approval decides.
    Step ("approval step") {
        /// The request review (run the model or not).
        Request = "request",
        /// The response review (deliver the model's answer or not).
        Response = "response",
    }
}

vocabulary! {
    /// The decisions of the two reviews.
    DecisionKind ("decision") {
        /// Request review: run the model.
        Approve = "approve",
        /// Either review: the server gets `-1`, no model text.
        Reject = "reject",
        /// Response review: run the model again (optionally another one).
        Regenerate = "regenerate",
        /// Response review: deliver the response.
        Send = "send",
    }
}

vocabulary! {
    /// `CreateMessageRequest.includeContext`: which MCP context the server asks to have added
    /// to the prompt (none is ever added; see docs/protocol.md, SA6/SA7).
    IncludeContext ("includeContext") {
        /// No context (the default when absent).
        None = "none",
        /// Context from the asking server.
        ThisServer = "thisServer",
        /// Context from every connected server.
        AllServers = "allServers",
    }
}

vocabulary! {
    /// `CreateMessageResult.stopReason`: why the model (or the person in its place) stopped.
    /// The spec leaves the field open; these are the values it names.
    StopReason ("stopReason") {
        /// The turn ended naturally.
        EndTurn = "endTurn",
        /// A stop sequence was produced.
        StopSequence = "stopSequence",
        /// `maxTokens` was reached.
        MaxTokens = "maxTokens",
        /// The model asked for tool calls (only with tools offered).
        ToolUse = "toolUse",
    }
}

impl StopReason {
    /// The reasons the person's answer form offers (a tool call is not written by hand).
    pub const FORM: &'static [StopReason] = &[
        StopReason::EndTurn,
        StopReason::StopSequence,
        StopReason::MaxTokens,
    ];
}

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

/// A question's id: a UUIDv7 in its hyphenated text form (time-ordered, so ids sort by age).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct QuestionId(String);

impl QuestionId {
    /// A fresh, time-ordered id.
    pub fn new() -> QuestionId {
        QuestionId(uuid::Uuid::now_v7().to_string())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for QuestionId {
    fn default() -> Self {
        QuestionId::new()
    }
}

impl FromStr for QuestionId {
    type Err = UnknownName;

    /// Any UUID in hyphenated form (ids are compared as text, so the spelling is kept).
    fn from_str(s: &str) -> Result<QuestionId, UnknownName> {
        match uuid::Uuid::try_parse(s) {
            Ok(u) if u.hyphenated().to_string() == s => Ok(QuestionId(s.to_owned())),
            _ => Err(UnknownName::new("question id", s)),
        }
    }
}

impl fmt::Display for QuestionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Read-only text view, for the store's queries, URLs and the CLI (an id is compared as text).
impl std::ops::Deref for QuestionId {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<QuestionId> for String {
    fn from(id: QuestionId) -> String {
        id.0
    }
}

/// The id of one decision: `<question>:request:<revision>` (`<question>:request:<revision>:<run>`
/// once a run of the question failed: the approval retries after that run) or
/// `<question>:response:<run>`. Replaying a decision under the same id changes nothing; an id
/// for a revision or run that is no longer current is outdated.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ApprovalId {
    /// The request review of one revision.
    Request {
        /// The question.
        question: String,
        /// The revision approved or rejected.
        revision: i32,
        /// The newest run of the question when it came back to request review (it failed),
        /// so that a decision after a failed run is a new decision, not a replay of the one
        /// that started that run.
        after_run: Option<String>,
    },
    /// The response review of one run.
    Response {
        /// The question.
        question: String,
        /// The run whose answer is sent, regenerated or rejected.
        run: String,
    },
}

impl ApprovalId {
    /// The question the decision is about.
    pub fn question(&self) -> &str {
        match self {
            ApprovalId::Request { question, .. } | ApprovalId::Response { question, .. } => {
                question
            }
        }
    }

    /// Which review it decides.
    pub fn step(&self) -> Step {
        match self {
            ApprovalId::Request { .. } => Step::Request,
            ApprovalId::Response { .. } => Step::Response,
        }
    }

    /// The run of a response approval.
    pub fn run(&self) -> Option<&str> {
        match self {
            ApprovalId::Request { .. } => None,
            ApprovalId::Response { run, .. } => Some(run),
        }
    }
}

impl FromStr for ApprovalId {
    type Err = UnknownName;

    fn from_str(s: &str) -> Result<ApprovalId, UnknownName> {
        let bad = || UnknownName::new("approval id", s);
        let mut parts = s.splitn(3, ':');
        let (Some(question), Some(step), Some(rest)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        if question.is_empty() || rest.is_empty() {
            return Err(bad());
        }
        let question = question.to_owned();
        match step.parse::<Step>().map_err(|_| bad())? {
            Step::Request => {
                let (revision, after_run) = match rest.split_once(':') {
                    Some((r, run)) if !run.is_empty() => (r, Some(run.to_owned())),
                    Some(_) => return Err(bad()),
                    None => (rest, None),
                };
                Ok(ApprovalId::Request {
                    question,
                    revision: revision.parse().map_err(|_| bad())?,
                    after_run,
                })
            }
            Step::Response => Ok(ApprovalId::Response {
                question,
                run: rest.to_owned(),
            }),
        }
    }
}

impl fmt::Display for ApprovalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApprovalId::Request {
                question,
                revision,
                after_run: None,
            } => write!(f, "{question}:request:{revision}"),
            ApprovalId::Request {
                question,
                revision,
                after_run: Some(run),
            } => write!(f, "{question}:request:{revision}:{run}"),
            ApprovalId::Response { question, run } => write!(f, "{question}:response:{run}"),
        }
    }
}

impl Serialize for ApprovalId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ApprovalId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests;
