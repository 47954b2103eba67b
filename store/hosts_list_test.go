package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// The registry as the operator sees it: this process's Host live, a Host
// whose process here died gone at once, another machine's Host live until
// its lease runs out, stopped Hosts counted.
func TestListHosts(t *testing.T) {
	clock := newClock()
	path := demiurgetest.TestDatabase(t)
	db := demiurgetest.MustOpenPath(t, path, store.Options{Now: clock.Now})
	// The other machine's Host renews its lease on a clock that stays
	// behind, so a heartbeat never moves its lease past the test's clock.
	frozen := newClock()
	elsewhere := demiurgetest.MustOpenPath(t, path, store.Options{Now: frozen.Now})
	ctx := context.Background()
	self, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}

	stopped := startHost(t, db, store.HostInfo{Hostname: "old-box"})
	if err := stopped.Close(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(store.HostTTL / 5)
	pid, marker := deadChild(t)
	dead := startHost(t, db, store.HostInfo{PID: pid, StartMarker: marker, Hostname: self})
	frozen.Set(clock.Now().Add(store.HostTTL / 5))
	clock.Advance(store.HostTTL / 5)
	remote := startHost(t, elsewhere, store.HostInfo{PID: 4242, StartMarker: "remote-marker", Hostname: "far-away"})
	clock.Advance(store.HostTTL / 5)
	live := startHost(t, db, store.HostInfo{})

	reg, err := db.ListHosts(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if reg.Stopped != 1 || len(reg.Running) != 3 {
		t.Fatalf("registry %+v", reg)
	}
	want := []struct {
		id   string
		live bool
	}{{live.ID(), true}, {remote.ID(), true}, {dead.ID(), false}}
	for i, w := range want {
		if h := reg.Running[i]; h.HostID != w.id || h.Live != w.live {
			t.Fatalf("running[%d] = %+v, want %s live=%v", i, h, w.id, w.live)
		}
	}
	if h := reg.Running[0]; h.PID != os.Getpid() || h.Hostname != self || !h.HeartbeatAt.Equal(clock.Now()) ||
		!h.ExpiresAt.Equal(clock.Now().Add(store.HostTTL)) || !h.StartedAt.Equal(h.HeartbeatAt) {
		t.Fatalf("this process's Host: %+v", h)
	}
	if got := reg.Live(); len(got) != 2 {
		t.Fatalf("live: %+v", got)
	}

	// Past its lease, the other machine's Host is gone; this process's
	// is not (its process still runs).
	clock.Advance(store.HostTTL + store.HostTTL/5)
	if reg, err = db.ListHosts(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if got := reg.Live(); len(got) != 1 || got[0].HostID != live.ID() {
		t.Fatalf("live past the lease: %+v", got)
	}
	if reg, err = db.ListHosts(ctx, 1); err != nil || len(reg.Running) != 1 {
		t.Fatalf("limit 1: %+v, %v", reg, err)
	}
}

func TestHostNames(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	a := startHost(t, db, store.HostInfo{Hostname: "box-a"})
	b := startHost(t, db, store.HostInfo{Hostname: "box-b"})
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := db.HostNames(ctx, []string{a.ID(), "", b.ID(), a.ID(), "host_unknown"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[a.ID()] != "box-a" || got[b.ID()] != "box-b" {
		t.Fatalf("host names %v", got)
	}
	if got, err := db.HostNames(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("no ids: %v, %v", got, err)
	}
}
