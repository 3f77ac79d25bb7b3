//! The figures of "how close to the limits" in one run: every row is printed next to a
//! baseline measured in the same run (a `cat` pipe, a direct connection, a SQLite floor,
//! `/healthz`), because on a shared machine only the ratios are stable.
//!
//! Run through `benches/run.sh [--quick]` (it builds the release binary and installs the pinned
//! MCP peers of tests/e2e), or directly:
//!
//! ```text
//! cargo bench --bench limits -- [--quick] [--only proxy|service|shared] [--bin PATH]
//! ```
//!
//! - `--bin PATH`: the `mcp-consent` binary to measure (default `target/release/mcp-consent`,
//!   or `$MCP_CONSENT_BIN`);
//! - `--python PATH` / `--everything PATH`: the Python with the MCP SDK and server-everything's
//!   `dist/index.js` for the tool-call row (skipped when missing);
//! - `--quick`: fewer lines, calls and rows (well under a minute of measuring);
//! - `$MCP_CONSENT_BENCH_DATABASE_URL`: the PostgreSQL database of the shared-queue rows (two
//!   instances on it against one SQLite instance); benches/run.sh starts a temporary cluster.
//!
//! Nothing here asserts a time; a row that could not be measured says why.

mod proxy;
mod report;
mod service;
mod shared;
mod store;

use std::path::PathBuf;

use report::Table;

/// What to run and with which binaries.
#[derive(Debug, Clone)]
pub struct Opts {
    pub quick: bool,
    pub proxy: bool,
    pub service: bool,
    /// The service rows of the one SQLite instance (off with `--only shared`).
    pub single: bool,
    pub bin: PathBuf,
    pub python: Option<PathBuf>,
    pub everything: Option<PathBuf>,
}

fn usage() -> ! {
    eprintln!(
        "usage: limits [--quick] [--only proxy|service|shared] [--bin PATH] [--python PATH] [--everything PATH]"
    );
    std::process::exit(2)
}

fn parse_args() -> Opts {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut opts =
        Opts {
            quick: false,
            proxy: true,
            service: true,
            single: true,
            bin: std::env::var_os("MCP_CONSENT_BIN")
                .map(PathBuf::from)
                .unwrap_or_else(|| root.join("target/release/mcp-consent")),
            python: Some(root.join(".venv/bin/python")),
            everything: Some(root.join(
                "tests/e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
            )),
        };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => opts.quick = true,
            // `cargo bench` passes `--bench` to every bench target.
            "--bench" => {}
            "--only" => match args.next().as_deref() {
                Some("proxy") => opts.service = false,
                Some("service") => opts.proxy = false,
                Some("shared") => {
                    opts.proxy = false;
                    opts.single = false;
                }
                _ => usage(),
            },
            "--bin" => opts.bin = args.next().map(PathBuf::from).unwrap_or_else(|| usage()),
            "--python" => opts.python = args.next().map(PathBuf::from),
            "--everything" => opts.everything = args.next().map(PathBuf::from),
            _ => usage(),
        }
    }
    opts.python = opts.python.filter(|p| p.exists());
    opts.everything = opts.everything.filter(|p| p.exists());
    opts
}

fn main() {
    // Re-executed as a fake MCP server, or as the bare relay, for the proxy rows.
    match std::env::var(proxy::ROLE_ENV).as_deref() {
        Ok(proxy::RELAY_ROLE) => return proxy::relay_role(),
        Ok(_) => return proxy::serve_role(),
        Err(_) => {}
    }
    // `cargo test --all-targets` runs bench targets too, without `--bench`: measuring takes
    // minutes and needs the release binary, so that run only says how to measure.
    if !std::env::args().any(|a| a == "--bench") {
        eprintln!("limits: measures only under `cargo bench` (see benches/run.sh)");
        return;
    }
    let opts = parse_args();
    if !opts.bin.exists() {
        eprintln!(
            "limits: {} not found (cargo build --release --bin mcp-consent)",
            opts.bin.display()
        );
        std::process::exit(2);
    }
    report::print_machine(&opts);
    let mut table = Table::default();
    if opts.proxy {
        proxy::run(&opts, &mut table);
    }
    if opts.service {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build();
        match runtime {
            Ok(rt) => rt.block_on(async {
                if opts.single {
                    service::run(&opts, &mut table).await;
                }
                shared::run(&opts, &mut table).await;
            }),
            Err(e) => eprintln!("limits: no runtime: {e}"),
        }
    }
    table.print();
}
