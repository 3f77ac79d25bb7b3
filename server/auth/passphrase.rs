//! Passphrase login: an argon2id PHC hash kept in a file (never the passphrase, never in the
//! config or the Nix store), verified off the async executor. `mcp-consent passwd` makes the
//! hash.

use std::path::Path;

use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};

/// Errors of hashing or loading a passphrase hash.
#[derive(Debug, thiserror::Error)]
pub enum PassphraseError {
    /// The hash file could not be read, or others may read, write or replace it.
    #[error("cannot use the passphrase hash")]
    Read(#[source] crate::paths::PathError),
    /// The file does not hold an argon2 PHC string.
    #[error("{0} does not hold an argon2 PHC hash (make one with `mcp-consent passwd`)")]
    NotAHash(std::path::PathBuf),
    /// Hashing failed.
    #[error("cannot hash the passphrase: {0}")]
    Hash(String),
}

/// Reads and checks a PHC hash file: a secret file by [`crate::access_files`] (the user's own,
/// owner-only; another user's hash would let them log in with their passphrase).
///
/// # Errors
/// [`PassphraseError::Read`] or [`PassphraseError::NotAHash`].
pub fn load_hash(path: &Path) -> Result<String, PassphraseError> {
    let text = crate::access_files::read(path, crate::access_files::Holds::Secret)
        .map_err(PassphraseError::Read)?;
    let hash = text.trim().to_owned();
    if !hash.starts_with("$argon2") || PasswordHash::new(&hash).is_err() {
        return Err(PassphraseError::NotAHash(path.to_path_buf()));
    }
    Ok(hash)
}

/// Hashes a passphrase as argon2id with the crate's default (OWASP-recommended) parameters and
/// a random salt; returns the PHC string.
///
/// # Errors
/// [`PassphraseError::Hash`].
pub fn hash(passphrase: &str) -> Result<String, PassphraseError> {
    Argon2::default()
        .hash_password(passphrase.as_bytes())
        .map(|h: PasswordHash| h.to_string())
        .map_err(|e| PassphraseError::Hash(e.to_string()))
}

/// Checks `passphrase` against the PHC `hash` (parameters are read from the hash). Slow by
/// design: call it on the blocking pool.
pub fn verify(hash: &str, passphrase: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|h| {
        Argon2::default()
            .verify_password(passphrase.as_bytes(), &h)
            .is_ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_passphrase_only() {
        let h = hash("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify(&h, "correct horse"));
        assert!(!verify(&h, "wrong horse"));
        assert!(!verify("not a hash", "correct horse"));
    }
}
