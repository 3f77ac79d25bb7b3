//! Desktop notifications as the person gets them: a question that opens shows one notification
//! naming its server and kind and nothing of the request; `[notifications] desktop = false`
//! shows none (and a reload turns them back on); `[notifications] language` picks their
//! language, also on reload.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_consent::clock::SystemClock;
use mcp_consent::config::{Config, NotificationSettings};
use mcp_consent::i18n::Lang;
use mcp_consent::notify::{Notifier, Shown};
use serde_json::{Value, json};

use crate::helpers::*;

/// Keeps what it was asked to show.
#[derive(Debug, Default)]
struct Recorder(Mutex<Vec<Shown>>);

impl Notifier for Recorder {
    fn show(&self, shown: &Shown) {
        self.0.lock().unwrap().push(shown.clone());
    }
}

impl Recorder {
    fn shown(&self) -> Vec<Shown> {
        self.0.lock().unwrap().clone()
    }

    async fn first(&self) -> Vec<Shown> {
        eventually(Duration::from_secs(10), || async {
            let shown = self.shown();
            (!shown.is_empty()).then_some(shown)
        })
        .await
        .expect("a notification was shown")
    }
}

const MARKER: &str = "secret-marker-7f3a";

/// Opens a form question whose message and schema carry [`MARKER`] from `server`.
async fn open_form(app: &TestApp, server: &str) -> String {
    let res = app
        .post_json(
            "/api/v1/requests",
            &json!({
                "server": server,
                "session": "s1",
                "tool": MARKER,
                "protocolVersion": "2025-11-25",
                "clientCapabilities": full_caps(),
                "request": {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {
                    "message": format!("Your nickname {MARKER}"),
                    "requestedSchema": {"type": "object", "properties": {
                        "nick": {"type": "string", "title": MARKER}}}}},
            }),
        )
        .await;
    assert_eq!(res.status(), reqwest::StatusCode::CREATED);
    res.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_question_shows_one_notification_with_server_and_kind_only() {
    let recorder = Arc::new(Recorder::default());
    // English whatever this machine's locale is.
    let english = Config {
        notifications: NotificationSettings {
            desktop: true,
            language: Some(Lang::En),
            channels: Default::default(),
        },
        ..Config::default()
    };
    let app = spawn_with_parts(english, Arc::new(SystemClock), Some(recorder.clone())).await;
    open_form(&app, "weather").await;
    let shown = recorder.first().await;
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0].title, "mcp-consent");
    assert_eq!(shown[0].body, "weather asks for input");
    assert!(!format!("{shown:?}").contains(MARKER), "{shown:?}");
}

#[tokio::test]
async fn config_off_shows_none_and_a_reload_turns_them_on() {
    let recorder = Arc::new(Recorder::default());
    let off = Config {
        notifications: NotificationSettings {
            desktop: false,
            language: Some(Lang::En),
            channels: Default::default(),
        },
        ..Config::default()
    };
    let app = spawn_with_parts(off, Arc::new(SystemClock), Some(recorder.clone())).await;
    open_form(&app, "quiet").await;
    let on_in_portuguese =
        Config::parse("[notifications]\ndesktop = true\nlanguage = \"pt-BR\"").unwrap();
    let restart = app.reloader.apply(on_in_portuguese).unwrap();
    assert!(restart.is_empty(), "{restart:?}");
    open_form(&app, "loud").await;
    // Notices are shown in the order questions open: had "quiet" been queued, it would come
    // first.
    let shown = recorder.first().await;
    assert_eq!(shown[0].body, "loud pede informações", "{shown:?}");
}
