package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// TestLeaseLeftoverOfOwnHostIsTakenOver: a lease whose release failed must
// not block the same Host's next turn of the session forever.
func TestLeaseLeftoverOfOwnHostIsTakenOver(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	h := startHost(t, db, store.HostInfo{})
	ctx := context.Background()
	if _, err := db.AcquireSessionLease(ctx, "session_x", "turn_a", h.ID()); err != nil {
		t.Fatal(err)
	}
	// turn_a never releases. turn_b of the same Host gets the lease at once.
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	release, err := db.AcquireSessionLease(cctx, "session_x", "turn_b", h.ID())
	if err != nil {
		t.Fatalf("own leftover blocked the next holder: %v", err)
	}
	if err := release(ctx); err != nil {
		t.Fatal(err)
	}
}
