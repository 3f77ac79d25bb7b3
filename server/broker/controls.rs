//! The person's per-server controls: a pause (new requests from the server are refused for an
//! hour), a block (refused until lifted) and muted notices (its questions open as usual, but no
//! channel or browser notice is sent). Questions already waiting are not touched: the queue
//! offers to decline them.

use std::str::FromStr;

use chrono::{DateTime, Utc};

use super::{Broker, BrokerError};
use crate::db::approvals::{NewAudit, append_audit};
use crate::db::controls::{self, ControlRow};
use crate::domain::{AuditAction, UnknownName, Via};

/// How long a pause lasts.
pub const PAUSE: chrono::Duration = chrono::Duration::hours(1);

/// At most this many servers may have a pause or block in force that the API token over TCP
/// set: a script on another device cannot bury the person's controls (or the queue) under
/// controls of its own. The person's own, and those set over the owner-only socket, are not
/// counted.
pub const MAX_CONTROLS_OVER_TCP: i64 = 100;

/// One server's controls as they stand now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerControl {
    /// The server's name.
    pub server: String,
    /// New requests are refused until then (only while it lies ahead).
    pub paused_until: Option<DateTime<Utc>>,
    /// New requests are refused until the person lifts the block.
    pub blocked: bool,
    /// No notice is sent for its questions.
    pub muted: bool,
    /// The door that last put something in force; `None` when nothing is, or for controls
    /// from before it was recorded.
    pub set_via: Option<Via>,
}

impl ServerControl {
    /// No control set.
    pub fn none(server: &str) -> ServerControl {
        ServerControl {
            server: server.to_owned(),
            paused_until: None,
            blocked: false,
            muted: false,
            set_via: None,
        }
    }

    fn from_row(row: ControlRow, now: DateTime<Utc>) -> ServerControl {
        ServerControl {
            paused_until: row
                .paused_until
                .and_then(DateTime::from_timestamp_millis)
                .filter(|t| *t > now),
            blocked: row.blocked != 0,
            muted: row.muted != 0,
            set_via: row.set_via,
            server: row.server,
        }
    }

    /// Whether new requests from the server are refused.
    pub fn refuses(&self) -> bool {
        self.blocked || self.paused_until.is_some()
    }

    /// Whether any control is set.
    pub fn any(&self) -> bool {
        self.refuses() || self.muted
    }

    /// Whether the API token over TCP (a script, perhaps on another device) set what is in
    /// force, which the queue says beside it.
    pub fn set_over_tcp(&self) -> bool {
        self.set_via == Some(Via::Token) && self.any()
    }
}

/// A change the person makes to a server's controls (the queue's buttons, by these names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlChange {
    /// Refuse new requests for [`PAUSE`].
    Pause,
    /// End a pause now.
    Resume,
    /// Refuse new requests until unblocked.
    Block,
    /// Lift a block.
    Unblock,
    /// Send no notice for its questions.
    Mute,
    /// Send notices again.
    Unmute,
}

impl ControlChange {
    /// The audit action that records it.
    pub fn audit_action(self) -> AuditAction {
        match self {
            ControlChange::Pause => AuditAction::ServerPaused,
            ControlChange::Resume => AuditAction::ServerResumed,
            ControlChange::Block => AuditAction::ServerBlocked,
            ControlChange::Unblock => AuditAction::ServerUnblocked,
            ControlChange::Mute => AuditAction::ServerMuted,
            ControlChange::Unmute => AuditAction::ServerUnmuted,
        }
    }

    /// Whether the change only refuses more or tells the person more (pause, block,
    /// unmute): a script holding the API token may make those. Lifting a pause or block, or
    /// muting the notices, is the person's own choice in the browser.
    pub fn tightens(self) -> bool {
        matches!(
            self,
            ControlChange::Pause | ControlChange::Block | ControlChange::Unmute
        )
    }
}

impl FromStr for ControlChange {
    type Err = UnknownName;

    fn from_str(s: &str) -> Result<ControlChange, UnknownName> {
        Ok(match s {
            "pause" => ControlChange::Pause,
            "resume" => ControlChange::Resume,
            "block" => ControlChange::Block,
            "unblock" => ControlChange::Unblock,
            "mute" => ControlChange::Mute,
            "unmute" => ControlChange::Unmute,
            _ => {
                return Err(UnknownName {
                    what: "server control",
                    value: s.to_owned(),
                });
            }
        })
    }
}

impl Broker {
    /// The controls of `server` now.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn control(&self, server: &str) -> Result<ServerControl, BrokerError> {
        let name = server.to_owned();
        let row = self.db.run(move |c| Ok(controls::find(c, &name)?)).await?;
        let now = self.now();
        Ok(row.map_or_else(
            || ServerControl::none(server),
            |r| ServerControl::from_row(r, now),
        ))
    }

    /// Every server with a control in force, by name.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn controls(&self) -> Result<Vec<ServerControl>, BrokerError> {
        let now = self.now();
        let ms = now.timestamp_millis();
        let rows = self.db.run(move |c| Ok(controls::in_force(c, ms)?)).await?;
        Ok(rows
            .into_iter()
            .map(|r| ServerControl::from_row(r, now))
            .filter(ServerControl::any)
            .collect())
    }

    /// Applies `change` to `server`'s controls and audits it (who, through which door, when,
    /// what); returns them as they now stand. A change that puts something in force records
    /// `by` as the door that set it.
    ///
    /// # Errors
    /// [`BrokerError::TooManyControls`] when `by` is the API token over TCP and it already has
    /// [`MAX_CONTROLS_OVER_TCP`] servers under controls in force (nothing changes);
    /// [`BrokerError::Store`].
    pub async fn set_control(
        &self,
        server: &str,
        change: ControlChange,
        by: Via,
    ) -> Result<ServerControl, BrokerError> {
        let mut c = self.control(server).await?;
        let now = self.now();
        match change {
            ControlChange::Pause => c.paused_until = Some(now + PAUSE),
            ControlChange::Resume => c.paused_until = None,
            ControlChange::Block => c.blocked = true,
            ControlChange::Unblock => c.blocked = false,
            ControlChange::Mute => c.muted = true,
            ControlChange::Unmute => c.muted = false,
        }
        let ms = now.timestamp_millis();
        let mut row = ControlRow {
            server: c.server.clone(),
            paused_until: c.paused_until.map(|t| t.timestamp_millis()),
            blocked: i32::from(c.blocked),
            muted: i32::from(c.muted),
            updated_at: ms,
            set_via: None,
        };
        let entry = NewAudit::server_control(ms, by.actor(), change.audit_action(), &c.server)
            .through(Some(by));
        let done: Option<Option<Via>> = self
            .db
            .write(move |conn| {
                Ok(conn.immediate_transaction(|conn| {
                    // Read in the write, so parallel changes through one door count exactly.
                    let before = controls::find(conn, &row.server)?;
                    let counted = |r: &ControlRow| r.set_via == Some(Via::Token) && r.in_force(ms);
                    row.set_via = set_via_after(change, by, before.as_ref(), ms);
                    if counted(&row)
                        && !before.as_ref().is_some_and(counted)
                        && controls::in_force_through(conn, Via::Token, ms)?
                            >= MAX_CONTROLS_OVER_TCP
                    {
                        return Ok(None);
                    }
                    controls::put(conn, &row, ms)?;
                    append_audit(conn, &entry)?;
                    Ok::<_, diesel::result::Error>(Some(row.set_via))
                })?)
            })
            .await?;
        let Some(set_via) = done else {
            return Err(BrokerError::TooManyControls(MAX_CONTROLS_OVER_TCP));
        };
        c.set_via = set_via.filter(|_| c.any());
        tracing::info!(server = %c.server, ?change, via = %by, "server control changed");
        Ok(c)
    }
}

/// The door a server's controls record after `change` through `by` (`before`: the row as it
/// was, at `now` Unix ms): the door that set what refuses the server. The person's pause or
/// block makes the row theirs; a script's pause or block of a server something else already
/// refuses leaves that door's mark (its own adds nothing while the other holds); a mute only
/// marks a row nothing refuses; lifting leaves the mark as it was.
fn set_via_after(
    change: ControlChange,
    by: Via,
    before: Option<&ControlRow>,
    now: i64,
) -> Option<Via> {
    let refusing = before.filter(|r| r.blocked != 0 || r.paused_until.is_some_and(|t| t > now));
    match change {
        ControlChange::Pause | ControlChange::Block if by == Via::Browser => Some(by),
        ControlChange::Pause | ControlChange::Block | ControlChange::Mute => match refusing {
            Some(r) => r.set_via,
            None => Some(by),
        },
        ControlChange::Resume | ControlChange::Unblock | ControlChange::Unmute => {
            before.and_then(|r| r.set_via)
        }
    }
}
