package urlpolicy

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Resolver resolves host names. *net.Resolver implements it; tests inject
// their own so that no test depends on (or sends) real DNS traffic.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Policy judges URLs and connection addresses. The zero value is the
// strict default: public addresses only, resolved with net.DefaultResolver.
// A Policy is a plain value, safe to copy and to use concurrently as long
// as its Resolver is.
type Policy struct {
	// AllowPrivate admits private hosts and addresses (localhost,
	// *.localhost, loopback, RFC 1918, CGNAT, unique-local). It is a Host
	// option only: nothing an Agent Core declares may set it. Metadata and
	// non-routable addresses stay refused.
	AllowPrivate bool

	// AllowPrivatePrefixes admits the private addresses inside these
	// prefixes without AllowPrivate, for a Host that must reach one local
	// service (and for tests, which admit 127.0.0.0/8 to reach loopback
	// servers while every other private address stays refused). Host
	// option only; it never admits metadata or non-routable addresses,
	// nor the localhost names.
	AllowPrivatePrefixes []netip.Prefix

	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
}

// Decision is the verdict on one URL.
type Decision struct {
	Allowed  bool
	Reason   string // ReasonAllowed or one of the other Reason constants
	Scheme   string // lowercase; "" when the URL does not parse
	Hostname string // lowercase, punycode, no trailing dot
	Port     int    // explicit or the scheme's default; 0 when the URL does not parse
	// Resolved are the addresses judged: the literal address, or every
	// DNS answer (deduplicated, IPv4-mapped addresses unmapped). When the
	// decision allows, a connection may use any of them. Check leaves it
	// empty for a host name: nothing is resolved before a connection.
	Resolved []netip.Addr
}

// metadataHostnames name cloud metadata services. They are refused even
// with AllowPrivate, whatever they resolve to.
var metadataHostnames = map[string]bool{
	"metadata.google.internal": true,
	"metadata.goog":            true,
}

// dnsTimeout bounds one resolution, so that a policy check cannot hang on
// a silent resolver whatever the caller's context.
const dnsTimeout = 10 * time.Second

// Check is the verdict that needs no I/O (steps 1 to 6): the URL must parse and be http or https, and its host must be
// neither a metadata name nor (without AllowPrivate) localhost; an IP
// literal is judged as that address. A host name that passes is allowed
// with no Resolved addresses: its addresses are judged when a connection
// to it is opened (Transport), never before. Check sends nothing, not even
// a DNS query, so it is the only check that may run before an approval:
// a call the operator then denies must leave no trace on the network.
func (p Policy) Check(rawURL string) Decision {
	t, ok := parseTarget(rawURL)
	if !ok {
		return Decision{Reason: ReasonInvalidURL}
	}
	if t.scheme != "http" && t.scheme != "https" {
		return t.deny(ReasonUnsupportedScheme, nil)
	}
	d, _ := p.literal(t)
	return d
}

// Evaluate judges rawURL completely: Check, then,
// for a host name, every address it resolves to must pass CheckAddr. One
// refused answer refuses the URL; a DNS failure refuses it too. Userinfo,
// path, query and fragment play no part. Evaluate resolves: it is for
// URLs the Host itself chose to contact, never for a call that still
// awaits approval (use Check).
func (p Policy) Evaluate(ctx context.Context, rawURL string) Decision {
	t, ok := parseTarget(rawURL)
	if !ok {
		return Decision{Reason: ReasonInvalidURL}
	}
	if t.scheme != "http" && t.scheme != "https" {
		return t.deny(ReasonUnsupportedScheme, nil)
	}
	return p.evaluate(ctx, t)
}

// Require is Evaluate that reports a refusal as a *BlockedError.
func (p Policy) Require(ctx context.Context, rawURL string) (Decision, error) {
	d := p.Evaluate(ctx, rawURL)
	if !d.Allowed {
		return d, &BlockedError{Decision: d}
	}
	return d, nil
}

// literal judges what the host of t says by itself: a missing host, a
// metadata or localhost name, an IP literal. done is false for a host
// name that passes, whose addresses are still to be judged.
func (p Policy) literal(t target) (d Decision, done bool) {
	switch {
	case t.host == "":
		return t.deny(ReasonMissingHostname, nil), true
	case metadataHostnames[t.host]:
		return t.deny(ReasonMetadataHostname, nil), true
	case !p.AllowPrivate && (t.host == "localhost" || strings.HasSuffix(t.host, ".localhost")):
		return t.deny(ReasonPrivateHostname, nil), true
	}
	if a, ok := parseIP(t.host); ok {
		addrs := []netip.Addr{a}
		if r := p.blocked(a); r != "" {
			return t.deny(r, addrs), true
		}
		return t.allow(addrs), true
	}
	return t.allow(nil), false
}

// evaluate judges the host and port of t (its scheme is already checked,
// or unknown at dial time): the literal checks, then every address the
// name resolves to.
func (p Policy) evaluate(ctx context.Context, t target) Decision {
	if d, done := p.literal(t); done {
		return d
	}
	addrs, reason := p.resolve(ctx, t.host)
	if reason != "" {
		return t.deny(reason, addrs)
	}
	for _, a := range addrs {
		if r := p.blocked(a); r != "" {
			return t.deny(r, addrs)
		}
	}
	return t.allow(addrs)
}

// resolve returns every address host resolves to, or the reason it cannot
// be judged.
func (p Policy) resolve(ctx context.Context, host string) ([]netip.Addr, string) {
	var r Resolver = net.DefaultResolver
	if p.Resolver != nil {
		r = p.Resolver
	}
	ctx, cancel := context.WithTimeout(ctx, dnsTimeout)
	defer cancel()
	answers, err := r.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, ReasonDNSFailure
	}
	if len(answers) == 0 {
		return nil, ReasonDNSNoAddresses
	}
	addrs := make([]netip.Addr, 0, len(answers))
	for _, ans := range answers {
		a, ok := netip.AddrFromSlice(ans.IP)
		if !ok {
			return nil, ReasonDNSInvalidAddress
		}
		a = a.Unmap()
		if !slices.Contains(addrs, a) {
			addrs = append(addrs, a)
		}
	}
	return addrs, ""
}

func (t target) deny(reason string, addrs []netip.Addr) Decision {
	return Decision{Reason: reason, Scheme: t.scheme, Hostname: t.host, Port: t.port, Resolved: addrs}
}

func (t target) allow(addrs []netip.Addr) Decision {
	return Decision{Allowed: true, Reason: ReasonAllowed, Scheme: t.scheme, Hostname: t.host, Port: t.port, Resolved: addrs}
}
