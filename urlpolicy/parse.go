package urlpolicy

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// target is a URL reduced to what the policy judges: lowercased scheme,
// normalised host name and the port the connection would use.
type target struct {
	scheme string
	host   string // lowercase, no trailing dot, IDNA (punycode) unless an IP literal
	port   int
}

// hostProfile converts host names to their ASCII (punycode) form for
// lookup. Unlike idna.Lookup it accepts underscores and other ASCII that
// DNS names carry in practice; empty labels, labels over 63 octets and
// invalid punycode are errors.
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.VerifyDNSLength(true),
	idna.StrictDomainName(false),
)

// parseTarget parses raw (surrounding white space ignored) the way the
// HTTP client will: net/url, so that the host judged here is the host the
// transport dials. ok is false for anything that does not parse, an IDNA
// error, or a port outside 1..65535.
func parseTarget(raw string) (target, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return target{}, false
	}
	t := target{scheme: strings.ToLower(u.Scheme)}
	host, ok := normalizeHost(u.Hostname())
	if !ok {
		return target{}, false
	}
	t.host = host
	port, ok := parsePort(u.Port(), t.scheme)
	if !ok {
		return target{}, false
	}
	t.port = port
	return t, true
}

// normalizeHost lowercases host, drops trailing dots and, unless it is an
// IP literal (standard or legacy IPv4), converts it to punycode.
func normalizeHost(host string) (string, bool) {
	host = strings.TrimRight(strings.ToLower(host), ".")
	if host == "" {
		return "", true
	}
	if _, ok := parseIP(host); ok {
		return host, true
	}
	ascii, err := hostProfile.ToASCII(host)
	if err != nil || ascii == "" {
		return "", false
	}
	return strings.ToLower(ascii), true
}

// parsePort returns the explicit port, or the scheme's default (443 for
// https, 80 otherwise). Port 0 is refused: nothing can be fetched from it,
// and accepting it would judge a port other than the one dialled.
func parsePort(s, scheme string) (int, bool) {
	if s == "" {
		if scheme == "https" {
			return 443, true
		}
		return 80, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, false
	}
	return n, true
}

// defaultPort is the port a scheme implies.
func defaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}

// parseIP parses host as an IP literal: standard IPv4 or IPv6 (a %zone
// is ignored; an IPv4-mapped IPv6 address becomes its IPv4 address), or a
// legacy IPv4 form that inet_aton accepts. ok is false for host names.
func parseIP(host string) (netip.Addr, bool) {
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host = host[:i]
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), true
	}
	return parseLegacyIPv4(host)
}

// parseLegacyIPv4 parses the numeric forms inet_aton accepts and resolvers
// and browsers still honour: one to four dot-separated parts, each decimal,
// 0x-hexadecimal or 0-prefixed octal; the last part fills the remaining
// bytes ("127.1" is 127.0.0.1, "2130706433" and "0x7f000001" are too). Every
// part before the last must fit in a byte and the last in what is left. A
// string that is not such a form (for example "1.2.3.256" or "08.1") is a
// host name.
func parseLegacyIPv4(s string) (netip.Addr, bool) {
	if s == "" || len(s) > 64 {
		return netip.Addr{}, false
	}
	var parts [4]uint64
	n := 0
	for {
		dot := strings.IndexByte(s, '.')
		part := s
		if dot >= 0 {
			part = s[:dot]
		}
		if n == 4 {
			return netip.Addr{}, false
		}
		v, ok := parseLegacyPart(part)
		if !ok {
			return netip.Addr{}, false
		}
		parts[n] = v
		n++
		if dot < 0 {
			break
		}
		s = s[dot+1:]
	}
	for i := 0; i < n-1; i++ {
		if parts[i] > 0xff {
			return netip.Addr{}, false
		}
	}
	last := parts[n-1]
	if last > uint64(0xffffffff)>>(8*(n-1)) {
		return netip.Addr{}, false
	}
	var v uint32
	for i := 0; i < n-1; i++ {
		v |= uint32(parts[i]) << (24 - 8*i)
	}
	v |= uint32(last)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseLegacyPart parses one part of a legacy IPv4 address. Values above
// 32 bits are refused rather than wrapped.
func parseLegacyPart(p string) (uint64, bool) {
	base := uint64(10)
	switch {
	case len(p) > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, p = 16, p[2:]
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if p == "" {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(p); i++ {
		d, ok := digit(p[i])
		if !ok || d >= base {
			return 0, false
		}
		v = v*base + d
		if v > 0xffffffff {
			return 0, false
		}
	}
	return v, true
}

func digit(c byte) (uint64, bool) {
	switch {
	case '0' <= c && c <= '9':
		return uint64(c - '0'), true
	case 'a' <= c && c <= 'f':
		return uint64(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return uint64(c-'A') + 10, true
	}
	return 0, false
}
