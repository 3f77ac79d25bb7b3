//! Tells the person a question waits: a desktop notification when a question opens, naming the
//! server and the kind of question only, never anything from the request (a notification may be
//! shown on a locked screen or read by other programs on the session bus).
//!
//! [`Notifications`] is what the broker calls: it never blocks and never fails the question
//! path. It drops the notice into a bounded queue (a full queue drops it, with a log line); one
//! task takes them off, shows the first of a burst at once and then at most one notification
//! per [`COALESCE`] window, summarising the questions that opened meanwhile ("3 questions are
//! waiting"). Showing goes through a [`Notifier`]: [`DesktopNotifier`] (the freedesktop
//! notification service over the session bus, or macOS's notification centre, through
//! `notify-rust`) in the service, a recording one in tests.

use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use askama::Template;
use tokio::sync::mpsc;

use crate::domain::Kind;

/// The shortest time between two notifications; the questions opened within it are summarised.
pub const COALESCE: Duration = Duration::from_secs(10);
/// Notices waiting to be shown at most; more are dropped (the coalescing summarises them
/// anyway, so only a count is lost).
const QUEUE: usize = 64;

/// What a notification says: who asks and what for. Deliberately nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The server's name, as the queue shows it.
    pub server: String,
    /// What the question asks for.
    pub kind: Kind,
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

/// The text of a notification (`templates/notification.txt`).
#[derive(Template)]
#[template(path = "notification.txt")]
struct NoticeText<'a> {
    /// The server of a single question.
    server: &'a str,
    /// Its kind.
    kind: Kind,
    /// Questions summarised; 1 for a single question.
    count: usize,
}

impl Shown {
    /// The notification for one question, or for `count` (> 1) questions opened in one window
    /// (`notice` is then the last of them and only the count is shown).
    fn of(notice: &Notice, count: usize) -> Shown {
        let text = NoticeText {
            server: &notice.server,
            kind: notice.kind,
            count,
        };
        let body = text.render().unwrap_or_else(|e| {
            tracing::warn!(error = %e, "notification text failed to render");
            String::new()
        });
        Shown {
            title: "mcp-consent".to_owned(),
            body: body.trim().to_owned(),
        }
    }
}

/// The desktop's notification service through `notify-rust`.
#[derive(Debug, Default)]
pub struct DesktopNotifier;

impl DesktopNotifier {
    /// Whether this session has somewhere to show notifications: macOS always; elsewhere a
    /// session bus (`DBUS_SESSION_BUS_ADDRESS`, or the `$XDG_RUNTIME_DIR/bus` socket that
    /// systemd user sessions provide).
    pub fn available() -> bool {
        if cfg!(target_os = "macos") {
            return true;
        }
        std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|a| !a.is_empty())
            || std::env::var_os("XDG_RUNTIME_DIR")
                .is_some_and(|d| std::path::Path::new(&d).join("bus").exists())
    }
}

impl Notifier for DesktopNotifier {
    fn show(&self, shown: &Shown) {
        // The freedesktop body may hold markup; a server name is not markup.
        let body = if cfg!(target_os = "macos") {
            shown.body.clone()
        } else {
            shown
                .body
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
        };
        let result = notify_rust::Notification::new()
            .appname("mcp-consent")
            .summary(&shown.title)
            .body(&body)
            .show();
        if let Err(e) = result {
            tracing::warn!(error = %e, "desktop notification failed");
        }
    }
}

/// The broker's side of notifications: cheap to clone, never blocking. Turned on and off by
/// the config (`[notifications] desktop`), also on reload.
#[derive(Clone)]
pub struct Notifications {
    enabled: Arc<AtomicBool>,
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
    /// Notifications that are never shown (no notifier).
    pub fn none() -> Notifications {
        Notifications {
            enabled: Arc::new(AtomicBool::new(false)),
            queue: None,
        }
    }

    /// Notifications shown through `notifier`, on when `enabled`. Starts the task that shows
    /// them (needs a tokio runtime); it ends when the last clone is dropped.
    pub fn start(notifier: Arc<dyn Notifier>, enabled: bool) -> Notifications {
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(deliver(rx, notifier, COALESCE));
        Notifications {
            enabled: Arc::new(AtomicBool::new(enabled)),
            queue: Some(tx),
        }
    }

    /// Turns notifications on or off (the config's `[notifications] desktop`, on reload).
    pub fn set_enabled(&self, enabled: bool) {
        self.enabled.store(enabled, Ordering::Relaxed);
    }

    /// Whether notifications are shown.
    pub fn enabled(&self) -> bool {
        self.queue.is_some() && self.enabled.load(Ordering::Relaxed)
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

/// Shows the first notice of a burst at once, then one notification per `window` (the service:
/// [`COALESCE`]) while notices keep coming.
async fn deliver(mut rx: mpsc::Receiver<Notice>, notifier: Arc<dyn Notifier>, window: Duration) {
    while let Some(first) = rx.recv().await {
        show(&notifier, Shown::of(&first, 1)).await;
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
                Some(n) => show(&notifier, Shown::of(&n, count)).await,
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
                server: server.into(),
                kind: Kind::Form,
            })
            .unwrap();
        }
        drop(tx);
        // The channel is closed after the burst, so `deliver` returns once it has shown it.
        deliver(rx, recorder.clone(), Duration::from_millis(20)).await;
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
    fn texts_name_server_and_kind_only() {
        let n = |kind| Notice {
            server: "everything".into(),
            kind,
        };
        assert_eq!(
            Shown::of(&n(Kind::Form), 1).body,
            "everything asks for input"
        );
        assert_eq!(
            Shown::of(&n(Kind::Sampling), 1).body,
            "everything asks to run a model"
        );
        assert_eq!(
            Shown::of(&n(Kind::Url), 1).body,
            "everything asks you to open a link"
        );
        assert_eq!(Shown::of(&n(Kind::Url), 3).body, "3 questions are waiting");
        assert_eq!(Shown::of(&n(Kind::Url), 1).title, "mcp-consent");
    }
}
