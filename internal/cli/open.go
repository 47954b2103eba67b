package cli

import (
	"context"
	"net/netip"
	"os"

	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/urlpolicy"
)

// openHost opens the Host for one command; the caller closes it.
func openHost(ctx context.Context, g *globals, fakeScript string) (*host.Host, error) {
	home, err := g.homeDir()
	if err != nil {
		return nil, err
	}
	if fakeScript == "" {
		fakeScript = os.Getenv("DEMIURGE_FAKE_SCRIPT")
	}
	return host.Open(ctx, host.Options{Home: home, FakeScript: fakeScript, URLPolicy: urlPolicyFromEnv()})
}

// urlPolicyFromEnv is the URL policy of the Host: private addresses are
// refused, except that an operator may admit loopback services with
// DEMIURGE_URL_ALLOW_LOOPBACK=1 (the operator's environment, which nothing
// an Agent Core declares can set; the end-to-end tests use it).
func urlPolicyFromEnv() urlpolicy.Policy {
	if os.Getenv("DEMIURGE_URL_ALLOW_LOOPBACK") != "1" {
		return urlpolicy.Policy{}
	}
	return urlpolicy.Policy{AllowPrivatePrefixes: []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"),
	}}
}

func closeHost(ctx context.Context, h *host.Host) {
	_ = h.Close(context.WithoutCancel(ctx))
}
