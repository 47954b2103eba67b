package cli

import (
	"context"
	"os"

	"github.com/demiurge/demiurge/host"
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
	return host.Open(ctx, host.Options{Home: home, FakeScript: fakeScript})
}

func closeHost(ctx context.Context, h *host.Host) {
	_ = h.Close(context.WithoutCancel(ctx))
}
