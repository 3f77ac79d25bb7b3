//! The service's clock: where "now" comes from for deadlines, decision times, sessions, login
//! links, rules and pruning.
//!
//! The service uses [`SystemClock`]; a test holds a [`ManualClock`] and moves it, so an expiry is
//! decided without waiting out a real timeout. One clock is made in `app` and handed to the
//! broker (and through it to the review and the pages), to `auth` and to the retention job.

use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Duration, Utc};

/// A source of the current time (UTC).
pub trait Clock: Send + Sync + Debug {
    /// The current time.
    fn now(&self) -> DateTime<Utc>;

    /// The current time in milliseconds since the Unix epoch, as the store keeps times.
    fn now_ms(&self) -> i64 {
        self.now().timestamp_millis()
    }
}

/// The system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that stands still until it is set or advanced (for tests). Clones share the time.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<Mutex<DateTime<Utc>>>);

impl ManualClock {
    /// A clock standing at `at`.
    pub fn at(at: DateTime<Utc>) -> ManualClock {
        ManualClock(Arc::new(Mutex::new(at)))
    }

    /// Sets the time to `at`.
    pub fn set(&self, at: DateTime<Utc>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = at;
    }

    /// Moves the time forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut now = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *now = now
            .checked_add_signed(by)
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
