//! Tells the person a question waits: a desktop notification when a question opens, naming the
//! server and the kind of question only, never anything from the request (a notification may be
//! shown on a locked screen or read by other programs on the session bus).
//!
//! [`Notifications`] is what the broker calls: it never blocks and never fails the question
//! path. It drops the notice into a bounded queue (a full queue drops it, with a log line); one
//! task takes them off, shows the first of a burst at once and then at most one notification
//! per [`COALESCE`] window, summarising the questions that opened meanwhile ("3 questions are
//! waiting"). The text is in the person's language: the config's `[notifications] language`, else
//! the system locale ([`system_lang`]: `LC_ALL`, `LC_MESSAGES`, `LANG`, as gettext reads them),
//! from the pages' catalogues (`notification-*`). Showing goes through a [`Notifier`]: [`DesktopNotifier`] (the freedesktop
//! notification service over the session bus, or macOS's notification centre, through
//! `notify-rust`) in the service, a recording one in tests.

use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::mpsc;

use crate::domain::Kind;
use crate::i18n::{Arg, I18n, Lang};

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

impl Shown {
    /// The notification for one question, or for `count` (> 1) questions opened in one window
    /// (`notice` is then the last of them and only the count is shown), in `lang`.
    pub fn of(notice: &Notice, count: usize, lang: Lang) -> Shown {
        let i18n = I18n::new(lang);
        let body = if count > 1 {
            i18n.t1("notification-waiting", "count", count)
        } else {
            i18n.t2(
                "notification-question",
                "server",
                Arg::from(notice.server.as_str()),
                "kind",
                notice.kind.as_str(),
            )
        };
        Shown {
            title: "mcp-consent".to_owned(),
            body,
        }
    }
}

/// The language of the system locale, as gettext picks the messages' locale: the first of
/// `LC_ALL`, `LC_MESSAGES`, `LANG` that is set and not empty ([`lang_of_locale`]).
pub fn system_lang() -> Lang {
    lang_of_env(|name| std::env::var(name).ok())
}

/// [`system_lang`] over any environment (`get` reads a variable).
pub fn lang_of_env(get: impl Fn(&str) -> Option<String>) -> Lang {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .into_iter()
        .find_map(|name| get(name).filter(|v| !v.is_empty()))
        .map_or(Lang::En, |v| lang_of_locale(&v))
}

/// The language of a POSIX locale name (`language[_territory][.codeset][@modifier]`):
/// `pt_BR.UTF-8` is pt-BR, `zh_CN.UTF-8` is zh-CN; other territories of the two languages
/// find them as `Accept-Language` does on the pages (`pt_PT` → pt-BR); `C`, `POSIX` and every
/// other language are English.
pub fn lang_of_locale(locale: &str) -> Lang {
    let name = locale
        .split(['.', '@'])
        .next()
        .unwrap_or_default()
        .replace('_', "-");
    if name.is_empty() || name == "C" || name == "POSIX" {
        return Lang::En;
    }
    Lang::negotiate(&name)
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
/// the config (`[notifications] desktop`), its language set by `[notifications] language`,
/// both also on reload.
#[derive(Clone)]
pub struct Notifications {
    enabled: Arc<AtomicBool>,
    /// The [`Lang::index`] of the texts' language.
    lang: Arc<AtomicUsize>,
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
            lang: Arc::new(AtomicUsize::new(0)),
            queue: None,
        }
    }

    /// Notifications shown through `notifier` in `lang`, on when `enabled`. Starts the task
    /// that shows them (needs a tokio runtime); it ends when the last clone is dropped.
    pub fn start(notifier: Arc<dyn Notifier>, enabled: bool, lang: Lang) -> Notifications {
        let (tx, rx) = mpsc::channel(QUEUE);
        let language = Arc::new(AtomicUsize::new(lang.index()));
        tokio::spawn(deliver(rx, notifier, COALESCE, language.clone()));
        Notifications {
            enabled: Arc::new(AtomicBool::new(enabled)),
            lang: language,
            queue: Some(tx),
        }
    }

    /// Sets the language of the texts (the config's `[notifications] language`, else the
    /// system locale; on reload too).
    pub fn set_language(&self, lang: Lang) {
        self.lang.store(lang.index(), Ordering::Relaxed);
    }

    /// The language of the texts.
    pub fn language(&self) -> Lang {
        Lang::ALL
            .get(self.lang.load(Ordering::Relaxed))
            .copied()
            .unwrap_or_default()
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
async fn deliver(
    mut rx: mpsc::Receiver<Notice>,
    notifier: Arc<dyn Notifier>,
    window: Duration,
    lang: Arc<AtomicUsize>,
) {
    let lang = move || {
        Lang::ALL
            .get(lang.load(Ordering::Relaxed))
            .copied()
            .unwrap_or_default()
    };
    while let Some(first) = rx.recv().await {
        show(&notifier, Shown::of(&first, 1, lang())).await;
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
                Some(n) => show(&notifier, Shown::of(&n, count, lang())).await,
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
        let lang = Arc::new(AtomicUsize::new(Lang::En.index()));
        deliver(rx, recorder.clone(), Duration::from_millis(20), lang).await;
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
            server: "everything".into(),
            kind,
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

    #[test]
    fn the_system_locale_is_read_like_gettext() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert_eq!(lang_of_env(env(&[("LANG", "pt_BR.UTF-8")])), Lang::PtBr);
        assert_eq!(lang_of_env(env(&[("LANG", "zh_CN.UTF-8")])), Lang::ZhCn);
        assert_eq!(lang_of_env(env(&[("LANG", "de_DE.UTF-8")])), Lang::En);
        assert_eq!(lang_of_env(env(&[("LANG", "C.UTF-8")])), Lang::En);
        assert_eq!(lang_of_env(env(&[])), Lang::En);
        // LC_ALL wins over LC_MESSAGES, which wins over LANG; an empty one does not count.
        assert_eq!(
            lang_of_env(env(&[
                ("LC_ALL", "zh_CN.UTF-8"),
                ("LC_MESSAGES", "pt_BR.UTF-8"),
                ("LANG", "en_US.UTF-8"),
            ])),
            Lang::ZhCn
        );
        assert_eq!(
            lang_of_env(env(&[
                ("LC_ALL", ""),
                ("LC_MESSAGES", "pt_BR.UTF-8"),
                ("LANG", "zh_CN.UTF-8"),
            ])),
            Lang::PtBr
        );
        assert_eq!(
            lang_of_env(env(&[("LC_MESSAGES", "C"), ("LANG", "pt_BR.UTF-8")])),
            Lang::En
        );
        assert_eq!(lang_of_locale("pt_BR.UTF-8@euro"), Lang::PtBr);
        assert_eq!(lang_of_locale("POSIX"), Lang::En);
    }
}
