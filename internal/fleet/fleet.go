// Package fleet runs several Host processes over one shared ledger, for
// the multi-Host tests and the bench driver's fleet figures.
//
// A fleet Host is a real Host (host.Open on its own runtime home, with the
// ledger named by its DEMIURGE_DATABASE_URL) whose terminal.exec task body
// is replaced by a trivial one (Runner): the figures are those of the
// ledger's queue, claims, leases and failover, not of starting processes.
// Each Host process stands for a machine: it registers under its own
// machine name, so the other Hosts judge it by its lease alone, as they
// would a Host on another machine.
//
// The parent drives a child over two pipes, one line per message:
//
//	child → parent   ready <host_id>
//	parent → child   enqueue <n> <hold_ms>    (queue n tasks for any Host, in one write)
//	child → parent   enqueued <n>
//	parent → child   (end of input)           the child closes its Host and exits 0
//
// A child also exits when it receives SIGTERM or SIGINT.
package fleet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/host"
)

// Runner is the trivial task body: it succeeds at once, or, when the
// task's payload holds hold_ms, after that many milliseconds (a task that
// is still running when its Host is killed).
func Runner(ctx context.Context, _ demiurge.Task, h *controlplane.Handle) (demiurge.TaskResult, error) {
	if ms, ok := h.Payload()["hold_ms"].(float64); ok && ms > 0 {
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
			return demiurge.TaskResult{Summary: "stopped"}, nil
		}
	}
	return demiurge.TaskResult{Summary: "done"}, nil
}

// Options configure a child.
type Options struct {
	Home        string
	MachineName string
	Getenv      func(string) string
	// MaxActiveTasks is host.Options.MaxActiveTasks.
	MaxActiveTasks int
}

// Serve is a child's main: it opens the Host, reports ready, and serves
// the parent's commands from in until in ends or ctx is cancelled.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	h, err := host.Open(ctx, host.Options{
		Home: opts.Home, Getenv: opts.Getenv, MachineName: opts.MachineName,
		TaskRunners:    map[string]controlplane.Runner{demiurge.TaskKindTerminalExec: Runner},
		MaxActiveTasks: opts.MaxActiveTasks,
	})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h.Close(cctx)
	}()
	var mu sync.Mutex // guards out
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
	}
	say("ready %s", h.HostID())
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				return nil
			}
			n, hold, err := parseEnqueue(line)
			if err != nil {
				return err
			}
			if err := enqueue(ctx, h, n, hold); err != nil {
				return err
			}
			say("enqueued %d", n)
		}
	}
}

func parseEnqueue(line string) (n, holdMS int, err error) {
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "enqueue" {
		return 0, 0, fmt.Errorf("fleet: unknown command %q (want: enqueue <n> <hold_ms>)", line)
	}
	if n, err = strconv.Atoi(f[1]); err == nil {
		holdMS, err = strconv.Atoi(f[2])
	}
	return n, holdMS, err
}

// enqueue queues n tasks for any Host in one write.
func enqueue(ctx context.Context, h *host.Host, n, holdMS int) error {
	specs := make([]demiurge.TaskSpec, n)
	for i := range specs {
		payload := map[string]any{}
		if holdMS > 0 {
			payload["hold_ms"] = holdMS
		}
		specs[i] = demiurge.TaskSpec{Kind: demiurge.TaskKindTerminalExec, Payload: payload}
	}
	_, errs, err := h.EnqueueTasks(ctx, specs, demiurge.TaskOrigin{Actor: "fleet"})
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}
