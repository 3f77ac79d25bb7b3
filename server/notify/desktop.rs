//! The desktop channel: a notification on the service's own machine through `notify-rust` (the
//! freedesktop notification service over the session bus, or macOS's notification centre).

use super::{Notifier, Shown};

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
