//! The proxy rows: pass-through against a `cat | cat` pipe, one large result and an SDK tool
//! call against a direct connection, and the floor of that call: a bare relay process that
//! only copies bytes both ways.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Opts;
use crate::report::{Row, Table, children_cpu, median, ms, ratio};

/// Set on a re-executed bench binary to make it a fake MCP server (see [`serve_role`]), or,
/// set to [`RELAY_ROLE`], the bare relay ([`relay_role`]).
pub const ROLE_ENV: &str = "LIMITS_ROLE";
/// The [`ROLE_ENV`] value of the bare relay.
pub const RELAY_ROLE: &str = "relay";
/// The size of the `tools/list` result the fake server sends.
const TOOLS_LIST_BYTES: usize = 10 * 1024 * 1024;

pub fn run(opts: &Opts, table: &mut Table) {
    let Ok(tmp) = tempfile::tempdir() else {
        table.skip("proxy rows", "no temporary directory", "");
        return;
    };
    let state = tmp.path().join("state");
    let reps = if opts.quick { 1 } else { 3 };

    let small = notification_line(190);
    pass_through(
        opts,
        &state,
        table,
        "pass-through, 200k lines of ~190 B",
        &small,
        200_000,
        reps,
        "≥ 0.5×",
    );
    let big = notification_line(64 * 1024);
    let big_lines = if opts.quick { 5_000 } else { 20_000 };
    pass_through(
        opts,
        &state,
        table,
        &format!("pass-through, {}k lines of 64 KB", big_lines / 1000),
        &big,
        big_lines,
        reps,
        "≥ 0.8×",
    );
    tools_list(opts, &state, table);
    sdk_echo(opts, &state, table);
}

/// A notification the proxy judges and passes both ways, padded to `len` bytes with `\n`.
fn notification_line(len: usize) -> Vec<u8> {
    let head = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"bench","data":""#;
    let tail = "\"}}\n";
    let pad = len.saturating_sub(head.len() + tail.len());
    format!("{head}{}{tail}", "x".repeat(pad)).into_bytes()
}

fn proxy_command(opts: &Opts, state: &Path, server: &[&str]) -> Command {
    let mut cmd = Command::new(&opts.bin);
    cmd.arg("--state-dir")
        .arg(state)
        .args([
            "proxy",
            "--name",
            "bench",
            "--broker",
            "http://127.0.0.1:9",
            "--",
        ])
        .args(server);
    cmd
}

/// Feeds `count` copies of `line` through `cat | cat` and through `proxy -- cat`, `reps`
/// times each, alternating; compares the median rates and the CPU per line.
#[allow(clippy::too_many_arguments)]
fn pass_through(
    opts: &Opts,
    state: &Path,
    table: &mut Table,
    measure: &str,
    line: &[u8],
    count: usize,
    reps: usize,
    goal: &'static str,
) {
    let per_block = (1024 * 1024 / line.len()).max(1);
    let blocks = count.div_ceil(per_block);
    let block = line.repeat(per_block);
    let lines = blocks * per_block;
    let (mut pipe, mut proxy) = (Vec::new(), Vec::new());
    let (mut pipe_cpu, mut proxy_cpu) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let run = || {
            let mut first = Command::new("cat");
            first.stdin(Stdio::piped()).stdout(Stdio::piped());
            let mut first = first.spawn()?;
            let mut second = Command::new("cat");
            second.stdin(Stdio::from(first.stdout.take().ok_or_else(no_pipe)?));
            feed(second, &block, blocks, Some(first))
        };
        match run() {
            Ok((wall, cpu)) => {
                pipe.push(wall);
                pipe_cpu.push(cpu);
            }
            Err(e) => return table.skip(measure, &format!("cat | cat failed: {e}"), goal),
        }
        match feed(proxy_command(opts, state, &["cat"]), &block, blocks, None) {
            Ok((wall, cpu)) => {
                proxy.push(wall);
                proxy_cpu.push(cpu);
            }
            Err(e) => return table.skip(measure, &format!("proxy failed: {e}"), goal),
        }
    }
    let (pipe, proxy) = (median(&mut pipe), median(&mut proxy));
    let per_line = |d: Duration| d.as_secs_f64() * 1e6 / lines as f64;
    let bytes = (block.len() * blocks) as f64;
    let rate = |d: Duration| bytes / d.as_secs_f64() / 1e6;
    table.add(Row {
        measure: format!("{measure}: `proxy -- cat` vs `cat | cat`"),
        figure: format!(
            "{} ({:.0} MB/s), {:.2} µs CPU/line",
            ms(proxy),
            rate(proxy),
            per_line(median(&mut proxy_cpu))
        ),
        baseline: format!(
            "{} ({:.0} MB/s), {:.2} µs CPU/line",
            ms(pipe),
            rate(pipe),
            per_line(median(&mut pipe_cpu))
        ),
        ratio: format!("{} the pipe's rate", ratio(rate(proxy), rate(pipe))),
        goal,
    });
}

fn no_pipe() -> std::io::Error {
    std::io::Error::other("no pipe")
}

/// Runs `last` (and `first`, the start of its pipeline) with `blocks` copies of `block` on its
/// input, reads its output to the end; the wall time and the CPU of the processes.
fn feed(
    mut last: Command,
    block: &[u8],
    blocks: usize,
    first: Option<Child>,
) -> std::io::Result<(Duration, Duration)> {
    let cpu_before = children_cpu();
    let start = Instant::now();
    let mut first = first;
    if first.is_none() {
        last.stdin(Stdio::piped());
    }
    last.stdout(Stdio::piped());
    let mut child = last.spawn()?;
    let input = match first.as_mut() {
        Some(f) => f.stdin.take(),
        None => child.stdin.take(),
    };
    let mut input = input.ok_or_else(no_pipe)?;
    let mut output = child.stdout.take().ok_or_else(no_pipe)?;
    let received = std::thread::scope(|scope| {
        scope.spawn(move || {
            for _ in 0..blocks {
                if input.write_all(block).is_err() {
                    return;
                }
            }
        });
        let mut buf = vec![0u8; 1024 * 1024];
        let mut total = 0usize;
        loop {
            match output.read(&mut buf) {
                Ok(0) | Err(_) => break total,
                Ok(n) => total += n,
            }
        }
    });
    child.wait()?;
    if let Some(mut f) = first {
        f.wait()?;
    }
    let wall = start.elapsed();
    let expected = block.len() * blocks;
    if received != expected {
        return Err(std::io::Error::other(format!(
            "{received} of {expected} bytes came through"
        )));
    }
    Ok((wall, children_cpu().saturating_sub(cpu_before)))
}

/// A host on a server's stdio: writes request lines, reads response lines.
struct Session {
    child: Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
}

impl Session {
    fn start(mut cmd: Command) -> std::io::Result<Session> {
        let mut child = cmd
            .env(ROLE_ENV, "tools-list")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let input = child.stdin.take().ok_or_else(no_pipe)?;
        let output =
            BufReader::with_capacity(1024 * 1024, child.stdout.take().ok_or_else(no_pipe)?);
        Ok(Session {
            child,
            input,
            output,
        })
    }

    /// One `tools/list` round trip; its time and the response's size.
    fn call(&mut self, id: u64, line: &mut Vec<u8>) -> std::io::Result<Duration> {
        let start = Instant::now();
        writeln!(
            self.input,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{}}}}"#
        )?;
        self.input.flush()?;
        line.clear();
        self.output.read_until(b'\n', line)?;
        let took = start.elapsed();
        if line.len() < TOOLS_LIST_BYTES {
            return Err(std::io::Error::other(format!(
                "short response: {} bytes",
                line.len()
            )));
        }
        Ok(took)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One 10 MB `tools/list` result, through the proxy and directly, alternating.
fn tools_list(opts: &Opts, state: &Path, table: &mut Table) {
    const MEASURE: &str = "one 10 MB `tools/list` result: proxy vs direct";
    const GOAL: &str = "≤ 1.1× direct";
    let Ok(me) = std::env::current_exe() else {
        return table.skip(MEASURE, "no current_exe", GOAL);
    };
    let me_str = me.to_string_lossy().into_owned();
    let sessions = Session::start(Command::new(&me))
        .and_then(|d| Ok((d, Session::start(proxy_command(opts, state, &[&me_str]))?)));
    let Ok((mut direct, mut proxied)) = sessions else {
        return table.skip(MEASURE, "could not start the fake server", GOAL);
    };
    let rounds = if opts.quick { 5 } else { 15 };
    let (mut d, mut p) = (Vec::new(), Vec::new());
    let mut line = Vec::new();
    for id in 0..=rounds {
        let result = direct
            .call(id, &mut line)
            .and_then(|a| Ok((a, proxied.call(id, &mut line)?)));
        match result {
            // The first round warms both up.
            Ok(_) if id == 0 => {}
            Ok((a, b)) => {
                d.push(a);
                p.push(b);
            }
            Err(e) => return table.skip(MEASURE, &e.to_string(), GOAL),
        }
    }
    let (d, p) = (median(&mut d), median(&mut p));
    table.add(Row {
        measure: MEASURE.to_owned(),
        figure: format!("{} (+{})", ms(p), ms(p.saturating_sub(d))),
        baseline: ms(d),
        ratio: ratio(p.as_secs_f64(), d.as_secs_f64()),
        goal: GOAL,
    });
}

/// The fake MCP server: answers every request line with a `tools/list` result of
/// [`TOOLS_LIST_BYTES`].
pub fn serve_role() {
    let mut tools = String::from(r#"{"tools":["#);
    let mut i = 0;
    while tools.len() < TOOLS_LIST_BYTES {
        if i > 0 {
            tools.push(',');
        }
        tools.push_str(&format!(
            r#"{{"name":"tool_{i}","description":"{}","inputSchema":{{"type":"object","properties":{{"city":{{"type":"string","description":"The city"}}}},"required":["city"]}}}}"#,
            "Looks something up and explains it at length. ".repeat(4)
        ));
        i += 1;
    }
    tools.push_str("]}");
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return };
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let Some(id) = msg.get("id") else { continue };
        let wrote = write!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":{tools}}}"#)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        if wrote.is_err() {
            return;
        }
    }
}

/// The bare relay: `LIMITS_ROLE=relay limits -- COMMAND [ARGS...]` starts COMMAND with piped
/// stdin and stdout and copies bytes both ways, each read written on at once by a thread of
/// its own per direction (blocking `read`/`write`, no parsing, no buffering). One more process
/// on the line, as the proxy is, doing nothing else: the floor of any stdio proxy.
pub fn relay_role() {
    let args: Vec<String> = std::env::args().skip_while(|a| a != "--").skip(1).collect();
    let Some((program, rest)) = args.split_first() else {
        eprintln!("relay: no command");
        return;
    };
    let child = Command::new(program)
        .args(rest)
        .env_remove(ROLE_ENV)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("relay: cannot start {program}");
        return;
    };
    let (Some(mut to_child), Some(mut from_child)) = (child.stdin.take(), child.stdout.take())
    else {
        return;
    };
    std::thread::spawn(move || {
        copy(&mut std::io::stdin().lock(), &mut to_child);
        // Dropping `to_child` closes the server's stdin: it ends as with a host.
    });
    copy(&mut from_child, &mut std::io::stdout().lock());
    let _ = child.wait();
}

/// Copies `from` to `to` until either ends, writing every read at once.
fn copy(from: &mut impl Read, to: &mut impl Write) {
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.write_all(&buf[..n]).and_then(|()| to.flush()).is_err() {
                    return;
                }
            }
        }
    }
}

/// The `[tools]` rules of the tool-call row: `echo` on `everything` allowed by a rule, every
/// other call asked about (so a call the rule did not match would fail closed and end the
/// row, not be timed as if allowed).
const ALLOW_ECHO: &str = r#"[tools]
default = "ask"
[[tools.rules]]
server = "everything"
tool = "echo"
action = "allow"
"#;

/// A `serve` of the bench's own, on a state directory the proxy then finds it in; ended on drop.
struct Serve(Child);

impl Serve {
    fn start(opts: &Opts, state: &Path, config: &Path) -> std::io::Result<(Serve, String)> {
        let mut child = Command::new(&opts.bin)
            .args(["serve", "--listen", "127.0.0.1:0", "--state-dir"])
            .arg(state)
            .arg("--config")
            .arg(config)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let mut out = BufReader::new(child.stdout.take().ok_or_else(no_pipe)?);
        let serve = Serve(child);
        let mut line = String::new();
        while out.read_line(&mut line)? > 0 {
            if let Some(url) = line.strip_prefix("listening on ") {
                let url = url.trim().to_owned();
                // Whatever it prints later is read and dropped: it never writes to a closed pipe.
                std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
                return Ok((serve, url));
            }
            line.clear();
        }
        Err(std::io::Error::other("serve ended before listening"))
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `mcp_consent_tool_calls_total{decision="allowed"}` from the service's `/metrics`.
fn allowed_calls(url: &str) -> Option<u64> {
    let addr = url.strip_prefix("http://")?.trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(addr).ok()?;
    write!(
        stream,
        "GET /metrics HTTP/1.0\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    text.lines()
        .find(|l| l.starts_with(r#"mcp_consent_tool_calls_total{decision="allowed"}"#))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|n| n.parse::<f64>().ok())
        .map(|n| n as u64)
}

/// The Python SDK host calling server-everything's `echo`, directly and through the proxy in
/// front of a running service whose `[tools]` allow `echo` by a rule ([`ALLOW_ECHO`]): each
/// proxied call is judged from the proxy's cached policy and passed byte for byte, and its
/// decision queued for the service's audit. So this row is the cost of tool-call consent on
/// an allowed call. The service's count of allowed calls afterwards shows they were judged.
/// The same calls through the bare relay ([`relay_role`]) are the floor: what one more process
/// on the line costs before it reads anything.
fn sdk_echo(opts: &Opts, state: &Path, table: &mut Table) {
    const MEASURE: &str = "`tools/call` allowed by a `[tools]` rule (service running, rules cached), Python SDK host ↔ server-everything `echo`: proxy vs direct";
    const FLOOR: &str = "the same `tools/call` through a bare relay process (two threads copying bytes, no parsing): relay vs direct";
    const GOAL: &str = "≤ 1.05×";
    let (Some(python), Some(everything)) = (&opts.python, &opts.everything) else {
        return table.skip(
            MEASURE,
            "no .venv or tests/e2e/node_modules (benches/run.sh installs them)",
            GOAL,
        );
    };
    let config = state.with_file_name("tools.toml");
    if let Err(e) = std::fs::write(&config, ALLOW_ECHO) {
        return table.skip(MEASURE, &format!("cannot write the config: {e}"), GOAL);
    }
    let (_serve, url) = match Serve::start(opts, state, &config) {
        Ok(started) => started,
        Err(e) => return table.skip(MEASURE, &format!("serve failed: {e}"), GOAL),
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/sdk_echo.py");
    let calls = if opts.quick { "200" } else { "1000" };
    let everything = everything.to_string_lossy().into_owned();
    let bin = opts.bin.to_string_lossy().into_owned();
    let state = state.to_string_lossy().into_owned();
    let direct: Vec<&str> = vec!["node", &everything, "stdio"];
    let mut proxied: Vec<&str> = vec![
        &bin,
        "--state-dir",
        &state,
        "proxy",
        "--name",
        "everything",
        "--",
    ];
    proxied.extend(&direct);
    let me = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut relayed: Vec<&str> = vec![&me, "--"];
    relayed.extend(&direct);
    let reps = if opts.quick { 1 } else { 3 };
    let (mut d, mut r, mut p) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        let runs = [
            (&direct, false, &mut d),
            (&relayed, true, &mut r),
            (&proxied, false, &mut p),
        ];
        for (server, relay, into) in runs {
            let mut cmd = Command::new(python);
            cmd.arg(&script)
                .arg(calls)
                .arg("--")
                .args(server.iter())
                .env("MCP_CONSENT_CONFIG", &config)
                .env_remove("MCP_CONSENT_BROKER")
                .env_remove(ROLE_ENV)
                .stderr(Stdio::inherit());
            if relay {
                cmd.env(ROLE_ENV, RELAY_ROLE);
            }
            let out = cmd.output();
            let median_ms = out
                .ok()
                .filter(|o| o.status.success())
                .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.stdout).ok())
                .and_then(|v| v["median_ms"].as_f64());
            match median_ms {
                Some(m) => into.push(Duration::from_secs_f64(m / 1000.0)),
                None => return table.skip(MEASURE, "benches/sdk_echo.py failed", GOAL),
            }
        }
    }
    // Every proxied call (and its warm-up) was reported as allowed once the proxies ended.
    let timed: u64 = calls.parse().unwrap_or(0);
    let judged = allowed_calls(&url).unwrap_or(0);
    if judged < timed * reps as u64 {
        return table.skip(
            MEASURE,
            &format!("the service counted {judged} allowed calls, not every timed one"),
            GOAL,
        );
    }
    let (d, r, p) = (median(&mut d), median(&mut r), median(&mut p));
    table.add(Row {
        measure: FLOOR.to_owned(),
        figure: format!("{} per call (+{})", ms(r), ms(r.saturating_sub(d))),
        baseline: format!("{} per call", ms(d)),
        ratio: ratio(r.as_secs_f64(), d.as_secs_f64()),
        goal: "the floor of the row below",
    });
    table.add(Row {
        measure: MEASURE.to_owned(),
        figure: format!(
            "{} per call (+{}; {} the relay's)",
            ms(p),
            ms(p.saturating_sub(d)),
            ratio(p.as_secs_f64(), r.as_secs_f64())
        ),
        baseline: format!("{} per call", ms(d)),
        ratio: ratio(p.as_secs_f64(), d.as_secs_f64()),
        goal: GOAL,
    });
}
