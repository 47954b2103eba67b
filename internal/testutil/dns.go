// Package testutil holds test doubles shared by several packages' tests.
// Nothing in production code imports it (internal/deps enforces that).
package testutil

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// DNSServer is a name server on a loopback UDP port that records every
// question it is asked. It answers A and AAAA questions from its table
// (a name maps to one address; the other family gets an empty answer) and
// every other name with NXDOMAIN. Tests point a resolver at Addr to see,
// from outside the code under test, which names were looked up.
type DNSServer struct {
	// Addr is the server's "127.0.0.1:port".
	Addr string

	conn    net.PacketConn
	answers map[string]netip.Addr
	done    chan struct{}

	mu      sync.Mutex
	queries []string
}

// StartDNSServer starts a DNSServer answering answers (name → address,
// names without the trailing dot) and stops it when the test ends.
func StartDNSServer(t testing.TB, answers map[string]string) *DNSServer {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("DNS server: %v", err)
	}
	s := &DNSServer{Addr: conn.LocalAddr().String(), conn: conn, answers: map[string]netip.Addr{}, done: make(chan struct{})}
	for name, a := range answers {
		s.answers[strings.ToLower(name)] = netip.MustParseAddr(a)
	}
	go s.serve()
	t.Cleanup(func() {
		conn.Close()
		<-s.done
	})
	return s
}

// Queries returns the names asked so far, in order, lowercase and without
// the trailing dot (one entry per question: a lookup usually asks for A
// and AAAA).
func (s *DNSServer) Queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...)
}

// Asked reports whether name was asked at all.
func (s *DNSServer) Asked(name string) bool {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	for _, q := range s.Queries() {
		if q == name {
			return true
		}
	}
	return false
}

// serve answers until the connection is closed.
func (s *DNSServer) serve() {
	defer close(s.done)
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		reply, ok := s.answer(buf[:n])
		if ok {
			_, _ = s.conn.WriteTo(reply, from)
		}
	}
}

// answer builds the reply to one query message; ok is false for a
// message that does not parse (it is dropped, as a real server would).
func (s *DNSServer) answer(msg []byte) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		return nil, false
	}
	name := strings.ToLower(strings.TrimSuffix(q.Name.String(), "."))
	s.mu.Lock()
	s.queries = append(s.queries, name)
	s.mu.Unlock()

	addr, known := s.answers[name]
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if b.StartQuestions() != nil || b.Question(q) != nil || b.StartAnswers() != nil {
		return nil, false
	}
	rr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}
	switch {
	case known && q.Type == dnsmessage.TypeA && addr.Is4():
		if b.AResource(rr, dnsmessage.AResource{A: addr.As4()}) != nil {
			return nil, false
		}
	case known && q.Type == dnsmessage.TypeAAAA && addr.Is6():
		if b.AAAAResource(rr, dnsmessage.AAAAResource{AAAA: addr.As16()}) != nil {
			return nil, false
		}
	}
	out, err := b.Finish()
	return out, err == nil
}

// Resolver is an in-process resolver (urlpolicy.Resolver) that answers
// from a table (name → address; an unknown name does not resolve) and
// records every lookup, so a test can tell whether and when a name was
// looked up.
type Resolver struct {
	answers map[string]netip.Addr
	mu      sync.Mutex
	names   []string
}

// NewResolver returns a Resolver answering answers (name → address).
func NewResolver(answers map[string]string) *Resolver {
	r := &Resolver{answers: map[string]netip.Addr{}}
	for name, a := range answers {
		r.answers[name] = netip.MustParseAddr(a)
	}
	return r
}

// LookupIPAddr records host and answers it from the table.
func (r *Resolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, host)
	a, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.IP(a.AsSlice())}}, nil
}

// Lookups returns the names looked up so far, in order.
func (r *Resolver) Lookups() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.names...)
}
