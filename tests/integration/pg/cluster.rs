//! A real PostgreSQL server for the tests: a temporary cluster made with `initdb` and run with
//! `pg_ctl` by an ordinary user (as root, the `postgres` user of Debian's package, through
//! `runuser`), listening on a free loopback port, password authentication on TCP. The suite
//! shares one cluster (a database per test); tests that stop the server start their own.
//! scripts/test installs Debian's `postgresql` package when it is missing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// The superuser's password on every test cluster (TCP logins need it).
pub const PASSWORD: &str = "test-pw";

/// A running test cluster.
pub struct Cluster {
    /// Its data directory (inside `dir`).
    data: PathBuf,
    /// The loopback port it listens on.
    pub port: u16,
    /// Everything of the cluster: data, socket, log, password file.
    dir: PathBuf,
}

/// The directory of PostgreSQL's server programs: Debian's newest under /usr/lib/postgresql
/// (kept out of `PATH`), else wherever `PATH` has `initdb` (Nix).
fn bin_dir() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|dirs| dirs.flatten().map(|d| d.path().join("bin")).collect())
        .unwrap_or_default();
    found.retain(|d| d.join("initdb").exists());
    found.sort();
    let on_path = || {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .find(|d| d.join("initdb").exists())
    };
    found.pop().or_else(on_path).unwrap_or_else(|| {
        panic!("no PostgreSQL server found under /usr/lib/postgresql: run scripts/test, which installs Debian's postgresql package")
    })
}

/// A command running a PostgreSQL program as the cluster's owner (an ordinary user).
fn owner_cmd(program: &str) -> Command {
    let path = bin_dir().join(program);
    if unsafe { libc::geteuid() } == 0 {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(&path);
        c
    } else {
        Command::new(&path)
    }
}

/// Runs a server program as the cluster's owner; panics with its output when it fails.
fn as_owner(program: &str, args: &[&str]) -> std::process::Output {
    let out = owner_cmd(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A free loopback port (bound and released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Cluster {
    /// Makes and starts a new cluster.
    pub fn start() -> Cluster {
        let dir = tempfile::Builder::new()
            .prefix("mcp-consent-pg-")
            .tempdir_in("/tmp")
            .unwrap()
            .keep();
        if unsafe { libc::geteuid() } == 0 {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&dir)
                .status()
                .unwrap();
            assert!(ok.success());
        }
        let pwfile = dir.join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        if unsafe { libc::geteuid() } == 0 {
            Command::new("chown")
                .args(["postgres:postgres"])
                .arg(&pwfile)
                .status()
                .unwrap();
        }
        let data = dir.join("data");
        as_owner(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                &format!("--pwfile={}", pwfile.display()),
                "--no-sync",
                "-E",
                "UTF8",
            ],
        );
        let cluster = Cluster {
            data,
            port: free_port(),
            dir,
        };
        cluster.start_server();
        cluster
    }

    /// The suite's shared cluster, started on first use, stopped and removed when the tests
    /// end (a static is never dropped, so exit does what [`Drop`] does for the others).
    pub fn shared() -> &'static Cluster {
        static SHARED: OnceLock<Cluster> = OnceLock::new();
        SHARED.get_or_init(|| {
            let cluster = Cluster::start();
            extern "C" fn stop_shared() {
                if let Some(c) = SHARED.get() {
                    c.remove();
                }
            }
            unsafe { libc::atexit(stop_shared) };
            cluster
        })
    }

    /// Starts the server (again), waiting until it accepts connections.
    pub fn start_server(&self) {
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off -c max_connections=200",
            self.port,
            self.dir.display()
        );
        as_owner(
            "pg_ctl",
            &[
                "-D",
                self.data.to_str().unwrap(),
                "-l",
                self.dir.join("log").to_str().unwrap(),
                "-o",
                &options,
                "-w",
                "start",
            ],
        );
    }

    /// Stops the server at once (connections are cut, as when a database host goes away).
    pub fn stop(&self) {
        as_owner(
            "pg_ctl",
            &[
                "-D",
                self.data.to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
        );
    }

    /// The socket directory, for `psql` as the owner.
    fn socket_dir(&self) -> &Path {
        &self.dir
    }

    /// Runs `sql` as the superuser over the local socket.
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let out = as_owner_psql(self, database, sql);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// A fresh, empty database on this cluster; returns its URL (with the password in it).
    pub fn database(&self) -> String {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "t_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url_without_password(&name)
            .replacen("postgres@", &format!("postgres:{PASSWORD}@"), 1)
    }

    /// The URL of `database` without a password (for the password-file tests).
    pub fn url_without_password(&self, database: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/{database}?sslmode=disable",
            self.port
        )
    }
}

fn as_owner_psql(cluster: &Cluster, database: &str, sql: &str) -> std::process::Output {
    let out = owner_cmd("psql")
        .arg("-h")
        .arg(cluster.socket_dir())
        .args([
            "-p",
            &cluster.port.to_string(),
            "-U",
            "postgres",
            "-d",
            database,
        ])
        .args(["-v", "ON_ERROR_STOP=1", "-At", "-c", sql])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "psql {sql:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // A private cluster goes with its test (the shared one at exit).
        self.remove();
    }
}

impl Cluster {
    /// Stops the server and deletes the cluster's directory; stopping a stopped server fails,
    /// which is fine here (and nothing may panic at exit).
    fn remove(&self) {
        let _ = owner_cmd("pg_ctl")
            .args([
                "-D",
                self.data.to_str().unwrap_or(""),
                "-m",
                "immediate",
                "stop",
            ])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
