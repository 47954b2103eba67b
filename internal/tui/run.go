package tui

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/demiurge/demiurge/host"
)

// Options are what the UI runs with.
type Options struct {
	Host      *host.Host
	CoreID    string // "" the Host's default core
	Workspace string
	Provider  string // --provider ("" or auto: the core's and config's)
	Model     string
	SessionID string // resume this session ("" the UI's conversation)
	// Approve is how approval questions are answered: "ask" (or "") in the
	// approval panel, "all" allow each once, "deny" deny each.
	Approve string

	In  io.Reader // the terminal's input (nil: os.Stdin)
	Out io.Writer // the terminal (nil: os.Stdout)
	// Env is the environment the colour profile is read from (NO_COLOR,
	// TERM, COLORTERM; nil: the process's).
	Env []string
}

// Run runs the terminal UI until the operator exits, the terminal hangs up
// (SIGHUP) or ctx ends. Whatever way it ends, the running turn is
// cancelled, every open question denied, and Run returns only once every
// goroutine it started has stopped. The Host stays open: the caller closes
// it.
func Run(ctx context.Context, o Options) error {
	if o.CoreID == "" {
		o.CoreID = o.Host.DefaultCore()
	}
	var p *tea.Program
	var ready sync.WaitGroup
	ready.Add(1)
	post := func(msg tea.Msg) {
		ready.Wait()
		p.Send(msg)
	}
	b := newBridge(o.Host, o, post)
	defer b.close()

	m := newModel(b, startConfig(ctx, o))
	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if o.In != nil {
		opts = append(opts, tea.WithInput(o.In))
	}
	if o.Out != nil {
		opts = append(opts, tea.WithOutput(o.Out))
	}
	if o.Env != nil {
		opts = append(opts, tea.WithEnvironment(o.Env))
	}
	p = tea.NewProgram(m, opts...)
	ready.Done()

	hung := watchHangup(p, b)
	_, err := p.Run()
	hung.stop()
	// Cancel and wait here, before the caller closes the Host.
	b.close()
	switch {
	case hung.happened(), errors.Is(err, tea.ErrInterrupted), ctx.Err() != nil:
		return nil
	}
	return err
}

// hangup watches for SIGHUP: the terminal is gone, so the running turn is
// cancelled at once (the model may never draw again) and the UI quits.
type hangup struct {
	sig     chan os.Signal
	done    chan struct{}
	stopped chan struct{}
	mu      sync.Mutex
	hit     bool
}

func watchHangup(p *tea.Program, b *bridge) *hangup {
	h := &hangup{sig: make(chan os.Signal, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	notifyHangup(h.sig)
	go func() {
		defer close(h.stopped)
		select {
		case <-h.sig:
			h.mu.Lock()
			h.hit = true
			h.mu.Unlock()
			b.cancelAll()
			p.Send(hangupMsg{})
		case <-h.done:
		}
	}()
	return h
}

func (h *hangup) stop() {
	signal.Stop(h.sig)
	close(h.done)
	<-h.stopped
}

func (h *hangup) happened() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hit
}
