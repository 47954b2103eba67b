package urlpolicy_test

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/urlpolicy"
)

// publicDNS answers every name with one public address, so that the fuzzer
// exercises the literal and name paths without any real DNS.
type publicDNS struct{}

func (publicDNS) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	return []net.IPAddr{{IP: net.IPv4(93, 184, 216, 34)}}, nil
}

// FuzzEvaluate: Evaluate never panics; under the default policy a URL whose
// host is a loopback, private, link-local, unspecified or multicast literal
// (standard or legacy IPv4 notation, as an independent parser reads it) is
// never allowed; an allowed decision is http(s), names a host and only
// addresses CheckAddr allows; the audit target never carries userinfo,
// path, query or fragment.
func FuzzEvaluate(f *testing.F) {
	for _, s := range []string{
		"https://example.com/", "http://127.0.0.1/", "http://127.1/", "http://0x7f000001/",
		"http://2130706433/", "http://0177.0.0.1/", "http://[::ffff:127.0.0.1]/", "http://[::1]:8080/x",
		"http://user:pw@10.0.0.1/?q#f", "http://localhost/", "http://bücher.example/", "http://[fe80::1%25eth0]/",
		"http://169.254.169.254/", "ftp://x/", "http://1.2.3.256/", "http://0x7f.1/",
	} {
		f.Add(s)
	}
	p := urlpolicy.Policy{Resolver: publicDNS{}}
	f.Fuzz(func(t *testing.T, raw string) {
		d := p.Evaluate(context.Background(), raw)
		target := d.Target()
		if i := strings.Index(target, "://"); i >= 0 {
			if rest := target[i+3:]; strings.ContainsAny(rest, "@/?#") {
				t.Fatalf("%q: audit target %q carries more than scheme, host and port", raw, target)
			}
		}
		if _, rest, ok := strings.Cut(urlpolicy.AuditURL(raw), "://"); ok && strings.ContainsAny(rest, "@/?#") {
			t.Fatalf("%q: AuditURL %q carries more than scheme, host and port", raw, urlpolicy.AuditURL(raw))
		}
		if !d.Allowed {
			return
		}
		if d.Scheme != "http" && d.Scheme != "https" || d.Hostname == "" || d.Port < 1 || len(d.Resolved) == 0 {
			t.Fatalf("%q: allowed decision %+v", raw, d)
		}
		for _, a := range d.Resolved {
			if ok, r := p.CheckAddr(a); !ok {
				t.Fatalf("%q: allowed with refused address %s (%s)", raw, a, r)
			}
		}
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil {
			t.Fatalf("%q: allowed although net/url rejects it: %v", raw, err)
		}
		if a, ok := literal(u.Hostname()); ok && !public(a) {
			t.Fatalf("%q: host %q is the literal %s, yet allowed", raw, u.Hostname(), a)
		}
	})
}

// legacyPart is one inet_aton component: hexadecimal, octal or decimal.
var legacyPart = regexp.MustCompile(`^(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$`)

// literal parses host as an IP literal independently of the package:
// netip for standard forms, strconv for inet_aton's legacy forms.
func literal(host string) (netip.Addr, bool) {
	host = strings.TrimRight(strings.ToLower(host), ".")
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host = host[:i]
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), true
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, part := range parts {
		if !legacyPart.MatchString(part) {
			return netip.Addr{}, false
		}
		n, err := strconv.ParseUint(part, 0, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (24 - 8*i)
		} else {
			if n >= 1<<(32-8*i) && i > 0 {
				return netip.Addr{}, false
			}
			v |= n
		}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func public(a netip.Addr) bool {
	return !(a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || netip.MustParsePrefix("100.64.0.0/10").Contains(a))
}
