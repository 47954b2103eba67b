package store_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

func coreRev(rev, parent string) demiurge.CoreRevision {
	return demiurge.CoreRevision{Revision: rev, Parent: parent, Pack: []byte("PACK " + rev), Objects: 3}
}

// The shared live revision moves by compare-and-swap: from none, then from
// what it is; a publication from anything else is ECONFLICT and writes
// nothing. Each stored revision keeps its pack and parent.
func TestPublishCoreIsACompareAndSwap(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	if _, ok, err := db.CoreLive(ctx); ok || err != nil {
		t.Fatalf("a new ledger has a live core revision: %v, %v", ok, err)
	}
	live, err := db.PublishCore(ctx, demiurge.CorePublication{Revisions: []demiurge.CoreRevision{coreRev("a1", ""), coreRev("b2", "a1")}, Op: "init", HostID: "host_1"})
	if err != nil || live.Revision != "b2" || live.Previous != "" || live.Op != "init" || live.HostID != "host_1" || live.LastSeq == 0 {
		t.Fatalf("first publication: %+v, %v", live, err)
	}
	_, err = db.PublishCore(ctx, demiurge.CorePublication{Revisions: []demiurge.CoreRevision{coreRev("c3", "b2")}, Op: "save"})
	wantCode(t, err, demiurge.ECONFLICT)
	if !strings.Contains(err.Error(), "shared core revision moved: expected (none), found b2") {
		t.Fatalf("stale publication: %v", err)
	}
	if _, ok, _ := db.CoreRevision(ctx, "c3"); ok {
		t.Fatal("a refused publication stored its revision")
	}
	live, err = db.PublishCore(ctx, demiurge.CorePublication{Expected: "b2", Revisions: []demiurge.CoreRevision{coreRev("c3", "b2")}, Op: "promote"})
	if err != nil || live.Revision != "c3" || live.Previous != "b2" || live.Op != "promote" {
		t.Fatalf("second publication: %+v, %v", live, err)
	}
	got, ok, err := db.CoreLive(ctx)
	if err != nil || !ok || got != live {
		t.Fatalf("CoreLive = %+v, %v, %v; want %+v", got, ok, err, live)
	}
	r, ok, err := db.CoreRevision(ctx, "b2")
	if err != nil || !ok || r.Parent != "a1" || !bytes.Equal(r.Pack, []byte("PACK b2")) || r.Objects != 3 {
		t.Fatalf("CoreRevision(b2) = %+v, %v, %v", r, ok, err)
	}
	if r, ok, _ := db.CoreRevision(ctx, "a1"); !ok || r.Parent != "" {
		t.Fatalf("CoreRevision(a1) = %+v, %v", r, ok)
	}
	evs, err := db.Events(ctx, demiurge.EventFilter{AggregateType: demiurge.AggCore, AggregateID: demiurge.CoreLiveID})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	want := "core.revision_published core.revision_published core.live_changed core.revision_published core.live_changed"
	if strings.Join(types, " ") != want {
		t.Fatalf("events %v, want %s", types, want)
	}
}

// Of concurrent publications from the same live revision exactly one wins.
func TestPublishCoreConcurrentOneWins(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	if _, err := db.PublishCore(ctx, demiurge.CorePublication{Revisions: []demiurge.CoreRevision{coreRev("base", "")}, Op: "init"}); err != nil {
		t.Fatal(err)
	}
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			rev := "rev" + string(rune('a'+i))
			_, errs[i] = db.PublishCore(ctx, demiurge.CorePublication{Expected: "base", Revisions: []demiurge.CoreRevision{coreRev(rev, "base")}, Op: "promote"})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case demiurge.ErrorCode(err) != demiurge.ECONFLICT:
			t.Fatalf("publication failed otherwise: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d concurrent publications won, want 1", won)
	}
}

// A PostgreSQL ledger of schema version 8 (made before the core tables)
// is migrated by the next Open: its data stays, the tables come, the
// version is recorded. One older than the chain is refused.
func TestPostgresMigratesFromVersion8(t *testing.T) {
	postgresOnly(t)
	ctx := context.Background()
	where := demiurgetest.TestDatabase(t)
	db := demiurgetest.MustOpenPath(t, where, store.Options{})
	mustAppend(t, db, "", ev("test", "x", "test.event", nil))
	db.Close()
	raw := rawDB(t, where)
	if _, err := raw.Exec(`DROP TABLE core_revisions; DROP TABLE core_live; DROP INDEX idx_tasks_queue; ALTER TABLE tasks DROP COLUMN claim_host_id; ALTER TABLE tasks DROP COLUMN claim_expires_at; UPDATE demiurge_schema SET version = 8`); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, where, store.Options{})
	if err != nil {
		t.Fatalf("open a version 8 ledger: %v", err)
	}
	defer db.Close()
	var version int
	if err := raw.QueryRow(`SELECT version FROM demiurge_schema`).Scan(&version); err != nil || version != store.SchemaVersion() {
		t.Fatalf("version after the migration: %d, %v; want %d", version, err, store.SchemaVersion())
	}
	if evs, err := db.Events(ctx, demiurge.EventFilter{AggregateType: "test"}); err != nil || len(evs) != 1 {
		t.Fatalf("the ledger's events after the migration: %v, %v", evs, err)
	}
	if _, err := db.PublishCore(ctx, demiurge.CorePublication{Revisions: []demiurge.CoreRevision{coreRev("a1", "")}, Op: "init"}); err != nil {
		t.Fatalf("publish on the migrated ledger: %v", err)
	}
	db.Close()

	if _, err := raw.Exec(`UPDATE demiurge_schema SET version = 7`); err != nil {
		t.Fatal(err)
	}
	_, err = store.Open(ctx, where, store.Options{})
	wantCode(t, err, demiurge.ESCHEMA)
	if !strings.Contains(err.Error(), "has schema version 7; this build has no PostgreSQL migration from it to") {
		t.Fatalf("version 7: %v", err)
	}
}

// BenchmarkCoreLive is what a turn pays for the shared core revision when
// nothing moved: one read of the core_live row.
func BenchmarkCoreLive(b *testing.B) {
	db := demiurgetest.MustOpenDB(b)
	ctx := context.Background()
	if _, err := db.PublishCore(ctx, demiurge.CorePublication{Revisions: []demiurge.CoreRevision{coreRev("a1", "")}, Op: "init"}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, ok, err := db.CoreLive(ctx); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}
