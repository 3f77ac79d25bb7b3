//! Passphrase login under attack. Each argon2id verification takes 19 MiB, so at most
//! [`MAX_VERIFYING`] run at once (a fair semaphore); attempts beyond a global budget
//! ([`GLOBAL_BURST`], refilled at [`GLOBAL_PER_SEC`] a second) or beyond [`MAX_PER_CLIENT`] in
//! flight from one client are refused at once with a retry delay, before any hashing; and a
//! client's failures are answered after a growing delay (1 s doubling to 30 s) during which it
//! holds no verification slot. A right passphrase is never delayed once verified, and the
//! one-time link from `mcp-consent login` (over the owner-only socket) is not throttled.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

/// argon2id verifications running at once (each holds 19 MiB while it runs).
pub const MAX_VERIFYING: usize = 2;
/// Attempts one client may have waiting or verifying at once.
pub const MAX_PER_CLIENT: usize = 4;
/// Attempts the global budget holds when full.
pub const GLOBAL_BURST: f64 = 16.0;
/// Attempts the global budget regains each second.
pub const GLOBAL_PER_SEC: f64 = 4.0;
/// Longest delay before a failure is answered.
pub const MAX_FAILURE_DELAY: Duration = Duration::from_secs(30);
/// Clients remembered for their failures (the oldest are forgotten beyond this).
const MAX_CLIENTS: usize = 1024;

/// The outcome of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// The passphrase is right.
    Accepted,
    /// The passphrase is wrong (answered after the client's failure delay).
    Wrong,
    /// Not checked: too many attempts; retry after this long.
    TooMany(Duration),
}

#[derive(Debug)]
struct Budget {
    tokens: f64,
    at: Instant,
}

#[derive(Debug, Default)]
struct Client {
    in_flight: usize,
    failures: u32,
    last: Option<Instant>,
}

#[derive(Debug)]
struct Inner {
    budget: Budget,
    clients: HashMap<Option<IpAddr>, Client>,
}

/// The login guard; cheap to clone, shared by every worker.
#[derive(Debug, Clone)]
pub struct LoginGuard {
    verifying: Arc<Semaphore>,
    inner: Arc<Mutex<Inner>>,
}

impl Default for LoginGuard {
    fn default() -> Self {
        LoginGuard {
            verifying: Arc::new(Semaphore::new(MAX_VERIFYING)),
            inner: Arc::new(Mutex::new(Inner {
                budget: Budget {
                    tokens: GLOBAL_BURST,
                    at: Instant::now(),
                },
                clients: HashMap::new(),
            })),
        }
    }
}

/// Delay before answering a client's `failures`-th failure in a row.
fn failure_delay(failures: u32) -> Duration {
    let secs = 1u64 << failures.saturating_sub(1).min(5);
    Duration::from_secs(secs).min(MAX_FAILURE_DELAY)
}

impl LoginGuard {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // The counters stay meaningful after a panic elsewhere; keep using them.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Admits an attempt from `client` or says how long to wait.
    fn admit(&self, client: Option<IpAddr>) -> Result<(), Duration> {
        let mut inner = self.lock();
        let now = Instant::now();
        let elapsed = now.duration_since(inner.budget.at).as_secs_f64();
        inner.budget.tokens = (inner.budget.tokens + elapsed * GLOBAL_PER_SEC).min(GLOBAL_BURST);
        inner.budget.at = now;
        if inner.budget.tokens < 1.0 {
            let wait = (1.0 - inner.budget.tokens) / GLOBAL_PER_SEC;
            return Err(Duration::from_secs_f64(wait).max(Duration::from_secs(1)));
        }
        if inner.clients.len() >= MAX_CLIENTS && !inner.clients.contains_key(&client) {
            let idle = inner
                .clients
                .iter()
                .filter(|(_, c)| c.in_flight == 0)
                .min_by_key(|(_, c)| c.last)
                .map(|(k, _)| *k);
            match idle {
                Some(k) => {
                    inner.clients.remove(&k);
                }
                None => return Err(Duration::from_secs(1)),
            }
        }
        let entry = inner.clients.entry(client).or_default();
        if entry.in_flight >= MAX_PER_CLIENT {
            return Err(Duration::from_secs(1));
        }
        entry.in_flight += 1;
        inner.budget.tokens -= 1.0;
        Ok(())
    }

    /// Records the end of an admitted attempt; returns the delay before answering a failure.
    fn finish(&self, client: Option<IpAddr>, accepted: bool) -> Duration {
        let mut inner = self.lock();
        let entry = inner.clients.entry(client).or_default();
        entry.in_flight = entry.in_flight.saturating_sub(1);
        entry.last = Some(Instant::now());
        if accepted {
            entry.failures = 0;
            Duration::ZERO
        } else {
            entry.failures = entry.failures.saturating_add(1);
            failure_delay(entry.failures)
        }
    }

    /// Checks `passphrase` against the PHC `hash` for `client` (its IP address, when known),
    /// within the limits above. The verification runs on the blocking pool.
    pub async fn attempt(
        &self,
        client: Option<IpAddr>,
        hash: String,
        passphrase: String,
    ) -> Attempt {
        if let Err(wait) = self.admit(client) {
            return Attempt::TooMany(wait);
        }
        // Run to the end in a task of its own: a client that hangs up mid-check neither frees a
        // verification slot while argon2 still runs nor leaves its in-flight count behind.
        let guard = self.clone();
        let checked = tokio::spawn(async move {
            let accepted = match guard.verifying.clone().acquire_owned().await {
                Ok(permit) => tokio::task::spawn_blocking(move || {
                    let _permit = permit;
                    super::passphrase::verify(&hash, &passphrase)
                })
                .await
                .unwrap_or(false),
                // The semaphore is never closed; refuse if it were.
                Err(_) => false,
            };
            (accepted, guard.finish(client, accepted))
        });
        let (accepted, delay) = checked.await.unwrap_or((false, Duration::from_secs(1)));
        if accepted {
            Attempt::Accepted
        } else {
            tokio::time::sleep(delay).await;
            Attempt::Wrong
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_delays_grow_to_the_cap() {
        assert_eq!(failure_delay(1), Duration::from_secs(1));
        assert_eq!(failure_delay(3), Duration::from_secs(4));
        assert_eq!(failure_delay(40), MAX_FAILURE_DELAY);
    }

    #[test]
    fn one_client_and_the_whole_service_are_bounded() {
        let guard = LoginGuard::default();
        let me = Some(IpAddr::from([127, 0, 0, 1]));
        for _ in 0..MAX_PER_CLIENT {
            assert!(guard.admit(me).is_ok());
        }
        assert!(
            guard.admit(me).is_err(),
            "a fifth attempt in flight is refused"
        );
        let mut admitted = MAX_PER_CLIENT;
        for i in 0..64u8 {
            if guard.admit(Some(IpAddr::from([10, 0, 0, i]))).is_ok() {
                admitted += 1;
            }
        }
        assert!(admitted <= GLOBAL_BURST as usize + 1, "{admitted}");
    }
}
