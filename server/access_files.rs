//! Files that grant access, checked before anything in them is trusted: the config file and
//! every file it names that lets someone in or speaks for the owner (the passphrase hash, the
//! metrics token, a model's API key, a database password, a webhook secret, …). Another user
//! who can write such a file, or swap it, can point a model at their own listener, log in with
//! their own passphrase, or read a key; so each is refused, naming the file, unless:
//!
//! - the file (after every link) belongs to the user running mcp-consent, or to root (a file in
//!   the Nix store, say), and is a regular file;
//! - nobody else may write it (no group or other write bit);
//! - for a secret ([`Holds::Secret`]), nobody else may read it either (owner-only, 0600/0400);
//! - every link on the way belongs to the user or root, and is not a link to another user's
//!   file;
//! - every directory above the file belongs to the user or root, and is not writable by others
//!   unless sticky (`/tmp`), so nobody else can replace it.
//!
//! Call [`check`] at start and on every reload for each such file, or [`read`] to check and
//! read it through the same descriptor.

use std::fs::{self, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::paths::{PathError, check_directories, my_uid, trusted_owner};

/// What a file holds, which decides who else may read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// Settings (the config file): others may read it, nobody else may write it.
    Settings,
    /// A secret (a key, a token, a passphrase hash, a password): owner-only.
    Secret,
}

/// How many links a path may go through.
const MAX_LINKS: usize = 40;

/// Checks `path` by the rules of this module.
///
/// # Errors
/// [`PathError`] naming the file (or the link or directory) that breaks a rule.
pub fn check(path: &Path, holds: Holds) -> Result<(), PathError> {
    open_checked(path, holds).map(|_| ())
}

/// Checks `path` by the rules of this module and reads it (as UTF-8) through the descriptor it
/// checked.
///
/// # Errors
/// [`PathError`] naming the file that breaks a rule or cannot be read.
pub fn read(path: &Path, holds: Holds) -> Result<String, PathError> {
    let (mut file, real) = open_checked(path, holds)?;
    let mut text = String::new();
    file.read_to_string(&mut text)
        .map_err(|source| PathError::Io {
            action: "cannot read",
            path: real,
            source,
        })?;
    Ok(text)
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> PathError {
    let path = path.to_path_buf();
    move |source| PathError::Io {
        action,
        path,
        source,
    }
}

/// Follows `path`'s links (each checked), checks the directories above the file it reaches,
/// then opens that file without following links and checks owner and mode on the descriptor.
fn open_checked(path: &Path, holds: Holds) -> Result<(fs::File, PathBuf), PathError> {
    let mut current = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(io("cannot resolve", path))?
            .join(path)
    };
    for _ in 0..MAX_LINKS {
        let meta = fs::symlink_metadata(&current).map_err(io("cannot read", &current))?;
        if !meta.file_type().is_symlink() {
            return open_final(path, &current, holds);
        }
        if !trusted_owner(meta.uid()) {
            return Err(PathError::ForeignOwner {
                path: current,
                owner: meta.uid(),
            });
        }
        check_directories(&current)?;
        let target = fs::read_link(&current).map_err(io("cannot read the link", &current))?;
        let next = match current.parent() {
            Some(dir) if target.is_relative() => dir.join(&target),
            _ => target,
        };
        if let Ok(target_meta) = fs::symlink_metadata(&next)
            && !trusted_owner(target_meta.uid())
        {
            return Err(PathError::LinkToForeign {
                link: current,
                target: next,
                owner: target_meta.uid(),
            });
        }
        current = next;
    }
    Err(PathError::Symlink {
        path: path.to_path_buf(),
    })
}

fn open_final(given: &Path, real: &Path, holds: Holds) -> Result<(fs::File, PathBuf), PathError> {
    // Directories on the way may themselves be links (`/home` → `/usr/home`): judge the
    // directories the file really sits in.
    let canonical = fs::canonicalize(real).map_err(io("cannot resolve", real))?;
    check_directories(&canonical)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&canonical)
        .map_err(io("cannot open", given))?;
    let meta = file
        .metadata()
        .map_err(io("cannot read the mode of", given))?;
    let named = || given.to_path_buf();
    if !meta.is_file() {
        return Err(PathError::NotAFile { path: named() });
    }
    if !trusted_owner(meta.uid()) {
        return Err(PathError::ForeignOwner {
            path: named(),
            owner: meta.uid(),
        });
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o022 != 0 {
        return Err(PathError::OthersMayWrite {
            path: named(),
            mode,
        });
    }
    if holds == Holds::Secret && (mode & 0o077 != 0 || meta.uid() != my_uid()) {
        return Err(PathError::NotOwnerOnly {
            path: named(),
            mode,
        });
    }
    Ok((file, canonical))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path, name: &str, mode: u32) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, "x").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn settings_may_be_read_by_others_but_written_only_by_the_owner() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check(&file(dir.path(), "a", 0o644), Holds::Settings).is_ok());
        for mode in [0o666, 0o646, 0o664] {
            let err = check(&file(dir.path(), "b", mode), Holds::Settings).unwrap_err();
            assert!(matches!(err, PathError::OthersMayWrite { .. }), "{mode:o}");
            assert!(err.to_string().contains("/b"), "{err}");
        }
    }

    #[test]
    fn secrets_are_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read(&file(dir.path(), "k", 0o600), Holds::Secret).is_ok());
        assert!(read(&file(dir.path(), "r", 0o400), Holds::Secret).is_ok());
        let err = read(&file(dir.path(), "w", 0o640), Holds::Secret).unwrap_err();
        assert!(matches!(err, PathError::NotOwnerOnly { .. }), "{err}");
    }

    #[test]
    fn a_link_to_the_owners_file_is_followed_and_a_directory_others_may_write_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let real = file(dir.path(), "real", 0o600);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(read(&link, Holds::Secret).unwrap(), "x");
        let open = dir.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        let inside = file(&open, "k", 0o600);
        let err = check(&inside, Holds::Secret).unwrap_err();
        assert!(
            matches!(&err, PathError::OthersMayWrite { path, .. } if path == &open),
            "{err}"
        );
    }
}
