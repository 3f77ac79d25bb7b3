//! The shared-queue rows: two `mcp-consent serve` instances on one PostgreSQL database
//! (`$MCP_CONSENT_BENCH_DATABASE_URL`, which benches/run.sh sets to a temporary cluster), with
//! clients spread over both and each question answered on the other instance than the one that
//! opened it, against one SQLite instance measured in the same run.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use crate::Opts;
use crate::report::{Row, Table, ms, percentile, ratio};
use crate::store::Result;

/// The environment variable naming the database the rows use.
pub const DATABASE_ENV: &str = "MCP_CONSENT_BENCH_DATABASE_URL";

const CONFIG: &str = r#"
question_timeout_secs = 86400
max_pending_per_server = 1000000
[retention]
interval_secs = 86400
max_terminal = 100000000
"#;

/// One running instance.
struct Instance {
    _child: tokio::process::Child,
    base: String,
    token: String,
    http: Client,
}

impl Instance {
    /// `serve` on `dir`, on the shared database when `database` is given.
    async fn start(opts: &Opts, dir: &Path, database: Option<&str>) -> Result<Instance> {
        std::fs::create_dir_all(dir)?;
        let config = dir.join("config.toml");
        std::fs::write(&config, CONFIG)?;
        let state = dir.join("state");
        let mut cmd = tokio::process::Command::new(&opts.bin);
        cmd.arg("--state-dir")
            .arg(&state)
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(&config)
            .env("RUST_LOG", "warn")
            .env_remove("MCP_CONSENT_DATABASE_URL")
            .stdout(Stdio::piped())
            .stderr(Stdio::from(std::fs::File::create(dir.join("log"))?))
            .kill_on_drop(true);
        if let Some(url) = database {
            cmd.env("MCP_CONSENT_DATABASE_URL", url);
        }
        let mut child = cmd.spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let first = tokio::time::timeout(
            Duration::from_secs(30),
            tokio::io::BufReader::new(stdout).lines().next_line(),
        )
        .await??
        .ok_or("the service printed nothing")?;
        let base = first
            .strip_prefix("listening on ")
            .ok_or_else(|| format!("unexpected first line {first:?}"))?
            .trim()
            .to_owned();
        let token = std::fs::read_to_string(state.join("api-token"))?
            .trim()
            .to_owned();
        let http = Client::builder().timeout(Duration::from_secs(60)).build()?;
        Ok(Instance {
            _child: child,
            base,
            token,
            http,
        })
    }

    async fn call(&self, post: Option<&Value>, path: &str) -> Result<(StatusCode, Value)> {
        let url = format!("{}{path}", self.base);
        let req = match post {
            Some(body) => self.http.post(url).json(body),
            None => self.http.get(url),
        };
        let res = req.bearer_auth(&self.token).send().await?;
        let status = res.status();
        Ok((status, res.json().await.unwrap_or(Value::Null)))
    }

    async fn open(&self, session: &str, rpc_id: u64) -> Result<String> {
        let body = json!({
            "server": "bench", "session": session, "protocolVersion": "2025-11-25",
            "clientCapabilities": {"elicitation": {"form": {}}},
            "request": {"jsonrpc": "2.0", "id": rpc_id, "method": "elicitation/create", "params": {
                "message": "Name?", "requestedSchema": {"type": "object",
                    "properties": {"name": {"type": "string"}}, "required": ["name"]}}},
        });
        let (status, body) = self.call(Some(&body), "/api/v1/requests").await?;
        if status != StatusCode::CREATED {
            return Err(format!("open: {status} {body}").into());
        }
        Ok(body["id"].as_str().ok_or("no id")?.to_owned())
    }

    async fn answer(&self, id: &str) -> Result<()> {
        let body = json!({"action": "accept", "content": {"name": "Ada"}});
        let (status, body) = self
            .call(Some(&body), &format!("/api/v1/questions/{id}/answer"))
            .await?;
        if status != StatusCode::OK {
            return Err(format!("answer: {status} {body}").into());
        }
        Ok(())
    }

    async fn response(&self, id: &str, wait: u64) -> Result<()> {
        let (status, body) = self
            .call(None, &format!("/api/v1/requests/{id}/response?wait={wait}"))
            .await?;
        if status != StatusCode::OK || body.get("response").is_none() {
            return Err(format!("response: {status} {body}").into());
        }
        Ok(())
    }
}

/// Questions per second over `secs` with `clients` clients: client `c` opens on
/// `instances[c % n]`, answers on the next one, reads the response where it opened.
async fn throughput(instances: &[Arc<Instance>], clients: usize, secs: f64) -> (f64, u64) {
    static RUN: AtomicU64 = AtomicU64::new(0);
    let run = RUN.fetch_add(1, Ordering::Relaxed);
    let (done, errors) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(secs);
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let opener = instances[c % instances.len()].clone();
            let answerer = instances[(c + 1) % instances.len()].clone();
            let (done, errors) = (done.clone(), errors.clone());
            tokio::spawn(async move {
                let session = format!("t{run}-{c}");
                let mut i = 0;
                while Instant::now() < deadline {
                    i += 1;
                    let cycle = async {
                        let id = opener.open(&session, i).await?;
                        answerer.answer(&id).await?;
                        opener.response(&id, 0).await
                    };
                    let counter = if cycle.await.is_ok() { &done } else { &errors };
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in tasks {
        let _ = t.await;
    }
    let rate = done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64();
    (rate, errors.load(Ordering::Relaxed))
}

/// Answer → delivery: a long-poll waits on `opener`, the answer is given on `answerer`; the
/// time from sending the answer to the long-poll's return, `n` times.
async fn delivery(
    opener: &Arc<Instance>,
    answerer: &Arc<Instance>,
    n: usize,
) -> Result<Vec<Duration>> {
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let id = opener.open("latency", i as u64).await?;
        let poll = {
            let (opener, id) = (opener.clone(), id.clone());
            tokio::spawn(async move {
                opener.response(&id, 30).await?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(Instant::now())
            })
        };
        // The long-poll is sent and waiting before the answer goes.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let sent = Instant::now();
        answerer.answer(&id).await?;
        let delivered = poll.await??;
        times.push(delivered.saturating_duration_since(sent));
    }
    Ok(times)
}

pub async fn run(opts: &Opts, table: &mut Table) {
    let Some(url) = std::env::var(DATABASE_ENV).ok().filter(|u| !u.is_empty()) else {
        return table.skip(
            "shared queue (two instances on one PostgreSQL)",
            &format!("no {DATABASE_ENV} (benches/run.sh sets it when PostgreSQL is installed)"),
            "",
        );
    };
    if let Err(e) = rows(opts, &url, table).await {
        table.skip("shared queue rows", &format!("stopped early: {e}"), "");
    }
}

async fn rows(opts: &Opts, url: &str, table: &mut Table) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let a = Arc::new(Instance::start(opts, &dir.path().join("a"), Some(url)).await?);
    let b = Arc::new(Instance::start(opts, &dir.path().join("b"), Some(url)).await?);
    let lone = Arc::new(Instance::start(opts, &dir.path().join("sqlite"), None).await?);
    let secs = if opts.quick { 2.0 } else { 5.0 };
    let clients = 16;
    let (shared_rate, shared_errors) = throughput(&[a.clone(), b.clone()], clients, secs).await;
    let (lone_rate, lone_errors) = throughput(std::slice::from_ref(&lone), clients, secs).await;
    table.add(Row {
        measure: format!(
            "shared queue throughput: 2 instances on one PostgreSQL, {clients} clients spread over both, each question answered on the other instance"
        ),
        figure: format!("{shared_rate:.0} questions/s, {shared_errors} errors"),
        baseline: format!("{lone_rate:.0} questions/s on one SQLite instance, {lone_errors} errors"),
        ratio: ratio(shared_rate, lone_rate),
        goal: "same order as one SQLite instance",
    });
    let n = if opts.quick { 50 } else { 200 };
    let mut across = delivery(&a, &b, n).await?;
    let mut alone = delivery(&lone, &lone, n).await?;
    let (p50, p99) = (percentile(&mut across, 50.0), percentile(&mut across, 99.0));
    let (b50, b99) = (percentile(&mut alone, 50.0), percentile(&mut alone, 99.0));
    table.add(Row {
        measure: "answer → delivery, answered on another instance than the waiting long-poll's"
            .to_owned(),
        figure: format!("p50 {}, p99 {}", ms(p50), ms(p99)),
        baseline: format!("p50 {}, p99 {} on one SQLite instance", ms(b50), ms(b99)),
        ratio: ratio(p50.as_secs_f64(), b50.as_secs_f64()),
        goal: "p99 < 1 s",
    });
    Ok(())
}
