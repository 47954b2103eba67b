package tui

import (
	"context"
	"errors"

	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/tui/slash"
)

// commands runs the slash commands (package slash) for the bridge: the
// one place where slash's Outcome becomes the model's outcome and the
// model's state becomes slash's Env.
type commands struct {
	env liveEnv
}

func newCommands(b *bridge) commands { return commands{env: liveEnv{b: b}} }

// dispatch runs a command line off the UI goroutine. A usage error is the
// command's answer, shown as a warning, not a failure.
func (c commands) dispatch(ctx context.Context, line string) (outcome, error) {
	out, err := slash.Dispatch(ctx, c.env, line)
	var ue *slash.UsageError
	if errors.As(err, &ue) {
		return outcome{notice: ue.Error(), level: levelWarning}, nil
	}
	return convert(out), err
}

// complete completes a composer line for Tab, on the UI goroutine: the
// Env it gets answers from a snapshot of the model, never by a call back
// into it.
func (c commands) complete(m *Model, input string) []string {
	return slash.Complete(c.env.b.ctx, snapshotEnv{liveEnv: c.env, m: m}, input)
}

// suggest ranks the commands for the suggestion panel: no Host reads, so
// it is cheap enough for every frame.
func (c commands) suggest(token string) []suggestion {
	var out []suggestion
	for _, s := range slash.Suggest(token) {
		out = append(out, suggestion{name: "/" + s.Name, usage: s.Usage, description: s.Description, group: s.Group})
	}
	return out
}

// convert maps an Outcome, its picker's and confirm's callbacks included.
func convert(o slash.Outcome) outcome {
	out := outcome{notice: o.Notice, level: noticeLevel(o.Level), sessionID: o.SessionID}
	switch o.Action {
	case slash.ActionExit:
		out.action = actionExit
	case slash.ActionNewSession:
		out.action = actionNewSession
	case slash.ActionResume:
		out.action = actionResume
	}
	if p := o.Picker; p != nil {
		ps := &pickerSpec{title: p.Title}
		for _, it := range p.Items {
			ps.items = append(ps.items, pickItem{id: it.ID, title: it.Title, preview: it.Preview, at: it.Time})
		}
		if p.OnPick != nil {
			ps.onPick = func(ctx context.Context, id string) (outcome, error) {
				return wrapOutcome(p.OnPick(ctx, id))
			}
		}
		out.picker = ps
	}
	if cf := o.Confirm; cf != nil {
		cs := &confirmSpec{question: cf.Question}
		if cf.OnYes != nil {
			cs.onYes = func(ctx context.Context) (outcome, error) { return wrapOutcome(cf.OnYes(ctx)) }
		}
		if cf.OnNo != nil {
			cs.onNo = func(ctx context.Context) (outcome, error) { return wrapOutcome(cf.OnNo(ctx)) }
		}
		out.confirm = cs
	}
	return out
}

func wrapOutcome(o slash.Outcome, err error) (outcome, error) {
	var ue *slash.UsageError
	if errors.As(err, &ue) {
		return outcome{notice: ue.Error(), level: levelWarning}, nil
	}
	return convert(o), err
}

// liveEnv is slash's Env for a command running off the UI goroutine: each
// read or change of the UI's state runs on the UI goroutine (callMsg) and
// is waited for; once the UI is closing a call does nothing.
type liveEnv struct{ b *bridge }

func (e liveEnv) Host() *host.Host  { return e.b.h }
func (e liveEnv) CoreID() string    { return e.b.opts.CoreID }
func (e liveEnv) Workspace() string { return e.b.opts.Workspace }
func (e liveEnv) Provider() string  { return e.b.opts.Provider }
func (e liveEnv) Model() string     { return e.b.opts.Model }

// ApprovalMode is how the UI answers approval questions (slash.ApprovalModer).
func (e liveEnv) ApprovalMode() string { return orDefault(e.b.opts.Approve, "ask") }

func (e liveEnv) SessionID() (id string) {
	e.b.call(func(m *Model) { id = m.sessionID })
	return id
}

func (e liveEnv) BusyMode() (mode slash.BusyMode) {
	e.b.call(func(m *Model) { mode = slash.BusyMode(m.busyMode) })
	return mode
}

func (e liveEnv) SetBusyMode(mode slash.BusyMode) {
	e.b.call(func(m *Model) { m.busyMode = string(mode) })
}

func (e liveEnv) ToolDisplay() (d slash.ToolDisplay) {
	e.b.call(func(m *Model) { d = slash.ToolDisplay(m.display) })
	return d
}

func (e liveEnv) SetToolDisplay(d slash.ToolDisplay) {
	e.b.call(func(m *Model) {
		if td, ok := parseToolDisplay(string(d)); ok {
			m.display = td
		}
	})
}

func (e liveEnv) Busy() (busy bool) {
	e.b.call(func(m *Model) { busy = m.running != nil })
	return busy
}

func (e liveEnv) Interrupt(reason string) (ok bool) {
	e.b.call(func(m *Model) {
		if m.running != nil {
			m.cancelRunning()
			ok = true
		}
	})
	return ok
}

func (e liveEnv) Queued() (q []string) {
	e.b.call(func(m *Model) { q = append([]string(nil), m.queue...) })
	return q
}

func (e liveEnv) ClearQueue() (n int) {
	e.b.call(func(m *Model) { n, m.queue = len(m.queue), nil })
	return n
}

func (e liveEnv) Enqueue(text string) {
	e.b.call(func(m *Model) {
		if m.running == nil {
			m.startTurn(text)
			return
		}
		m.queue = append(m.queue, text)
	})
}

// snapshotEnv answers from the model directly: Complete runs on the UI
// goroutine, where a call would wait for itself. Completion only reads.
type snapshotEnv struct {
	liveEnv
	m *Model
}

func (e snapshotEnv) SessionID() string                { return e.m.sessionID }
func (e snapshotEnv) BusyMode() slash.BusyMode         { return slash.BusyMode(e.m.busyMode) }
func (e snapshotEnv) ToolDisplay() slash.ToolDisplay   { return slash.ToolDisplay(e.m.display) }
func (e snapshotEnv) Busy() bool                       { return e.m.running != nil }
func (e snapshotEnv) Queued() []string                 { return append([]string(nil), e.m.queue...) }
func (e snapshotEnv) SetBusyMode(slash.BusyMode)       {}
func (e snapshotEnv) SetToolDisplay(slash.ToolDisplay) {}
func (e snapshotEnv) Interrupt(string) bool            { return false }
func (e snapshotEnv) ClearQueue() int                  { return 0 }
func (e snapshotEnv) Enqueue(string)                   {}
