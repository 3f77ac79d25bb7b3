//! The instances sharing one database: each announces its changes (the same summary-only
//! [`Event`] its own bus carries) and follows the others', so every instance's event stream,
//! live pages, long-polls and notifications see every instance's changes. On the embedded
//! store there is nobody to tell and nothing to follow.

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::UnboundedReceiver;

use super::Broker;
use super::events::Event;
use crate::db::listen::Heard;
use crate::notify::Notice;

/// One change as it travels between instances.
#[derive(Debug, Serialize, Deserialize)]
struct Announcement {
    /// The announcing instance, so it skips its own.
    from: String,
    /// Whether the other instances tell their person (the question opened and its server is
    /// not muted).
    notify: bool,
    event: Event,
}

impl Broker {
    /// Announces `event` to the instances sharing the database.
    pub(super) fn announce(&self, event: &Event, notify: bool) {
        if self.db.shared_host_port().is_none() {
            return;
        }
        let announcement = Announcement {
            from: self.instance.to_string(),
            notify,
            event: event.clone(),
        };
        match serde_json::to_string(&announcement) {
            Ok(payload) => self.db.announce(payload),
            Err(e) => tracing::warn!(error = %e, "cannot announce a change to other instances"),
        }
    }

    /// Follows the other instances' changes until `heard` ends: each is published on this
    /// instance's bus, wakes the long-polls waiting on its question (they re-read it from the
    /// store) and, for a question that opened, tells the person. After a lost connection every
    /// long-poll re-reads, as changes may have been missed.
    pub async fn follow_other_instances(self, mut heard: UnboundedReceiver<Heard>) {
        while let Some(heard) = heard.recv().await {
            match heard {
                Heard::Payload(payload) => self.follow(&payload),
                Heard::Reconnected => self.waiters.wake_all(),
            }
        }
    }

    fn follow(&self, payload: &str) {
        let announcement = match serde_json::from_str::<Announcement>(payload) {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!(error = %e, "an announcement from another instance is unreadable");
                return;
            }
        };
        if *announcement.from == *self.instance {
            return;
        }
        let event = announcement.event;
        self.waiters.wake(&event.id);
        if announcement.notify {
            self.notifications.opened(Notice {
                id: event.id.clone(),
                server: event.server.clone(),
                kind: event.kind,
                tool: event.tool.clone(),
            });
        }
        self.events.publish(event);
    }
}
