//! Per-question wake-ups for long-polls: a waiter is woken when its own question changes,
//! never by another question's change, so a thousand waiting proxies cost nothing while
//! other questions are opened and decided.
//!
//! The map holds one `watch` sender per question somebody waits on; the last waiter of a
//! question to leave removes its entry, so the map is as large as the set of questions being
//! waited on.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::watch;

use crate::domain::QuestionId;

/// Question id → the signal its waiters watch.
#[derive(Debug, Clone, Default)]
pub struct Waiters {
    map: Arc<Mutex<HashMap<QuestionId, watch::Sender<()>>>>,
}

impl Waiters {
    /// Starts watching question `id`: changes published after this call wake the waiter.
    pub fn watch(&self, id: &QuestionId) -> Waiter {
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        let receiver = match map.get(id) {
            Some(sender) => sender.subscribe(),
            None => {
                let (sender, receiver) = watch::channel(());
                map.insert(id.clone(), sender);
                receiver
            }
        };
        Waiter {
            id: id.clone(),
            receiver: Some(receiver),
            waiters: self.clone(),
        }
    }

    /// Wakes everybody waiting on question `id` (nobody waiting is fine).
    pub fn wake(&self, id: &QuestionId) {
        let map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(sender) = map.get(id) {
            sender.send_replace(());
        }
    }

    /// Wakes everybody waiting on any question (changes may have been missed: each re-reads
    /// its question).
    pub fn wake_all(&self) {
        let map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        for sender in map.values() {
            sender.send_replace(());
        }
    }

    /// How many questions are being waited on (for tests).
    pub fn len(&self) -> usize {
        self.map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether nobody waits on any question.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One long-poll's watch on one question; leaving drops the question's entry when it was
/// the last waiter.
#[derive(Debug)]
pub struct Waiter {
    id: QuestionId,
    receiver: Option<watch::Receiver<()>>,
    waiters: Waiters,
}

impl Waiter {
    /// [`Waiter::changed`] of `waiter`, or never without one.
    pub async fn changed_opt(waiter: Option<&mut Waiter>) {
        match waiter {
            Some(waiter) => waiter.changed().await,
            None => std::future::pending::<()>().await,
        }
    }

    /// Resolves at the next change of the question after the last call (or after
    /// [`Waiters::watch`]).
    pub async fn changed(&mut self) {
        match self.receiver.as_mut() {
            // The sender lives in the map as long as this receiver does.
            Some(receiver) => {
                if receiver.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
            None => std::future::pending::<()>().await,
        }
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        // Drop the receiver first, then count under the lock: a waiter arriving meanwhile
        // subscribes under the same lock, so an entry is removed only when nobody holds it.
        drop(self.receiver.take());
        let mut map = self
            .waiters
            .map
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if map
            .get(&self.id)
            .is_some_and(|sender| sender.receiver_count() == 0)
        {
            map.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A waiter wakes on its own question only, and the entry goes with the last waiter.
    #[tokio::test]
    async fn wakes_only_the_waiters_of_the_changed_question() {
        let waiters = Waiters::default();
        let (qa, qb) = (QuestionId::new(), QuestionId::new());
        let mut a = waiters.watch(&qa);
        let mut b1 = waiters.watch(&qb);
        let b2 = waiters.watch(&qb);
        assert_eq!(waiters.len(), 2);

        waiters.wake(&qb);
        tokio::time::timeout(Duration::from_secs(5), b1.changed())
            .await
            .unwrap();
        let a_woke = tokio::time::timeout(Duration::ZERO, a.changed()).await;
        assert!(a_woke.is_err(), "a was not changed");

        drop(b1);
        assert_eq!(waiters.len(), 2, "b still has a waiter");
        drop(b2);
        assert_eq!(waiters.len(), 1);
        drop(a);
        assert!(waiters.is_empty());
        waiters.wake(&qa);
        assert!(waiters.is_empty(), "waking nobody adds nothing");
    }
}
