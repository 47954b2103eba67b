package controlplane_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// countingClaims counts the completion claims a worker makes.
type countingClaims struct {
	*store.DB
	claims atomic.Int64
}

func (c *countingClaims) ClaimDueWork(ctx context.Context, kind, ownerID string, lease time.Duration, limit int) ([]demiurge.WorkItem, error) {
	c.claims.Add(1)
	return c.DB.ClaimDueWork(ctx, kind, ownerID, lease, limit)
}

// A worker that took no task leaves Close nothing to announce: it claims no
// completion then (what is due is the next completion loop's, which claims
// as it starts). One that ran a task announces its completion at Close.
func TestCloseClaimsCompletionsOnlyAfterATask(t *testing.T) {
	ctx := context.Background()
	for _, ran := range []bool{false, true} {
		db := demiurgetest.MustOpenPath(t, dbPath(t), store.Options{})
		host, err := db.StartHost(ctx, store.HostInfo{})
		if err != nil {
			t.Fatal(err)
		}
		st := &countingClaims{DB: db}
		w := controlplane.NewWorker(controlplane.New(db, controlplane.Options{}), st, controlplane.WorkerOptions{HostID: host.ID()})
		w.Handle(demiurge.TaskKindTerminalExec, modeRunner(&gates{}, nil))
		delivered := make(chan string, 1)
		w.OnCompletion(func(_ context.Context, c controlplane.Completion) error {
			delivered <- c.Task.ID
			return nil
		})
		if err := w.Start(ctx); err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Second, "the completion loop's first claim", func() bool { return st.claims.Load() > 0 })
		var id string
		if ran {
			tk, err := w.Submit(ctx, demiurge.TaskSpec{Kind: demiurge.TaskKindTerminalExec, Payload: map[string]any{"mode": "ok", "owner_session_id": "session_1"}},
				demiurge.TaskOrigin{Actor: "test"})
			if err != nil {
				t.Fatal(err)
			}
			id = tk.ID
			if _, err := w.Wait(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		before := st.claims.Load()
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
		after := st.claims.Load()
		switch {
		case !ran && after != before:
			t.Fatalf("a worker that took no task claimed completions %d times at Close", after-before)
		case ran:
			select {
			case got := <-delivered:
				if got != id {
					t.Fatalf("delivered the completion of %s, want %s", got, id)
				}
			default:
				t.Fatal("a worker that ran a task closed without announcing its completion")
			}
		}
		if err := host.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
