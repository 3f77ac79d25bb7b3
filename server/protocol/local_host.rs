//! Whether a host is this computer or a private network: the names that resolve locally by
//! convention and the address ranges with no public meaning. Pure functions, no I/O.

/// Names that resolve to this computer or the local network by convention (RFC 6761 `localhost`,
/// RFC 6762 `.local`, and the common home-router suffixes).
pub(super) fn is_local_name(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost"
        || [".localhost", ".local", ".internal", ".lan", ".home.arpa"]
            .iter()
            .any(|suffix| host.ends_with(suffix))
}

/// Whether `ip` is this computer, a private or link-local network, or an address with no
/// public meaning: loopback, RFC 1918, link-local, `0.0.0.0/8` (connecting to it reaches this
/// computer), carrier-grade NAT, IETF-reserved, benchmarking, multicast, broadcast; for IPv6
/// also unique-local, link- and site-local, and every IPv4 address embedded in an IPv6 one
/// (`::ffff:127.0.0.1`, `::127.0.0.1`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) judged as that
/// IPv4 address.
pub fn is_local_ip(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => is_local_v4(v4),
        std::net::IpAddr::V6(v6) => is_local_v6(v6),
    }
}

/// [`is_local_ip`] for an IPv4 address.
pub(super) fn is_local_v4(ip: std::net::Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        // 0.0.0.0/8: "this network"; a connection to it reaches this computer.
        || a == 0
        // 100.64.0.0/10, carrier-grade NAT (RFC 6598).
        || (a == 100 && (b & 0xc0) == 64)
        // 192.0.0.0/24, IETF protocol assignments (RFC 6890).
        || (a == 192 && b == 0 && ip.octets()[2] == 0)
        // 198.18.0.0/15, benchmarking (RFC 2544).
        || (a == 198 && (b & 0xfe) == 18)
        // 240.0.0.0/4, reserved.
        || a >= 240
}

/// [`is_local_ip`] for an IPv6 address, judging an embedded IPv4 address as that address.
pub(super) fn is_local_v6(ip: std::net::Ipv6Addr) -> bool {
    if ip.is_loopback() || ip.is_unspecified() {
        return true;
    }
    let segments = ip.segments();
    let embedded = |hi: u16, lo: u16| {
        let [h1, h2] = hi.to_be_bytes();
        let [l1, l2] = lo.to_be_bytes();
        std::net::Ipv4Addr::new(h1, h2, l1, l2)
    };
    // `::ffff:a.b.c.d` (mapped) and `::a.b.c.d` (compatible).
    if let Some(v4) = ip.to_ipv4() {
        return is_local_v4(v4);
    }
    // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052).
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return is_local_v4(embedded(segments[6], segments[7]));
    }
    // 6to4 2002:V4ADDR::/48 (RFC 3056).
    if segments[0] == 0x2002 {
        return is_local_v4(embedded(segments[1], segments[2]));
    }
    let first = segments[0];
    (first & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (first & 0xffc0) == 0xfec0 // site-local fec0::/10 (deprecated, still routed locally)
        || (first & 0xff00) == 0xff00 // multicast
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_local_address_is_local() {
        for ip in [
            "127.0.0.1",
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "::1",
            "::",
            "::ffff:127.0.0.1",
            "::127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
            "fd00::1",
            "fe80::1",
        ] {
            assert!(is_local_ip(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "93.184.215.14",
            "2606:4700::1111",
            "::ffff:93.184.215.14",
            "1.1.1.1",
        ] {
            assert!(!is_local_ip(ip.parse().unwrap()), "{ip}");
        }
    }
}
