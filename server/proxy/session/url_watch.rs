//! The `elicitationId`s whose completion notice the proxy takes for itself, bounded: a server's
//! URL elicitation while its question is asked and, once the person accepted it, until the
//! server reports it complete; a `-32042` round's URLs while the round waits. An id longer than
//! [`MAX_ELICITATION_ID_BYTES`] is never held (the service refuses a question that carries it),
//! and past [`MAX_WATCHED`] ids the oldest is forgotten, so a server that sends elicitation after
//! elicitation, each with a new id and never a completion, holds no more than that.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::Notify;

use crate::protocol::elicitation::MAX_ELICITATION_ID_BYTES;
use crate::protocol::method::Method;

/// The most ids watched at once (each at most [`MAX_ELICITATION_ID_BYTES`], held twice).
pub(in crate::proxy) const MAX_WATCHED: usize = 1_000;

/// One id watched: who waits for its completion, and its place in the order ids were watched.
#[derive(Debug)]
struct Watched {
    waiter: Arc<Notify>,
    place: u64,
}

/// The ids watched, by id and by the order they were watched in (the oldest first).
#[derive(Debug, Default)]
pub(in crate::proxy) struct UrlWatch {
    ids: HashMap<String, Watched>,
    order: BTreeMap<u64, String>,
    next_place: u64,
}

/// A watch about to be made ([`UrlWatch::entry`]).
pub(in crate::proxy) struct UrlEntry<'a> {
    watch: &'a mut UrlWatch,
    id: String,
}

impl UrlEntry<'_> {
    /// Makes the watch ([`UrlWatch::watch`]).
    pub(in crate::proxy) fn or_default(self) -> Arc<Notify> {
        self.watch.watch(self.id)
    }
}

impl UrlWatch {
    /// Watches `id` (again: it becomes the newest) and returns who waits for its completion.
    /// An id over [`MAX_ELICITATION_ID_BYTES`] is not held: its waiter is never notified.
    pub(in crate::proxy) fn watch(&mut self, id: String) -> Arc<Notify> {
        if id.len() > MAX_ELICITATION_ID_BYTES {
            return Arc::default();
        }
        let place = self.next_place;
        self.next_place += 1;
        let waiter = match self.ids.get_mut(&id) {
            Some(watched) => {
                self.order.remove(&watched.place);
                watched.place = place;
                watched.waiter.clone()
            }
            None => {
                let waiter = Arc::<Notify>::default();
                let watched = Watched {
                    waiter: waiter.clone(),
                    place,
                };
                self.ids.insert(id.clone(), watched);
                waiter
            }
        };
        self.order.insert(place, id);
        while self.ids.len() > MAX_WATCHED {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            self.ids.remove(&oldest);
        }
        waiter
    }

    /// [`UrlWatch::watch`] in the map-like spelling `entry(id).or_default()`.
    pub(in crate::proxy) fn entry(&mut self, id: String) -> UrlEntry<'_> {
        UrlEntry { watch: self, id }
    }

    /// Stops watching `id`; returns who waited for it, when it was watched.
    pub(in crate::proxy) fn remove(&mut self, id: &str) -> Option<Arc<Notify>> {
        let watched = self.ids.remove(id)?;
        self.order.remove(&watched.place);
        Some(watched.waiter)
    }

    /// How many ids are watched, and the bytes they hold.
    #[cfg(test)]
    fn held(&self) -> (usize, usize) {
        assert_eq!(self.ids.len(), self.order.len(), "one place per id");
        let bytes = self.ids.keys().chain(self.order.values()).map(String::len);
        (self.ids.len(), bytes.sum())
    }
}

/// The `elicitationId` of a server's `request` (one of the methods the person is asked about)
/// whose question is over with `response`, when nothing needs it any more: no answer (withdrawn
/// or cancelled), or any answer but the acceptance of a URL elicitation, whose completion the
/// server has yet to report.
pub(in crate::proxy) fn forgotten(request: &Value, response: Option<&Value>) -> Option<String> {
    let method = request.get("method").and_then(Value::as_str)?;
    if !Method::named(method).is_asked() {
        return None;
    }
    let params = request.get("params")?;
    let id = params.get("elicitationId")?.as_str()?;
    let url = params.get("mode").and_then(Value::as_str) == Some("url");
    let accepted = response
        .and_then(|r| r.pointer("/result/action"))
        .and_then(Value::as_str)
        == Some("accept");
    (!(url && accepted)).then(|| id.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A server that sends elicitation after elicitation, each with a new id and never a
    /// completion, holds at most the bound, and an id over the length limit holds nothing.
    #[test]
    fn the_ids_watched_are_bounded_in_number_and_bytes() {
        let mut w = UrlWatch::default();
        for i in 0..5 * MAX_WATCHED {
            w.watch(format!("{i:0>1000}"));
        }
        let (ids, bytes) = w.held();
        assert_eq!(ids, MAX_WATCHED);
        assert!(bytes <= 2 * MAX_WATCHED * 1000, "{bytes} bytes");
        assert!(
            w.remove(&format!("{:0>1000}", 5 * MAX_WATCHED - 1))
                .is_some()
        );
        assert!(
            w.remove(&format!("{:0>1000}", 0)).is_none(),
            "the oldest went"
        );

        let mut w = UrlWatch::default();
        w.entry("x".repeat(MAX_ELICITATION_ID_BYTES + 1))
            .or_default();
        assert_eq!(w.held(), (0, 0));
        w.entry("x".repeat(MAX_ELICITATION_ID_BYTES)).or_default();
        assert_eq!(w.held().0, 1);
    }

    /// Watching an id again shares one waiter and moves it to the newest place; removing it
    /// leaves nothing behind.
    #[test]
    fn an_id_watched_twice_is_held_once_and_removed_whole() {
        let mut w = UrlWatch::default();
        let first = w.watch("e".into());
        let again = w.watch("e".into());
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(w.held(), (1, 2));
        for i in 0..MAX_WATCHED - 1 {
            w.watch(i.to_string());
        }
        assert!(w.remove("e").is_some(), "still watched: it was the newest");
        assert_eq!(w.held().0, MAX_WATCHED - 1);
    }

    #[test]
    fn an_id_is_kept_only_for_an_accepted_url_elicitation() {
        let url = json!({"method": "elicitation/create", "params": {"mode": "url", "elicitationId": "u"}});
        let form = json!({"method": "elicitation/create", "params": {"mode": "form", "elicitationId": "f"}});
        let sampling =
            json!({"method": "sampling/createMessage", "params": {"elicitationId": "s"}});
        let call = json!({"method": "tools/call", "params": {"elicitationId": "c"}});
        let accept = json!({"result": {"action": "accept"}});
        let decline = json!({"result": {"action": "decline"}});
        let error = json!({"error": {"code": -32602, "message": "m"}});
        assert_eq!(forgotten(&url, Some(&accept)), None);
        assert_eq!(forgotten(&url, Some(&decline)).as_deref(), Some("u"));
        assert_eq!(forgotten(&url, Some(&error)).as_deref(), Some("u"));
        assert_eq!(forgotten(&url, None).as_deref(), Some("u"));
        assert_eq!(forgotten(&form, Some(&accept)).as_deref(), Some("f"));
        assert_eq!(forgotten(&sampling, Some(&accept)).as_deref(), Some("s"));
        assert_eq!(
            forgotten(&call, None),
            None,
            "a host's call watches nothing"
        );
    }
}
