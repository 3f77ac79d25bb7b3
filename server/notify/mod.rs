//! Tells the person a question waits, through every channel the config names: a desktop
//! notification on this machine ([`desktop`]), and notices to other devices: a signed webhook
//! ([`webhook`]), ntfy ([`ntfy`]), Slack ([`slack`]) and email ([`email`]). Each names the server,
//! the kind of question and (beyond the desktop) the tool and a link to the page, never anything
//! from the request (a notice may be shown on a locked screen, read by other programs or kept by
//! a third party); the decision stays on the page behind the person's login.
//!
//! [`Notifications`] is what the broker calls: it never blocks and never fails the question
//! path. It drops the notice into a bounded queue (a full queue drops it, with a log line); one
//! task takes them off, tells the first of a burst at once and then at most once per
//! [`COALESCE`] window, summarising the questions that opened meanwhile ("3 questions are
//! waiting"). Each channel's send runs on its own task, bounded in time
//! ([`send::SEND_TIMEOUT`]), so a slow or failing channel delays neither the questions nor the
//! other channels; a failure is logged naming the channel and counted in
//! `mcp_consent_notifications_failed_total{channel}`. The text is in the person's language: the
//! config's `[notifications] language`, else the system locale ([`system_lang`]), from the pages'
//! catalogues (`notification-*`).

pub mod channel;
pub mod desktop;
pub mod email;
mod locale;
pub mod ntfy;
pub mod send;
pub mod slack;
pub mod webhook;

use std::fmt::Debug;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use futures_util::future::BoxFuture;
use prometheus::IntCounterVec;
use tokio::sync::mpsc;

pub use channel::{Channel, ChannelConfig, ChannelConfigs, ChannelError};
pub use desktop::DesktopNotifier;
pub use locale::{lang_of_env, lang_of_locale, system_lang};
pub use send::{Outbound, SendError};

use crate::domain::{Kind, QuestionId};
use crate::i18n::{Arg, I18n, Lang};

/// The shortest time between two notices; the questions opened within it are summarised.
pub const COALESCE: Duration = Duration::from_secs(10);
/// Notices waiting to be told at most; more are dropped (the coalescing summarises them
/// anyway, so only a count is lost).
const QUEUE: usize = 64;
/// Longest the count of waiting questions may take before a notice goes without it.
const COUNT_TIMEOUT: Duration = Duration::from_secs(2);

/// What a notice says: which question, who asks, what for, from which tool. Deliberately
/// nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The question's id (the link points at its page).
    pub id: QuestionId,
    /// The server's name, as the queue shows it.
    pub server: String,
    /// What the question asks for.
    pub kind: Kind,
    /// The host's tool call the question came from, when known (not shown on the desktop).
    pub tool: Option<String>,
}

/// Counts the questions waiting now (the store, in the service); `None` when it cannot.
pub type WaitingCount = Arc<dyn Fn() -> BoxFuture<'static, Option<u64>> + Send + Sync>;

/// Where the notices' links point: `public_url` when set, else the service's loopback address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Links {
    base: String,
}

impl Links {
    /// Links under `base` (`https://consent.example.ts.net`, `http://127.0.0.1:7777`).
    pub fn new(base: &str) -> Links {
        Links {
            base: base.trim_end_matches('/').to_owned(),
        }
    }

    /// The page of question `id`.
    pub fn question(&self, id: &QuestionId) -> String {
        format!("{}/questions/{id}", self.base)
    }

    /// The queue.
    pub fn queue(&self) -> String {
        format!("{}/", self.base)
    }
}

/// One notification as shown: a title and a one-line body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// The title: always `mcp-consent`.
    pub title: String,
    /// The body: "<server> asks …" or "N questions are waiting".
    pub body: String,
}

/// Something that shows notifications. Called on a blocking thread; errors are the
/// implementation's to log, never the caller's.
pub trait Notifier: Send + Sync + Debug {
    /// Shows `shown`.
    fn show(&self, shown: &Shown);
}

impl Shown {
    /// The notification for one question, or for `count` (> 1) questions opened in one window
    /// (`notice` is then the last of them and only the count is shown), in `lang`.
    pub fn of(notice: &Notice, count: usize, lang: Lang) -> Shown {
        let i18n = I18n::new(lang);
        let body = if count > 1 {
            i18n.msg("notification-waiting")
                .arg("count", count)
                .to_string()
        } else {
            // A tool call names its tool (never its arguments); other kinds do not (their
            // `tool` is only the call that led to them).
            let tool = match (notice.kind, &notice.tool) {
                (Kind::ToolCall, Some(tool)) => tool.as_str(),
                _ => "",
            };
            i18n.msg("notification-question")
                .arg("server", Arg::from(notice.server.as_str()))
                .arg("kind", notice.kind.as_str())
                .arg("tool", Arg::from(tool))
                .to_string()
        };
        Shown {
            title: "mcp-consent".to_owned(),
            body,
        }
    }
}

/// What the notices need besides the queue (built by the service from the config).
pub struct Parts {
    /// The desktop's notifier, when this session has one (a recording one in tests).
    pub desktop: Option<Arc<dyn Notifier>>,
    /// `[notifications] desktop`.
    pub desktop_on: bool,
    /// The texts' language.
    pub lang: Lang,
    /// `[[notifications.channels]]`, built.
    pub channels: Vec<Channel>,
    /// Where links point.
    pub links: Links,
    /// Counts the waiting questions for the notices that say how many wait.
    pub waiting: WaitingCount,
    /// `mcp_consent_notifications_failed_total{channel}`.
    pub failed: IntCounterVec,
}

/// What the broker's handle and the delivering task share; changed on reload.
struct Shared {
    has_desktop: bool,
    desktop_on: AtomicBool,
    /// The [`Lang::index`] of the texts' language.
    lang: AtomicUsize,
    channels: RwLock<Arc<[Channel]>>,
    failed: IntCounterVec,
}

impl Shared {
    fn lang(&self) -> Lang {
        Lang::ALL
            .get(self.lang.load(Ordering::Relaxed))
            .copied()
            .unwrap_or_default()
    }

    fn channels(&self) -> Arc<[Channel]> {
        self.channels
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn desktop_on(&self) -> bool {
        self.has_desktop && self.desktop_on.load(Ordering::Relaxed)
    }
}

/// The broker's side of notifications: cheap to clone, never blocking. The desktop is turned on
/// and off by `[notifications] desktop`, the language set by `[notifications] language`, the
/// channels by `[[notifications.channels]]`, all also on reload.
#[derive(Clone)]
pub struct Notifications {
    shared: Option<Arc<Shared>>,
    queue: Option<mpsc::Sender<Notice>>,
}

impl Debug for Notifications {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifications")
            .field("enabled", &self.enabled())
            .finish_non_exhaustive()
    }
}

impl Notifications {
    /// Notifications that are never told (no notifier, no channel).
    pub fn none() -> Notifications {
        Notifications {
            shared: None,
            queue: None,
        }
    }

    /// Notifications told through `parts`. Starts the task that tells them (needs a tokio
    /// runtime); it ends when the last clone is dropped.
    pub fn start(parts: Parts) -> Notifications {
        let (tx, rx) = mpsc::channel(QUEUE);
        for channel in &parts.channels {
            parts.failed.with_label_values(&[channel.kind()]);
        }
        let shared = Arc::new(Shared {
            has_desktop: parts.desktop.is_some(),
            desktop_on: AtomicBool::new(parts.desktop_on),
            lang: AtomicUsize::new(parts.lang.index()),
            channels: RwLock::new(parts.channels.into()),
            failed: parts.failed,
        });
        let delivery = Delivery {
            desktop: parts.desktop,
            shared: shared.clone(),
            links: parts.links,
            waiting: parts.waiting,
        };
        tokio::spawn(deliver(rx, delivery, COALESCE));
        Notifications {
            shared: Some(shared),
            queue: Some(tx),
        }
    }

    /// Sets the language of the texts (the config's `[notifications] language`, else the
    /// system locale; on reload too).
    pub fn set_language(&self, lang: Lang) {
        if let Some(shared) = &self.shared {
            shared.lang.store(lang.index(), Ordering::Relaxed);
        }
    }

    /// The language of the texts.
    pub fn language(&self) -> Lang {
        self.shared.as_ref().map(|s| s.lang()).unwrap_or_default()
    }

    /// Turns desktop notifications on or off (the config's `[notifications] desktop`, on
    /// reload).
    pub fn set_enabled(&self, enabled: bool) {
        if let Some(shared) = &self.shared {
            shared.desktop_on.store(enabled, Ordering::Relaxed);
        }
    }

    /// Replaces the channels (on reload): the next notice goes through `channels`.
    pub fn set_channels(&self, channels: Vec<Channel>) {
        if let Some(shared) = &self.shared {
            for channel in &channels {
                shared.failed.with_label_values(&[channel.kind()]);
            }
            *shared
                .channels
                .write()
                .unwrap_or_else(PoisonError::into_inner) = channels.into();
        }
    }

    /// Whether anything is told: the desktop is on, or a channel is configured.
    pub fn enabled(&self) -> bool {
        self.queue.is_some()
            && self
                .shared
                .as_ref()
                .is_some_and(|s| s.desktop_on() || !s.channels().is_empty())
    }

    /// A question opened: queue its notice. Never blocks; a full queue drops it.
    pub fn opened(&self, notice: Notice) {
        if !self.enabled() {
            return;
        }
        if let Some(queue) = &self.queue
            && let Err(e) = queue.try_send(notice)
        {
            tracing::debug!(error = %e, "notification dropped");
        }
    }
}

/// What the delivering task holds.
struct Delivery {
    desktop: Option<Arc<dyn Notifier>>,
    shared: Arc<Shared>,
    links: Links,
    waiting: WaitingCount,
}

impl Delivery {
    /// Tells `notice` (the last of `count` opened in one window) on the desktop and through
    /// every channel. Waits for the desktop only; each channel sends on a task of its own.
    async fn tell(&self, notice: &Notice, count: usize) {
        let lang = self.shared.lang();
        if self.shared.desktop_on()
            && let Some(notifier) = &self.desktop
        {
            show(notifier, Shown::of(notice, count, lang)).await;
        }
        let channels = self.shared.channels();
        if channels.is_empty() {
            return;
        }
        let waiting = tokio::time::timeout(COUNT_TIMEOUT, (self.waiting)())
            .await
            .ok()
            .flatten()
            .unwrap_or(count as u64);
        let outbound = Arc::new(Outbound::of(notice, count, lang, &self.links, waiting));
        for channel in channels.iter().cloned() {
            let outbound = outbound.clone();
            let failed = self.shared.failed.clone();
            tokio::spawn(async move {
                if let Err(e) = channel.send(&outbound).await {
                    failed.with_label_values(&[channel.kind()]).inc();
                    tracing::warn!(channel = %channel.name, error = %e, "notice not delivered");
                }
            });
        }
    }
}

impl Outbound {
    /// The notice for `notice`, the last of `count` questions opened in one window (then the
    /// link is the queue's), with `waiting` questions waiting now.
    pub fn of(notice: &Notice, count: usize, lang: Lang, links: &Links, waiting: u64) -> Outbound {
        let shown = Shown::of(notice, count, lang);
        Outbound {
            id: notice.id.to_string(),
            server: notice.server.clone(),
            kind: notice.kind.as_str().to_owned(),
            tool: notice.tool.clone(),
            waiting,
            url: if count > 1 {
                links.queue()
            } else {
                links.question(&notice.id)
            },
            at: now_rfc3339(),
            title: shown.title,
            text: shown.body,
        }
    }

    /// The harmless notice `mcp-consent notify test` sends: no question, a link to the queue.
    pub fn test(links: &Links) -> Outbound {
        Outbound {
            id: "test".to_owned(),
            server: "mcp-consent".to_owned(),
            kind: "test".to_owned(),
            tool: None,
            waiting: 0,
            url: links.queue(),
            at: now_rfc3339(),
            title: "mcp-consent".to_owned(),
            text: "A test notice: mcp-consent's notices reach you here.".to_owned(),
        }
    }
}

/// Now, RFC 3339 in UTC with milliseconds (as the API writes times).
fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Tells the first notice of a burst at once, then once per `window` (the service:
/// [`COALESCE`]) while notices keep coming.
async fn deliver(mut rx: mpsc::Receiver<Notice>, delivery: Delivery, window: Duration) {
    while let Some(first) = rx.recv().await {
        delivery.tell(&first, 1).await;
        loop {
            let timer = tokio::time::sleep(window);
            tokio::pin!(timer);
            let mut last = None;
            let mut count = 0;
            loop {
                tokio::select! {
                    () = &mut timer => break,
                    next = rx.recv() => match next {
                        Some(n) => {
                            count += 1;
                            last = Some(n);
                        }
                        None => break,
                    },
                }
            }
            match last {
                Some(n) => delivery.tell(&n, count).await,
                None => break,
            }
        }
    }
}

/// Shows one notification on the blocking pool (D-Bus calls block), logging a failure.
async fn show(notifier: &Arc<dyn Notifier>, shown: Shown) {
    let notifier = notifier.clone();
    if let Err(e) = tokio::task::spawn_blocking(move || notifier.show(&shown)).await {
        tracing::warn!(error = %e, "desktop notification task failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Debug, Default)]
    struct Recorder(Mutex<Vec<Shown>>);

    impl Notifier for Recorder {
        fn show(&self, shown: &Shown) {
            self.0.lock().unwrap().push(shown.clone());
        }
    }

    #[tokio::test]
    async fn a_burst_shows_the_first_then_one_summary() {
        let recorder = Arc::new(Recorder::default());
        let (tx, rx) = mpsc::channel(QUEUE);
        for server in ["a", "b", "c", "d"] {
            tx.try_send(Notice {
                id: QuestionId::new(),
                server: server.into(),
                kind: Kind::Form,
                tool: None,
            })
            .unwrap();
        }
        drop(tx);
        // The channel is closed after the burst, so `deliver` returns once it has shown it.
        let delivery = Delivery {
            desktop: Some(recorder.clone()),
            shared: Arc::new(Shared {
                has_desktop: true,
                desktop_on: AtomicBool::new(true),
                lang: AtomicUsize::new(Lang::En.index()),
                channels: RwLock::new(Vec::new().into()),
                failed: IntCounterVec::new(prometheus::Opts::new("f", "f"), &["channel"]).unwrap(),
            }),
            links: Links::new("http://127.0.0.1:1"),
            waiting: Arc::new(|| Box::pin(async { Some(0) })),
        };
        deliver(rx, delivery, Duration::from_millis(20)).await;
        let bodies: Vec<String> = recorder
            .0
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.body.clone())
            .collect();
        assert_eq!(bodies, ["a asks for input", "3 questions are waiting"]);
    }

    #[test]
    fn texts_name_server_and_kind_only_in_each_language() {
        let n = |kind| Notice {
            id: QuestionId::new(),
            server: "everything".into(),
            kind,
            tool: Some("a-tool".into()),
        };
        let expected = [
            (Kind::Form, 1, Lang::En, "everything asks for input"),
            (
                Kind::Sampling,
                1,
                Lang::En,
                "everything asks to run a model",
            ),
            (Kind::Url, 1, Lang::En, "everything asks you to open a link"),
            (Kind::Url, 3, Lang::En, "3 questions are waiting"),
            (
                Kind::ToolCall,
                1,
                Lang::En,
                "everything asks to call a-tool",
            ),
            (Kind::ToolCall, 1, Lang::ZhCn, "everything 请求调用 a-tool"),
            (
                Kind::ToolCall,
                1,
                Lang::PtBr,
                "everything pede para chamar a-tool",
            ),
            (Kind::Form, 1, Lang::ZhCn, "everything 请你填写信息"),
            (Kind::Sampling, 1, Lang::ZhCn, "everything 请求运行一个模型"),
            (Kind::Url, 1, Lang::ZhCn, "everything 请你打开一个链接"),
            (Kind::Form, 3, Lang::ZhCn, "3 个问题正在等待"),
            (Kind::Form, 1, Lang::PtBr, "everything pede informações"),
            (
                Kind::Sampling,
                1,
                Lang::PtBr,
                "everything pede para rodar um modelo",
            ),
            (
                Kind::Url,
                1,
                Lang::PtBr,
                "everything pede que você abra um link",
            ),
            (Kind::Form, 3, Lang::PtBr, "3 perguntas estão esperando"),
            (
                Kind::Form,
                1200,
                Lang::PtBr,
                "1.200 perguntas estão esperando",
            ),
        ];
        for (kind, count, lang, text) in expected {
            assert_eq!(
                Shown::of(&n(kind), count, lang).body,
                text,
                "{kind:?} ×{count} in {lang:?}"
            );
        }
        assert_eq!(Shown::of(&n(Kind::Url), 1, Lang::PtBr).title, "mcp-consent");
    }
}
