package urlpolicy_test

import (
	"net/netip"
	"testing"

	"github.com/demiurge/demiurge/urlpolicy"
)

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr          string
		strict, priv  string // reason under the default policy and with AllowPrivate
		admitLoopback bool   // allowed when only 127.0.0.0/8 is admitted
	}{
		{"93.184.216.34", "allowed", "allowed", true},
		{"2606:4700:4700::1111", "allowed", "allowed", true},
		{"::ffff:8.8.8.8", "allowed", "allowed", true},
		{"2002:808:808::", "allowed", "allowed", true},
		{"127.0.0.1", "private_address", "allowed", true},
		{"127.255.255.254", "private_address", "allowed", true},
		{"::ffff:127.0.0.1", "private_address", "allowed", true},
		{"10.255.0.1", "private_address", "allowed", false},
		{"172.16.0.1", "private_address", "allowed", false},
		{"172.32.0.1", "allowed", "allowed", true},
		{"192.168.0.1", "private_address", "allowed", false},
		{"100.64.0.0", "private_address", "allowed", false},
		{"100.127.255.255", "private_address", "allowed", false},
		{"100.128.0.1", "allowed", "allowed", true},
		{"::1", "private_address", "allowed", false},
		{"fc00::1", "private_address", "allowed", false},
		{"fdff:ffff::1", "private_address", "allowed", false},
		{"169.254.169.254", "metadata_address", "metadata_address", false},
		{"169.254.0.1", "metadata_address", "metadata_address", false},
		{"::ffff:169.254.169.254", "metadata_address", "metadata_address", false},
		{"fe80::1", "metadata_address", "metadata_address", false},
		{"fe80::1%eth0", "metadata_address", "metadata_address", false},
		{"100.100.100.200", "metadata_address", "metadata_address", false},
		{"fd00:ec2::254", "metadata_address", "metadata_address", false},
		{"64:ff9b::a9fe:a9fe", "metadata_address", "metadata_address", false},
		{"2002:a9fe:a9fe::", "metadata_address", "metadata_address", false},
		{"0.0.0.0", "non_routable_address", "non_routable_address", false},
		{"::", "non_routable_address", "non_routable_address", false},
		{"224.0.0.251", "non_routable_address", "non_routable_address", false},
		{"239.255.255.250", "non_routable_address", "non_routable_address", false},
		{"ff02::fb", "non_routable_address", "non_routable_address", false},
		{"255.255.255.255", "non_routable_address", "non_routable_address", false},
		{"240.0.0.1", "non_routable_address", "non_routable_address", false},
		{"0.1.2.3", "non_routable_address", "non_routable_address", false},
		{"192.0.0.170", "non_routable_address", "non_routable_address", false},
		{"192.0.2.1", "non_routable_address", "non_routable_address", false},
		{"192.88.99.1", "non_routable_address", "non_routable_address", false},
		{"198.19.255.255", "non_routable_address", "non_routable_address", false},
		{"198.51.100.1", "non_routable_address", "non_routable_address", false},
		{"203.0.113.1", "non_routable_address", "non_routable_address", false},
		{"2001:db8::1", "non_routable_address", "non_routable_address", false},
		{"3fff:fff::1", "non_routable_address", "non_routable_address", false},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "non_routable_address", "non_routable_address", false},
		{"fec0::1", "non_routable_address", "non_routable_address", false},
		{"100::1", "non_routable_address", "non_routable_address", false},
		{"64:ff9b::808:808", "non_routable_address", "non_routable_address", false},
		{"64:ff9b:1::a00:1", "private_address", "non_routable_address", false},
		{"::7f00:1", "private_address", "non_routable_address", false},
		{"::808:808", "non_routable_address", "non_routable_address", false},
		{"2002:7f00:1::", "private_address", "allowed", true},
		{"2001:0:0:0:0:0:80ff:fefe", "private_address", "non_routable_address", false}, // Teredo client 127.0.1.1
	}
	strict := urlpolicy.Policy{}
	private := urlpolicy.Policy{AllowPrivate: true}
	admit := urlpolicy.Policy{AllowPrivatePrefixes: loopback}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		if ok, r := strict.CheckAddr(a); r != tt.strict || ok != (r == "allowed") {
			t.Errorf("%s: default policy ok=%v reason %q, want %q", tt.addr, ok, r, tt.strict)
		}
		if ok, r := private.CheckAddr(a); r != tt.priv || ok != (r == "allowed") {
			t.Errorf("%s: AllowPrivate ok=%v reason %q, want %q", tt.addr, ok, r, tt.priv)
		}
		if ok, _ := admit.CheckAddr(a); ok != tt.admitLoopback {
			t.Errorf("%s: loopback admitted: ok=%v, want %v", tt.addr, ok, tt.admitLoopback)
		}
	}
	if ok, r := strict.CheckAddr(netip.Addr{}); ok || r != urlpolicy.ReasonNonRoutableAddress {
		t.Errorf("zero address: ok=%v reason %q", ok, r)
	}
}

func TestCheckAddrDoesNotAllocate(t *testing.T) {
	p := urlpolicy.Policy{AllowPrivatePrefixes: loopback}
	addrs := []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("fe80::1%eth0"), netip.MustParseAddr("2002:7f00:1::")}
	if n := testing.AllocsPerRun(100, func() {
		for _, a := range addrs {
			p.CheckAddr(a)
		}
	}); n != 0 {
		t.Fatalf("CheckAddr allocates %v times per run", n)
	}
}
