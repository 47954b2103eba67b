//go:build unix

package vtpty

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// WaitFor returns the first screen for which cond holds, checking it now
// and again each time the screen may have changed. It fails when ctx ends
// or the terminal is gone with cond still false; the error names what was
// awaited and shows the last screen. cond must not keep the screen.
func (t *Term) WaitFor(ctx context.Context, what string, cond func(*Screen) bool) (*Screen, error) {
	for {
		t.mu.Lock()
		s := t.snapshot()
		changed := t.changed
		t.mu.Unlock()
		if cond(s) {
			return s, nil
		}
		if s.Ended {
			return s, fmt.Errorf("vtpty: the terminal is gone without %s; %s", what, s)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return s, fmt.Errorf("vtpty: waiting for %s: %w; %s", what, ctx.Err(), t.Screen())
		}
	}
}

// WaitText waits until some row shows text.
func (t *Term) WaitText(ctx context.Context, text string) (*Screen, error) {
	return t.WaitFor(ctx, fmt.Sprintf("%q on the screen", text), func(s *Screen) bool { return s.Contains(text) })
}

// WaitGone waits until no row shows text.
func (t *Term) WaitGone(ctx context.Context, text string) (*Screen, error) {
	return t.WaitFor(ctx, fmt.Sprintf("%q gone from the screen", text), func(s *Screen) bool { return !s.Contains(text) })
}

// Wait waits until the started program has exited and been reaped and
// returns its state (ExitCode, or the signal through Sys). It fails when
// ctx ends first, showing the screen.
func (t *Term) Wait(ctx context.Context) (*os.ProcessState, error) {
	if t.cmd == nil {
		return nil, errors.New("vtpty: Wait needs a Term from Start")
	}
	select {
	case <-t.exited:
		t.mu.Lock()
		defer t.mu.Unlock()
		var ee *exitError
		if t.waitErr != nil && !errors.As(t.waitErr, &ee) {
			return t.state, fmt.Errorf("vtpty: wait for %d: %w", t.cmd.Process.Pid, t.waitErr)
		}
		return t.state, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("vtpty: waiting for process %d to exit: %w; %s", t.cmd.Process.Pid, ctx.Err(), t.Screen())
	}
}

// Exited is closed once the started program has been reaped (nil for a
// Term from Open).
func (t *Term) Exited() <-chan struct{} { return t.exited }
