package slash_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/internal/tui/slash"
	"github.com/demiurge/demiurge/turn"
)

// fakeEnv is the UI side of the commands: the state a terminal UI keeps,
// recorded so the tests can see what a command changed.
type fakeEnv struct {
	h         *host.Host
	workspace string

	mu          sync.Mutex // guards the fields below
	core        string
	session     string
	provider    string
	model       string
	busyMode    slash.BusyMode
	display     slash.ToolDisplay
	busy        bool
	interrupts  []string
	queue       []string
	enqueuedNow []string // Enqueue calls while idle: they started at once
}

var _ slash.Env = (*fakeEnv)(nil)

func (e *fakeEnv) Host() *host.Host  { return e.h }
func (e *fakeEnv) Workspace() string { return e.workspace }
func (e *fakeEnv) CoreID() string    { e.mu.Lock(); defer e.mu.Unlock(); return e.core }
func (e *fakeEnv) SessionID() string { e.mu.Lock(); defer e.mu.Unlock(); return e.session }
func (e *fakeEnv) Provider() string  { e.mu.Lock(); defer e.mu.Unlock(); return e.provider }
func (e *fakeEnv) Model() string     { e.mu.Lock(); defer e.mu.Unlock(); return e.model }
func (e *fakeEnv) BusyMode() slash.BusyMode {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.busyMode
}
func (e *fakeEnv) SetBusyMode(m slash.BusyMode) { e.mu.Lock(); defer e.mu.Unlock(); e.busyMode = m }
func (e *fakeEnv) ToolDisplay() slash.ToolDisplay {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.display
}
func (e *fakeEnv) SetToolDisplay(d slash.ToolDisplay) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.display = d
}
func (e *fakeEnv) Busy() bool { e.mu.Lock(); defer e.mu.Unlock(); return e.busy }
func (e *fakeEnv) Interrupt(reason string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.busy {
		return false
	}
	e.interrupts = append(e.interrupts, reason)
	return true
}
func (e *fakeEnv) Queued() []string { e.mu.Lock(); defer e.mu.Unlock(); return slices.Clone(e.queue) }
func (e *fakeEnv) ClearQueue() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := len(e.queue)
	e.queue = nil
	return n
}
func (e *fakeEnv) Enqueue(text string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.busy {
		e.queue = append(e.queue, text)
		return
	}
	e.enqueuedNow = append(e.enqueuedNow, text)
}

// apply does what the UI does with an outcome's action.
func (e *fakeEnv) apply(o slash.Outcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if o.Action == slash.ActionNewSession || o.Action == slash.ActionResume {
		e.session = o.SessionID
	}
}

// newHost opens a Host on a fresh home whose fake provider answers with
// responses, in order, then by its rules.
func newHost(t *testing.T, responses ...demiurge.ModelResponse) *host.Host {
	t.Helper()
	return newHostAt(t, filepath.Join(t.TempDir(), "home"), responses...)
}

// newHostAt is newHost on the home directory home.
func newHostAt(t *testing.T, home string, responses ...demiurge.ModelResponse) *host.Host {
	t.Helper()
	opts := host.Options{Home: home}
	if len(responses) > 0 {
		opts.FakeScript = demiurgetest.Script(t, responses...)
	}
	return openHost(t, opts)
}

func openHost(t *testing.T, opts host.Options) *host.Host {
	t.Helper()
	h, err := host.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return h
}

func newEnv(t *testing.T, h *host.Host) *fakeEnv {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "workspace")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	return &fakeEnv{h: h, workspace: ws, core: h.DefaultCore(), busyMode: slash.BusyInterrupt, display: slash.ToolSummary}
}

// turn runs one turn of the env's session (a fresh one first), every
// approval allowed.
func (e *fakeEnv) turn(t *testing.T, text string) turn.Result {
	t.Helper()
	return e.turnWith(t, text, effect.DecisionAllowOnce)
}

// turnWith is turn with every approval answered decision.
func (e *fakeEnv) turnWith(t *testing.T, text, decision string) turn.Result {
	t.Helper()
	sid := e.SessionID()
	res, err := e.h.Run(context.Background(), turn.Request{
		CoreID: e.CoreID(), Text: text, SessionID: sid, NewSession: sid == "",
		Workspace: e.workspace, Approver: demiurgetest.NewApprover(decision),
	})
	if err != nil {
		t.Fatalf("turn %q: %v", text, err)
	}
	if res.Outcome != turn.OutcomeCompleted {
		t.Fatalf("turn %q: %s %v", text, res.Outcome, res.Error)
	}
	e.mu.Lock()
	e.session = res.SessionID
	e.mu.Unlock()
	return res
}

// run dispatches line and fails the test on an error.
func run(t *testing.T, env slash.Env, line string) slash.Outcome {
	t.Helper()
	out, err := slash.Dispatch(context.Background(), env, line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return out
}

// fails dispatches line and returns its error message, failing the test
// when it succeeds.
func fails(t *testing.T, env slash.Env, line string) string {
	t.Helper()
	out, err := slash.Dispatch(context.Background(), env, line)
	if err == nil {
		t.Fatalf("%s succeeded: %+v", line, out)
	}
	return demiurge.ErrorMessage(err)
}

// usageErr reports whether err is a *slash.UsageError.
func usageErr(err error) bool {
	var ue *slash.UsageError
	return errors.As(err, &ue)
}

// contains fails the test unless every want is in got, in order.
func contains(t *testing.T, what, got string, want ...string) {
	t.Helper()
	rest := got
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("%s: %q missing (or out of order) in:\n%s", what, w, got)
		}
		rest = rest[i+len(w):]
	}
}

// eventually polls cond until it holds or a generous deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 60s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
