package process

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
)

// lockedBuffer is a stderr sink the test can read while the drain writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// entryOf reads pid's stat line, failing the test when it is gone.
func entryOf(tb testing.TB, pid int) procEntry {
	tb.Helper()
	e, ok := readProcStat(pid, make([]byte, statBufSize))
	if !ok {
		tb.Fatalf("process %d not found", pid)
	}
	return e
}

// reaped reports whether the process e is gone from /proc: not alive,
// not a zombie (a recycled pid is another process).
func reaped(e procEntry) bool {
	cur, ok := readProcStat(e.pid, make([]byte, statBufSize))
	return !ok || cur.start != e.start
}

// groupMembers lists the live or zombie processes of group or session pid.
func groupMembers(tb testing.TB, pid int) []int {
	tb.Helper()
	tab := make(map[int]procEntry)
	if err := scanProcs(tab, make([]byte, statBufSize)); err != nil {
		tb.Fatal(err)
	}
	var out []int
	for p, e := range tab {
		if e.pgrp == pid || e.sid == pid {
			out = append(out, p)
		}
	}
	return out
}

func waitClosed(tb testing.TB, c <-chan struct{}, what string) {
	tb.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		tb.Fatalf("timed out waiting for %s", what)
	}
}

// A server talks over its pipes, sends stderr to the sink, and on Stop
// gets end of input, exits by itself and is reaped with its whole tree, a
// grandchild that left its session included.
func TestServerStdioAndGracefulStop(t *testing.T) {
	m := mustManager(t)
	var errOut lockedBuffer
	srv, err := m.StartServer(context.Background(), ServerSpec{
		Argv:   sh(`setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!; read line; echo "got:$line"; echo to-stderr >&2; cat >/dev/null; echo bye >&2`),
		Env:    testEnv(),
		Stderr: &errOut,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(srv.Stdout())
	first, _ := out.ReadString('\n')
	grandchild := entryOf(t, readPIDs(t, first)[0])
	leader := entryOf(t, srv.PID())
	if _, err := srv.Stdin().Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if got, _ := out.ReadString('\n'); got != "got:hello\n" {
		t.Fatalf("stdout %q", got)
	}
	if err := srv.Stop(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := errOut.String(); got != "to-stderr\nbye\n" {
		t.Fatalf("stderr %q", got)
	}
	if !reaped(leader) || !reaped(grandchild) {
		t.Fatalf("after Stop: leader reaped %v, grandchild reaped %v", reaped(leader), reaped(grandchild))
	}
	if _, err := srv.Stdin().Write([]byte("x")); err == nil {
		t.Fatal("stdin still open after Stop")
	}
	// Every caller gets the same outcome.
	if err := srv.Stop(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
}

// A server that ignores end of input and SIGTERM is killed after its
// grace and KillGrace.
func TestServerStopKillsAStubbornServer(t *testing.T) {
	m := mustManager(t)
	srv, err := m.StartServer(context.Background(), ServerSpec{
		Argv: sh(`trap '' TERM; echo ready; exec 0<&-; while :; do sleep 1; done`), Env: testEnv(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(srv.Stdout()).ReadString('\n'); line != "ready\n" {
		t.Fatalf("stdout %q", line)
	}
	leader := entryOf(t, srv.PID())
	if err := srv.Stop(context.Background(), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !reaped(leader) || len(groupMembers(t, leader.pid)) != 0 {
		t.Fatalf("after Stop: leader reaped %v, group %v", reaped(leader), groupMembers(t, leader.pid))
	}
}

// A server whose process exits (or is killed) is reaped with its tree at
// once, before anyone calls Stop; what it wrote stays readable until Stop.
func TestServerExitReapsItsTree(t *testing.T) {
	for _, how := range []string{"exits", "killed"} {
		t.Run(how, func(t *testing.T) {
			m := mustManager(t)
			srv, err := m.StartServer(context.Background(), ServerSpec{
				Argv: sh(`sleep 1000 </dev/null >/dev/null 2>&1 & echo $!; read line; echo last words; exit 3`), Env: testEnv(),
			})
			if err != nil {
				t.Fatal(err)
			}
			out := bufio.NewReader(srv.Stdout())
			first, _ := out.ReadString('\n')
			child := entryOf(t, readPIDs(t, first)[0])
			leader := entryOf(t, srv.PID())
			if how == "exits" {
				if _, err := srv.Stdin().Write([]byte("go\n")); err != nil {
					t.Fatal(err)
				}
			} else if err := syscall.Kill(leader.pid, syscall.SIGKILL); err != nil {
				// Only the server itself: its child must not outlive it.
				t.Fatal(err)
			}
			waitClosed(t, srv.Exited(), "the server to exit")
			deadline := time.Now().Add(10 * time.Second)
			for !reaped(leader) || !reaped(child) || len(groupMembers(t, leader.pid)) != 0 {
				if time.Now().After(deadline) {
					t.Fatalf("not reaped: leader %v, child %v, group %v", reaped(leader), reaped(child), groupMembers(t, leader.pid))
				}
				time.Sleep(10 * time.Millisecond)
			}
			if how == "exits" {
				if line, _ := out.ReadString('\n'); line != "last words\n" {
					t.Fatalf("stdout after exit %q", line)
				}
			}
			if err := srv.Stop(context.Background(), time.Second); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A child of the Host that is no part of the server (it carries no
// TreeEnv, like the server's own children) is never taken for a member.
func TestServerStopSparesOtherHostChildren(t *testing.T) {
	m := mustManager(t)
	other := exec.Command("sleep", "1000")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = other.Process.Kill()
		_ = other.Wait()
	}()
	srv, err := m.StartServer(context.Background(), ServerSpec{Argv: sh(`cat`), Env: testEnv()})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if e := entryOf(t, other.Process.Pid); e.state == 'Z' {
		t.Fatal("an unrelated child of the Host was killed with the server")
	}
}

// Close ends live servers at once; StartServer then fails.
func TestManagerCloseStopsServers(t *testing.T) {
	m := mustManager(t)
	srv, err := m.StartServer(context.Background(), ServerSpec{Argv: sh(`trap '' TERM; while :; do sleep 1; done`), Env: testEnv()})
	if err != nil {
		t.Fatal(err)
	}
	leader := entryOf(t, srv.PID())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !reaped(leader) {
		t.Fatal("server survived Close")
	}
	if err := srv.Stop(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := m.StartServer(ctx, ServerSpec{Argv: sh("cat"), Env: testEnv()}); demiurge.ErrorCode(err) != demiurge.EUNAVAILABLE {
		t.Fatalf("StartServer after Close: %v, want EUNAVAILABLE", err)
	}
}

// A server's environment is exactly its spec's.
func TestServerEnvironmentIsExact(t *testing.T) {
	m := mustManager(t)
	srv, err := m.StartServer(context.Background(), ServerSpec{Argv: []string{"env"}, Env: testEnv()})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_, _ = out.ReadFrom(srv.Stdout())
	if err := srv.Stop(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), strings.Join(testEnv(), "\n")+"\n"; got != want {
		t.Fatalf("environment %q, want %q", got, want)
	}
}
