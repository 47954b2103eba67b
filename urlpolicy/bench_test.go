package urlpolicy_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/demiurge/demiurge/urlpolicy"
)

// BenchmarkCheckAddrLiteral measures the per-connection check (target:
// ≤ 2 µs per address).
func BenchmarkCheckAddrLiteral(b *testing.B) {
	p := urlpolicy.Policy{}
	addrs := []netip.Addr{
		netip.MustParseAddr("93.184.216.34"),
		netip.MustParseAddr("127.0.0.1"),
		netip.MustParseAddr("2606:4700:4700::1111"),
		netip.MustParseAddr("2001:db8::1"),
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p.CheckAddr(addrs[i&3])
		i++
	}
}

// BenchmarkEvaluateLiteral measures a whole URL verdict that needs no DNS.
func BenchmarkEvaluateLiteral(b *testing.B) {
	p := urlpolicy.Policy{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p.Evaluate(ctx, "http://0x7f000001:8080/admin?x=1")
	}
}
