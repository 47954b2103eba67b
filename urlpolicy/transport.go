package urlpolicy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// MaxRedirects is how many redirects a Client follows.
const MaxRedirects = 10

// Connection timeouts of Transport.
const (
	dialTimeout         = 10 * time.Second
	tlsHandshakeTimeout = 10 * time.Second
	idleConnTimeout     = 30 * time.Second
)

// ErrTooManyRedirects is returned (wrapped in a *url.Error) by a Client
// that was redirected more than MaxRedirects times.
var ErrTooManyRedirects = fmt.Errorf("stopped after %d redirects", MaxRedirects)

// BlockedError reports a URL or connection the policy refused. Its message
// names the reason and the audit target only.
type BlockedError struct {
	Decision Decision
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("URL blocked by Host policy: %s (%s)", e.Decision.Reason, e.Decision.Target())
}

// Transport returns an HTTP transport that enforces p on every connection:
//
//   - no proxy (ambient HTTP_PROXY and friends are ignored), so the
//     connection goes where the policy looked;
//   - the dialer judges the host of every new connection: the literal
//     checks, then (for a host name) a fresh resolution through
//     p.Resolver, every answer classified; one refused answer, a failed
//     or an empty resolution refuses the connection. This is the only
//     place a host name is resolved, so nothing is looked up before the
//     first connection is opened (after approval);
//   - it connects only to the addresses it judged, never resolving again;
//   - the dialer's Control hook checks the address the socket is about to
//     connect to, so nothing reaches a refused address whatever resolved it
//     (DNS rebinding between a check and the connection included);
//   - the request URL is not rewritten, so the Host header and the TLS
//     server name (and certificate check) stay those of the original host.
//
// A refusal is a *BlockedError whose decision has no scheme (the dialer
// sees host and port only). The dial decisions, allowed or refused, are
// reported to the observer of the request's context (WithDialObserver).
// Each call returns a new transport; its owner closes idle connections
// (CloseIdleConnections) when done with it.
func (p Policy) Transport() *http.Transport {
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second, Control: p.Control}
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return p.dial(ctx, d, network, addr)
		},
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		IdleConnTimeout:       idleConnTimeout,
		ExpectContinueTimeout: time.Second,
		MaxIdleConns:          8,
	}
}

// Client returns an HTTP client over Transport() whose redirects are judged
// by CheckRedirect, bounded as a whole by timeout (0: no bound). It keeps
// no cookies.
func (p Policy) Client(timeout time.Duration) *http.Client {
	return &http.Client{Transport: p.Transport(), CheckRedirect: p.CheckRedirect, Timeout: timeout}
}

// CheckRedirect is an http.Client CheckRedirect hook: it refuses more than
// MaxRedirects redirects, a redirect from https to http, and any target
// Check refuses. The target's addresses are judged by the dialer when it
// connects.
func (p Policy) CheckRedirect(req *http.Request, via []*http.Request) error {
	_, err := p.EvaluateRedirect(req, via)
	return err
}

// EvaluateRedirect is CheckRedirect that also returns the decision on the
// redirect target (a Check decision: a host name's addresses are judged at
// connect). err is ErrTooManyRedirects or a *BlockedError.
func (p Policy) EvaluateRedirect(req *http.Request, via []*http.Request) (Decision, error) {
	if len(via) >= MaxRedirects {
		return Decision{}, ErrTooManyRedirects
	}
	if len(via) > 0 && via[len(via)-1].URL.Scheme == "https" && req.URL.Scheme != "https" {
		t, _ := parseTarget(req.URL.String())
		d := t.deny(ReasonRedirectDowngrade, nil)
		return d, &BlockedError{Decision: d}
	}
	d := p.Check(req.URL.String())
	if !d.Allowed {
		return d, &BlockedError{Decision: d}
	}
	return d, nil
}

// Control is a net.Dialer Control hook: it refuses to connect to an
// address CheckAddr refuses. It sees the address the socket really
// connects to, after every resolution, and returns a *BlockedError.
func (p Policy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &BlockedError{Decision: Decision{Reason: ReasonNonRoutableAddress, Hostname: address}}
	}
	if ok, reason := p.CheckAddr(ap.Addr()); !ok {
		a := ap.Addr().WithZone("").Unmap()
		return &BlockedError{Decision: Decision{Reason: reason, Hostname: a.String(), Port: int(ap.Port()), Resolved: []netip.Addr{a}}}
	}
	return nil
}

// dial judges the host of addr ("host:port", as the transport dials it)
// and connects to the judged addresses in order until one answers.
func (p Policy) dial(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return nil, fmt.Errorf("invalid port %q", portText)
	}
	h, ok := normalizeHost(host)
	if !ok {
		dec := Decision{Reason: ReasonInvalidURL, Hostname: host, Port: port}
		return nil, &BlockedError{Decision: dec}
	}
	dec := p.evaluate(ctx, target{host: h, port: port})
	if observe, ok := ctx.Value(dialObserverKey{}).(func(Decision)); ok {
		observe(dec)
	}
	if !dec.Allowed {
		return nil, &BlockedError{Decision: dec}
	}
	return dialAddrs(ctx, d, network, dec.Resolved, port)
}

// dialAddrs connects to the first of addrs that answers. A refusal by the
// Control hook ends the attempt at once.
func dialAddrs(ctx context.Context, d *net.Dialer, network string, addrs []netip.Addr, port int) (net.Conn, error) {
	var first error
	for _, a := range addrs {
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		var blocked *BlockedError
		if errors.As(err, &blocked) || ctx.Err() != nil {
			return nil, err
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = errors.New("no address to dial")
	}
	return nil, first
}

type dialObserverKey struct{}

// WithDialObserver returns ctx carrying fn, which the dialer of Transport
// calls with its decision on every connection it opens for a request made
// with that context (or a context derived from it): the host and port it
// judged and the addresses it resolved, allowed or not. A caller uses it
// to audit the addresses a fetch really used. fn runs on the dialing
// goroutine and must be safe for concurrent use.
func WithDialObserver(ctx context.Context, fn func(Decision)) context.Context {
	return context.WithValue(ctx, dialObserverKey{}, fn)
}
