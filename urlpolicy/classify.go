package urlpolicy

import (
	"net/netip"
	"slices"
)

// Address classes, checked in this order: metadata,
// then unspecified and multicast, then private, then anything else that is
// not globally routable.
var (
	// metadataPrefixes and metadataAddrs are where cloud instance metadata
	// (and its credentials) is served: link-local (AWS, GCP, Azure at
	// 169.254.169.254), Alibaba's 100.100.100.200 and AWS's IPv6 endpoint.
	metadataPrefixes = []netip.Prefix{
		netip.MustParsePrefix("169.254.0.0/16"),
		netip.MustParsePrefix("fe80::/10"),
	}
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("100.100.100.200"),
		netip.MustParseAddr("fd00:ec2::254"),
	}

	// privatePrefixes are the networks a Host may opt into (AllowPrivate).
	privatePrefixes = []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
		netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("172.16.0.0/12"),
		netip.MustParsePrefix("192.168.0.0/16"),
		netip.MustParsePrefix("::1/128"),
		netip.MustParsePrefix("fc00::/7"), // unique local
	}

	// nonRoutable4 are IPv4 special-purpose networks (IANA registry) that
	// are not globally reachable, plus the class E space and broadcast.
	nonRoutable4 = []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
		netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
		netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
		netip.MustParsePrefix("192.88.99.0/24"),  // deprecated 6to4 relay anycast
		netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
		netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
		netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
		netip.MustParsePrefix("240.0.0.0/4"),     // reserved, includes 255.255.255.255
	}

	// globalUnicast6 is the only IPv6 space allocated for global unicast;
	// everything outside it that the classes above did not name is
	// reserved (IPv4-compatible ::/96, NAT64 64:ff9b::/96, discard
	// 100::/64, site-local fec0::/10, …).
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
	// nonRoutable6 are the parts of 2000::/3 that are not globally
	// reachable.
	nonRoutable6 = []netip.Prefix{
		netip.MustParsePrefix("2001::/23"),     // IETF protocol assignments (Teredo, ORCHID, …)
		netip.MustParsePrefix("2001:db8::/32"), // documentation
		netip.MustParsePrefix("3fff::/20"),     // documentation (RFC 9637)
	}

	// Prefixes of IPv6 addresses that embed an IPv4 address.
	nat64Prefix      = netip.MustParsePrefix("64:ff9b::/96")
	nat64LocalPrefix = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFourPrefix  = netip.MustParsePrefix("2002::/16")
	teredoPrefix     = netip.MustParsePrefix("2001::/32")
	compatPrefix     = netip.MustParsePrefix("::/96")
)

// CheckAddr reports whether a connection to addr is allowed and, if not,
// why (one of the Reason*Address constants; ReasonAllowed when ok). An
// IPv4-mapped IPv6 address is judged as its IPv4 address, and an IPv6
// address that embeds an IPv4 address (IPv4-compatible, NAT64, 6to4,
// Teredo) is refused when the embedded address would be. CheckAddr does
// no I/O and does not allocate.
func (p Policy) CheckAddr(addr netip.Addr) (ok bool, reason string) {
	if r := p.blocked(addr.WithZone("").Unmap()); r != "" {
		return false, r
	}
	return true, ReasonAllowed
}

// blocked returns why a is refused, or "".
func (p Policy) blocked(a netip.Addr) string {
	switch {
	case !a.IsValid():
		return ReasonNonRoutableAddress
	case isMetadata(a):
		return ReasonMetadataAddress
	case a.IsUnspecified() || a.IsMulticast():
		return ReasonNonRoutableAddress
	case inAny(a, privatePrefixes):
		if p.AllowPrivate || inAny(a, p.AllowPrivatePrefixes) {
			return ""
		}
		return ReasonPrivateAddress
	}
	if a.Is4() {
		if inAny(a, nonRoutable4) {
			return ReasonNonRoutableAddress
		}
		return ""
	}
	if v4, ok := embeddedIPv4(a); ok {
		if r := p.blocked(v4); r != "" {
			return r
		}
	}
	if !globalUnicast6.Contains(a) || inAny(a, nonRoutable6) {
		return ReasonNonRoutableAddress
	}
	return ""
}

func isMetadata(a netip.Addr) bool {
	return slices.Contains(metadataAddrs, a) || inAny(a, metadataPrefixes)
}

func inAny(a netip.Addr, prefixes []netip.Prefix) bool {
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// embeddedIPv4 returns the IPv4 address an IPv6 address carries by
// construction: IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d and
// the local-use 64:ff9b:1::/48), 6to4 (2002:AABB:CCDD::) and Teredo (the
// client address, stored inverted in the last 32 bits).
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	last := [4]byte{b[12], b[13], b[14], b[15]}
	switch {
	case compatPrefix.Contains(a), nat64Prefix.Contains(a), nat64LocalPrefix.Contains(a):
		return netip.AddrFrom4(last), true
	case sixToFourPrefix.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	case teredoPrefix.Contains(a):
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), true
	}
	return netip.Addr{}, false
}
