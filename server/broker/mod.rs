//! The question lifecycle: open → answer → deliver, exactly once.
//!
//! A request is validated before anything is stored (a malformed request never opens a
//! question); an answer is validated before the question moves (a bad answer leaves it open);
//! the move from `pending` is one conditional UPDATE, so a question gets exactly one response
//! however many answers race for it. Every state change is published as a summary-only
//! [`events::Event`].

//!
//! The files: [`question`] (the question and the reads), [`open`], [`answer`], [`expiry`],
//! [`events`], [`waiters`] (per-question wake-ups of long-polls), [`audience`], [`Clock`]
//! (where "now" comes from), and [`hooks`], the trait through which the sampling review
//! (`crate::review`) takes part in a sampling question's life without the broker knowing it.

pub mod answer;
pub mod audience;
pub mod controls;
pub mod door_budget;
pub mod error;
pub mod events;
pub mod expiry;
pub mod history;
pub mod hooks;
pub mod open;
pub mod person_only;
pub mod question;
pub mod refusal;
pub mod remote;
pub mod tool_calls;
pub mod waiters;

use std::sync::{Arc, OnceLock, PoisonError, RwLock, Weak};
use std::time::Duration;

use tokio::sync::watch;

pub use crate::clock::{Clock, ManualClock, SystemClock};
use crate::db::Db;
pub use crate::domain::{Audience, Kind, Phase, State};
use crate::metrics::Metrics;
use crate::notify::{Notice, Notifications};
pub use controls::{ControlChange, ServerControl};
pub use error::BrokerError;
pub use events::{Event, EventBus};
pub use expiry::human_duration;
pub use history::{Decided, Origin};
pub use hooks::{HookFuture, Round, SamplingHooks};
pub use open::OpenOutcome;
pub use question::{Answerer, Question, Waited, rfc3339};
pub use refusal::{Stale, StepRefusal};
use waiters::Waiters;

/// Broker settings taken from the config.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BrokerSettings {
    /// How long a question waits for an answer.
    pub question_timeout: Duration,
    /// Most questions one server may have pending at once.
    pub max_pending_per_server: u64,
    /// Most bytes of requests one server's questions opened in the last hour may hold.
    pub max_stored_bytes_per_server: u64,
    /// Most bytes one door may add to the store in an hour (`door_budget`).
    pub max_stored_bytes_per_door: u64,
    /// Every form is person-only (`forms_person_only`), not only those asking for a secret.
    pub forms_person_only: bool,
}

/// The broker: the store, the per-question signals long-polls wait on, and the event bus.
#[derive(Clone)]
pub struct Broker {
    db: Db,
    /// Shared by the clones; replaced when the config is reloaded.
    settings: Arc<RwLock<BrokerSettings>>,
    /// Tells the person a question opened.
    notifications: Notifications,
    waiters: Waiters,
    events: EventBus,
    metrics: Metrics,
    stopping: watch::Sender<bool>,
    /// Where "now" comes from for deadlines and decision times.
    clock: Arc<dyn Clock>,
    /// Set once at start when sampling is reviewed on models; weak, so the review engine
    /// (which holds a broker) and the broker do not keep each other alive.
    hooks: Arc<OnceLock<Weak<dyn SamplingHooks>>>,
    /// This instance among those sharing a database (its announcements come back to it).
    instance: Arc<str>,
    /// The config's `[tools]`, which the proxies judge tool calls by; replaced on reload.
    tool_rules: Arc<RwLock<Arc<crate::tools::ToolsConfig>>>,
    /// What each door added to the store in the last hour.
    doors: door_budget::DoorBudget,
}

impl Broker {
    /// A broker over `db`, counting into `metrics`.
    pub fn new(db: Db, settings: BrokerSettings, metrics: Metrics) -> Broker {
        Broker {
            db,
            settings: Arc::new(RwLock::new(settings)),
            notifications: Notifications::none(),
            waiters: Waiters::default(),
            events: EventBus::default(),
            metrics,
            stopping: watch::channel(false).0,
            clock: Arc::new(SystemClock),
            hooks: Arc::default(),
            instance: crate::domain::QuestionId::new().as_str().into(),
            tool_rules: Arc::default(),
            doors: door_budget::DoorBudget::default(),
        }
    }

    /// Replaces the tool rules (start and config reload); the proxies follow within seconds.
    pub fn set_tool_rules(&self, rules: crate::tools::ToolsConfig) {
        *self
            .tool_rules
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(rules);
    }

    /// What a proxy judges tool calls by: the tool rules and the grants in force.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn tool_policy(&self) -> Result<crate::tools::Policy, BrokerError> {
        let tools = self
            .tool_rules
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .clone();
        Ok(crate::tools::Policy {
            tools,
            grants: self.grants_in_force().await?,
        })
    }

    /// This broker reading the time from `clock` instead of the system clock (tests set the
    /// time to decide expiries without waiting).
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Broker {
        self.clock = clock;
        self
    }

    /// This broker telling the person through `notifications` when a question opens.
    #[must_use]
    pub fn with_notifications(mut self, notifications: Notifications) -> Broker {
        self.notifications = notifications;
        self
    }

    /// The notifications this broker sends (the config reload turns them on and off).
    pub fn notifications(&self) -> &Notifications {
        &self.notifications
    }

    /// The settings in force.
    pub fn settings(&self) -> BrokerSettings {
        *self.settings.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Replaces the settings (config reload): questions opened from now on use them; open
    /// questions keep their deadline and audience.
    pub fn set_settings(&self, settings: BrokerSettings) {
        *self
            .settings
            .write()
            .unwrap_or_else(PoisonError::into_inner) = settings;
    }

    /// Tells the person that `question` opened (server and kind only; never blocks).
    fn notify_opened(&self, question: &Question, control: &ServerControl) {
        if control.muted {
            return;
        }
        self.notifications.opened(Notice {
            id: question.id.clone(),
            server: question.server.clone(),
            kind: question.kind,
            tool: question.tool.clone(),
        });
    }

    /// The current time by this broker's clock.
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.clock.now()
    }

    /// This broker's clock, for the parts of the service that share its time.
    pub fn clock(&self) -> Arc<dyn Clock> {
        self.clock.clone()
    }

    /// Lets `hooks` take part in every sampling question's life (budgets before opening,
    /// review after). Set once, at start; the caller keeps `hooks` alive. Without hooks the
    /// person writes every sampling response.
    pub fn set_sampling_hooks(&self, hooks: &Arc<dyn SamplingHooks>) {
        if self.hooks.set(Arc::downgrade(hooks)).is_err() {
            tracing::warn!("sampling hooks were set twice; the first stay");
        }
    }

    /// The sampling hooks, when set and still alive.
    fn sampling_hooks(&self) -> Option<Arc<dyn SamplingHooks>> {
        self.hooks
            .get()
            .and_then(Weak::upgrade)
            .filter(|h| h.active())
    }

    /// The metrics this broker counts into.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The service is shutting down: long-polls and event streams end now so their clients
    /// reconnect to the next instance (questions stay pending in the store).
    pub fn begin_shutdown(&self) {
        self.stopping.send_replace(true);
    }

    /// Resolves when [`Broker::begin_shutdown`] is called.
    pub async fn stopping(&self) {
        let mut rx = self.stopping.subscribe();
        // An error means the sender is gone, which only happens with the broker itself.
        let _ = rx.wait_for(|stopping| *stopping).await;
    }

    /// Counts `pending` questions by kind and audience from the store into the gauge (at scrape
    /// time, so the gauge is right across restarts).
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn refresh_pending_gauge(&self) -> Result<(), BrokerError> {
        self.expire_due().await?;
        let counts = self
            .db
            .run(|conn| Ok(Question::pending_counts(conn)?))
            .await?;
        self.metrics.pending.reset();
        for kind in Kind::ALL {
            for audience in Audience::ALL {
                self.metrics
                    .pending
                    .with_label_values(&[kind.as_str(), audience.as_str()])
                    .set(0);
            }
        }
        for (kind, audience, n) in counts {
            self.metrics
                .pending
                .with_label_values(&[kind.as_str(), audience.as_str()])
                .set(n);
        }
        Ok(())
    }

    /// The event bus (for `/api/v1/events`).
    pub fn events(&self) -> &EventBus {
        &self.events
    }

    /// Publishes the question's new state (event bus, and the long-polls waiting on this
    /// question). Whoever changes a question in the store calls this once the change is
    /// committed.
    pub fn changed(&self, question: &Question) {
        self.publish(question, false);
    }

    /// A question opened: published like any change, and the person told (unless its server
    /// is muted), here and on the instances sharing the database.
    pub(crate) fn opened(&self, question: &Question, control: &ServerControl) {
        self.publish(question, !control.muted);
        self.notify_opened(question, control);
    }

    /// Publishes the change here and announces it to the instances sharing the database;
    /// `notify`: they tell their person too.
    fn publish(&self, question: &Question, notify: bool) {
        let event = question.event(self.now());
        self.announce(&event, notify);
        self.events.publish(event);
        self.waiters.wake(&question.id);
    }

    /// Whether the store can be reached: always on the embedded store, a trivial query on
    /// the shared database.
    pub async fn store_reachable(&self) -> bool {
        self.db.shared_host_port().is_none()
            || tokio::time::timeout(Duration::from_secs(2), self.db.ping())
                .await
                .unwrap_or(false)
    }

    /// How many questions long-polls are waiting on right now.
    pub fn waited_on(&self) -> usize {
        self.waiters.len()
    }
}
