package taskbench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/store"
)

// Targets of the task worker figures.
const (
	ThroughputTarget        = 1000                  // tasks per second, submit to succeeded
	CompletionLatencyTarget = 50 * time.Millisecond // median, task end to OnCompletion
	LogScalingTarget        = 12                    // time(100,000 lines) / time(10,000 lines)
)

// submitters is how many goroutines submit tasks at once in the
// throughput measurement, as concurrent turns would.
const submitters = 16

// rig is one Host over a fresh database.
type rig struct {
	db   *store.DB
	host *store.Host
	w    *controlplane.Worker
}

func open(ctx context.Context, dir, name string, onComplete func(context.Context, controlplane.Completion) error, runner controlplane.Runner) (*rig, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, demiurge.WrapError(demiurge.EUNAVAILABLE, err, "create %s", dir)
	}
	path := filepath.Join(dir, name)
	for _, s := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + s); err != nil && !os.IsNotExist(err) {
			return nil, demiurge.WrapError(demiurge.EUNAVAILABLE, err, "remove %s", path+s)
		}
	}
	db, err := store.Open(ctx, path, store.Options{ProcessAlive: process.Alive})
	if err != nil {
		return nil, err
	}
	marker, _ := process.StartMarker(os.Getpid())
	host, err := db.StartHost(ctx, store.HostInfo{StartMarker: marker})
	if err != nil {
		db.Close()
		return nil, err
	}
	w := controlplane.NewWorker(controlplane.New(db, controlplane.Options{}), db, controlplane.WorkerOptions{HostID: host.ID()})
	w.Handle(controlplane.KindTerminalExec, runner)
	if onComplete != nil {
		w.OnCompletion(onComplete)
	}
	if err := w.Start(ctx); err != nil {
		host.Close(ctx)
		db.Close()
		return nil, err
	}
	return &rig{db: db, host: host, w: w}, nil
}

func (r *rig) close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err := r.w.Close(ctx)
	if herr := r.host.Close(ctx); err == nil {
		err = herr
	}
	if derr := r.db.Close(); err == nil {
		err = derr
	}
	return err
}

func trivial(context.Context, demiurge.Task, *controlplane.Handle) (controlplane.Result, error) {
	return controlplane.Result{Summary: "ok", Metadata: map[string]any{"exit_code": 0}}, nil
}

// MeasureThroughput submits n trivial tasks (terminal.exec, no owner
// session, so no completion) from several goroutines, waits for each to
// succeed, and returns the tasks per second from the first submission to
// the last success. A task that does not succeed fails the measurement.
func MeasureThroughput(ctx context.Context, dir string, n int) (tasksPerSec float64, err error) {
	if n <= 0 {
		n = 2000
	}
	r, err := open(ctx, dir, "task-throughput.sqlite3", nil, trivial)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := r.close(ctx); err == nil {
			err = cerr
		}
	}()
	run := func(count int) error {
		var wg sync.WaitGroup
		errs := make(chan error, submitters)
		next := make(chan struct{}, count)
		for range count {
			next <- struct{}{}
		}
		close(next)
		for range submitters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range next {
					tk, err := r.w.Submit(ctx, controlplane.TaskSpec{Kind: controlplane.KindTerminalExec}, controlplane.Source{Actor: "bench"})
					if err == nil {
						tk, err = r.w.Wait(ctx, tk.ID)
					}
					if err == nil && tk.Status != demiurge.TaskSucceeded {
						err = demiurge.Errorf(demiurge.EINTERNAL, "task %s ended %s", tk.ID, tk.Status)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		return <-errs
	}
	if err := run(min(n/10+1, 200)); err != nil { // warm-up
		return 0, err
	}
	start := time.Now()
	if err := run(n); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// MeasureCompletionLatency runs n tasks one after another, each owned by a
// session, and returns the median time from the moment its runner returns
// to the moment the OnCompletion function is called with its completion.
func MeasureCompletionLatency(ctx context.Context, dir string, n int) (median time.Duration, err error) {
	if n <= 0 {
		n = 50
	}
	var mu sync.Mutex
	ended := map[string]time.Time{} // guarded by mu
	var lat []time.Duration         // guarded by mu
	delivered := make(chan struct{}, 1)
	onComplete := func(_ context.Context, c controlplane.Completion) error {
		now := time.Now()
		mu.Lock()
		if at, ok := ended[c.TaskID]; ok {
			lat = append(lat, now.Sub(at))
		}
		mu.Unlock()
		select {
		case delivered <- struct{}{}:
		default:
		}
		return nil
	}
	stamped := func(_ context.Context, t demiurge.Task, _ *controlplane.Handle) (controlplane.Result, error) {
		mu.Lock()
		ended[t.ID] = time.Now()
		mu.Unlock()
		return controlplane.Result{Summary: "ok"}, nil
	}
	r, err := open(ctx, dir, "task-completion-latency.sqlite3", onComplete, stamped)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := r.close(ctx); err == nil {
			err = cerr
		}
	}()
	for i := range n + 5 { // the first five warm up
		if i == 5 {
			mu.Lock()
			lat = lat[:0]
			mu.Unlock()
		}
		if _, err := r.w.Submit(ctx, controlplane.TaskSpec{Kind: controlplane.KindTerminalExec,
			Payload: map[string]any{"owner_session_id": "session_bench"}}, controlplane.Source{Actor: "bench"}); err != nil {
			return 0, err
		}
		select {
		case <-delivered:
		case <-time.After(10 * time.Second):
			return 0, demiurge.Errorf(demiurge.ETIMEOUT, "completion %d not delivered within 10s", i)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lat) == 0 {
		return 0, demiurge.Errorf(demiurge.EINTERNAL, "no completion latency measured")
	}
	slices.Sort(lat)
	return lat[len(lat)/2], nil
}
