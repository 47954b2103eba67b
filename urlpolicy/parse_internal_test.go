package urlpolicy

import (
	"net/netip"
	"testing"
)

func TestParseLegacyIPv4(t *testing.T) {
	for in, want := range map[string]string{
		"127.1":               "127.0.0.1",
		"127.0.1":             "127.0.0.1",
		"127.0.0.1":           "127.0.0.1",
		"2130706433":          "127.0.0.1",
		"0x7f000001":          "127.0.0.1",
		"0X7F000001":          "127.0.0.1",
		"017700000001":        "127.0.0.1",
		"0177.0.0.1":          "127.0.0.1",
		"0x7f.0x0.0x0.0x1":    "127.0.0.1",
		"0177.0x0.0.01":       "127.0.0.1",
		"127.000.000.001":     "127.0.0.1",
		"0":                   "0.0.0.0",
		"00":                  "0.0.0.0",
		"4294967295":          "255.255.255.255",
		"0xffffffff":          "255.255.255.255",
		"037777777777":        "255.255.255.255",
		"10.16777215":         "10.255.255.255",
		"192.168.65535":       "192.168.255.255",
		"0xa9.0xfe.0xa9.0xfe": "169.254.169.254",
		"169.16689662":        "169.254.169.254",
	} {
		got, ok := parseLegacyIPv4(in)
		if !ok || got != netip.MustParseAddr(want) {
			t.Errorf("parseLegacyIPv4(%q) = %v, %v; want %s", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"", ".", "1.", ".1", "1..2", "1.2.3.4.5", "1.2.3.256", "256.1", "1.16777216", "1.2.65536",
		"4294967296", "0x100000000", "040000000000", "08", "09.1", "0x", "0xg", "0x.1", "1e3", "-1",
		"+1", "1_0", " 1", "1 ", "0b1", "0o7", "example.com", "127.0.0.1.", "99999999999999999999",
	} {
		if got, ok := parseLegacyIPv4(in); ok {
			t.Errorf("parseLegacyIPv4(%q) = %v, want no address", in, got)
		}
	}
}

func TestNormalizeHost(t *testing.T) {
	for in, want := range map[string]string{
		"Example.COM.":       "example.com",
		"bücher.example":     "xn--bcher-kva.example",
		"BÜCHER.example..":   "xn--bcher-kva.example",
		"ﬀ.example":          "ff.example",
		"127.1":              "127.1",
		"::FFFF:127.0.0.1":   "::ffff:127.0.0.1",
		"_service.example":   "_service.example",
		"":                   "",
		"xn--bcher-kva.test": "xn--bcher-kva.test",
	} {
		got, ok := normalizeHost(in)
		if !ok || got != want {
			t.Errorf("normalizeHost(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"a..b", ".a", "xn--zz", "\u200b.com", "-a.example", "a-.example"} {
		if got, ok := normalizeHost(in); ok {
			t.Errorf("normalizeHost(%q) = %q, want an error", in, got)
		}
	}
}
