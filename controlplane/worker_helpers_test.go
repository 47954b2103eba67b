package controlplane_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

var _ controlplane.WorkerStore = (*store.DB)(nil)

// gates lets a test release runners that wait for it, by task id.
type gates struct {
	mu sync.Mutex // guards ch
	ch map[string]chan struct{}
}

func (g *gates) get(id string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch == nil {
		g.ch = map[string]chan struct{}{}
	}
	if g.ch[id] == nil {
		g.ch[id] = make(chan struct{})
	}
	return g.ch[id]
}

func (g *gates) release(id string) { close(g.get(id)) }

// modeRunner behaves as its task's payload "mode" says:
//
//	ok      succeeds with a summary, a result ref and metadata
//	fail    returns a failed Result with metadata
//	err     returns an uncoded error (its text must not leak)
//	coded   returns a coded error
//	panic   panics
//	block   blocks the task, then succeeds
//	wait    waits for its gate or ctx; on ctx it reports exit metadata
//	ignore  waits for its gate only, ignoring ctx
//	log     logs payload "lines" lines, then succeeds
//	process records payload "pid"/"marker", then waits like wait
func modeRunner(g *gates, started chan<- string) controlplane.Runner {
	return func(ctx context.Context, tk demiurge.Task, h *controlplane.Handle) (demiurge.TaskResult, error) {
		p := h.Payload()
		if started != nil {
			started <- tk.ID
		}
		switch p["mode"] {
		case "ok":
			return demiurge.TaskResult{Summary: "all done", ResultRef: "ref://out", Metadata: map[string]any{"exit_code": 0}}, nil
		case "fail":
			return demiurge.TaskResult{Failed: true, Error: "exit status 3", Metadata: map[string]any{"exit_code": 3}}, nil
		case "err":
			return demiurge.TaskResult{}, errors.New("dial tcp 10.0.0.1: token=hunter2")
		case "coded":
			return demiurge.TaskResult{}, demiurge.Errorf(demiurge.EUNAVAILABLE, "provider unreachable")
		case "panic":
			panic("runner bug")
		case "block":
			if err := h.Block("need input"); err != nil {
				return demiurge.TaskResult{}, err
			}
			return demiurge.TaskResult{Summary: "unblocked"}, nil
		case "needs-user":
			return demiurge.TaskResult{Blocked: true, Summary: "needs the user", Metadata: map[string]any{"needs_user": true}}, nil
		case "log":
			n, _ := p["lines"].(int)
			for i := range n {
				h.Log("stdout", fmt.Sprintf("line %d", i))
			}
			return demiurge.TaskResult{Summary: "logged"}, nil
		case "process":
			if err := h.RecordProcess(p["pid"].(int), p["marker"].(string)); err != nil {
				return demiurge.TaskResult{}, err
			}
		case "ignore":
			<-g.get(tk.ID)
			return demiurge.TaskResult{Summary: "finished late"}, nil
		}
		select {
		case <-g.get(tk.ID):
			return demiurge.TaskResult{Summary: "released", Metadata: map[string]any{"exit_code": 0}}, nil
		case <-ctx.Done():
			return demiurge.TaskResult{Metadata: map[string]any{"exit_code": -15, "exit_reason": "cancelled"}}, nil
		}
	}
}

// rig is one Host process: a store handle, a registered host, a control
// plane and a started worker.
type rig struct {
	db    *store.DB
	host  *store.Host
	cp    *controlplane.ControlPlane
	w     *controlplane.Worker
	gates *gates
}

func dbPath(t *testing.T) string { return filepath.Join(t.TempDir(), "runtime.sqlite3") }

// newRig opens path as a separate Host process would (its own connection
// pool and host registration) and starts a worker with every task kind
// bound to modeRunner. onComplete may be nil.
func newRig(t *testing.T, path string, opts controlplane.WorkerOptions, onComplete func(context.Context, controlplane.Completion) error) *rig {
	t.Helper()
	return buildRig(t, path, opts, onComplete, nil)
}

// newRigWith is newRig whose worker options configure may complete from
// the rig's own store (its wake-ups, for example).
func newRigWith(t *testing.T, path string, opts controlplane.WorkerOptions, configure func(*controlplane.WorkerOptions, *rig)) *rig {
	t.Helper()
	return buildRig(t, path, opts, nil, configure)
}

func buildRig(t *testing.T, path string, opts controlplane.WorkerOptions, onComplete func(context.Context, controlplane.Completion) error,
	configure func(*controlplane.WorkerOptions, *rig)) *rig {
	t.Helper()
	db := demiurgetest.MustOpenPath(t, path, store.Options{})
	host, err := db.StartHost(context.Background(), store.HostInfo{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close(context.Background()) })
	cp := controlplane.New(db, controlplane.Options{MaxLogLines: opts.MaxLogLines})
	opts.HostID = host.ID()
	if configure != nil {
		configure(&opts, &rig{db: db, host: host, cp: cp})
	}
	w := controlplane.NewWorker(cp, db, opts)
	g := &gates{}
	for _, k := range []string{demiurge.TaskKindTerminalExec, demiurge.TaskKindAgentSpawn, demiurge.TaskKindEvolverRun} {
		w.Handle(k, modeRunner(g, nil))
	}
	if onComplete != nil {
		w.OnCompletion(onComplete)
	}
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := w.Close(ctx); err != nil {
			t.Errorf("worker close: %v", err)
		}
	})
	return &rig{db: db, host: host, cp: cp, w: w, gates: g}
}

// run submits a terminal.exec task in mode, owned by session_1 unless the
// payload says otherwise.
func (r *rig) run(t *testing.T, mode string, extra map[string]any) demiurge.Task {
	t.Helper()
	p := map[string]any{"mode": mode, "owner_session_id": "session_1"}
	for k, v := range extra {
		p[k] = v
	}
	tk, err := r.w.Submit(context.Background(), demiurge.TaskSpec{Kind: demiurge.TaskKindTerminalExec, Payload: p},
		demiurge.TaskOrigin{Actor: "test"})
	if err != nil {
		t.Fatalf("submit %s: %v", mode, err)
	}
	return tk
}

func (r *rig) wait(t *testing.T, id string) demiurge.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tk, err := r.w.Wait(ctx, id)
	if err != nil {
		t.Fatalf("wait %s: %v", id, err)
	}
	return tk
}

// events returns the events of task id of type typ ("" for all).
func events(t *testing.T, db *store.DB, agg, id, typ string) []demiurge.Event {
	t.Helper()
	evs, err := db.Events(context.Background(), demiurge.EventFilter{AggregateType: agg, AggregateID: id, Type: typ, Limit: demiurge.MaxEventLimit})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// terminalEvents returns the terminal events of task id.
func terminalEvents(t *testing.T, db *store.DB, id string) []demiurge.Event {
	t.Helper()
	var out []demiurge.Event
	for _, e := range events(t, db, demiurge.AggTask, id, "") {
		switch e.Type {
		case demiurge.EvTaskSucceeded, demiurge.EvTaskFailed, demiurge.EvTaskCancelled, demiurge.EvTaskLost:
			out = append(out, e)
		}
	}
	return out
}

// completions returns the task.completion work items of task id.
func completions(t *testing.T, db *store.DB, id string) []map[string]any {
	t.Helper()
	rows, err := db.Query(context.Background(), store.Query{Table: "runtime_work_items",
		Where: map[string]any{"parent_work_id": id, "kind": demiurge.WorkKindTaskCompletion}})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// eventually polls cond every 5ms for up to d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func storeQuery(table, taskID string) store.Query {
	return store.Query{Table: table, Where: map[string]any{"task_id": taskID}, Limit: 1000}
}

// payloadOf decodes the payload of e as a map, the way a generic reader
// sees it.
func payloadOf(t testing.TB, e demiurge.Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := e.Decode(&m); err != nil {
		t.Fatalf("payload of %s: %v", e.Type, err)
	}
	return m
}
