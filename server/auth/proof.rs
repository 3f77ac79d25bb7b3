//! The service proves it holds the API token's key before a TCP client sends the token
//! (`GET /api/v1/service-proof`). The key is the token's digest ([`super::digest`]), which the
//! store keeps;
//! the proof is HMAC-SHA256 over a fresh client nonce and the exact local address of the connection
//! it answers on (never a wildcard),
//! so a process squatting the port can neither answer nor relay another listener's answer (the
//! client checks the address against the peer it is connected to).

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::digest::same_secret;

/// The body of `GET /api/v1/service-proof?nonce=HEX` (wire JSON).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ServiceProof {
    /// The local address of the connection the proof was asked on (`IP:PORT`), covered by the
    /// proofs.
    pub addr: String,
    /// One proof per valid API token, hex.
    pub proofs: Vec<String>,
}

/// Domain separation for the proof's MAC input.
const LABEL: &[u8] = b"mcp-consent service proof v1\n";

/// Shortest and longest nonce accepted, in hex characters (128 to 512 bits).
pub const NONCE_HEX_CHARS: std::ops::RangeInclusive<usize> = 32..=128;

/// HMAC-SHA256(`key`, label ‖ `nonce` ‖ "\n" ‖ `addr`), hex.
pub fn proof(key: &[u8; 32], nonce: &str, addr: &str) -> String {
    // HMAC accepts keys of any length; a 32-byte key cannot fail.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return String::new();
    };
    mac.update(LABEL);
    mac.update(nonce.as_bytes());
    mac.update(b"\n");
    mac.update(addr.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// True when `nonce` is acceptable: hex, of a length in [`NONCE_HEX_CHARS`].
pub fn valid_nonce(nonce: &str) -> bool {
    NONCE_HEX_CHARS.contains(&nonce.len()) && nonce.bytes().all(|b| b.is_ascii_hexdigit())
}

/// True when `claimed` is the proof of `key` for `nonce` and `addr` (constant time).
pub fn check(key: &[u8; 32], nonce: &str, addr: &str, claimed: &str) -> bool {
    same_secret(claimed, &proof(key, nonce, addr))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::digest::digest as key_of;

    #[test]
    fn a_proof_is_bound_to_key_nonce_and_address() {
        let key = key_of("token");
        let p = proof(&key, "00ff", "127.0.0.1:7777");
        assert!(check(&key, "00ff", "127.0.0.1:7777", &p));
        assert!(!check(&key_of("other"), "00ff", "127.0.0.1:7777", &p));
        assert!(!check(&key, "00fe", "127.0.0.1:7777", &p));
        assert!(!check(&key, "00ff", "127.0.0.1:7778", &p));
        assert!(
            valid_nonce(&"a".repeat(32)) && !valid_nonce("zz") && !valid_nonce(&"a".repeat(31))
        );
    }
}
