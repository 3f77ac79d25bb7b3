//! The table every measurement ends up in, and the small statistics and process-accounting
//! helpers the rows share.

use std::time::Duration;

use crate::Opts;

/// One printed row: what was measured, its figure, the baseline of the same run, their
/// ratio, and the goal of the row.
#[derive(Debug, Clone)]
pub struct Row {
    pub measure: String,
    pub figure: String,
    pub baseline: String,
    pub ratio: String,
    pub goal: &'static str,
}

/// All rows, printed as they come (stderr) and as one markdown table at the end (stdout).
#[derive(Debug, Default)]
pub struct Table {
    rows: Vec<Row>,
}

impl Table {
    pub fn add(&mut self, row: Row) {
        eprintln!(
            "  {} | {} | {} | {} | goal {}",
            row.measure, row.figure, row.baseline, row.ratio, row.goal
        );
        self.rows.push(row);
    }

    /// A row that could not be measured, with the reason.
    pub fn skip(&mut self, measure: &str, why: &str, goal: &'static str) {
        self.add(Row {
            measure: measure.to_owned(),
            figure: format!("not measured: {why}"),
            baseline: String::new(),
            ratio: String::new(),
            goal,
        });
    }

    pub fn print(&self) {
        println!();
        println!("| measure | figure | baseline (same run) | ratio | goal |");
        println!("|---|---|---|---|---|");
        for r in &self.rows {
            println!(
                "| {} | {} | {} | {} | {} |",
                r.measure, r.figure, r.baseline, r.ratio, r.goal
            );
        }
    }
}

/// Prints what the figures were measured on (stderr, and the table's caption on stdout).
pub fn print_machine(opts: &Opts) {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    println!(
        "machine: {cpu}, {cores} cores, Linux {}, load average at start {}",
        kernel.trim(),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "binary: {} ({}){}",
        opts.bin.display(),
        std::fs::metadata(&opts.bin).map_or_else(|_| "?".to_owned(), |m| mib(m.len())),
        if opts.quick { ", --quick" } else { "" }
    );
}

pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / 1024.0 / 1024.0)
}

/// The median of `v` (sorted in place); zero when empty.
pub fn median(v: &mut [Duration]) -> Duration {
    percentile(v, 50.0)
}

/// The `p`th percentile (nearest rank) of `v` (sorted in place); zero when empty.
pub fn percentile(v: &mut [Duration], p: f64) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    v.sort_unstable();
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

pub fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{ms:.0} ms")
    }
}

pub fn ratio(a: f64, b: f64) -> String {
    if b <= 0.0 || !a.is_finite() {
        return "n/a".to_owned();
    }
    let r = a / b;
    if r < 0.1 {
        format!("{r:.3}×")
    } else {
        format!("{r:.2}×")
    }
}

/// User + system CPU of every waited-for child so far (`getrusage(RUSAGE_CHILDREN)`).
pub fn children_cpu() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn tv(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
}

/// User + system CPU of a running process, from `/proc/PID/stat`.
pub fn process_cpu(pid: u32) -> Duration {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return Duration::ZERO;
    };
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_micros((ticks(11) + ticks(12)) * 1_000_000 / hz)
}

/// A field of `/proc/PID/status` in kB or as a count (`VmRSS`, `Threads`).
pub fn status_field(pid: u32, name: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}
