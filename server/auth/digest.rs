//! The one token digest and the one constant-time comparison. Everything that stores, checks or
//! keys on a secret (API tokens, browser sessions, login links, the service proof) takes its
//! SHA-256 digest here, so the stored form and the proof key can never drift apart.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// SHA-256 of `secret`: the stored form of a token and the service proof's key.
pub fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// [`digest`] of `secret`, hex (how the store keeps it).
pub fn sha256_hex(secret: &str) -> String {
    hex::encode(digest(secret))
}

/// True when `submitted` equals `expected`, compared in constant time.
pub fn same_secret(submitted: &str, expected: &str) -> bool {
    bool::from(submitted.as_bytes().ct_eq(expected.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hex_digest_is_the_digest_spelt_in_hex() {
        assert_eq!(sha256_hex("token"), hex::encode(digest("token")));
        assert_eq!(
            sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert!(same_secret("a", "a") && !same_secret("a", "b") && !same_secret("a", "ab"));
    }
}
