//! The guard against DNS rebinding on the MCP channel itself: whether the remote server is on
//! this computer or a private network is decided once, by the first connection that answered
//! (the address actually connected to, not the URL's text), and holds for the proxy's
//! lifetime. A server that was not local then can never make the proxy send MCP traffic (a
//! POST, the GET stream, the DELETE, the old transport's endpoint) to a loopback, private or
//! link-local address ([`is_local_ip`]), however its name resolves later: the HTTP clients'
//! resolver hands the connector only public addresses of the name, and every response's peer
//! is checked again. A server that was local (`http://127.0.0.1:P/mcp`, a LAN name) keeps
//! working, and a URL naming an IP address (or `localhost`) cannot be rebound, so it is never
//! held.
//!
//! A name is never taken to mean this computer: its addresses that reach this computer
//! (loopback, the unspecified address, this computer's own interfaces' addresses) are dropped
//! before any connection (write `localhost` or `127.0.0.1` for a server on this computer), so a
//! name whose owner points it at 127.0.0.1 first cannot make the proxy judge the server local
//! and then rebind it, nor point it at this computer's public address, where services bound to
//! the wildcard answer. A name that was local (a LAN server) stays at the address that first
//! answered: every later connection goes there, and a response from anywhere else is refused.
//!
//! Through an environment HTTP proxy the proxy resolves the name, not us: the name is then
//! looked up here before every request (as the authorization guard does) and the request is
//! refused when it now has a local address; a name only the proxy can resolve is not refused.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};

use url::{Host, Url};

use super::auth::guard::{environment_proxy_hosts, resolve_held, server_is_local};
use super::net::{is_loopback, is_this_computer, reaches_this_computer, this_computers_addresses};
use crate::protocol::url_safety::is_local_ip;

const UNDECIDED: u8 = 0;
const LOCAL: u8 = 1;
const PUBLIC: u8 = 2;

/// Why a request to the server was refused.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "changed its address to a local one: {host} now points at this computer or a private network, and it did not when the proxy first reached it (refused)"
)]
pub struct Rebound {
    /// The host as written in the URL.
    pub host: String,
}

/// The server's place, shared by the transport and its clients' resolver.
#[derive(Clone)]
pub(super) struct Pin {
    state: Arc<AtomicU8>,
    /// The URL's host, when it is a name that could be rebound.
    name: Option<Arc<str>>,
    /// Hosts of the environment's HTTP proxies (the person configured them).
    proxy_hosts: Arc<Vec<String>>,
    /// Their addresses, looked up when the server's place was decided.
    proxies: Arc<OnceLock<Vec<IpAddr>>>,
    /// The address that first answered, for a name (not through a proxy).
    first_peer: Arc<OnceLock<IpAddr>>,
}

impl Pin {
    /// The pin for the server at `url` (undecided until its first answer).
    pub(super) fn new(url: &Url) -> Pin {
        let name = match url.host() {
            Some(Host::Domain(d)) if !is_loopback(url) => Some(Arc::from(d)),
            _ => None,
        };
        Pin {
            state: Arc::new(AtomicU8::new(UNDECIDED)),
            name,
            proxy_hosts: Arc::new(environment_proxy_hosts()),
            proxies: Arc::default(),
            first_peer: Arc::default(),
        }
    }

    fn rebound(&self) -> Rebound {
        Rebound {
            host: self.name.as_deref().unwrap_or_default().to_owned(),
        }
    }

    /// Whether the server is held to public addresses.
    fn holds(&self) -> bool {
        self.name.is_some() && self.state.load(Ordering::SeqCst) == PUBLIC
    }

    /// Before a request: through an environment proxy, the name must not now resolve to a
    /// local address.
    ///
    /// # Errors
    /// [`Rebound`].
    pub(super) async fn check(&self) -> Result<(), Rebound> {
        let Some(name) = self.name.as_deref().filter(|_| self.holds()) else {
            return Ok(());
        };
        if self.proxy_hosts.is_empty() {
            return Ok(());
        }
        if resolves_local(name).await {
            Err(self.rebound())
        } else {
            Ok(())
        }
    }

    /// After a response that came over a connection to `peer`: the first one decides where
    /// the server is; later ones must agree that it is not local when it was not.
    ///
    /// # Errors
    /// [`Rebound`] when a server that was not local answered from a local address.
    pub(super) async fn settle(
        &self,
        server: &Url,
        peer: Option<SocketAddr>,
    ) -> Result<(), Rebound> {
        let (Some(name), Some(peer)) = (self.name.as_deref(), peer) else {
            return Ok(());
        };
        let peer_ip = peer.ip().to_canonical();
        match self.state.load(Ordering::SeqCst) {
            UNDECIDED => {
                let proxies = self.proxy_addresses().await;
                let via_proxy = proxies.contains(&peer_ip);
                let local = if server_is_local(server, Some(peer), &proxies) {
                    true
                } else if via_proxy {
                    // Through the environment's proxy: where the name points for us.
                    resolves_local(name).await
                } else {
                    false
                };
                let decided = if local { LOCAL } else { PUBLIC };
                if !via_proxy {
                    // A name means a server elsewhere; the resolver never hands out this
                    // computer's addresses.
                    if is_this_computer(peer_ip) {
                        return Err(self.rebound());
                    }
                    let _ = self.first_peer.set(peer_ip);
                }
                let _ = self.proxies.set(proxies);
                let _ = self.state.compare_exchange(
                    UNDECIDED,
                    decided,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                );
                if self.holds() && local && !via_proxy {
                    return Err(self.rebound());
                }
                Ok(())
            }
            PUBLIC
                if (is_local_ip(peer_ip) || is_this_computer(peer_ip))
                    && !self.is_proxy(peer_ip) =>
            {
                Err(self.rebound())
            }
            // A local server stays where it first answered.
            LOCAL
                if !self.is_proxy(peer_ip)
                    && self.first_peer.get().is_some_and(|first| *first != peer_ip) =>
            {
                Err(self.rebound())
            }
            _ => Ok(()),
        }
    }

    /// Whether `ip` is one of the environment's proxies (the connection went there, not to
    /// the server).
    fn is_proxy(&self, ip: IpAddr) -> bool {
        self.proxies.get().is_some_and(|p| p.contains(&ip))
    }

    /// The addresses of the environment's HTTP proxies.
    async fn proxy_addresses(&self) -> Vec<IpAddr> {
        let mut found = Vec::new();
        for host in self.proxy_hosts.iter() {
            if let Ok(addrs) = tokio::net::lookup_host((host.as_str(), 0)).await {
                found.extend(addrs.map(|a| a.ip().to_canonical()));
            }
        }
        found
    }

    /// The resolver for the transport's HTTP clients.
    pub(super) fn resolver(&self) -> Arc<PinnedResolver> {
        Arc::new(PinnedResolver(self.clone()))
    }
}

/// Whether `name` now resolves to a local address for us (a name we cannot resolve does not).
async fn resolves_local(name: &str) -> bool {
    match tokio::net::lookup_host((name, 0)).await {
        Ok(mut addrs) => addrs.any(|a| is_local_ip(a.ip()) || is_this_computer(a.ip())),
        Err(_) => false,
    }
}

/// A DNS resolver that drops local addresses of the server's name once the server is held to
/// public ones (the environment's proxies are exempt: the person configured them).
pub(super) struct PinnedResolver(Pin);

impl reqwest::dns::Resolve for PinnedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let pin = self.0.clone();
        let name = name.as_str().to_owned();
        Box::pin(async move {
            let found = resolve_held(&name, pin.holds(), &pin.proxy_hosts, pin.rebound()).await?;
            let ours = pin
                .name
                .as_deref()
                .is_some_and(|n| n.eq_ignore_ascii_case(&name));
            if !ours
                || pin
                    .proxy_hosts
                    .iter()
                    .any(|h| h.eq_ignore_ascii_case(&name))
            {
                return Ok(found);
            }
            let kept = kept(found, pin.first_peer.get().copied());
            if kept.is_empty() {
                return Err(Box::new(pin.rebound()) as Box<dyn std::error::Error + Send + Sync>);
            }
            let kept: reqwest::dns::Addrs = Box::new(kept.into_iter());
            Ok(kept)
        })
    }
}

/// The addresses of the server's name the connector may use: never one that reaches this
/// computer ([`is_this_computer`]: loopback, `0.0.0.0`, `::`, its own interfaces' addresses): a
/// name means a server elsewhere; and only `first` once a local server first answered there.
fn kept(found: impl Iterator<Item = SocketAddr>, first: Option<IpAddr>) -> Vec<SocketAddr> {
    let own = this_computers_addresses();
    found
        .filter(|a| !reaches_this_computer(a.ip(), &own))
        .filter(|a| first.is_none_or(|f| a.ip().to_canonical() == f))
        .collect()
}

/// The [`Rebound`] behind a transport error, if that is why it failed.
pub(super) fn rebound_in(e: &reqwest::Error) -> Option<Rebound> {
    use std::error::Error as _;
    let mut source = e.source();
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<Rebound>() {
            return Some(r.clone());
        }
        source = s.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(addr: &str) -> Option<SocketAddr> {
        Some(addr.parse().unwrap())
    }

    #[tokio::test]
    async fn the_first_answer_decides_for_the_proxys_lifetime() {
        let url = Url::parse("http://mcp.example/mcp").unwrap();
        let pin = Pin::new(&url);
        pin.settle(&url, peer("93.184.215.14:80")).await.unwrap();
        assert!(pin.holds());
        for local in [
            "127.0.0.1:80",
            "[::ffff:127.0.0.1]:80",
            "10.0.0.5:80",
            "[fe80::1]:80",
        ] {
            assert!(pin.settle(&url, peer(local)).await.is_err(), "{local}");
        }
        let lan = Pin::new(&url);
        lan.settle(&url, peer("192.168.1.7:80")).await.unwrap();
        lan.settle(&url, peer("192.168.1.7:80")).await.unwrap();
        assert!(!lan.holds());
        // A local server stays where it first answered.
        for elsewhere in ["127.0.0.1:80", "192.168.1.8:80", "93.184.215.14:80"] {
            assert!(
                lan.settle(&url, peer(elsewhere)).await.is_err(),
                "{elsewhere}"
            );
        }
    }

    #[tokio::test]
    async fn a_name_is_never_taken_to_mean_this_computer() {
        use reqwest::dns::Resolve;
        let url = Url::parse("http://mcp.example/mcp").unwrap();
        let pin = Pin::new(&url);
        // The name's loopback addresses are never handed to the connector; once a local
        // server answered, only its address is.
        let found = [
            "127.0.0.1:80",
            "[::1]:80",
            "[::ffff:127.0.0.2]:80",
            "0.0.0.0:80",
            "[::]:80",
            "[::ffff:0.0.0.0]:80",
            "8.8.8.8:80",
            "192.168.1.7:80",
        ]
        .map(|a| a.parse::<SocketAddr>().unwrap());
        assert_eq!(kept(found.into_iter(), None), vec![found[6], found[7]]);
        assert_eq!(
            kept(found.into_iter(), Some("192.168.1.7".parse().unwrap())),
            vec![found[7]]
        );
        // A URL that says localhost is not a name that could be rebound.
        let local = Url::parse("http://localhost:8/mcp").unwrap();
        let resolved = Pin::new(&local)
            .resolver()
            .resolve("localhost".parse().unwrap())
            .await;
        assert!(resolved.is_ok());
        // A first answer from loopback (a name pointed there first) is refused.
        assert!(pin.settle(&url, peer("127.0.0.1:80")).await.is_err());
    }

    #[tokio::test]
    async fn addresses_and_localhost_in_the_url_cannot_be_rebound() {
        for u in [
            "http://127.0.0.1:8/mcp",
            "http://0.0.0.0:8/mcp",
            "http://localhost:8/mcp",
        ] {
            let url = Url::parse(u).unwrap();
            let pin = Pin::new(&url);
            pin.settle(&url, peer("127.0.0.1:8")).await.unwrap();
            assert!(!pin.holds(), "{u}");
        }
    }

    #[tokio::test]
    async fn a_held_name_resolves_to_no_local_address() {
        use reqwest::dns::Resolve;
        let url = Url::parse("http://mcp.example/mcp").unwrap();
        let pin = Pin::new(&url);
        pin.settle(&url, peer("93.184.215.14:80")).await.unwrap();
        let resolved = pin.resolver().resolve("localhost".parse().unwrap()).await;
        assert!(resolved.is_err(), "localhost resolved for a held server");
    }
}
