package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const fakeKey = "sk-e2e-SECRET-0123456789abcdef"

func TestOpenAICompatibleEndpoint(t *testing.T) {
	var sawAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawAuth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"hello from openai"}}]}`)
	}))
	defer srv.Close()
	e := newEnv(t)
	e.extra = []string{"OPENAI_API_KEY=" + fakeKey, "OPENAI_BASE_URL=" + srv.URL + "/v1"}
	out, r := e.runJSON("--provider", "openai", "--model", "m1", "hi")
	if r.code != 0 || out.Text != "hello from openai" {
		t.Fatalf("exit %d %+v %s", r.code, out, r.stderr)
	}
	if sawAuth != "Bearer "+fakeKey {
		t.Fatalf("Authorization %q", sawAuth)
	}
}

func TestAnthropicEndpoint(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-api-key") != fakeKey || !strings.HasSuffix(r.URL.Path, "/messages") {
			http.Error(w, "bad request", 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"content":[{"type":"text","text":"hello from anthropic"}],"stop_reason":"end_turn"}`)
	}))
	defer srv.Close()
	e := newEnv(t)
	e.extra = []string{"ANTHROPIC_API_KEY=" + fakeKey, "ANTHROPIC_BASE_URL=" + srv.URL}
	out, r := e.runJSON("--provider", "anthropic", "hi")
	if r.code != 0 || out.Text != "hello from anthropic" {
		t.Fatalf("exit %d %+v %s", r.code, out, r.stderr)
	}
}

func TestProviderErrorIsFailedTurnWithSanitizedPersistedError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A hostile server echoes the key back in its error body.
		http.Error(w, `{"error":{"message":"bad key `+fakeKey+`"}}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	e := newEnv(t)
	e.extra = []string{"OPENAI_API_KEY=" + fakeKey, "OPENAI_BASE_URL=" + srv.URL + "/v1"}
	out, r := e.runJSON("--provider", "openai", "hi")
	if r.code != 1 || out.Outcome != "failed" || out.Error == nil {
		t.Fatalf("exit %d %+v", r.code, out)
	}
	if strings.Contains(r.stdout+r.stderr, fakeKey) {
		t.Fatal("the API key reached the output")
	}
	assertNotInHome(t, e.home, fakeKey)
}

// assertNotInHome fails if needle occurs in any file of the home (database
// and WAL included).
func assertNotInHome(t *testing.T, home, needle string) {
	t.Helper()
	filepath.Walk(home, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil // an unreadable entry must not end the walk early
		}
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), needle) {
			t.Errorf("%s contains the secret", p)
		}
		return nil
	})
}

// hangingServer accepts requests and never answers until closed.
func hangingServer(t *testing.T) (*httptest.Server, <-chan struct{}) {
	arrived := make(chan struct{}, 16)
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv, arrived
}

func TestSIGKILLDuringProviderCallLeavesLostTurn(t *testing.T) {
	srv, arrived := hangingServer(t)
	e := newEnv(t)
	e.extra = []string{"OPENAI_API_KEY=" + fakeKey, "OPENAI_BASE_URL=" + srv.URL + "/v1"}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := e.cmd(ctx, "", "run", "--provider", "openai", "--json", "hang")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		c.Process.Kill()
		t.Fatal("provider request never arrived")
	}
	if err := c.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.Wait()

	// The next start reconciles: the killed process's turn becomes lost.
	next, r := e.runJSON("--provider", "fake", "after crash")
	if r.code != 0 || next.Outcome != "completed" {
		t.Fatalf("next run: exit %d %+v %s", r.code, next, r.stderr)
	}
	show := e.run("", "sessions", "show", next.SessionID, "--json")
	if !strings.Contains(show.stdout, "after crash") {
		t.Fatalf("session show: %s", show.stdout)
	}
	turns := queryTurnStatuses(t, e)
	if turns["lost"] != 1 || turns["completed"] != 1 || turns["running"] != 0 {
		t.Fatalf("turn statuses %v, want one lost and one completed", turns)
	}
}

func TestTwoHostsShareOneHome(t *testing.T) {
	srv, arrived := hangingServer(t)
	e := newEnv(t)
	e.extra = []string{"OPENAI_API_KEY=" + fakeKey, "OPENAI_BASE_URL=" + srv.URL + "/v1"}
	if r := e.run("", "init"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Host A: a turn blocked on the provider, in its own session.
	a := e.cmd(ctx, "", "run", "--provider", "openai", "--new", "--json", "slow")
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { a.Process.Kill(); a.Wait() }()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("host A never called the provider")
	}
	// Hosts B start (and reconcile) while A's turn is running, and run
	// turns in parallel in other sessions: four processes of their own.
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.exec("", "run", "--provider", "fake", "--new", "parallel")
			if r.code != 0 || r.stdout != "[fake] parallel\n" {
				errs <- r.stderr + r.stdout
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Errorf("parallel run failed: %s", msg)
	}
	turns := queryTurnStatuses(t, e)
	if turns["running"] != 1 || turns["lost"] != 0 || turns["completed"] != 4 {
		t.Fatalf("statuses %v: host A's running turn must stay running", turns)
	}
}

// queryTurnStatuses counts turn outcomes through the CLI's own views.
func queryTurnStatuses(t *testing.T, e *env) map[string]int {
	t.Helper()
	r := e.run("", "sessions", "turns", "--json")
	if r.code != 0 {
		t.Fatalf("sessions turns: %d %s", r.code, r.stderr)
	}
	var turns []struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &turns); err != nil {
		t.Fatalf("sessions turns: %v: %s", err, r.stdout)
	}
	counts := map[string]int{}
	for _, tr := range turns {
		counts[tr.Status]++
	}
	return counts
}
