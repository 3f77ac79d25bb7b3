//! The guard against a remote server steering the proxy into this computer or the local
//! network (server-side request forgery). Every authorization request (protected resource and
//! authorization server metadata, registration, token, refresh) goes to a URL the remote server
//! or its metadata named; unless the MCP server itself is on loopback or a private network
//! (judged by the address of the connection its refused request went over), none may reach a
//! loopback, private, link-local or otherwise non-public address
//! ([`crate::protocol::url_safety::is_local_ip`]), nor an address of this computer's own
//! interfaces, public ones included. The rule is checked on the address actually
//! connected to: an IP literal in the URL (every spelling the URL parser reads, `0.0.0.0`,
//! `[::ffff:127.0.0.1]`, `2130706433`) before the request, and a name in the HTTP client's
//! resolver, which hands the connector only public addresses (so a name resolving to
//! `127.0.0.1` cannot be connected to, and neither can a rebinding answer).
//!
//! Through an environment HTTP proxy the proxy resolves the name, not us: the name is then
//! resolved here first and refused when any of its addresses is local (the proxy's own host,
//! which the person configured, is exempt).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use url::{Host, Url};

use crate::protocol::url_safety::is_local_ip;
use crate::proxy::http::net::{is_loopback, is_this_computer};

/// Why the guard refused a request (the text names the host, never a path or query).
#[derive(Debug, thiserror::Error)]
#[error(
    "refused to contact {host}: it is on this computer or a private network, and the remote server is not"
)]
pub struct Refused {
    /// The host as written in the URL.
    pub host: String,
}

/// Whether requests are held to public addresses, shared by the clients' resolvers.
#[derive(Clone)]
pub struct Guard {
    enforcing: Arc<AtomicBool>,
    /// Hosts of the environment's HTTP proxies (exempt: the person configured them).
    proxy_hosts: Arc<Vec<String>>,
}

impl Default for Guard {
    fn default() -> Guard {
        Guard::new()
    }
}

impl Guard {
    /// A guard that enforces until [`Guard::settle`] finds the server on a local network.
    pub fn new() -> Guard {
        Guard {
            enforcing: Arc::new(AtomicBool::new(true)),
            proxy_hosts: Arc::new(environment_proxy_hosts()),
        }
    }

    /// Decides, for one refusal by the MCP server at `server`, whether the authorization
    /// requests that follow are held to public addresses: they are not when the connection that
    /// carried the refused request went to `peer` on loopback or a private network
    /// ([`server_is_local`]). Decided anew on every refusal and from that connection only, never
    /// from a lookup of the server's name (which a rebinding name answers differently).
    pub async fn settle(&self, server: &Url, peer: Option<SocketAddr>) {
        let proxies = self.proxy_addresses().await;
        let local = server_is_local(server, peer, &proxies);
        self.enforcing.store(!local, Ordering::SeqCst);
    }

    /// The addresses of the environment's HTTP proxies (names the person configured).
    async fn proxy_addresses(&self) -> Vec<IpAddr> {
        let mut found = Vec::new();
        for host in self.proxy_hosts.iter() {
            if let Ok(addrs) = tokio::net::lookup_host((host.as_str(), 0)).await {
                found.extend(addrs.map(|a| a.ip()));
            }
        }
        found
    }

    fn enforcing(&self) -> bool {
        self.enforcing.load(Ordering::SeqCst)
    }

    /// Checks `url` before a request: an IP literal must be public; through an environment
    /// proxy a name must resolve only to public addresses.
    ///
    /// # Errors
    /// [`Refused`].
    pub async fn check(&self, url: &Url) -> Result<(), Refused> {
        if !self.enforcing() {
            return Ok(());
        }
        let refused = || Refused {
            host: url.host_str().unwrap_or_default().to_owned(),
        };
        match url.host() {
            Some(Host::Ipv4(ip)) if is_off_limits(IpAddr::V4(ip)) => Err(refused()),
            Some(Host::Ipv6(ip)) if is_off_limits(IpAddr::V6(ip)) => Err(refused()),
            Some(Host::Domain(_)) if is_loopback(url) => Err(refused()),
            Some(Host::Domain(name)) if !self.proxy_hosts.is_empty() => {
                let port = url.port_or_known_default().unwrap_or(443);
                let addrs = tokio::net::lookup_host((name, port))
                    .await
                    .map_err(|_| refused())?;
                let mut any = false;
                for addr in addrs {
                    any = true;
                    if is_off_limits(addr.ip()) {
                        return Err(refused());
                    }
                }
                if any { Ok(()) } else { Err(refused()) }
            }
            _ => Ok(()),
        }
    }

    /// The resolver for the HTTP clients: system resolution, and while enforcing only public
    /// addresses (a name with none is an error naming it).
    pub fn resolver(&self) -> Arc<GuardedResolver> {
        Arc::new(GuardedResolver(self.clone()))
    }
}

/// Whether a server that is not local may not make us contact `ip`: a loopback, private,
/// link-local or otherwise non-public address, or one that reaches this computer (its own
/// interfaces' public addresses too, where services bound to the wildcard answer).
fn is_off_limits(ip: IpAddr) -> bool {
    is_local_ip(ip) || is_this_computer(ip)
}

/// Whether the MCP server at `server` is itself on loopback or a private network, judged by
/// `peer`, the address of the connection its refused request went over: a local address other
/// than an unspecified one. A server named by the wildcard (`0.0.0.0`, `[::]`) does not count
/// whatever the connection reached (the wildcard names no network), nor does a connection
/// whose address is unknown, nor, off loopback, one to an environment proxy in `proxies`
/// (its address says nothing of where the server is).
pub fn server_is_local(server: &Url, peer: Option<SocketAddr>, proxies: &[IpAddr]) -> bool {
    let wildcard = match server.host() {
        Some(Host::Ipv4(ip)) => ip.is_unspecified(),
        Some(Host::Ipv6(ip)) => ip.to_canonical().is_unspecified(),
        _ => false,
    };
    let Some(peer) = peer.map(|p| p.ip().to_canonical()) else {
        return false;
    };
    let through_proxy = !is_loopback(server) && proxies.iter().any(|p| p.to_canonical() == peer);
    !wildcard && !through_proxy && is_local_ip(peer) && !peer.is_unspecified()
}

/// The hosts of `ALL_PROXY`, `HTTP_PROXY`, `HTTPS_PROXY` (either case), as reqwest reads them.
pub fn environment_proxy_hosts() -> Vec<String> {
    [
        "ALL_PROXY",
        "all_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
    ]
    .iter()
    .filter_map(|var| std::env::var(var).ok())
    .filter(|v| !v.trim().is_empty())
    .filter_map(|v| {
        Url::parse(&v)
            .ok()
            .filter(|u| u.has_host())
            .or_else(|| Url::parse(&format!("http://{v}")).ok())
    })
    .filter_map(|u| {
        u.host_str()
            .map(|h| h.trim_matches(['[', ']']).to_ascii_lowercase())
    })
    .collect()
}

/// A DNS resolver that drops local addresses while the guard enforces.
pub struct GuardedResolver(Guard);

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let guard = self.0.clone();
        let name = name.as_str().to_owned();
        Box::pin(async move {
            let refused = Refused { host: name.clone() };
            resolve_held(&name, guard.enforcing(), &guard.proxy_hosts, refused).await
        })
    }
}

/// System resolution of `name` for a resolver hook: when `held` (and `name` is not one of
/// `proxy_hosts`, which the person configured) only its public addresses, and `refused` when it
/// has none.
///
/// # Errors
/// The lookup's error, or `refused`.
pub async fn resolve_held<E>(
    name: &str,
    held: bool,
    proxy_hosts: &[String],
    refused: E,
) -> Result<reqwest::dns::Addrs, Box<dyn std::error::Error + Send + Sync>>
where
    E: std::error::Error + Send + Sync + 'static,
{
    let found: Vec<SocketAddr> = tokio::net::lookup_host((name, 0)).await?.collect();
    let exempt = proxy_hosts.iter().any(|h| h.eq_ignore_ascii_case(name));
    if !held || exempt {
        return Ok(Box::new(found.into_iter()));
    }
    let own = crate::proxy::http::net::this_computers_addresses();
    let public: Vec<SocketAddr> = found
        .into_iter()
        .filter(|a| {
            !is_local_ip(a.ip()) && !crate::proxy::http::net::reaches_this_computer(a.ip(), &own)
        })
        .collect();
    if public.is_empty() {
        return Err(Box::new(refused));
    }
    Ok(Box::new(public.into_iter()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(u: &str) -> Url {
        Url::parse(u).unwrap()
    }

    fn peer(addr: &str) -> Option<SocketAddr> {
        Some(addr.parse().unwrap())
    }

    #[tokio::test]
    async fn local_literals_in_every_spelling_are_refused_for_a_public_server() {
        let guard = Guard::new();
        guard
            .settle(&url("https://93.184.215.14/mcp"), peer("93.184.215.14:443"))
            .await;
        for u in [
            "http://127.0.0.1:9/x",
            "http://0.0.0.0:9/x",
            "http://[::ffff:127.0.0.1]:9/x",
            "http://[::1]/x",
            "http://2130706433/x",
            "http://0x7f.1/x",
            "http://169.254.169.254/latest/meta-data",
            "http://10.1.2.3/x",
            "http://localhost:9/x",
            "http://localhost./x",
            "http://0:9/x",
            "http://127.1:9/x",
            "http://[::]:9/x",
            "http://[0:0:0:0:0:ffff:7f00:1]:9/x",
            "http://[64:ff9b::a9fe:a9fe]/x",
            "http://[fe80::1]/x",
            "http://100.100.100.200/x",
        ] {
            assert!(guard.check(&url(u)).await.is_err(), "{u}");
        }
        assert!(guard.check(&url("https://93.184.215.14/x")).await.is_ok());
    }

    #[tokio::test]
    async fn a_server_connected_to_on_loopback_or_a_private_network_may_name_local_addresses() {
        for (server, at) in [
            ("http://127.0.0.1:8/mcp", "127.0.0.1:8"),
            ("http://localhost/mcp", "[::1]:80"),
            ("http://10.0.0.5/mcp", "10.0.0.5:80"),
            (
                "https://mcp.intranet.example/mcp",
                "[::ffff:192.168.1.7]:443",
            ),
        ] {
            let guard = Guard::new();
            guard.settle(&url(server), peer(at)).await;
            assert!(
                guard.check(&url("http://127.0.0.1:9/x")).await.is_ok(),
                "{server}"
            );
        }
    }

    #[test]
    fn the_server_is_judged_by_the_connection_its_refusal_came_over() {
        let proxies = [IpAddr::from([127, 0, 0, 1])];
        // A rebinding name: whatever it resolves to now, the connection went to a public address.
        let rebinding = url("https://rebind.example/mcp");
        assert!(!server_is_local(&rebinding, peer("93.184.215.14:443"), &[]));
        assert!(server_is_local(&rebinding, peer("10.0.0.5:443"), &[]));
        // A URL naming a private address but reached through the environment's proxy.
        let private = url("http://10.0.0.5/mcp");
        assert!(!server_is_local(&private, peer("127.0.0.1:3128"), &proxies));
        assert!(!server_is_local(&private, peer("93.184.215.14:80"), &[]));
        // Loopback never goes through a proxy: its connection is the server's own.
        let loopback = url("http://127.0.0.1:8/mcp");
        assert!(server_is_local(&loopback, peer("127.0.0.1:8"), &proxies));
        // The wildcard names no network, whatever the connection reached; an unknown one neither.
        assert!(!server_is_local(
            &url("http://0.0.0.0:8/mcp"),
            peer("127.0.0.1:8"),
            &[]
        ));
        assert!(!server_is_local(
            &url("http://[::]:8/mcp"),
            peer("[::1]:8"),
            &[]
        ));
        assert!(!server_is_local(&rebinding, None, &[]));
    }

    #[tokio::test]
    async fn each_refusal_decides_anew() {
        let guard = Guard::new();
        let server = url("https://rebind.example/mcp");
        guard.settle(&server, peer("10.0.0.5:443")).await;
        assert!(guard.check(&url("http://127.0.0.1:9/x")).await.is_ok());
        guard.settle(&server, peer("93.184.215.14:443")).await;
        assert!(guard.check(&url("http://127.0.0.1:9/x")).await.is_err());
    }

    #[tokio::test]
    async fn the_resolver_hands_out_no_local_address_of_a_name() {
        use reqwest::dns::Resolve;
        let guard = Guard::new();
        let resolved = guard.resolver().resolve("localhost".parse().unwrap()).await;
        assert!(resolved.is_err(), "localhost resolved through the guard");
    }
}
