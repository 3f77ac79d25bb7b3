//! The service rows: one `mcp-consent serve` on a fresh state directory, driven over its JSON
//! API like proxies and a browser drive it, against `/healthz` and a SQLite floor.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use crate::Opts;
use crate::report::{Row, Table, median, mib, ms, percentile, process_cpu, ratio, status_field};
use crate::store::{self, Fill, Floor};

type Result<T> = store::Result<T>;

/// A running service and what its clients need.
struct Service {
    child: tokio::process::Child,
    pid: u32,
    base: String,
    token: String,
    http: Client,
    state: PathBuf,
}

const CONFIG: &str = r#"
question_timeout_secs = 86400
max_pending_per_server = 1000000
[retention]
max_age_days = 30
max_terminal = 100000000
interval_secs = 86400
"#;

impl Service {
    async fn start(opts: &Opts, dir: &Path) -> Result<Service> {
        let state = dir.join("state");
        let config = dir.join("config.toml");
        std::fs::write(&config, CONFIG)?;
        let log = std::fs::File::create(dir.join("service.log"))?;
        let mut child = tokio::process::Command::new(&opts.bin)
            .arg("--state-dir")
            .arg(&state)
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(&config)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .kill_on_drop(true)
            .spawn()?;
        let pid = child.id().ok_or("no pid")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let first = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
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
        let http = Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(120))
            .build()?;
        Ok(Service {
            child,
            pid,
            base,
            token,
            http,
            state,
        })
    }

    /// Stops the service (SIGTERM, then waits). The store is only ever touched directly while
    /// no service runs: a second process writing it alongside is not a supported setup.
    async fn stop(self: Arc<Self>) -> Result<()> {
        let mut me = Arc::try_unwrap(self).map_err(|_| "the service is still in use")?;
        // SAFETY: signals the service process this bench started.
        unsafe {
            libc::kill(me.pid as i32, libc::SIGTERM);
        }
        tokio::time::timeout(Duration::from_secs(20), me.child.wait()).await??;
        Ok(())
    }

    fn db(&self) -> PathBuf {
        self.state.join("broker/broker.db")
    }

    fn cpu(&self) -> Duration {
        process_cpu(self.pid)
    }

    async fn post(&self, path: &str, body: &Value) -> Result<(StatusCode, Value)> {
        let res = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await?;
        let status = res.status();
        Ok((status, res.json().await.unwrap_or(Value::Null)))
    }

    async fn get(&self, path: &str) -> Result<(StatusCode, Value)> {
        let res = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await?;
        let status = res.status();
        Ok((status, res.json().await.unwrap_or(Value::Null)))
    }

    async fn healthz(&self) -> Result<()> {
        let res = self
            .http
            .get(format!("{}/healthz", self.base))
            .send()
            .await?;
        if !res.status().is_success() {
            return Err(format!("healthz {}", res.status()).into());
        }
        res.bytes().await?;
        Ok(())
    }

    /// Opens a form question for (`server`, `session`, `rpc_id`); its id.
    async fn open(&self, server: &str, session: &str, rpc_id: u64) -> Result<String> {
        let body = json!({
            "server": server, "session": session, "tool": "demo",
            "protocolVersion": "2025-11-25",
            "clientCapabilities": {"sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}},
            "request": {"jsonrpc": "2.0", "id": rpc_id, "method": "elicitation/create", "params": {
                "message": "Profile",
                "requestedSchema": {"type": "object", "properties": {
                    "name": {"type": "string", "minLength": 2},
                    "age": {"type": "integer", "minimum": 18, "maximum": 130, "default": 30}
                }, "required": ["name"]}}},
        });
        let (status, body) = self.post("/api/v1/requests", &body).await?;
        if status != StatusCode::CREATED {
            return Err(format!("open: {status} {body}").into());
        }
        Ok(body["id"].as_str().ok_or("open: no id")?.to_owned())
    }

    /// open → answer → response: one question's life as a proxy and a person see it.
    async fn cycle(&self, server: &str, session: &str, rpc_id: u64) -> Result<Duration> {
        let start = Instant::now();
        let id = self.open(server, session, rpc_id).await?;
        let answer = json!({"action": "accept", "content": {"name": "Ada"}});
        let (status, body) = self
            .post(&format!("/api/v1/questions/{id}/answer"), &answer)
            .await?;
        if !status.is_success() {
            return Err(format!("answer: {status} {body}").into());
        }
        let (status, body) = self
            .get(&format!("/api/v1/requests/{id}/response?wait=0"))
            .await?;
        if status != StatusCode::OK || body.get("response").is_none() {
            return Err(format!("response: {status} {body}").into());
        }
        Ok(start.elapsed())
    }

    /// A client logged in through a one-time link, as a browser is (the link asked for over
    /// the owner-only socket, as `mcp-consent login` does: the only door that makes one).
    async fn browser(&self) -> Result<Client> {
        let res = Client::builder()
            .unix_socket(self.state.join("broker/api.sock"))
            .build()?
            .post(format!("{}/api/v1/login-links", self.base))
            .bearer_auth(&self.token)
            .json(&json!({}))
            .send()
            .await?;
        let status = res.status();
        let body: Value = res.json().await.unwrap_or(Value::Null);
        if status != StatusCode::CREATED {
            return Err(format!("login link: {status}").into());
        }
        let url = body["url"].as_str().ok_or("no login url")?;
        let browser = Client::builder()
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(120))
            .build()?;
        browser.get(url).send().await?;
        Ok(browser)
    }
}

pub async fn run(opts: &Opts, table: &mut Table) {
    let Ok(dir) = tempfile::tempdir() else {
        return table.skip("service rows", "no temporary directory", "");
    };
    if let Err(e) = rows(opts, dir.path(), table).await {
        table.skip("service rows", &format!("stopped early: {e}"), "");
    }
}

async fn start(opts: &Opts, dir: &Path) -> Result<Arc<Service>> {
    let svc = Arc::new(Service::start(opts, dir).await?);
    svc.healthz().await?;
    Ok(svc)
}

async fn rows(opts: &Opts, dir: &Path, table: &mut Table) -> Result<()> {
    let svc = start(opts, dir).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let idle_rss = status_field(svc.pid, "VmRSS");

    // Sequential cycles (the SQLite floor is measured below, with the service stopped).
    let n = if opts.quick { 300 } else { 2000 };
    let mut cycles = Vec::with_capacity(n);
    for i in 0..n {
        cycles.push(svc.cycle("seq", "s", i as u64).await?);
    }
    let template = svc.open("template", "t", 1).await?;
    let decided_template = {
        let (_, list) = svc.get("/api/v1/questions?state=accepted").await?;
        list["questions"][0]["id"]
            .as_str()
            .map(str::to_owned)
            .ok_or("no decided question")?
    };

    // Throughput against /healthz at the same concurrency.
    let secs = if opts.quick { 1.5 } else { 3.0 };
    let levels: &[usize] = if opts.quick { &[8, 128] } else { &[8, 32, 128] };
    for &c in levels {
        let h = load(&svc, c, secs, Load::Healthz).await;
        let q = load(&svc, c, secs, Load::Questions).await;
        table.add(Row {
            measure: format!("broker throughput, {c} concurrent clients"),
            figure: format!(
                "{:.0} questions/s, {:.2} ms service CPU per question, {} threads, {} errors",
                q.rate,
                q.cpu_per_op_ms,
                status_field(svc.pid, "Threads"),
                q.errors
            ),
            baseline: format!("{:.0} `/healthz`/s", h.rate),
            ratio: format!("{} (3 requests per question)", ratio(q.rate, h.rate)),
            goal: "≥ 2,000 questions/s",
        });
    }

    // Proxies waiting on a question (long-polls) while others work.
    let waiters: &[usize] = if opts.quick { &[50] } else { &[50, 1000] };
    for &k in waiters {
        waiting(&svc, k, secs, table).await?;
    }
    let db = svc.db();
    svc.stop().await?;

    // The SQLite floor, on a fresh store of the same shape.
    let prune_count = if opts.quick { 20_000 } else { 100_000 };
    let (floor_db, floor_template) = (db.clone(), template.clone());
    let (mut floor_cycles, floor_prune) = tokio::task::spawn_blocking(move || -> Result<_> {
        let mut floor = Floor::new(&floor_db, &floor_template)?;
        let mut v = Vec::with_capacity(n);
        for i in 0..n {
            v.push(floor.cycle(10_000_000 + i as i64)?);
        }
        let prune = floor.prune(prune_count)?;
        Ok((v, prune))
    })
    .await??;
    let (p50, p99) = (median(&mut cycles), percentile(&mut cycles, 99.0));
    let (f50, f99) = (
        median(&mut floor_cycles),
        percentile(&mut floor_cycles, 99.0),
    );
    table.add(Row {
        measure: "broker cycle open → answer → response, sequential".to_owned(),
        figure: format!("p50 {}, p99 {}", ms(p50), ms(p99)),
        baseline: format!(
            "SQLite insert+update+read: p50 {}, p99 {}",
            ms(f50),
            ms(f99)
        ),
        ratio: format!("p50 {}", ratio(p50.as_secs_f64(), f50.as_secs_f64())),
        goal: "p50 ≤ 3× the floor",
    });

    // Prune at start: decided questions 60 days old, 8 clients working meanwhile.
    let (fill_db, t) = (db.clone(), decided_template);
    tokio::task::spawn_blocking(move || {
        store::fill(
            &fill_db,
            &t,
            Fill::Decided {
                age_ms: 60 * 86_400_000,
            },
            1,
            prune_count,
        )
    })
    .await??;
    prune_at_start(opts, dir, prune_count, floor_prune, table).await?;

    // Queue page and list with many pending.
    let mut filled = 0i64;
    let mut pending_rss = 0;
    let sizes: &[i64] = if opts.quick {
        &[10_000]
    } else {
        &[10_000, 100_000]
    };
    for &size in sizes {
        let (fill_db, template, from, to) = (db.clone(), template.clone(), filled + 1, size);
        tokio::task::spawn_blocking(move || {
            store::fill(&fill_db, &template, Fill::Pending, from, to)
        })
        .await??;
        filled = size;
        let svc = start(opts, dir).await?;
        let browser = svc.browser().await?;
        let page = timed(5, || async {
            let res = browser.get(format!("{}/", svc.base)).send().await?;
            if !res.status().is_success() {
                return Err(format!("queue page {}", res.status()).into());
            }
            res.bytes().await?;
            Ok(())
        })
        .await?;
        let list = timed(5, || async {
            let res = browser
                .get(format!("{}/api/v1/questions?state=pending", svc.base))
                .send()
                .await?;
            if !res.status().is_success() {
                return Err(format!("list {}", res.status()).into());
            }
            res.bytes().await?;
            Ok(())
        })
        .await?;
        let health = timed(5, || svc.healthz()).await?;
        table.add(Row {
            measure: format!("queue page / API list at {}k pending", size / 1000),
            figure: format!("{} / {}", ms(page), ms(list)),
            baseline: format!("`/healthz` {}", ms(health)),
            ratio: format!(
                "{} / {}",
                ratio(page.as_secs_f64(), health.as_secs_f64()),
                ratio(list.as_secs_f64(), health.as_secs_f64())
            ),
            goal: "< 50 ms at 100k pending",
        });
        pending_rss = status_field(svc.pid, "VmRSS");
        drop(browser);
        svc.stop().await?;
    }
    table.add(Row {
        measure: "RSS idle / pending".to_owned(),
        figure: format!(
            "{} idle, {} at {}k pending (after the page and list)",
            mib(idle_rss * 1024),
            mib(pending_rss * 1024),
            filled / 1000
        ),
        baseline: String::new(),
        ratio: String::new(),
        goal: "< 20 MiB idle, < 60 MiB at 100k",
    });
    Ok(())
}

/// Runs `f` `n` times; the median time.
async fn timed<F, Fut>(n: usize, f: F) -> Result<Duration>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<()>>,
{
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        f().await?;
        v.push(start.elapsed());
    }
    Ok(median(&mut v))
}

#[derive(Clone, Copy, PartialEq)]
enum Load {
    Healthz,
    Questions,
}

struct Measured {
    rate: f64,
    cpu_per_op_ms: f64,
    errors: u64,
    max_latency: Duration,
}

static RUN: AtomicU64 = AtomicU64::new(0);

/// `clients` loops of `load` for `secs`; operations per second, service CPU per operation.
async fn load(svc: &Arc<Service>, clients: usize, secs: f64, load: Load) -> Measured {
    let run = RUN.fetch_add(1, Ordering::Relaxed);
    let done = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let worst = Arc::new(AtomicU64::new(0));
    let cpu = svc.cpu();
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(secs);
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (svc, done, errors, worst) =
                (svc.clone(), done.clone(), errors.clone(), worst.clone());
            tokio::spawn(async move {
                let session = format!("load-{run}-{c}");
                let mut i = 0u64;
                while Instant::now() < deadline {
                    let t = Instant::now();
                    let ok = match load {
                        Load::Healthz => svc.healthz().await.is_ok(),
                        Load::Questions => svc.cycle("load", &session, i).await.is_ok(),
                    };
                    worst.fetch_max(t.elapsed().as_micros() as u64, Ordering::Relaxed);
                    i += 1;
                    if ok {
                        done.fetch_add(1, Ordering::Relaxed);
                    } else {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        let _ = t.await;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let cpu = svc.cpu().saturating_sub(cpu);
    let done = done.load(Ordering::Relaxed);
    Measured {
        rate: done as f64 / elapsed,
        cpu_per_op_ms: cpu.as_secs_f64() * 1000.0 / done.max(1) as f64,
        errors: errors.load(Ordering::Relaxed),
        max_latency: Duration::from_micros(worst.load(Ordering::Relaxed)),
    }
}

/// `k` proxies each long-polling the response of its own open question, as a waiting proxy
/// does; 8 other clients' throughput and CPU per question with and without them.
async fn waiting(svc: &Arc<Service>, k: usize, secs: f64, table: &mut Table) -> Result<()> {
    let alone = load(svc, 8, secs, Load::Questions).await;
    let run = RUN.fetch_add(1, Ordering::Relaxed);
    let mut ids = Vec::with_capacity(k);
    for i in 0..k {
        ids.push(
            svc.open(&format!("waiter-{run}"), &format!("w{i}"), 1)
                .await?,
        );
    }
    let polls = Arc::new(AtomicU64::new(0));
    let pollers: Vec<_> = ids
        .iter()
        .map(|id| {
            let (svc, id, polls) = (svc.clone(), id.clone(), polls.clone());
            tokio::spawn(async move {
                loop {
                    polls.fetch_add(1, Ordering::Relaxed);
                    match svc
                        .get(&format!("/api/v1/requests/{id}/response?wait=60"))
                        .await
                    {
                        Ok((StatusCode::ACCEPTED, _)) => continue,
                        _ => return,
                    }
                }
            })
        })
        .collect();
    // Let every long-poll arrive, then see what the waiters cost on their own.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle_cpu = svc.cpu();
    let idle_start = Instant::now();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle_share =
        svc.cpu().saturating_sub(idle_cpu).as_secs_f64() / idle_start.elapsed().as_secs_f64();
    let polls_before = polls.load(Ordering::Relaxed);
    let busy = load(svc, 8, secs, Load::Questions).await;
    let extra_polls = polls.load(Ordering::Relaxed) - polls_before;
    for id in &ids {
        let _ = svc
            .post(&format!("/api/v1/requests/{id}/cancel"), &json!({}))
            .await;
    }
    for p in pollers {
        let _ = tokio::time::timeout(Duration::from_secs(5), p).await;
    }
    table.add(Row {
        measure: format!("{k} proxies each waiting on a question, 8 other clients"),
        figure: format!(
            "{:.0} q/s, {:.2} ms CPU/q; waiters alone {:.2}% of a core; {} re-polls",
            busy.rate,
            busy.cpu_per_op_ms,
            idle_share * 100.0,
            extra_polls
        ),
        baseline: format!(
            "none waiting: {:.0} q/s, {:.2} ms CPU/q",
            alone.rate, alone.cpu_per_op_ms
        ),
        ratio: format!(
            "throughput {}, CPU/q {}",
            ratio(busy.rate, alone.rate),
            ratio(busy.cpu_per_op_ms, alone.cpu_per_op_ms)
        ),
        goal: "< 1% of a core; barely slows others",
    });
    Ok(())
}

/// Starts the service on a store holding `count` decided questions past retention (it
/// prunes at start) and keeps 8 clients cycling questions until its first retention run is
/// done (`mcp_consent_retention_runs_total`); the prune's time, the clients' worst cycle and
/// their failures.
async fn prune_at_start(
    opts: &Opts,
    dir: &Path,
    count: i64,
    floor: Duration,
    table: &mut Table,
) -> Result<()> {
    let svc = start(opts, dir).await?;
    let started = Instant::now();
    PRUNED.store(0, Ordering::Relaxed);
    let svc2 = svc.clone();
    let during = tokio::spawn(async move {
        let (mut errors, mut worst, mut worst_at) = (0, Duration::ZERO, Duration::ZERO);
        while PRUNED.load(Ordering::Relaxed) == 0 {
            let m = load(&svc2, 8, 0.5, Load::Questions).await;
            errors += m.errors;
            if m.max_latency > worst {
                (worst, worst_at) = (m.max_latency, started.elapsed());
            }
            eprintln!(
                "prune: window ending {} after listening, worst cycle {}",
                ms(started.elapsed()),
                ms(m.max_latency)
            );
        }
        (errors, worst, worst_at)
    });
    let took = loop {
        if retention_runs(&svc).await? >= 1 {
            break started.elapsed();
        }
        if started.elapsed() > Duration::from_secs(300) {
            return Err("no retention run within 5 minutes".into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    PRUNED.store(1, Ordering::Relaxed);
    let (errors, worst, worst_at) = during.await?;
    let left = svc.get("/api/v1/questions?state=accepted").await?.1["questions"]
        .as_array()
        .map_or(0, Vec::len);
    svc.stop().await?;
    table.add(Row {
        measure: format!(
            "prune {}k decided questions (at start), 8 clients working",
            count / 1000
        ),
        figure: format!(
            "{} after listening; clients' worst cycle (3 requests) {} (in the half-second window ending {} after listening), {} failed; {} decided left listed",
            ms(took),
            ms(worst),
            ms(worst_at),
            errors,
            left
        ),
        baseline: format!("SQLite one-statement DELETE {}", ms(floor)),
        ratio: ratio(took.as_secs_f64(), floor.as_secs_f64()),
        goal: "< 2 s; no request > 50 ms, none fails",
    });
    Ok(())
}

/// `mcp_consent_retention_runs_total` from `/metrics`.
async fn retention_runs(svc: &Service) -> Result<u64> {
    let text = svc
        .http
        .get(format!("{}/metrics", svc.base))
        .bearer_auth(&svc.token)
        .send()
        .await?
        .text()
        .await?;
    Ok(text
        .lines()
        .find(|l| l.starts_with("mcp_consent_retention_runs_total"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .map_or(0, |v| v as u64))
}

static PRUNED: AtomicU64 = AtomicU64::new(0);
