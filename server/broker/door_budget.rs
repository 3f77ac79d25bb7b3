//! What each door may add to the store in an hour: the text of the questions opened and of the
//! tool-call decisions reported through the owner-only socket ([`Via::Cli`]), and the same
//! through the API token over TCP ([`Via::Token`]), each bounded by `max_stored_bytes_per_door`.
//!
//! The per-server budget (`max_stored_bytes_per_server`) keeps one hostile server from filling
//! the disk, but a caller holding the API token names the server itself and so could spread
//! its writes over endless names. This budget bounds the door instead, whatever the names.
//! It lives in memory (a restart starts it afresh; a token holder cannot restart the service)
//! and counts this instance's doors only. The browser's door opens nothing and is not counted.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::domain::Via;

/// The window the budget counts over.
pub const WINDOW: Duration = Duration::from_secs(3600);
/// Minutes in the window: one bucket each.
const MINUTES: usize = 60;

/// A charge refused: the door's last hour already holds its budget. Retry after this long
/// (whole seconds, at least one), when enough of the hour's writes have aged out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverBudget {
    /// How long until the charge would fit (the whole window when it never fits alone).
    pub retry_after: Duration,
}

/// A charge taken, which [`DoorBudget::refund`] gives back when what it paid for was not
/// stored after all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "refund the charge when nothing was stored"]
pub struct Charge {
    via: Via,
    minute: i64,
    bytes: u64,
}

/// One minute's writes through a door.
#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    /// Minutes since the Unix epoch.
    minute: i64,
    bytes: u64,
}

/// The last hour of one door, by minute.
#[derive(Debug, Clone, Copy)]
struct Window([Bucket; MINUTES]);

impl Default for Window {
    fn default() -> Self {
        Window([Bucket::default(); MINUTES])
    }
}

impl Window {
    fn slot(minute: i64) -> usize {
        usize::try_from(minute.rem_euclid(MINUTES as i64)).unwrap_or(0)
    }

    /// The buckets still inside the window at `now`, oldest first.
    fn live(&self, now: i64) -> Vec<Bucket> {
        let mut live: Vec<Bucket> = self
            .0
            .iter()
            .copied()
            .filter(|b| b.bytes > 0 && b.minute > now - MINUTES as i64 && b.minute <= now)
            .collect();
        live.sort_by_key(|b| b.minute);
        live
    }

    fn charge(&mut self, now: DateTime<Utc>, bytes: u64, limit: u64) -> Result<i64, OverBudget> {
        let minute = now.timestamp().div_euclid(60);
        let live = self.live(minute);
        let held: u64 = live.iter().map(|b| b.bytes).sum();
        if held.saturating_add(bytes) > limit {
            return Err(OverBudget {
                retry_after: retry_after(&live, held, bytes, limit, now),
            });
        }
        let bucket = &mut self.0[Window::slot(minute)];
        if bucket.minute != minute {
            *bucket = Bucket { minute, bytes: 0 };
        }
        bucket.bytes = bucket.bytes.saturating_add(bytes);
        Ok(minute)
    }

    /// Counts `bytes` already stored, whatever the limit (what comes next is then refused).
    fn add(&mut self, now: DateTime<Utc>, bytes: u64) {
        let minute = now.timestamp().div_euclid(60);
        let bucket = &mut self.0[Window::slot(minute)];
        if bucket.minute != minute {
            *bucket = Bucket { minute, bytes: 0 };
        }
        bucket.bytes = bucket.bytes.saturating_add(bytes);
    }

    fn refund(&mut self, minute: i64, bytes: u64) {
        let bucket = &mut self.0[Window::slot(minute)];
        if bucket.minute == minute {
            bucket.bytes = bucket.bytes.saturating_sub(bytes);
        }
    }
}

/// When `bytes` more would fit: as the oldest buckets age out of the window one by one.
fn retry_after(live: &[Bucket], held: u64, bytes: u64, limit: u64, now: DateTime<Utc>) -> Duration {
    let window = WINDOW.as_secs() as i64;
    let mut left = held;
    for bucket in live {
        left -= bucket.bytes;
        if left.saturating_add(bytes) <= limit {
            // A minute's bucket is out of the window once the minute an hour later begins.
            let frees_at = (bucket.minute + MINUTES as i64) * 60;
            let secs = (frees_at - now.timestamp()).clamp(1, window);
            return Duration::from_secs(secs.unsigned_abs());
        }
    }
    WINDOW
}

/// At most this many model runs may be under way at once for one door: a run's reply is
/// counted once it came, so without this bound a script approving many runs at once would
/// store them all before the first was counted. Each reply is bounded by the providers'
/// `MAX_REPLY_BYTES`, so a door's overshoot is bounded too.
pub const MAX_RUNS_PER_DOOR: usize = 4;

/// What is held for the doors: the last hour's writes and the model runs under way.
#[derive(Debug, Default)]
struct Doors {
    windows: [Window; 2],
    running: [usize; 2],
}

/// The doors' budgets; cheap to clone, the clones share them.
#[derive(Debug, Clone, Default)]
pub struct DoorBudget {
    doors: Arc<Mutex<Doors>>,
}

/// A model run under way for a door, counted until dropped (the run finished, failed, or was
/// never started).
#[derive(Debug)]
#[must_use = "the run counts only while this is held"]
pub struct RunSlot {
    doors: DoorBudget,
    door: Option<usize>,
}

impl Drop for RunSlot {
    fn drop(&mut self) {
        if let Some(door) = self.door {
            let mut doors = self.doors.lock();
            doors.running[door] = doors.running[door].saturating_sub(1);
        }
    }
}

impl DoorBudget {
    /// Takes `bytes` from the budget of `via` at `now`, unless the door's last hour would then
    /// hold more than `limit`. The browser's door is not counted.
    ///
    /// # Errors
    /// [`OverBudget`], with how long until it would fit.
    pub fn charge(
        &self,
        via: Via,
        bytes: u64,
        limit: u64,
        now: DateTime<Utc>,
    ) -> Result<Option<Charge>, OverBudget> {
        let Some(door) = door_index(via) else {
            return Ok(None);
        };
        let minute = self.lock().windows[door].charge(now, bytes, limit)?;
        Ok(Some(Charge { via, minute, bytes }))
    }

    /// Counts a model run for `via` unless [`MAX_RUNS_PER_DOOR`] are under way already
    /// (`None` then); the browser's door is not counted.
    pub fn start_run(&self, via: Via) -> Option<RunSlot> {
        let door = door_index(via);
        if let Some(door) = door {
            let mut doors = self.lock();
            if doors.running[door] >= MAX_RUNS_PER_DOOR {
                return None;
            }
            doors.running[door] += 1;
        }
        Some(RunSlot {
            doors: self.clone(),
            door,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Doors> {
        self.doors.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts `bytes` that a call through `via` caused to be stored after it was let in (a
    /// model run's reply, whose size is known only once it came), over the limit if need be.
    pub fn add(&self, via: Via, bytes: u64, now: DateTime<Utc>) {
        if let Some(door) = door_index(via) {
            self.lock().windows[door].add(now, bytes);
        }
    }

    /// Gives a charge back (what it paid for was not stored).
    pub fn refund(&self, charge: Charge) {
        if let Some(door) = door_index(charge.via) {
            self.lock().windows[door].refund(charge.minute, charge.bytes);
        }
    }
}

impl super::Broker {
    /// Charges `bytes` that a call through `via` is about to store (an answer, a revision, a
    /// review decision) to the door's hourly budget (`max_stored_bytes_per_door`).
    ///
    /// # Errors
    /// [`super::BrokerError::DoorFull`].
    pub fn charge_door(&self, via: Via, bytes: u64) -> Result<(), super::BrokerError> {
        let limit = self.settings().max_stored_bytes_per_door;
        self.doors
            .charge(via, bytes, limit, self.now())
            .map(|_| ())
            .map_err(super::BrokerError::DoorFull)
    }

    /// Counts `bytes` stored for a call through `via` once their size is known (a model run's
    /// reply), even past the budget: the door's next call that would store anything is then
    /// refused until the window has room.
    pub fn count_stored(&self, via: Via, bytes: u64) {
        self.doors.add(via, bytes, self.now());
    }

    /// Lets a model run start for `via` when the door has room for it: not past its hourly
    /// budget, and fewer than [`MAX_RUNS_PER_DOOR`] of its runs under way. Hold the slot until
    /// the run's reply is counted.
    ///
    /// # Errors
    /// [`super::BrokerError::DoorFull`]; [`super::BrokerError::RunsUnderWay`].
    pub fn start_run(&self, via: Via) -> Result<RunSlot, super::BrokerError> {
        self.charge_door(via, 0)?;
        self.doors
            .start_run(via)
            .ok_or(super::BrokerError::RunsUnderWay(MAX_RUNS_PER_DOOR))
    }
}

fn door_index(via: Via) -> Option<usize> {
    match via {
        Via::Cli => Some(0),
        Via::Token => Some(1),
        Via::Browser => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeDelta;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap()
    }

    #[test]
    fn a_door_takes_up_to_its_limit_and_frees_as_the_hour_passes() {
        let budget = DoorBudget::default();
        assert!(budget.charge(Via::Token, 60, 100, at(0)).is_ok());
        assert!(budget.charge(Via::Token, 40, 100, at(600)).is_ok());
        let refused = budget.charge(Via::Token, 1, 100, at(900)).unwrap_err();
        // The first 60 bytes leave the window an hour after their minute.
        let frees = at(0) + TimeDelta::seconds(3600);
        assert!(
            budget
                .charge(Via::Token, 1, 100, frees - TimeDelta::seconds(1))
                .is_err()
        );
        assert_eq!(
            refused.retry_after.as_secs() as i64,
            (frees - at(900)).num_seconds()
        );
        assert!(budget.charge(Via::Token, 1, 100, frees).is_ok());
    }

    #[test]
    fn the_doors_are_counted_apart_and_the_browser_not_at_all() {
        let budget = DoorBudget::default();
        assert!(budget.charge(Via::Token, 100, 100, at(0)).is_ok());
        assert!(budget.charge(Via::Token, 1, 100, at(1)).is_err());
        assert!(budget.charge(Via::Cli, 100, 100, at(1)).is_ok());
        assert_eq!(budget.charge(Via::Browser, u64::MAX, 1, at(1)), Ok(None));
    }

    #[test]
    fn a_refund_gives_the_room_back_and_a_charge_over_the_limit_never_fits() {
        let budget = DoorBudget::default();
        let charge = budget.charge(Via::Cli, 100, 100, at(0)).unwrap().unwrap();
        budget.refund(charge);
        assert!(budget.charge(Via::Cli, 100, 100, at(0)).is_ok());
        let never = budget.charge(Via::Cli, 101, 100, at(5000)).unwrap_err();
        assert_eq!(never.retry_after, WINDOW);
    }

    #[test]
    fn a_door_has_at_most_its_runs_under_way_and_a_finished_one_frees_its_slot() {
        let budget = DoorBudget::default();
        let slots: Vec<RunSlot> = (0..MAX_RUNS_PER_DOOR)
            .map(|_| budget.start_run(Via::Token).unwrap())
            .collect();
        assert!(budget.start_run(Via::Token).is_none());
        // Another door, and the person's, are not held up.
        assert!(budget.start_run(Via::Cli).is_some());
        assert!(budget.start_run(Via::Browser).is_some());
        drop(slots);
        assert!(budget.start_run(Via::Token).is_some());
    }
}
