package urlpolicy_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
)

// fakeDNS answers from a fixed table, so no test sends real DNS queries.
// A host missing from the table fails to resolve. The answer "garbage"
// stands for a malformed address.
type fakeDNS struct {
	mu      sync.Mutex
	answers map[string][]string
	lookups []string
}

func newDNS(answers map[string][]string) *fakeDNS { return &fakeDNS{answers: answers} }

func (f *fakeDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups = append(f.lookups, host)
	ans, ok := f.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]net.IPAddr, 0, len(ans))
	for _, a := range ans {
		if a == "garbage" {
			out = append(out, net.IPAddr{IP: net.IP{1, 2, 3}})
			continue
		}
		out = append(out, net.IPAddr{IP: net.IP(netip.MustParseAddr(a).AsSlice())})
	}
	return out, nil
}

func (f *fakeDNS) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.lookups)
}

// sequenceDNS answers host with answers[i] on its i-th lookup (the last
// answer repeats): a rebinding name server.
type sequenceDNS struct {
	mu      sync.Mutex
	host    string
	answers []string
	calls   int
}

func (s *sequenceDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if host != s.host {
		return nil, errors.New("unexpected lookup of " + host)
	}
	a := s.answers[min(s.calls, len(s.answers)-1)]
	s.calls++
	return []net.IPAddr{{IP: net.IP(netip.MustParseAddr(a).AsSlice())}}, nil
}

func (s *sequenceDNS) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%d lookups of %s", s.calls, s.host)
}

// noDNS fails the test on any lookup: literal addresses are judged
// without DNS.
type noDNS struct{ fail func(string, ...any) }

func (n noDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	n.fail("unexpected DNS lookup of %q", host)
	return nil, errors.New("no DNS in this test")
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
