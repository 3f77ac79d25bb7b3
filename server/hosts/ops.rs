//! `list`, `wrap` and `unwrap` over the files [`locate`] finds: each file is read once,
//! edited in memory, shown as a diff or written back safely, and recorded.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::file::{self, Loaded};
use super::json::JsonDocument;
use super::locate::{self, Env, HostFile};
use super::manifest::{FileRecord, Manifest, WrappedEntry, Write};
use super::plan::{self, Kind};
use super::toml::TomlDocument;
use super::yaml::YamlDocument;
use super::{Document, EntryAt, Format, HostId, HostsError, Transport};

/// One file in `hosts list --json`.
#[derive(Debug, Serialize)]
pub struct FileReport {
    /// The host's `--host` name.
    pub host: HostId,
    /// The file.
    pub file: PathBuf,
    /// Its servers.
    pub servers: Vec<ServerReport>,
    /// Entries that are not the person's to wrap.
    pub skipped: Vec<Skipped>,
}

/// One server of a file.
#[derive(Debug, Serialize)]
pub struct ServerReport {
    /// Its name.
    pub name: String,
    /// How it is reached.
    pub transport: Transport,
    /// Whether the host launches it through `mcp-consent proxy`.
    pub wrapped: bool,
    /// The `mcp-consent` program a wrapped entry launches.
    #[serde(skip)]
    pub program: Option<PathBuf>,
}

/// An entry left alone, and why.
#[derive(Debug, Serialize)]
pub struct Skipped {
    /// Its name.
    pub name: String,
    /// Why it is not wrapped.
    pub reason: String,
}

/// Which entries a command concerns.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Only these hosts (all when empty).
    pub hosts: Vec<HostId>,
    /// Only servers of these names (all when empty).
    pub servers: Vec<String>,
}

impl Selection {
    fn hosts(&self) -> Vec<HostId> {
        if self.hosts.is_empty() {
            HostId::ALL.to_vec()
        } else {
            HostId::ALL
                .iter()
                .copied()
                .filter(|h| self.hosts.contains(h))
                .collect()
        }
    }

    fn server(&self, name: &str) -> bool {
        self.servers.is_empty() || self.servers.iter().any(|s| s == name)
    }
}

/// What a `wrap` or `unwrap` did (or, with `--dry-run`, would do) to one file.
#[derive(Debug)]
pub struct Change {
    /// The file's host entry.
    pub file: HostFile,
    /// The text before.
    pub before: String,
    /// The text after.
    pub after: String,
    /// The servers changed.
    pub servers: Vec<String>,
    /// Whether the file was written.
    pub written: bool,
}

/// The result of a `wrap` or `unwrap` over every file.
#[derive(Debug, Default)]
pub struct Run {
    /// The files changed.
    pub changes: Vec<Change>,
    /// Files left alone because of an error.
    pub errors: Vec<HostsError>,
    /// Things the person should know.
    pub warnings: Vec<String>,
}

fn parse(file: &HostFile, text: &str) -> Result<Box<dyn Document>, HostsError> {
    let parsed: Result<Box<dyn Document>, String> = match file.format {
        Format::Json => JsonDocument::parse(text, false).map(|d| Box::new(d) as _),
        Format::Jsonc => JsonDocument::parse(text, true).map(|d| Box::new(d) as _),
        Format::Toml => TomlDocument::parse(text).map(|d| Box::new(d) as _),
        Format::Yaml => YamlDocument::parse(text, file.dialect.list).map(|d| Box::new(d) as _),
    };
    parsed.map_err(|why| HostsError::Parse {
        path: file.path.clone(),
        why,
    })
}

fn entries(file: &HostFile, doc: &dyn Document) -> Vec<(EntryAt, Value)> {
    let d = &file.dialect;
    doc.entries(d.containers)
        .into_iter()
        .filter(|(_, v)| d.is_entry(v))
        .collect()
}

fn open(file: &HostFile) -> Result<(Loaded, Box<dyn Document>), HostsError> {
    let loaded = file::read(&file.path)?;
    let doc = parse(file, &loaded.text)?;
    Ok((loaded, doc))
}

/// Lists every file of the selected hosts with its servers; files that cannot be read or
/// parsed are returned as errors.
pub fn list(env: &Env, selection: &Selection) -> (Vec<FileReport>, Vec<HostsError>) {
    let mut reports = Vec::new();
    let mut errors = Vec::new();
    for file in locate::find(env, &selection.hosts()) {
        let (_, doc) = match open(&file) {
            Ok(opened) => opened,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let mut report = FileReport {
            host: file.host,
            file: file.path.clone(),
            servers: Vec::new(),
            skipped: Vec::new(),
        };
        for (at, value) in entries(&file, doc.as_ref()) {
            let kind = plan::classify(&file.dialect, &value);
            match (kind.transport(), kind) {
                (_, Kind::Skip(reason)) => report.skipped.push(Skipped {
                    name: at.name,
                    reason,
                }),
                (Some(transport), kind) => report.servers.push(ServerReport {
                    name: at.name,
                    transport,
                    wrapped: matches!(kind, Kind::Wrapped(_)),
                    program: match kind {
                        Kind::Wrapped(w) => Some(PathBuf::from(w.program)),
                        _ => None,
                    },
                }),
                (None, _) => {}
            }
        }
        reports.push(report);
    }
    (reports, errors)
}

/// Wraps every unwrapped server of the selection, through `exe` (the absolute path of this
/// program); with `dry_run` nothing is written. `state` is the state directory (backups and
/// the record of wrapped entries).
pub fn wrap(env: &Env, state: &Path, selection: &Selection, exe: &str, dry_run: bool) -> Run {
    let mut run = Run::default();
    for file in locate::find(env, &selection.hosts()) {
        match wrap_file(&file, state, selection, exe, dry_run) {
            Ok(Some(change)) => run.changes.push(change),
            Ok(None) => {}
            Err(e) => run.errors.push(e),
        }
    }
    run.warnings = warnings(env, &run.changes, true);
    run
}

fn wrap_file(
    file: &HostFile,
    state: &Path,
    selection: &Selection,
    exe: &str,
    dry_run: bool,
) -> Result<Option<Change>, HostsError> {
    let (loaded, mut doc) = open(file)?;
    let mut wrapped = Vec::new();
    for (at, value) in entries(file, doc.as_ref()) {
        if !selection.server(&at.name) {
            continue;
        }
        if let Some(edit) = plan::wrap(&file.dialect, &at.name, &value, exe) {
            doc.apply(&at, &edit)?;
            wrapped.push(WrappedEntry {
                at,
                original: value,
            });
        }
    }
    if wrapped.is_empty() {
        return Ok(None);
    }
    let after = doc.render();
    check_rendered(file, &after)?;
    let servers = wrapped.iter().map(|w| w.at.name.clone()).collect();
    if !dry_run {
        guard_live(file, &loaded.target)?;
        let mut manifest = Manifest::load(state)?;
        let backup = file::backup(state, file.host, &loaded.target, &loaded.text)?;
        loaded.replace(&after)?;
        let record = manifest
            .files
            .entry(loaded.target.clone())
            .or_insert_with(|| FileRecord {
                host: file.host,
                entries: Vec::new(),
                writes: Vec::new(),
            });
        record
            .entries
            .retain(|e| !wrapped.iter().any(|w| w.at == e.at));
        record.writes.push(Write {
            backup,
            after: file::digest(&after),
            entries: wrapped.iter().map(|w| w.at.clone()).collect(),
        });
        record.entries.extend(wrapped);
        manifest.save(state)?;
    }
    Ok(Some(Change {
        file: file.clone(),
        before: loaded.text,
        after,
        servers,
        written: !dry_run,
    }))
}

/// Restores every wrapped server of the selection; with `dry_run` nothing is written.
pub fn unwrap(env: &Env, state: &Path, selection: &Selection, dry_run: bool) -> Run {
    let mut run = Run::default();
    let mut manifest = match Manifest::load(state) {
        Ok(m) => m,
        Err(e) => {
            run.errors.push(e);
            return run;
        }
    };
    for file in locate::find(env, &selection.hosts()) {
        match unwrap_file(
            &file,
            state,
            selection,
            &mut manifest,
            dry_run,
            &mut run.warnings,
        ) {
            Ok(Some(change)) => run.changes.push(change),
            Ok(None) => {}
            Err(e) => run.errors.push(e),
        }
    }
    run.warnings.extend(warnings(env, &run.changes, false));
    run
}

fn unwrap_file(
    file: &HostFile,
    state: &Path,
    selection: &Selection,
    manifest: &mut Manifest,
    dry_run: bool,
    warnings: &mut Vec<String>,
) -> Result<Option<Change>, HostsError> {
    let (loaded, doc) = open(file)?;
    let mut pending: Vec<EntryAt> = entries(file, doc.as_ref())
        .into_iter()
        .filter(|(at, v)| {
            selection.server(&at.name)
                && matches!(plan::classify(&file.dialect, v), Kind::Wrapped(_))
        })
        .map(|(at, _)| at)
        .collect();
    if pending.is_empty() {
        return Ok(None);
    }
    let servers = pending.iter().map(|at| at.name.clone()).collect();
    let targets = pending.clone();
    let mut record = manifest.files.get(&loaded.target).cloned();
    let mut text = undo_whole_writes(loaded.text.clone(), &mut record, &mut pending)?;
    if !pending.is_empty() {
        text = restore_entries(file, &text, record.as_ref(), &pending, warnings)?;
        // The file no longer holds what any earlier write left.
        if let Some(r) = record.as_mut() {
            r.writes.clear();
        }
    }
    if !dry_run {
        if text != loaded.text {
            guard_live(file, &loaded.target)?;
            file::backup(state, file.host, &loaded.target, &loaded.text)?;
            loaded.replace(&text)?;
        }
        forget_unwrapped(manifest, &loaded.target, record, &targets);
        manifest.save(state)?;
    }
    Ok(Some(Change {
        file: file.clone(),
        before: loaded.text,
        after: text,
        servers,
        written: !dry_run,
    }))
}

/// Byte for byte: each latest write whose entries are all being unwrapped, on a file that
/// still holds exactly what that write left, is undone by its backup (and leaves `record` and
/// `pending`). Returns the text after.
fn undo_whole_writes(
    mut text: String,
    record: &mut Option<FileRecord>,
    pending: &mut Vec<EntryAt>,
) -> Result<String, HostsError> {
    while let Some(write) = record.as_ref().and_then(|r| r.writes.last())
        && file::digest(&text) == write.after
        && write.entries.iter().all(|at| pending.contains(at))
    {
        text = crate::paths::read_private(&write.backup).map_err(|e| HostsError::Manifest {
            path: write.backup.clone(),
            why: e.to_string(),
        })?;
        pending.retain(|at| !write.entries.contains(at));
        if let Some(r) = record.as_mut() {
            r.writes.pop();
        }
    }
    Ok(text)
}

/// Restores each pending entry of `text` in place, to what the record says it was (else as its
/// wrapper names it); an entry with neither is left as it is, with a warning. Returns the
/// edited text, checked to parse again.
fn restore_entries(
    file: &HostFile,
    text: &str,
    record: Option<&FileRecord>,
    pending: &[EntryAt],
    warnings: &mut Vec<String>,
) -> Result<String, HostsError> {
    let mut doc = parse(file, text)?;
    let current: Vec<(EntryAt, Value)> = entries(file, doc.as_ref());
    for at in pending {
        let Some((_, value)) = current.iter().find(|(a, _)| a == at) else {
            continue;
        };
        let original = record.and_then(|r| r.entries.iter().find(|e| e.at == *at));
        let edit = match original {
            Some(e) => Some(plan::restore(value, &e.original)),
            None => plan::rebuild(&file.dialect, value),
        };
        match edit {
            Some(edit) => doc.apply(at, &edit)?,
            None => warnings.push(format!(
                "{}: no record of what {:?} was before it was wrapped; it was left as it is",
                file.path.display(),
                at.name
            )),
        }
    }
    let text = doc.render();
    check_rendered(file, &text)?;
    Ok(text)
}

/// Drops the unwrapped entries from the file's record, and the record once none is left.
fn forget_unwrapped(
    manifest: &mut Manifest,
    target: &Path,
    record: Option<FileRecord>,
    unwrapped: &[EntryAt],
) {
    match record {
        Some(mut r) => {
            r.entries.retain(|e| !unwrapped.contains(&e.at));
            if r.entries.is_empty() {
                manifest.files.remove(target);
            } else {
                manifest.files.insert(target.to_owned(), r);
            }
        }
        None => {
            manifest.files.remove(target);
        }
    }
}

/// The edited text must parse again in the host's own syntax.
fn check_rendered(file: &HostFile, text: &str) -> Result<(), HostsError> {
    parse(file, text)
        .map(|_| ())
        .map_err(|e| HostsError::Parse {
            path: file.path.clone(),
            why: format!("the edited text would not parse ({e}); nothing was written"),
        })
}

/// Refuses to write a file its host rewrites while running, when a process of the host that
/// uses this very file runs.
fn guard_live(file: &HostFile, target: &Path) -> Result<(), HostsError> {
    if !file.live {
        return Ok(());
    }
    match claude_using(target) {
        Some(processes) => Err(HostsError::HostRunning {
            host: file.host.title(),
            processes,
            path: file.path.clone(),
        }),
        None => Ok(()),
    }
}

/// The running `claude` processes (Linux `/proc`) whose `~/.claude.json` (from their own
/// `HOME` and `CLAUDE_CONFIG_DIR`) is `target`, if any.
fn claude_using(target: &Path) -> Option<String> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        if comm.trim() != "claude" {
            continue;
        }
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        let var = |name: &str| {
            environ.split(|b| *b == 0).find_map(|kv| {
                let kv = String::from_utf8_lossy(kv);
                kv.strip_prefix(name)
                    .and_then(|v| v.strip_prefix('='))
                    .map(PathBuf::from)
            })
        };
        let files = [var("CLAUDE_CONFIG_DIR"), var("HOME")];
        let uses = files
            .into_iter()
            .flatten()
            .filter_map(|dir| std::fs::canonicalize(dir.join(".claude.json")).ok())
            .any(|f| f == target);
        if uses {
            pids.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    (!pids.is_empty()).then(|| format!("claude, pid {}", pids.join(", ")))
}

fn warnings(env: &Env, changes: &[Change], wrapping: bool) -> Vec<String> {
    let mut out = Vec::new();
    let hosts: HashSet<HostId> = changes.iter().map(|c| c.file.host).collect();
    if wrapping {
        for change in changes.iter().filter(|c| c.file.project) {
            out.push(format!(
                "{} is a project file (often committed): wrapping puts this machine's path of mcp-consent in it",
                change.file.path.display()
            ));
        }
        for (host, policy) in locate::allowlists(env, Path::new("/")) {
            if hosts.contains(&host) {
                out.push(format!(
                    "{}: the managed policy {} may allow servers by their command line; wrapped servers no longer match it (ask its admin to allow `mcp-consent proxy`)",
                    host.title(),
                    policy.display()
                ));
            }
        }
        if hosts.contains(&HostId::Windsurf) {
            out.push("Windsurf: a team or enterprise MCP allowlist matches each server's command and arguments; wrapped servers will not match it".to_owned());
        }
    }
    out
}
