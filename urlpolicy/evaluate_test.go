package urlpolicy_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/urlpolicy"
)

// dnsTable is the fake DNS every table case resolves against.
var dnsTable = map[string][]string{
	"example.com":           {"93.184.216.34"},
	"xn--bcher-kva.example": {"93.184.216.34"},
	"dual.example":          {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"},
	"dup.example":           {"93.184.216.34", "93.184.216.34", "::ffff:93.184.216.34"},
	"internal.example":      {"10.1.2.3"},
	"mixed.example":         {"93.184.216.34", "10.0.0.5"},
	"mixed6.example":        {"2606:2800:220:1:248:1893:25c8:1946", "::1"},
	"meta.example":          {"169.254.169.254"},
	"mapped.example":        {"::ffff:127.0.0.1"},
	"cgnat.example":         {"100.72.0.9"},
	"ula.example":           {"fd12:3456::1"},
	"zero.example":          {"0.0.0.0"},
	"doc.example":           {"192.0.2.10"},
	"empty.example":         {},
	"garbage.example":       {"93.184.216.34", "garbage"},
	"localhost":             {"127.0.0.1"},
	"1.2.3.256":             {"93.184.216.34"},
	"08.0.0.1":              {"10.0.0.1"},
	"_dmarc.example":        {"93.184.216.34"},
}

func TestEvaluate(t *testing.T) {
	strict := urlpolicy.Policy{}
	private := urlpolicy.Policy{AllowPrivate: true}
	admitLoopback := urlpolicy.Policy{AllowPrivatePrefixes: loopback}
	const (
		ok      = urlpolicy.ReasonAllowed
		invalid = urlpolicy.ReasonInvalidURL
		scheme  = urlpolicy.ReasonUnsupportedScheme
		nohost  = urlpolicy.ReasonMissingHostname
		metaH   = urlpolicy.ReasonMetadataHostname
		privH   = urlpolicy.ReasonPrivateHostname
		metaA   = urlpolicy.ReasonMetadataAddress
		privA   = urlpolicy.ReasonPrivateAddress
		nonRt   = urlpolicy.ReasonNonRoutableAddress
		dnsFail = urlpolicy.ReasonDNSFailure
		dnsNone = urlpolicy.ReasonDNSNoAddresses
		dnsBad  = urlpolicy.ReasonDNSInvalidAddress
	)
	tests := []struct {
		url    string
		policy urlpolicy.Policy
		reason string
		host   string // "" skips the check
		port   int    // 0 skips the check
	}{
		// Allowed: public names and literals.
		{"https://example.com/", strict, ok, "example.com", 443},
		{"http://example.com:8080/path?q=1#frag", strict, ok, "example.com", 8080},
		{"  https://example.com/  ", strict, ok, "example.com", 443},
		{"HTTPS://EXAMPLE.COM./", strict, ok, "example.com", 443},
		{"https://bücher.example./", strict, ok, "xn--bcher-kva.example", 443},
		{"https://xn--bcher-kva.example/", strict, ok, "xn--bcher-kva.example", 443},
		{"http://8.8.8.8/", strict, ok, "8.8.8.8", 80},
		{"https://1.1.1.1:8443/", strict, ok, "1.1.1.1", 8443},
		{"http://[2606:4700:4700::1111]/", strict, ok, "2606:4700:4700::1111", 80},
		{"http://user:secret@example.com/", strict, ok, "example.com", 80},
		{"http://127.0.0.1:80@example.com/", strict, ok, "example.com", 80},
		{"http://dual.example/", strict, ok, "dual.example", 80},
		{"http://[2002:808:808::1]/", strict, ok, "2002:808:808::1", 80}, // 6to4 of 8.8.8.8
		{"http://_dmarc.example/", strict, ok, "_dmarc.example", 80},
		{"http://1.2.3.256/", strict, ok, "1.2.3.256", 80}, // not legacy IPv4: a host name (spec quirk)

		// invalid_url: parse, IDNA and port errors.
		{"http://[::1", strict, invalid, "", 0},
		{"http://example.com:99999/", strict, invalid, "", 0},
		{"http://example.com:0/", strict, invalid, "", 0},
		{"http://a..b/", strict, invalid, "", 0},
		{"http://.example.com/", strict, invalid, "", 0},
		{"http://xn--zz.example/", strict, invalid, "", 0},
		{"http://-bad.example/", strict, invalid, "", 0},
		{"http://exa mple.com/", strict, invalid, "", 0},
		{"http://%zz.example/", strict, invalid, "", 0},
		{"http://example.com:port/", strict, invalid, "", 0},
		{"http://" + strings.Repeat("a", 64) + ".example/", strict, invalid, "", 0},

		// unsupported_scheme.
		{"ftp://example.com/", strict, scheme, "example.com", 80},
		{"file:///etc/passwd", strict, scheme, "", 0},
		{"gopher://127.0.0.1:70/", strict, scheme, "", 70},
		{"javascript:alert(1)", strict, scheme, "", 0},
		{"//example.com/", strict, scheme, "", 0},
		{"example.com", strict, scheme, "", 0},
		{"ws://example.com/", private, scheme, "", 0},

		// missing_hostname.
		{"http:///path", strict, nohost, "", 80},
		{"https://:443/", strict, nohost, "", 443},
		{"http:opaque", strict, nohost, "", 0},

		// metadata_hostname, even with AllowPrivate.
		{"http://metadata.google.internal/computeMetadata/v1/", strict, metaH, "metadata.google.internal", 80},
		{"http://METADATA.GOOG./", strict, metaH, "metadata.goog", 80},
		{"http://metadata.google.internal/", private, metaH, "", 0},

		// private_hostname.
		{"http://localhost/", strict, privH, "localhost", 80},
		{"http://LocalHost:8080/", strict, privH, "localhost", 8080},
		{"http://localhost./", strict, privH, "localhost", 0},
		{"http://api.localhost/", strict, privH, "api.localhost", 0},
		{"http://localhost/", admitLoopback, privH, "", 0},

		// metadata_address: literal, encoded, mapped and resolved; never allowed.
		{"http://169.254.169.254/latest/meta-data/", strict, metaA, "169.254.169.254", 80},
		{"http://0xa9fea9fe/", strict, metaA, "0xa9fea9fe", 0},
		{"http://2852039166/", strict, metaA, "", 0},
		{"http://169.254.43518/", strict, metaA, "", 0},
		{"http://[::ffff:169.254.169.254]/", strict, metaA, "", 0},
		{"http://100.100.100.200/", strict, metaA, "", 0},
		{"http://[fd00:ec2::254]/", strict, metaA, "", 0},
		{"http://[fe80::1%25eth0]/", strict, metaA, "", 0},
		{"http://meta.example/", strict, metaA, "", 0},
		{"http://169.254.169.254/", private, metaA, "", 0},
		{"http://[fd00:ec2::254]/", private, metaA, "", 0},

		// private_address: loopback in every encoding.
		{"http://127.0.0.1/", strict, privA, "127.0.0.1", 80},
		{"http://127.1/", strict, privA, "127.1", 80},
		{"http://127.0.1/", strict, privA, "", 0},
		{"http://2130706433/", strict, privA, "", 0},
		{"http://0x7f000001/", strict, privA, "", 0},
		{"http://0X7F000001/", strict, privA, "0x7f000001", 0},
		{"http://017700000001/", strict, privA, "", 0},
		{"http://0177.0.0.1/", strict, privA, "", 0},
		{"http://0x7f.0x0.0x0.0x1/", strict, privA, "", 0},
		{"http://0x7f.1/", strict, privA, "", 0},
		{"http://0177.0x0.1/", strict, privA, "", 0},
		{"http://127.000.000.001/", strict, privA, "", 0},
		{"http://127.0.0.1./", strict, privA, "127.0.0.1", 0},
		{"http://evil.example@127.0.0.1/", strict, privA, "127.0.0.1", 0},
		{"http://１２７.０.０.１/", strict, privA, "127.0.0.1", 0}, // full-width digits map to ASCII
		{"http://127。0。0。1/", strict, privA, "127.0.0.1", 0}, // ideographic full stops map to dots
		{"http://ＬＯＣＡＬＨＯＳＴ/", strict, privH, "localhost", 0},
		{"http://[::1]/", strict, privA, "::1", 80},
		{"http://[::ffff:127.0.0.1]/", strict, privA, "::ffff:127.0.0.1", 0},
		{"http://[::ffff:7f00:1]/", strict, privA, "", 0},
		{"http://[::127.0.0.1]/", strict, privA, "", 0},       // IPv4-compatible
		{"http://[64:ff9b::10.0.0.1]/", strict, privA, "", 0}, // NAT64
		{"http://[2002:7f00:1::]/", strict, privA, "", 0},     // 6to4
		{"http://[2002:c0a8:101::1]/", strict, privA, "", 0},  // 6to4 of 192.168.1.1
		{"http://mapped.example/", strict, privA, "", 0},
		// private_address: RFC 1918, CGNAT, ULA, resolved.
		{"http://10.0.0.1/", strict, privA, "", 0},
		{"http://172.16.5.4/", strict, privA, "", 0},
		{"http://172.31.255.255/", strict, privA, "", 0},
		{"http://192.168.1.1:8080/", strict, privA, "", 8080},
		{"http://100.64.0.1/", strict, privA, "", 0},
		{"http://[fc00::1]/", strict, privA, "", 0},
		{"http://[fd12:3456::1]/", strict, privA, "", 0},
		{"http://internal.example/", strict, privA, "internal.example", 0},
		{"http://cgnat.example/", strict, privA, "", 0},
		{"http://ula.example/", strict, privA, "", 0},
		{"http://mixed.example/", strict, privA, "", 0},
		{"http://mixed6.example/", strict, privA, "", 0},
		{"http://08.0.0.1/", strict, privA, "08.0.0.1", 0}, // not legacy IPv4 (8 is no octal digit): resolved
		{"http://10.0.0.1/", admitLoopback, privA, "", 0},
		{"http://[::1]/", admitLoopback, privA, "", 0},

		// Host options admit private addresses.
		{"http://127.0.0.1/", private, ok, "", 0},
		{"http://localhost/", private, ok, "localhost", 0},
		{"http://10.0.0.1/", private, ok, "", 0},
		{"http://[fd12:3456::1]/", private, ok, "", 0},
		{"http://127.0.0.1:8080/", admitLoopback, ok, "", 8080},
		{"http://0x7f000001/", admitLoopback, ok, "", 0},

		// non_routable_address, never allowed.
		{"http://0.0.0.0/", strict, nonRt, "", 0},
		{"http://0/", strict, nonRt, "0", 0},
		{"http://0.0.0.1/", strict, nonRt, "", 0},
		{"http://[::]/", strict, nonRt, "", 0},
		{"http://224.0.0.1/", strict, nonRt, "", 0},
		{"http://[ff02::1]/", strict, nonRt, "", 0},
		{"http://255.255.255.255/", strict, nonRt, "", 0},
		{"http://240.0.0.1/", strict, nonRt, "", 0},
		{"http://192.0.2.1/", strict, nonRt, "", 0},
		{"http://198.51.100.7/", strict, nonRt, "", 0},
		{"http://203.0.113.9/", strict, nonRt, "", 0},
		{"http://198.18.0.1/", strict, nonRt, "", 0},
		{"http://192.0.0.8/", strict, nonRt, "", 0},
		{"http://[2001:db8::1]/", strict, nonRt, "", 0},
		{"http://[3fff::1]/", strict, nonRt, "", 0},
		{"http://[fec0::1]/", strict, nonRt, "", 0},
		{"http://[100::1]/", strict, nonRt, "", 0},
		{"http://[2001::1]/", strict, nonRt, "", 0},          // Teredo
		{"http://[64:ff9b::8.8.8.8]/", strict, nonRt, "", 0}, // NAT64 of a public address: reserved space
		{"http://[4000::1]/", strict, nonRt, "", 0},
		{"http://zero.example/", strict, nonRt, "", 0},
		{"http://doc.example/", strict, nonRt, "", 0},
		{"http://0.0.0.0/", private, nonRt, "", 0},
		{"http://[ff02::1]/", private, nonRt, "", 0},

		// DNS failures.
		{"http://nxdomain.example/", strict, dnsFail, "nxdomain.example", 80},
		{"http://empty.example/", strict, dnsNone, "", 0},
		{"http://garbage.example/", strict, dnsBad, "", 0},
	}
	if len(tests) < 60 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tt := range tests {
		p := tt.policy
		p.Resolver = newDNS(dnsTable)
		d := p.Evaluate(context.Background(), tt.url)
		if d.Reason != tt.reason || d.Allowed != (tt.reason == ok) {
			t.Errorf("%q (allow private %v): allowed=%v reason=%q, want %q", tt.url, p.AllowPrivate, d.Allowed, d.Reason, tt.reason)
			continue
		}
		if tt.host != "" && d.Hostname != tt.host {
			t.Errorf("%q: hostname=%q, want %q", tt.url, d.Hostname, tt.host)
		}
		if tt.port != 0 && d.Port != tt.port {
			t.Errorf("%q: port=%d, want %d", tt.url, d.Port, tt.port)
		}
		if d.Allowed {
			if len(d.Resolved) == 0 {
				t.Errorf("%q: allowed without resolved addresses", tt.url)
			}
			for _, a := range d.Resolved {
				if ok, r := p.CheckAddr(a); !ok {
					t.Errorf("%q: allowed, but resolved %s is refused (%s)", tt.url, a, r)
				}
			}
		}
		if tt.reason == invalid && (d.Scheme != "" || d.Hostname != "" || d.Port != 0) {
			t.Errorf("%q: invalid URL decision carries %q %q %d", tt.url, d.Scheme, d.Hostname, d.Port)
		}
	}
}

// TestEvaluateLiteralsSkipDNS: an IP literal, in any encoding, is judged
// as that address; the resolver is never asked.
func TestEvaluateLiteralsSkipDNS(t *testing.T) {
	p := urlpolicy.Policy{Resolver: noDNS{t.Errorf}}
	for raw, want := range map[string]string{
		"http://127.1/":                 "127.0.0.1",
		"http://127.0.1/":               "127.0.0.1",
		"http://2130706433/":            "127.0.0.1",
		"http://0x7f000001/":            "127.0.0.1",
		"http://017700000001/":          "127.0.0.1",
		"http://0x7f.0x0.0x0.0x1/":      "127.0.0.1",
		"http://0177.0.0.1/":            "127.0.0.1",
		"http://10.1/":                  "10.0.0.1",
		"http://192.168.257/":           "192.168.1.1",
		"http://[::ffff:10.0.0.1]/":     "10.0.0.1",
		"http://[fe80::1%25eth0]:81/":   "fe80::1",
		"http://8.8.8.8/":               "8.8.8.8",
		"http://0/":                     "0.0.0.0",
		"http://4294967295/":            "255.255.255.255",
		"http://[2606:4700:4700::1111]": "2606:4700:4700::1111",
	} {
		d := p.Evaluate(context.Background(), raw)
		if len(d.Resolved) != 1 || d.Resolved[0] != netip.MustParseAddr(want) {
			t.Errorf("%q: resolved %v, want [%s]", raw, d.Resolved, want)
		}
	}
}

// TestEvaluateEveryAnswer: the decision lists every (deduplicated) answer,
// and a single refused answer refuses the URL.
func TestEvaluateEveryAnswer(t *testing.T) {
	dns := newDNS(dnsTable)
	p := urlpolicy.Policy{Resolver: dns}
	d := p.Evaluate(context.Background(), "http://dup.example/")
	if !d.Allowed || len(d.Resolved) != 1 || d.Resolved[0] != netip.MustParseAddr("93.184.216.34") {
		t.Fatalf("dup.example: %+v, want one allowed address", d)
	}
	d = p.Evaluate(context.Background(), "http://mixed.example/")
	if d.Allowed || len(d.Resolved) != 2 {
		t.Fatalf("mixed.example: %+v, want refused with both answers listed", d)
	}
	if got := dns.count(); got != 2 {
		t.Fatalf("lookups=%d, want 2", got)
	}
}

func TestRequire(t *testing.T) {
	p := urlpolicy.Policy{Resolver: newDNS(dnsTable)}
	if _, err := p.Require(context.Background(), "https://example.com/x"); err != nil {
		t.Fatalf("public URL: %v", err)
	}
	_, err := p.Require(context.Background(), "http://user:pw@127.0.0.1:8080/admin?token=abc")
	if err == nil {
		t.Fatal("loopback URL allowed")
	}
	if got, want := err.Error(), "URL blocked by Host policy: private_address (http://127.0.0.1:8080)"; got != want {
		t.Fatalf("error %q, want %q", got, want)
	}
}
