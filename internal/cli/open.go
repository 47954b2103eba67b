package cli

import (
	"context"
	"net/netip"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/urlpolicy"
)

// openHost opens the Host for one command (host.Options.OneShot); the
// caller closes it.
func openHost(ctx context.Context, g *globals, fakeScript string) (*host.Host, error) {
	return openHostFor(ctx, g, fakeScript, true)
}

// openRunHost is openHost for a command that runs a turn of g.core, which
// the Host parses while it opens (host.Options.Preload).
func openRunHost(ctx context.Context, g *globals, fakeScript string) (*host.Host, error) {
	return openHostFor(ctx, g, fakeScript, true, g.core)
}

// openServingHost opens the Host of a command that stays (chat, the
// gateway): it runs every background loop and shares the work queued for
// any Host.
func openServingHost(ctx context.Context, g *globals, fakeScript string) (*host.Host, error) {
	return openHostFor(ctx, g, fakeScript, false)
}

func openHostFor(ctx context.Context, g *globals, fakeScript string, oneShot bool, preload ...string) (*host.Host, error) {
	home, err := g.homeDir()
	if err != nil {
		return nil, err
	}
	if fakeScript == "" {
		fakeScript = g.getenv("DEMIURGE_FAKE_SCRIPT")
	}
	urls, err := urlPolicyFromEnv(g.getenv)
	if err != nil {
		return nil, err
	}
	return host.Open(ctx, host.Options{Home: home, FakeScript: fakeScript, URLPolicy: urls, Getenv: g.getenv, EnvFile: g.env, Timezone: g.timezone, OneShot: oneShot, Preload: preload, ExitAfterClose: g.exiting})
}

// urlPolicyFromEnv is the URL policy of the Host, from the operator's
// environment (which nothing an Agent Core declares can set; the
// end-to-end tests use both settings): private addresses are refused,
// except that DEMIURGE_URL_ALLOW_LOOPBACK=1 admits loopback services, and
// host names resolve through the system resolver, or through the name
// server DEMIURGE_DNS_SERVER names ("ip:port"), for web_extract and MCP
// over HTTP alike. A bad DEMIURGE_DNS_SERVER is a configuration error,
// never a quiet fallback to the system resolver.
func urlPolicyFromEnv(getenv func(string) string) (urlpolicy.Policy, error) {
	var p urlpolicy.Policy
	if getenv("DEMIURGE_URL_ALLOW_LOOPBACK") == "1" {
		p.AllowPrivatePrefixes = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	}
	if addr := getenv("DEMIURGE_DNS_SERVER"); addr != "" {
		r, err := urlpolicy.ServerResolver(addr)
		if err != nil {
			return p, demiurge.Errorf(demiurge.ECONFIG, "DEMIURGE_DNS_SERVER: %v", err)
		}
		p.Resolver = r
	}
	return p, nil
}

func closeHost(ctx context.Context, h *host.Host) {
	_ = h.Close(context.WithoutCancel(ctx))
}
