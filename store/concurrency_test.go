package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// TestMain runs the package's tests on both engines (the conformance
// suite: demiurgetest.RunEngines). It doubles as a helper process: with
// STORE_TEST_HELPER=append it appends STORE_TEST_N events to STORE_TEST_DB
// and exits, so tests can run real concurrent writer processes against
// one database.
func TestMain(m *testing.M) {
	if os.Getenv("STORE_TEST_HELPER") == "append" {
		os.Exit(appendHelper())
	}
	os.Exit(demiurgetest.RunEngines(m))
}

func appendHelper() int {
	ctx := context.Background()
	db, err := store.Open(ctx, os.Getenv("STORE_TEST_DB"), store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	defer db.Close()
	n, _ := strconv.Atoi(os.Getenv("STORE_TEST_N"))
	agg := os.Getenv("STORE_TEST_AGG")
	for i := range n {
		_, err := db.Append(ctx, []demiurge.Event{
			ev("proc", agg, "proc.tick", map[string]any{"i": i}),
			ev(demiurge.AggMessage, agg+"_msg_"+strconv.Itoa(i), demiurge.EvMessagePersisted, map[string]any{
				"session_id": "session_shared", "role": "user", "content": map[string]any{"text": agg}}),
		}, agg+":"+strconv.Itoa(i), nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "append:", err)
			return 1
		}
	}
	return 0
}

func TestConcurrentAppendsOneHandle(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	const workers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				agg := "agg_" + itoa(w)
				_, err := db.Append(ctx, []demiurge.Event{ev("test", agg, "test.tick", map[string]any{"i": i}),
					ev("test", agg, "test.tock", nil)}, "", nil)
				if err != nil {
					errs <- err
				}
				if i%10 == 0 {
					if _, err := db.Events(ctx, demiurge.EventFilter{AggregateType: "test", AggregateID: agg}); err != nil {
						errs <- err
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	evs, err := db.Events(ctx, demiurge.EventFilter{Limit: demiurge.MaxEventLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != workers*each*2 {
		t.Fatalf("%d events, want %d", len(evs), workers*each*2)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq != evs[i-1].Seq+1 {
			t.Fatalf("seq gap or duplicate at %d: %d after %d", i, evs[i].Seq, evs[i-1].Seq)
		}
	}
	// Batches are atomic: each tick is directly followed by its tock.
	for i := 0; i < len(evs); i += 2 {
		if evs[i].Type != "test.tick" || evs[i+1].Type != "test.tock" || evs[i].AggregateID != evs[i+1].AggregateID {
			t.Fatalf("batch interleaved at seq %d", evs[i].Seq)
		}
	}
}

// Optimistic concurrency: writers that read LastSeq and append with an
// Expected guard, retrying on ECONFLICT, never lose an increment.
func TestExpectedGuardUnderContention(t *testing.T) {
	path := demiurgetest.TestDatabase(t)
	dbs := []*store.DB{demiurgetest.MustOpenPath(t, path, store.Options{}), demiurgetest.MustOpenPath(t, path, store.Options{})}
	ctx := context.Background()
	const workers, each = 6, 15
	var wg sync.WaitGroup
	var mu sync.Mutex // guards conflicts, failures
	conflicts := 0
	var failures []error
	for w := range workers {
		db := dbs[w%2]
		wg.Go(func() {
			for range each {
				for {
					last, err := db.LastSeq(ctx, "counter", "c")
					if err == nil {
						_, err = db.Append(ctx, []demiurge.Event{ev("counter", "c", "counter.inc", nil)}, "",
							&demiurge.Expected{AggregateType: "counter", AggregateID: "c", LastSeq: last})
					}
					if err == nil {
						break
					}
					mu.Lock()
					if demiurge.ErrorCode(err) == demiurge.ECONFLICT {
						conflicts++
						mu.Unlock()
						continue
					}
					failures = append(failures, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatal(errors.Join(failures...))
	}
	evs, _ := db0Events(t, dbs[0], "counter", "c")
	if len(evs) != workers*each {
		t.Fatalf("%d increments, want %d (conflicts seen: %d)", len(evs), workers*each, conflicts)
	}
}

func db0Events(tb testing.TB, db *store.DB, aggType, aggID string) ([]demiurge.Event, error) {
	tb.Helper()
	return db.Events(context.Background(), demiurge.EventFilter{AggregateType: aggType, AggregateID: aggID, Limit: demiurge.MaxEventLimit})
}

// Two handles on one file, many goroutines each: no "database is locked"
// escapes, every batch lands once.
func TestTwoHandlesAppendConcurrently(t *testing.T) {
	path := demiurgetest.TestDatabase(t)
	a := demiurgetest.MustOpenPath(t, path, store.Options{})
	b := demiurgetest.MustOpenPath(t, path, store.Options{})
	createSession(t, a, "session_shared", map[string]any{"owner": operatorOwner()})
	ctx := context.Background()
	const workers, each = 4, 30
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers*each)
	for _, db := range []*store.DB{a, b} {
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					agg := fmt.Sprintf("%p_%d", db, w)
					_, err := db.Append(ctx, []demiurge.Event{
						ev("test", agg, "test.tick", nil),
						ev(demiurge.AggMessage, agg+"_"+itoa(i), demiurge.EvMessagePersisted, map[string]any{
							"session_id": "session_shared", "role": "user", "content": map[string]any{"text": "x"}}),
					}, agg+":"+itoa(i), nil)
					if err != nil {
						errs <- err
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("append: %v", err)
	}
	s, err := b.Session(ctx, "session_shared")
	if err != nil || s.MessageCount != 2*workers*each {
		t.Fatalf("message_count %d, %v; want %d", s.MessageCount, err, 2*workers*each)
	}
}

// Real processes: two helper processes and this one append to one file at
// once.
func TestAppendsFromSeveralProcesses(t *testing.T) {
	path := demiurgetest.TestDatabase(t)
	db := demiurgetest.MustOpenPath(t, path, store.Options{})
	createSession(t, db, "session_shared", map[string]any{"owner": operatorOwner()})
	const n = 40
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var cmds []*exec.Cmd
	for _, agg := range []string{"p1", "p2"} {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "STORE_TEST_HELPER=append", "STORE_TEST_DB="+path, "STORE_TEST_N="+itoa(n), "STORE_TEST_AGG="+agg)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i := range n {
		mustAppend(t, db, "p0:"+itoa(i), ev("proc", "p0", "proc.tick", map[string]any{"i": i}),
			ev(demiurge.AggMessage, "p0_msg_"+itoa(i), demiurge.EvMessagePersisted, map[string]any{
				"session_id": "session_shared", "role": "user", "content": map[string]any{"text": "p0"}}))
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper process: %v", err)
		}
	}
	for _, agg := range []string{"p0", "p1", "p2"} {
		evs, err := db0Events(t, db, "proc", agg)
		if err != nil || len(evs) != n {
			t.Fatalf("%s: %d events, %v; want %d", agg, len(evs), err, n)
		}
	}
	if s, _ := db.Session(ctx, "session_shared"); s.MessageCount != 3*n {
		t.Fatalf("message_count %d, want %d", s.MessageCount, 3*n)
	}
}
