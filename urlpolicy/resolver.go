package urlpolicy

import (
	"context"
	"fmt"
	"net"
	"net/netip"
)

// ServerResolver returns a Resolver that sends every DNS query to the name
// server at addr ("ip:port", an IP literal: the server's own name could
// not be resolved without DNS) instead of the system's. It uses Go's
// resolver, so the hosts file still answers first; the server is asked
// over UDP, and over TCP when an answer is truncated. The Host sets it
// from operator configuration only (DEMIURGE_DNS_SERVER); nothing an
// Agent Core declares reaches it. A bad address is an error, so a
// misconfigured Host fails instead of quietly using the system resolver.
func ServerResolver(addr string) (Resolver, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || ap.Port() == 0 {
		return nil, fmt.Errorf("DNS server %q is not an IP address and port (for example 127.0.0.1:53)", addr)
	}
	server := ap.String()
	var d net.Dialer
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, server)
		},
	}, nil
}
