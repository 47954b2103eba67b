package host_test

import (
	"context"
	"os"
	"testing"

	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/store"
)

// The doctor lists the Hosts sharing the ledger with the age of their
// leases; a stopped one is only counted.
func TestDoctorListsLiveHosts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	noEnv := func(string) string { return "" }
	h, err := host.Open(ctx, host.Options{Home: dir, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	rep, err := host.Doctor(ctx, host.DoctorOptions{Home: dir, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.Hostname()
	if len(rep.Hosts.Live) != 1 || rep.Hosts.Gone != 0 || rep.Hosts.Stopped != 0 {
		t.Fatalf("hosts %+v", rep.Hosts)
	}
	live := rep.Hosts.Live[0]
	ttl := store.HostTTL.Seconds()
	if live.PID != os.Getpid() || live.Hostname != self || live.HostID == "" || live.StartedAt == "" ||
		live.LeaseAgeSeconds < 0 || live.LeaseAgeSeconds > ttl || live.ExpiresInSeconds <= 0 || live.ExpiresInSeconds > ttl {
		t.Fatalf("live host %+v", live)
	}

	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if rep, err = host.Doctor(ctx, host.DoctorOptions{Home: dir, Getenv: noEnv}); err != nil {
		t.Fatal(err)
	}
	if len(rep.Hosts.Live) != 0 || rep.Hosts.Stopped != 1 {
		t.Fatalf("hosts after Close: %+v", rep.Hosts)
	}
}
