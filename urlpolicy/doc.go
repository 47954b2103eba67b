// Package urlpolicy is the Host's URL and network policy against
// server-side request forgery (spec tool-runtime §6, whose §6.1 steps the
// comments refer to by number). Every outbound HTTP
// request the Host makes on an agent's behalf (web_extract, MCP over HTTP,
// callback validation) is judged by it, and its transport enforces the
// verdict on the socket itself.
//
// # Verdicts
//
// Policy.Check judges a URL without any I/O and returns a Decision with a
// typed reason (the Reason constants). Only http and https are fetched;
// the host is normalised (lowercase, trailing dots dropped, punycode for
// IDNs; an invalid IDN is an invalid URL). Metadata host names are always
// refused, localhost and *.localhost unless AllowPrivate. An IP literal,
// in any form a resolver would accept (standard IPv4 and IPv6 with the
// zone ignored, IPv4-mapped IPv6, and the legacy inet_aton forms such as
// "127.1", "2130706433", "0x7f000001" or "0177.0.0.1"), is judged as that
// address. A host name that passes is allowed pending its addresses,
// which are judged when a connection is opened.
//
// No effect before approval, DNS included: a DNS query carries its name
// to whoever serves the zone, so a model could leak data through the name
// of a call the operator then denies. Check is therefore the only verdict
// callers take before an approval. Policy.Evaluate adds the resolution
// (every answer must pass: one refused answer refuses the URL, and a
// failed or empty resolution refuses it too) for URLs the Host contacts on
// its own; the transport below applies the same rule at connect.
//
// Policy.CheckAddr judges one address: metadata (link-local, 169.254/16,
// 100.100.100.200, fd00:ec2::254) is always refused; so are unspecified,
// multicast, broadcast, reserved, documentation, benchmarking and other
// addresses that are not globally routable; private addresses (loopback,
// RFC 1918, CGNAT 100.64/10, ::1, fc00::/7) are refused unless the Host
// opted in (AllowPrivate, AllowPrivatePrefixes). An IPv6 address that
// embeds an IPv4 address (IPv4-compatible, NAT64, 6to4, Teredo) is refused
// when the embedded address would be. CheckAddr is a pure function: no
// I/O, no allocation.
//
// AllowPrivate and AllowPrivatePrefixes are Host options. Nothing an Agent
// Core declares reaches them; callers build the Policy from Host
// configuration only.
//
// # Enforcement
//
// Policy.Transport resolves and judges the host when it opens each
// connection (after approval, and again at every new connection, so DNS
// rebinding between two connections gains nothing), connects only to the
// addresses it judged, and re-checks the socket's real peer address in
// the dialer's Control hook just before connect(2). It resolves through
// Policy.Resolver (ServerResolver names an operator's DNS server), uses
// no proxy, and keeps the request URL, so the Host header and the TLS
// server name remain those of the original host. WithDialObserver lets a
// caller see each dial decision (the addresses used, for its audit).
// Policy.Client adds CheckRedirect, which judges every redirect target
// with Check (and refuses https→http downgrades) before it is followed,
// up to MaxRedirects; the dialer judges the target's addresses.
//
// # Audit
//
// Decision.Target, Decision.Audit and AuditURL are the only forms in which
// a URL appears in approvals, events and results: scheme, host and a
// non-default port, never userinfo, path, query or fragment.
//
// # Concurrency and failure modes
//
// Policy is a value; its methods are safe for concurrent use if its
// Resolver is. Every failure refuses: an unparsable URL, an IDNA error, a
// resolver error or timeout (10 s per resolution), an answer that is not an
// address. A refused connection surfaces as a *BlockedError (inside the
// *url.Error an http.Client returns).
//
// This package is pure policy: it imports only the standard library and
// golang.org/x/net/idna.
package urlpolicy
