//! Random tokens and their digests, and the set of valid API tokens. Tokens are 256-bit random
//! values, so a fast digest is enough (no password hashing needed); only digests are stored,
//! and they are compared in constant time.

use subtle::ConstantTimeEq;

use super::digest::digest;

/// 32 random bytes as 64 hex characters.
///
/// # Errors
/// The OS random source failed.
pub fn random_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(hex::encode(bytes))
}

/// The digests of the valid API tokens: loaded at start, replaced at once by a rotation. Clones
/// share one set.
#[derive(Debug, Clone, Default)]
pub struct ApiTokens {
    digests: std::sync::Arc<std::sync::RwLock<Vec<[u8; 32]>>>,
}

fn parse_digests(digests: &[String]) -> Vec<[u8; 32]> {
    digests
        .iter()
        .filter_map(|d| hex::decode(d).ok()?.try_into().ok())
        .collect()
}

impl ApiTokens {
    /// From stored hex digests (malformed ones are skipped).
    pub fn from_hex(digests: &[String]) -> ApiTokens {
        ApiTokens {
            digests: std::sync::Arc::new(std::sync::RwLock::new(parse_digests(digests))),
        }
    }

    fn current(&self) -> Vec<[u8; 32]> {
        // A poisoned lock still holds a consistent Vec (writers only assign it).
        match self.digests.read() {
            Ok(d) => d.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Makes `digests` the only valid tokens, at once for every clone.
    pub fn replace(&self, digests: &[String]) {
        let new = parse_digests(digests);
        match self.digests.write() {
            Ok(mut d) => *d = new,
            Err(poisoned) => *poisoned.into_inner() = new,
        }
    }

    /// True when `token` is one of the valid tokens; compares digests in constant time.
    pub fn verify(&self, token: &str) -> bool {
        let digest = digest(token);
        self.current()
            .iter()
            .fold(subtle::Choice::from(0), |acc, d| acc | d.ct_eq(&digest))
            .into()
    }

    /// The service's proofs for `nonce` and `addr`, one per valid token (see
    /// [`super::proof`]).
    pub fn proofs(&self, nonce: &str, addr: &str) -> Vec<String> {
        self.current()
            .iter()
            .map(|key| super::proof::proof(key, nonce, addr))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::digest::sha256_hex;

    #[test]
    fn token_verification_accepts_only_stored_tokens() {
        let tokens = ApiTokens::from_hex(&[sha256_hex("right")]);
        assert!(tokens.verify("right"));
        assert!(!tokens.verify("wrong"));
        assert!(!ApiTokens::default().verify("right"));
    }
}
