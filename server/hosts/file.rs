//! Reading and replacing a host's file safely: a symlink is resolved and its target replaced
//! (dotfile managers link these files); the new text goes to a temporary file beside the
//! target with the original's owner and mode, is flushed to disk, and replaces the target by
//! rename only if the target still holds what was read. Before any change, a copy of the
//! file goes to `<state>/hosts/backups/` (0600: these files hold tokens).

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{HostId, HostsError};

/// A file as it was read.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The path the host names.
    pub path: PathBuf,
    /// The file actually read and replaced (the path with symlinks resolved).
    pub target: PathBuf,
    /// Its text.
    pub text: String,
}

/// The SHA-256 of a text, in hex.
pub fn digest(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Reads `path` (through symlinks).
///
/// # Errors
/// [`HostsError::Io`] when it cannot be read; [`HostsError::Parse`] when it is not UTF-8.
pub fn read(path: &Path) -> Result<Loaded, HostsError> {
    let target = fs::canonicalize(path).map_err(HostsError::io("cannot resolve", path))?;
    let bytes = fs::read(&target).map_err(HostsError::io("cannot read", &target))?;
    let text = String::from_utf8(bytes).map_err(|_| HostsError::Parse {
        path: path.to_path_buf(),
        why: "not UTF-8 text".to_owned(),
    })?;
    Ok(Loaded {
        path: path.to_path_buf(),
        target,
        text,
    })
}

impl Loaded {
    /// Replaces the file with `text` atomically, keeping its owner and mode, unless it changed
    /// since it was read.
    ///
    /// # Errors
    /// [`HostsError::Changed`] (the file is left as it now is), or [`HostsError::Io`].
    pub fn replace(&self, text: &str) -> Result<(), HostsError> {
        let target = &self.target;
        let meta =
            fs::metadata(target).map_err(HostsError::io("cannot read the mode of", target))?;
        let dir = target.parent().unwrap_or(Path::new("."));
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(".{name}.mcp-consent-{}.tmp", std::process::id()));
        let result = (|| {
            let mut file = OpenOptions::new()
                .create_new(true)
                .write(true)
                .mode(0o600)
                .open(&tmp)
                .map_err(HostsError::io("cannot create", &tmp))?;
            file.write_all(text.as_bytes())
                .map_err(HostsError::io("cannot write", &tmp))?;
            if (meta.uid(), meta.gid()) != current_ids(&file, &tmp)? {
                std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()))
                    .map_err(HostsError::io("cannot give the original owner to", &tmp))?;
            }
            file.set_permissions(fs::Permissions::from_mode(
                meta.permissions().mode() & 0o7777,
            ))
            .map_err(HostsError::io("cannot set the mode of", &tmp))?;
            file.sync_all()
                .map_err(HostsError::io("cannot write", &tmp))?;
            let now = fs::read(target).map_err(HostsError::io("cannot read", target))?;
            if now != self.text.as_bytes() {
                return Err(HostsError::Changed {
                    path: self.path.clone(),
                });
            }
            fs::rename(&tmp, target).map_err(HostsError::io("cannot replace", target))?;
            if let Ok(d) = fs::File::open(dir) {
                let _ = d.sync_all();
            }
            Ok(())
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }
}

fn current_ids(file: &fs::File, path: &Path) -> Result<(u32, u32), HostsError> {
    let m = file
        .metadata()
        .map_err(HostsError::io("cannot read the mode of", path))?;
    Ok((m.uid(), m.gid()))
}

/// `<state>/hosts`, created owner-only.
///
/// # Errors
/// [`HostsError::Io`].
pub fn hosts_dir(state: &Path) -> Result<PathBuf, HostsError> {
    let dir = state.join("hosts");
    let backups = dir.join("backups");
    for d in [state, &dir, &backups] {
        fs::create_dir_all(d).map_err(HostsError::io("cannot create", d))?;
        fs::set_permissions(d, fs::Permissions::from_mode(0o700))
            .map_err(HostsError::io("cannot tighten the mode of", d))?;
    }
    Ok(dir)
}

/// Copies `text` (the file at `path` of `host`) to `<state>/hosts/backups/HOST-FILE-TIME`,
/// 0600, and returns the copy's path. FILE is the path with `/` as `_`; TIME is UTC.
///
/// # Errors
/// [`HostsError::Io`].
pub fn backup(state: &Path, host: HostId, path: &Path, text: &str) -> Result<PathBuf, HostsError> {
    let dir = hosts_dir(state)?.join("backups");
    let slug: String = path
        .to_string_lossy()
        .trim_start_matches('/')
        .chars()
        .map(|c| {
            if c == '/' || c.is_whitespace() {
                '_'
            } else {
                c
            }
        })
        .collect();
    let time = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    for n in 0..100 {
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        let copy = dir.join(format!("{}-{slug}-{time}{suffix}", host.as_str()));
        match OpenOptions::new()
            .create_new(true)
            .write(true)
            .mode(0o600)
            .open(&copy)
        {
            Ok(mut file) => {
                file.write_all(text.as_bytes())
                    .map_err(HostsError::io("cannot write", &copy))?;
                file.sync_all()
                    .map_err(HostsError::io("cannot write", &copy))?;
                return Ok(copy);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(HostsError::io("cannot create", &copy)(e)),
        }
    }
    Err(HostsError::io("cannot create a backup in", &dir)(
        std::io::Error::from(std::io::ErrorKind::AlreadyExists),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_changed_since_it_was_read_is_not_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("c.json");
        fs::write(&f, "{}").unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o640)).unwrap();
        let loaded = read(&f).unwrap();
        loaded.replace("{\"a\":1}").unwrap();
        assert_eq!(fs::read_to_string(&f).unwrap(), "{\"a\":1}");
        assert_eq!(
            fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o640
        );
        let stale = loaded;
        assert!(matches!(
            stale.replace("{}"),
            Err(HostsError::Changed { .. })
        ));
        assert_eq!(fs::read_to_string(&f).unwrap(), "{\"a\":1}");
        assert_eq!(
            fs::read_dir(tmp.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }
}
