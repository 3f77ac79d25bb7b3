//! Protocol revisions ("eras") and what each allows. A request is judged by the revision the
//! server negotiated (`InitializeResult.protocolVersion`); 2024-11-05 and 2025-03-26 are judged
//! as 2025-06-18 (docs/design.md §Glossary, "era").

use diesel::deserialize::FromSqlRow;
use diesel::expression::AsExpression;
use serde::{Deserialize, Serialize};

/// The revisions mcp-consent judges requests by. Stored as [`Era::as_str`] (the `era` column;
/// `db::columns` has its diesel conversions), read back through [`Era::for_revision`].
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    AsExpression,
    FromSqlRow,
)]
#[diesel(sql_type = diesel::sql_types::Text)]
pub enum Era {
    /// 2025-06-18 (and the older 2024-11-05 and 2025-03-26): single content blocks, form-only
    /// elicitation, plain capability objects.
    #[serde(rename = "2025-06-18")]
    V2025_06_18,
    /// 2025-11-25: content arrays, `tool_use`/`tool_result`, `sampling.tools`, URL elicitation,
    /// `default` on every primitive, titled and multi-select enums.
    #[serde(rename = "2025-11-25")]
    V2025_11_25,
    /// 2026-07-28: requests arrive through `InputRequiredResult` (MRTR).
    #[serde(rename = "2026-07-28")]
    V2026_07_28,
}

/// A `protocolVersion` string that is not a `YYYY-MM-DD` revision.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported protocol revision {0:?}")]
pub struct UnknownRevision(pub String);

impl Era {
    /// The era a negotiated `protocolVersion` is judged by.
    ///
    /// Known revisions map to themselves (2024-11-05 and 2025-03-26 to 2025-06-18). A
    /// well-formed date between known revisions (a draft) is judged by the newest known
    /// revision not after it, since revisions only add to what came before within an era.
    ///
    /// # Errors
    /// [`UnknownRevision`] when the string is not a `YYYY-MM-DD` date.
    pub fn for_revision(revision: &str) -> Result<Self, UnknownRevision> {
        let well_formed = revision.len() == 10
            && revision.bytes().enumerate().all(|(i, b)| match i {
                4 | 7 => b == b'-',
                _ => b.is_ascii_digit(),
            });
        if !well_formed {
            return Err(UnknownRevision(revision.to_owned()));
        }
        // Dates in this format order lexicographically.
        Ok(if revision >= "2026-07-28" {
            Era::V2026_07_28
        } else if revision >= "2025-11-25" {
            Era::V2025_11_25
        } else {
            Era::V2025_06_18
        })
    }

    /// The canonical revision string of this era.
    pub fn as_str(self) -> &'static str {
        match self {
            Era::V2025_06_18 => "2025-06-18",
            Era::V2025_11_25 => "2025-11-25",
            Era::V2026_07_28 => "2026-07-28",
        }
    }

    /// Sampling content may be an array and may hold `tool_use`/`tool_result`
    /// (2025-11-25 `schema.ts` `SamplingMessageContentBlock`).
    pub fn has_sampling_tools(self) -> bool {
        self >= Era::V2025_11_25
    }

    /// Elicitation has modes (`form`, `url`) and sub-capabilities (2025-11-25
    /// `client/elicitation.mdx` §Capabilities).
    pub fn has_elicitation_modes(self) -> bool {
        self >= Era::V2025_11_25
    }

    /// Titled/multi-select enums and `default` on every primitive (2025-11-25 changelog,
    /// SEP-1330 and SEP-1034).
    pub fn has_rich_enums(self) -> bool {
        self >= Era::V2025_11_25
    }
}

impl std::str::FromStr for Era {
    type Err = UnknownRevision;

    /// [`Era::for_revision`].
    fn from_str(revision: &str) -> Result<Era, UnknownRevision> {
        Era::for_revision(revision)
    }
}

impl std::fmt::Display for Era {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_revisions_are_judged_as_2025_06_18() {
        for r in ["2024-11-05", "2025-03-26", "2025-06-18"] {
            assert_eq!(Era::for_revision(r), Ok(Era::V2025_06_18), "{r}");
        }
        assert_eq!(Era::for_revision("2025-11-25"), Ok(Era::V2025_11_25));
        assert_eq!(Era::for_revision("2026-07-28"), Ok(Era::V2026_07_28));
        assert_eq!(Era::for_revision("2025-12-01"), Ok(Era::V2025_11_25));
    }

    #[test]
    fn malformed_revisions_are_refused() {
        for r in ["", "latest", "2025-6-18", "2025-06-18x"] {
            assert!(Era::for_revision(r).is_err(), "{r}");
        }
    }
}
