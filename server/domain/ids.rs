//! The ids of questions ([`QuestionId`]), of sampling approval decisions ([`ApprovalId`]), of
//! auto-approve rules ([`RuleId`]) and of tool grants ([`GrantId`]).

use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;

use diesel::deserialize::FromSqlRow;
use diesel::expression::AsExpression;
use diesel::sql_types::Text;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Step, UnknownName};

/// Declares the id of a stored row: text, made as a UUIDv7 (time-ordered, so ids sort by age),
/// stored as that text (`text_sql!`), and read from JSON and paths as any text (an id that
/// names nothing is simply not found). What the store reads back is the type's `FromStr`.
macro_rules! row_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(
            Debug,
            Clone,
            PartialEq,
            Eq,
            Hash,
            PartialOrd,
            Ord,
            Serialize,
            Deserialize,
            AsExpression,
            FromSqlRow,
        )]
        #[serde(transparent)]
        #[diesel(sql_type = Text)]
        pub struct $name(String);

        impl $name {
            /// A fresh, time-ordered id.
            pub fn new() -> $name {
                $name(uuid::Uuid::now_v7().to_string())
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                $name::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        text_sql!($name);
    };
}

row_id! {
    /// A question's id: a UUIDv7 in its hyphenated text form. A stored id that is not one
    /// makes its row unreadable.
    QuestionId
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

row_id! {
    /// An auto-approve rule's id (opaque: any stored text reads back).
    RuleId
}

row_id! {
    /// A tool grant's id (opaque: any stored text reads back).
    GrantId
}

/// Any text (these ids are opaque).
macro_rules! opaque_from_str {
    ($($name:ident),+) => {$(
        impl FromStr for $name {
            type Err = Infallible;

            fn from_str(s: &str) -> Result<$name, Infallible> {
                Ok($name(s.to_owned()))
            }
        }
    )+};
}

opaque_from_str!(RuleId, GrantId);

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
