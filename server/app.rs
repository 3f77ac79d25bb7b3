//! Builds the service from a [`Config`] and a state directory: store, API token, broker, web
//! server and background jobs. `main` and the tests both go through [`Application::build`].

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use actix_web::middleware::{DefaultHeaders, from_fn};
use actix_web::{App, HttpServer, web};

use crate::auth::passphrase::{self, PassphraseError};
use crate::auth::rotate::{self, TokenError};
use crate::auth::{Auth, throttle::LoginGuard};
use crate::broker::{Broker, BrokerError};
use crate::clock::{Clock, SystemClock};
use crate::config::{Config, ConfigError};
use crate::db::{Db, DbError};
use crate::jobs::retention;
use crate::metrics::{Metrics, MetricsError};
use crate::notify::{
    Channel, ChannelError, DesktopNotifier, Links, Notifications, Notifier, Parts,
};
use crate::paths::{PathError, StateDir, write_private};
use crate::reload::{self, ReloadError, Reloader};
use crate::review::Reviewer;
use crate::sampling::ProviderError;
use crate::stores::{self, DatabaseError, Stores};
use crate::web::auth::{body_deadline, check_host_and_origin, mark_socket_connections};
use crate::web::{AppState, allowed_hosts};

/// How often pending questions are checked against their deadline.
const EXPIRY_SWEEP: Duration = Duration::from_secs(2);
/// Time a client has to send a request's head (actix answers 408 after it).
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);
/// Time a closing connection has to finish.
const DISCONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// Connections each worker of a listener holds at once (the TCP port and the socket each have their
/// own workers and budget); further ones wait in the
/// kernel's backlog. A waiting long-poll (a proxy whose question is open) holds one and costs
/// no CPU, so the cap is set by file descriptors, not work: 2,048 a worker lets 1,000 proxies
/// wait while pages and other clients are served (start-up raises the soft descriptor limit,
/// see [`raise_descriptor_limit`]); slow clients are bounded by the head and body timeouts.
pub const MAX_CONNECTIONS_PER_WORKER: usize = 2048;

/// Raises this process's soft limit on open files towards the hard limit (at most
/// `wanted`), as servers do: desktop sessions often start services with a soft limit of 1,024,
/// below what [`MAX_CONNECTIONS_PER_WORKER`] allows. Returns the soft limit in force after.
pub fn raise_descriptor_limit(wanted: u64) -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed to them.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 0;
        }
        let target = wanted.min(limit.rlim_max);
        if limit.rlim_cur < target {
            let raised = libc::rlimit {
                rlim_cur: target,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                return target;
            }
        }
    }
    limit.rlim_cur
}

/// Why the service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// The config is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The state directory could not be prepared.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The store could not be opened or migrated.
    #[error("cannot open the store")]
    Db(#[from] DbError),
    /// The shared database is unusable (its settings, or it cannot be reached or migrated).
    #[error(transparent)]
    Database(#[from] DatabaseError),
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address.
        addr: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The API token could not be created or read.
    #[error("cannot set up the API token")]
    Token(#[source] TokenError),
    /// The file named by `metrics_token_file` could not be read, or others may read, write or
    /// replace it.
    #[error("cannot use the metrics token")]
    MetricsToken(#[source] PathError),
    /// The provider clients could not be set up.
    #[error("cannot set up models")]
    Models(#[source] ProviderError),
    /// Model runs interrupted by the last stop could not be sent back to review.
    #[error("cannot recover interrupted model runs")]
    Recover(#[source] BrokerError),
    /// The passphrase hash file is unusable.
    #[error(transparent)]
    Passphrase(#[from] PassphraseError),
    /// A notice channel cannot be set up (a secret file unusable).
    #[error(transparent)]
    Channel(#[from] ChannelError),
    /// The metrics registry could not be built.
    #[error("cannot register metrics")]
    Metrics(#[source] MetricsError),
    /// The web server failed.
    #[error("web server failed")]
    Server(#[source] std::io::Error),
}

/// One actix server over the shared state, with the service's middleware and limits (a macro:
/// the server's type names the closure that builds each worker's app).
macro_rules! serve {
    ($data:expr) => {{
        let data = $data;
        HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .wrap(from_fn(crate::web::lang::localize_errors))
                .wrap(from_fn(body_deadline))
                .wrap(from_fn(check_host_and_origin))
                .wrap(from_fn(crate::web::public::secure_cookies))
                .wrap(from_fn(crate::web::pages::return_to_question))
                .wrap(security_headers())
                .configure(crate::web::configure)
        })
        .on_connect(mark_socket_connections)
        .client_request_timeout(HEADER_TIMEOUT)
        .client_disconnect_timeout(DISCONNECT_TIMEOUT)
        .max_connections(MAX_CONNECTIONS_PER_WORKER)
        .shutdown_timeout(5)
        .disable_signals()
    }};
}

/// A bound, ready-to-run service.
pub struct Application {
    addr: SocketAddr,
    /// The TCP port (browser, `/metrics`, `--broker` clients).
    tcp: actix_web::dev::Server,
    /// The owner-only Unix socket (local clients), with its own connection budget.
    socket: actix_web::dev::Server,
    broker: Broker,
    /// Kept alive for the broker's sampling hooks (the broker holds them weakly).
    _review: std::sync::Arc<Reviewer>,
    stores: Stores,
    reloader: Reloader,
    /// SIGHUP, listened for from the build on so a reload request is never the default
    /// action (which ends the process).
    hangup: Option<tokio::signal::unix::Signal>,
}

impl Application {
    /// Prepares the state directory, opens and migrates the store, sets up the API token,
    /// binds `listen` (port 0 picks a free port) and writes `<state>/service-url`.
    ///
    /// # Errors
    /// [`StartupError`] naming what failed.
    pub async fn build(
        config: &Config,
        state_root: std::path::PathBuf,
        listen: &str,
    ) -> Result<Application, StartupError> {
        Self::build_with_clock(config, state_root, listen, Arc::new(SystemClock)).await
    }

    /// [`Application::build_with_clock`] with the desktop notifier when this session has one
    /// (a session bus, or macOS), else without notifications (logged once).
    ///
    /// # Errors
    /// [`StartupError`] naming what failed.
    pub async fn build_with_clock(
        config: &Config,
        state_root: std::path::PathBuf,
        listen: &str,
        clock: Arc<dyn Clock>,
    ) -> Result<Application, StartupError> {
        let notifier: Option<Arc<dyn Notifier>> = if DesktopNotifier::available() {
            Some(Arc::new(DesktopNotifier))
        } else {
            tracing::info!(
                "no session bus (DBUS_SESSION_BUS_ADDRESS): desktop notifications are skipped"
            );
            None
        };
        Self::build_with(config, state_root, listen, clock, notifier).await
    }

    /// [`Application::build`] with every part of the service reading the time from `clock`
    /// (tests move a [`crate::clock::ManualClock`]) and showing notifications through
    /// `notifier` (none: never; the config's `[notifications] desktop` turns them on and off).
    ///
    /// # Errors
    /// [`StartupError`] naming what failed.
    pub async fn build_with(
        config: &Config,
        state_root: std::path::PathBuf,
        listen: &str,
        clock: Arc<dyn Clock>,
        notifier: Option<Arc<dyn Notifier>>,
    ) -> Result<Application, StartupError> {
        config.check_listen(listen)?;
        // `prepare` tightens the store's files before SQLite opens them: tightening after would
        // open and close the database file here, and closing any descriptor of a file drops
        // every POSIX lock this process holds on it, SQLite's included.
        let state = StateDir::prepare(state_root)?;
        let stores = stores::open(config, &state).await?;
        let tokens = rotate::at_start(&state, &stores.local, clock.as_ref())
            .await
            .map_err(StartupError::Token)?;

        // Only an address that parsed is named: a config error never quotes a value, and a
        // `listen` that is not an address could be a secret typed on the wrong line.
        let named = listen
            .parse::<std::net::SocketAddr>()
            .map_or_else(|_| "the listen address".to_owned(), |a| a.to_string());
        let bind_error = |source| StartupError::Bind {
            addr: named.clone(),
            source,
        };
        let listener = TcpListener::bind(listen).map_err(bind_error)?;
        let addr = listener.local_addr().map_err(bind_error)?;
        let base_url = format!("http://{addr}");
        let socket = bind_socket(&state)?;
        write_private(&state.service_url_file(), &format!("{base_url}\n"))?;

        let links_base = config
            .public_url
            .as_ref()
            .map_or_else(|| base_url.clone(), |p| p.base());
        let (broker, review) =
            start_broker(config, &stores, clock.clone(), notifier, &links_base).await?;
        let data = web::Data::new(AppState {
            broker: broker.clone(),
            review: review.clone(),
            auth: Auth::new(stores.local.clone(), clock.clone()),
            tokens,
            allowed_hosts: allowed_hosts(addr),
            listen_addr: addr,
            state_dir: state.clone(),
            login_guard: LoginGuard::default(),
            base_url: links_base,
            public_url: config.public_url.clone(),
            max_request_bytes: config.max_request_bytes,
            metrics_token: metrics_token(config)?,
            passphrase_hash: passphrase_hash(config)?,
            retention: retention::OnDemand::new(
                stores.queue.clone(),
                stores.local.clone(),
                broker.metrics().clone(),
                clock.clone(),
            ),
        });
        let tcp = serve!(data.clone())
            .listen(listener)
            .map_err(bind_error)?
            .run();
        // The owner's socket is a server of its own, so its connections never wait behind the
        // TCP port's budget (which anyone on the machine can fill with slow clients).
        let socket = serve!(data)
            .listen_uds(socket)
            .map_err(|source| StartupError::Bind {
                addr: state.api_socket().display().to_string(),
                source,
            })?
            .run();
        Ok(Application {
            addr,
            tcp,
            socket,
            broker: broker.clone(),
            stores,
            reloader: Reloader::new(broker, review.clone(), config.clone(), None),
            hangup: listen_for_hangup(),
            _review: review,
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A handle to stop the service's listeners (graceful with `stop(true)`).
    pub fn handle(&self) -> ServiceHandle {
        ServiceHandle {
            tcp: self.tcp.handle(),
            socket: self.socket.handle(),
        }
    }

    /// This service re-reading `file` on SIGHUP (`None`: the default config file).
    #[must_use]
    pub fn with_config_file(mut self, file: Option<std::path::PathBuf>) -> Application {
        let current = self.reloader.clone();
        self.reloader = current.with_file(file);
        self
    }

    /// What swaps a new config in (SIGHUP does through it; tests call it directly).
    pub fn reloader(&self) -> &Reloader {
        &self.reloader
    }

    /// The broker (tests drive it directly).
    pub fn broker(&self) -> &Broker {
        &self.broker
    }

    /// Serves until SIGINT/SIGTERM (actix stops accepting, then finishes in-flight requests
    /// for up to 5 seconds), running the expiry sweep and the retention job alongside.
    ///
    /// # Errors
    /// [`StartupError::Server`].
    pub async fn run_until_stopped(self) -> Result<(), StartupError> {
        let broker = self.broker.clone();
        let sweeper = tokio::spawn(async move {
            let mut tick = tokio::time::interval(EXPIRY_SWEEP);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                tick.tick().await;
                if let Err(e) = broker.expire_due().await {
                    tracing::warn!(error = %e, "expiry sweep failed");
                }
            }
        });
        let pruner = tokio::spawn(prune_with_reloads(
            self.stores.clone(),
            self.reloader.retention(),
            self.broker.metrics().clone(),
            self.broker.clock(),
        ));
        let reloader = self.reloader.clone();
        let handle = self.handle();
        let hangup = self.hangup;
        let reloads = tokio::spawn(async move {
            let Some(mut hangup) = hangup else { return };
            while hangup.recv().await.is_some() {
                tracing::info!("SIGHUP: reloading the config");
                reloader.reload_from_file();
            }
        });
        let broker = self.broker.clone();
        let signals = tokio::spawn(async move {
            shutdown_signal().await;
            tracing::info!(
                "shutting down: ending long-polls and event streams, finishing requests"
            );
            broker.begin_shutdown();
            handle.stop(true).await;
        });
        let (tcp, socket) = futures_util::future::join(self.tcp, self.socket).await;
        let result = tcp.and(socket).map_err(StartupError::Server);
        sweeper.abort();
        pruner.abort();
        reloads.abort();
        signals.abort();
        result
    }
}

/// Stops both of the service's listeners.
#[derive(Clone)]
pub struct ServiceHandle {
    tcp: actix_web::dev::ServerHandle,
    socket: actix_web::dev::ServerHandle,
}

impl ServiceHandle {
    /// Stops accepting on the TCP port and the socket; `graceful` lets in-flight requests
    /// finish (for up to 5 seconds).
    pub async fn stop(&self, graceful: bool) {
        futures_util::future::join(self.tcp.stop(graceful), self.socket.stop(graceful)).await;
    }
}

/// The broker with its metrics, notifications and tool rules, following other instances of a
/// shared store, and the reviewer attached to it with the runs a restart interrupted sent
/// back to review.
async fn start_broker(
    config: &Config,
    stores: &Stores,
    clock: Arc<dyn Clock>,
    notifier: Option<Arc<dyn Notifier>>,
    links_base: &str,
) -> Result<(Broker, Arc<Reviewer>), StartupError> {
    let metrics = Metrics::new().map_err(StartupError::Metrics)?;
    let engine = reload::engine(config).map_err(|e| match e {
        ReloadError::Config(e) => StartupError::Config(e),
        ReloadError::Models(e) => StartupError::Models(e),
        ReloadError::Channel(e) => StartupError::Channel(e),
    })?;
    let notifications = Notifications::start(Parts {
        desktop: notifier,
        desktop_on: config.notifications.desktop,
        lang: config.notifications.lang(),
        channels: Channel::build_all(&config.notifications.channels.0)?,
        links: Links::new(links_base),
        waiting: waiting_count(stores.queue.clone()),
        failed: metrics.notifications_failed.clone(),
    });
    let broker = Broker::new(
        stores.queue.clone(),
        reload::broker_settings(config),
        metrics,
    )
    .with_clock(clock)
    .with_notifications(notifications);
    broker.set_tool_rules(config.tools.clone());
    if let Some(heard) = stores.queue.take_heard() {
        tokio::spawn(broker.clone().follow_other_instances(heard));
    }
    let review = Reviewer::new(broker.clone(), stores.queue.clone(), engine).attach();
    let interrupted = review.recover_runs().await.map_err(StartupError::Recover)?;
    if interrupted > 0 {
        tracing::warn!(
            runs = interrupted,
            "model runs interrupted by a restart go back to request review"
        );
    }
    Ok((broker, review))
}

/// The token `/metrics` asks for, read from `metrics_token_file` when it is set.
fn metrics_token(config: &Config) -> Result<Option<String>, StartupError> {
    let Some(path) = &config.metrics_token_file else {
        return Ok(None);
    };
    Ok(Some(
        crate::access_files::read(path, crate::access_files::Holds::Secret)
            .map_err(StartupError::MetricsToken)?
            .trim()
            .to_owned(),
    ))
}

/// The passphrase hash sign-in checks, when a hash file is configured.
fn passphrase_hash(config: &Config) -> Result<Option<String>, StartupError> {
    // The config key wins; the environment variable is how the home-manager module passes
    // a secret path without writing it into the config.
    let passphrase_file = config.passphrase_hash_file.clone().or_else(|| {
        std::env::var_os("MCP_CONSENT_PASSPHRASE_HASH_FILE").map(std::path::PathBuf::from)
    });
    Ok(match passphrase_file {
        Some(path) => Some(passphrase::load_hash(&path)?),
        None => None,
    })
}

/// SIGHUP, listened for from the build on so a reload request is never the default action
/// (which ends the process).
fn listen_for_hangup() -> Option<tokio::signal::unix::Signal> {
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(error = %e, "cannot listen for SIGHUP; reloads need a restart");
            None
        }
    }
}

/// The retention job with the bounds in force, restarted when a reload changes them.
async fn prune_with_reloads(
    stores: Stores,
    mut policy: tokio::sync::watch::Receiver<crate::config::Retention>,
    metrics: Metrics,
    clock: Arc<dyn Clock>,
) {
    loop {
        let current = policy.borrow_and_update().clone();
        let job = tokio::spawn(retention::run_stores(
            stores.queue.clone(),
            stores.local.clone(),
            current,
            metrics.clone(),
            clock.clone(),
        ));
        let changed = policy.changed().await;
        job.abort();
        if changed.is_err() {
            return;
        }
    }
}

/// Counts the pending questions in `db`, for the notices that say how many wait.
fn waiting_count(db: Db) -> crate::notify::WaitingCount {
    Arc::new(move || {
        let db = db.clone();
        Box::pin(async move {
            db.run(|conn| Ok(crate::db::Question::count_pending(conn)?))
                .await
                .ok()
                .and_then(|n| u64::try_from(n).ok())
        })
    })
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// CSP without inline script, no sniffing, no referrer, no framing.
fn security_headers() -> DefaultHeaders {
    DefaultHeaders::new()
        .add((
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src data:; \
             connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ))
        .add(("X-Content-Type-Options", "nosniff"))
        .add(("Referrer-Policy", "same-origin"))
        .add(("X-Frame-Options", "DENY"))
}

/// Binds `<state>/broker/api.sock` (0600 inside the 0700 directory), replacing a socket left
/// by an earlier run; anything else at that path (a link, a file, another user's socket) is
/// refused.
fn bind_socket(state: &StateDir) -> Result<std::os::unix::net::UnixListener, StartupError> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
    let path = state.api_socket();
    let bind_error = |source| StartupError::Bind {
        addr: path.display().to_string(),
        source,
    };
    match std::fs::symlink_metadata(&path) {
        Ok(meta) => {
            // SAFETY: geteuid(2) has no preconditions and cannot fail.
            let me = unsafe { libc::geteuid() };
            if !meta.file_type().is_socket() || meta.uid() != me {
                return Err(bind_error(std::io::Error::other(
                    "the path exists and is not this user's socket",
                )));
            }
            std::fs::remove_file(&path).map_err(bind_error)?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(bind_error(e)),
    }
    let listener = std::os::unix::net::UnixListener::bind(&path).map_err(bind_error)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(bind_error)?;
    Ok(listener)
}

/// `mcp-consent prune`: opens the store of `state_root` and prunes once with the config's
/// bounds.
///
/// # Errors
/// [`StartupError`] when the store cannot be opened or the run fails.
pub async fn prune(
    config: &Config,
    state_root: std::path::PathBuf,
) -> Result<retention::PruneReport, StartupError> {
    // Tightened by `prepare`, before SQLite holds locks on the file (see `build_with_clock`).
    let state = StateDir::prepare(state_root)?;
    let stores = stores::open(config, &state).await?;
    Ok(retention::prune_stores(
        &stores.queue,
        &stores.local,
        &config.retention,
        SystemClock.now_ms(),
        |_| {},
    )
    .await?)
}
