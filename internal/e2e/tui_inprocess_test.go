//go:build linux

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/demiurge/demiurge/internal/cli"
	"github.com/demiurge/demiurge/internal/vtpty"
)

// The terminal UI in this process: cli.Run with a pseudo-terminal's slave
// side as its standard streams opens the UI as the binary does, answers a
// message, and returns 0 on Ctrl-D.
func TestTUIInProcess(t *testing.T) {
	e := newEnv(t)
	term, err := vtpty.Open(100, 30)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	v := &vtTerm{t: t, term: term}

	inProcess.Lock()
	defer inProcess.Unlock()
	restore := e.enter()
	defer restore()
	ctx, cancel := context.WithTimeout(context.Background(), 2*termDeadline)
	defer cancel()
	tty := term.TTY()
	code := make(chan int, 1)
	go func() { code <- cli.Run(ctx, []string{"chat"}, tty, tty, tty) }()
	returned := false
	defer func() { // a failed test still stops and waits for the UI
		if !returned {
			cancel()
			<-code
		}
	}()

	v.waitStatus("assistant")
	v.line("hello in process")
	v.waitText("[fake] hello in process")
	v.waitStatus("idle")
	v.typ(vtpty.CtrlD)
	select {
	case c := <-code:
		returned = true
		if c != 0 {
			t.Fatalf("exit %d", c)
		}
	case <-time.After(termDeadline):
		t.Fatalf("the UI did not return after Ctrl-D:\n%s", term.Screen())
	}
}
