//go:build unix

package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// These tests need the binary itself: main maps cli.Run's code to the
// process's exit status and turns SIGINT and SIGTERM into the cancellation
// of the command.

func TestBinaryExitCodes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"no such model"}}`, http.StatusBadRequest)
	}))
	defer srv.Close()
	e := newEnv(t)
	if r := e.exec("", "run", "hello"); r.code != 0 || r.stdout != "[fake] hello\n" || r.stderr != "" {
		t.Fatalf("a completed turn: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	e.extra = []string{"OPENAI_API_KEY=" + fakeKey, "OPENAI_BASE_URL=" + srv.URL + "/v1"}
	if r := e.exec("", "run", "--provider", "openai", "hello"); r.code != 1 || !strings.HasPrefix(r.stderr, "demiurge: turn ") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("a failed turn: exit %d stderr %q, want 1 and one line", r.code, r.stderr)
	}
	if r := e.exec("", "run", "--no-such-flag", "hello"); r.code != 2 || r.stderr != "demiurge: unknown flag: --no-such-flag\n" {
		t.Fatalf("a usage error: exit %d stderr %q, want 2 and one line", r.code, r.stderr)
	}
}

// startServe starts `demiurge serve` and waits until it says it runs.
func startServe(t *testing.T, e *env) (stop func(syscall.Signal) result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	c := e.cmd(ctx, "", "serve")
	var errb demiurgetest.Buffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errb.String(), "stop with Ctrl-C") {
		if time.Now().After(deadline) {
			_ = c.Process.Kill()
			_ = c.Wait()
			cancel()
			t.Fatalf("serve did not start: %q", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return func(sig syscall.Signal) result {
		defer cancel()
		if err := c.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		err := c.Wait()
		code := 0
		if err != nil {
			code = c.ProcessState.ExitCode()
		}
		return result{code: code, stderr: errb.String()}
	}
}

func TestBinaryServeStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		e := newEnv(t)
		stop := startServe(t, e)
		if r := stop(sig); r.code != 0 {
			t.Fatalf("serve after %v: exit %d stderr %q, want 0", sig, r.code, r.stderr)
		}
		// Closing released the lease: the next Host finds nothing to
		// recover and the home healthy.
		if r := e.run("", "doctor"); r.code != 0 {
			t.Fatalf("doctor after serve stopped on %v: exit %d\n%s", sig, r.code, r.stdout)
		}
	}
}

// An interrupted run cancels its turn: the turn is recorded cancelled and
// the run exits 1.
func TestBinaryRunInterrupted(t *testing.T) {
	srv, arrived := hangingServer(t)
	e := newEnv(t)
	e.extra = []string{"OPENAI_API_KEY=" + fakeKey, "OPENAI_BASE_URL=" + srv.URL + "/v1"}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := e.cmd(ctx, "", "run", "--provider", "openai", "hang")
	var errb demiurgetest.Buffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		_ = c.Process.Kill()
		_ = c.Wait()
		t.Fatal("provider request never arrived")
	}
	if err := c.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); c.ProcessState.ExitCode() != 1 {
		t.Fatalf("interrupted run: %v, stderr %q, want exit 1", err, errb.String())
	}
	if turns := queryTurnStatuses(t, e); turns["cancelled"] != 1 || len(turns) != 1 {
		t.Fatalf("turn statuses %v, want one cancelled", turns)
	}
}
