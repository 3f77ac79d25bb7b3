//! The API token's lifecycle: made on first start (and afresh whenever `<state>/api-token` has
//! been removed), replaced by `mcp-consent token rotate`. The store keeps only the digest of the
//! one current token, so replacing it revokes the old one; the running service swaps its set in
//! memory at the same moment ([`ApiTokens::replace`]).

use super::digest::sha256_hex;
use super::tokens::{ApiTokens, random_token};
use crate::clock::Clock;
use crate::db::{Db, DbError, models};
use crate::paths::{PathError, StateDir, read_private, write_private};

/// Why the token could not be set up or replaced.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The OS random source failed.
    #[error("cannot make a random token")]
    Random(#[from] getrandom::Error),
    /// The token file could not be read or written.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] DbError),
}

/// At start: the token in `<state>/api-token`, or a fresh one written there when the file is
/// missing or empty; its digest becomes the only one in the store (a removed file revokes the
/// token it held). `clock` stamps the stored digest.
///
/// # Errors
/// [`TokenError`]; a symlinked or foreign-owned token file is refused.
pub async fn at_start(
    state: &StateDir,
    db: &Db,
    clock: &dyn Clock,
) -> Result<ApiTokens, TokenError> {
    let path = state.api_token_file();
    let existing = match read_private(&path) {
        Ok(t) if !t.trim().is_empty() => Some(t.trim().to_owned()),
        Ok(_) => None,
        Err(PathError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    let token = match existing {
        Some(t) => t,
        None => {
            let t = random_token()?;
            write_private(&path, &format!("{t}\n"))?;
            t
        }
    };
    let tokens = ApiTokens::default();
    store(db, &tokens, &token, clock.now_ms()).await?;
    Ok(tokens)
}

/// Replaces the token: a new random token goes to `<state>/api-token` (0600, atomically), its
/// digest replaces every stored one, and `tokens` (the running service's set, if any) refuses
/// the old token from now on. `clock` stamps the stored digest.
///
/// # Errors
/// [`TokenError`].
pub async fn rotate(
    state: &StateDir,
    db: &Db,
    tokens: &ApiTokens,
    clock: &dyn Clock,
) -> Result<(), TokenError> {
    let token = random_token()?;
    // The file first: if the store then fails, the next start makes the file's token the only
    // valid one, never the old one.
    write_private(&state.api_token_file(), &format!("{token}\n"))?;
    store(db, tokens, &token, clock.now_ms()).await
}

async fn store(db: &Db, tokens: &ApiTokens, token: &str, now: i64) -> Result<(), TokenError> {
    let digest = sha256_hex(token);
    let digests = db
        .write(move |conn| {
            models::replace_api_tokens(conn, &digest, now)?;
            Ok(models::api_token_digests(conn)?)
        })
        .await?;
    tokens.replace(&digests);
    Ok(())
}
