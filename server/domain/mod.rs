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

use diesel::deserialize::FromSqlRow;
use diesel::expression::AsExpression;
use diesel::sql_types::Text;
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

/// diesel `Text` conversions on SQLite and PostgreSQL for a type written by its `as_str` and
/// read back by its `FromStr` (a stored text that does not parse is an unreadable row, never a
/// default). The combined backend's conversions are `db::conn`'s.
macro_rules! text_sql {
    ($name:ty) => {
        impl diesel::serialize::ToSql<diesel::sql_types::Text, diesel::sqlite::Sqlite> for $name {
            fn to_sql<'b>(
                &'b self,
                out: &mut diesel::serialize::Output<'b, '_, diesel::sqlite::Sqlite>,
            ) -> diesel::serialize::Result {
                out.set_value(self.as_str());
                Ok(diesel::serialize::IsNull::No)
            }
        }

        impl diesel::deserialize::FromSql<diesel::sql_types::Text, diesel::sqlite::Sqlite>
            for $name
        {
            fn from_sql(
                bytes: <diesel::sqlite::Sqlite as diesel::backend::Backend>::RawValue<'_>,
            ) -> diesel::deserialize::Result<Self> {
                let text = <String as diesel::deserialize::FromSql<
                    diesel::sql_types::Text,
                    diesel::sqlite::Sqlite,
                >>::from_sql(bytes)?;
                Ok(text.parse::<$name>()?)
            }
        }

        impl diesel::serialize::ToSql<diesel::sql_types::Text, diesel::pg::Pg> for $name {
            fn to_sql<'b>(
                &'b self,
                out: &mut diesel::serialize::Output<'b, '_, diesel::pg::Pg>,
            ) -> diesel::serialize::Result {
                <str as diesel::serialize::ToSql<diesel::sql_types::Text, diesel::pg::Pg>>::to_sql(
                    self.as_str(),
                    &mut out.reborrow(),
                )
            }
        }

        impl diesel::deserialize::FromSql<diesel::sql_types::Text, diesel::pg::Pg> for $name {
            fn from_sql(
                bytes: <diesel::pg::Pg as diesel::backend::Backend>::RawValue<'_>,
            ) -> diesel::deserialize::Result<Self> {
                let text = <String as diesel::deserialize::FromSql<
                    diesel::sql_types::Text,
                    diesel::pg::Pg,
                >>::from_sql(bytes)?;
                Ok(text.parse::<$name>()?)
            }
        }
    };
}

pub(crate) use text_sql;

/// Declares a closed vocabulary: the enum, its one spelling of each word (`as_str`, `ALL`),
/// `FromStr`, `Display`, serde and diesel `Text` conversions (`text_sql!`).
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

        text_sql!($name);
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

mod audit;
mod ids;

pub use audit::{Actor, AuditAction, Decider, Via};
pub use ids::{ApprovalId, GrantId, QuestionId, RuleId};

#[cfg(test)]
mod tests;
