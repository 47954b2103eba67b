package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// enableWebhook writes an enabled webhook channel on port into the
// assistant core.
func (e *env) enableWebhook(port int) {
	e.t.Helper()
	path := filepath.Join(e.home, "agents", "assistant", "agent.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	yaml := strings.Replace(string(b), "channels: {}\n", fmt.Sprintf(`channels:
  webhook:
    enabled: true
    port: %d
    token_env: DEMIURGE_WEBHOOK_TOKEN
    allow_private_callback_urls: true
`, port), 1)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startGateway starts `demiurge gateway` as a process of its own and waits
// until its webhook answers.
func (e *env) startGateway(port int) (*exec.Cmd, *bytes.Buffer) {
	e.t.Helper()
	c := e.cmd(context.Background(), "", "gateway")
	var errb bytes.Buffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = c.Process.Kill()
		_ = c.Wait()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/demiurge", port))
		if err == nil {
			resp.Body.Close()
			return c, &errb
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the gateway did not listen: %s", errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (e *env) query(q string, args ...any) *sql.Rows {
	e.t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.home, "runtime", "runtime.sqlite3")+"?mode=ro")
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { db.Close() })
	rows, err := db.Query(q, args...)
	if err != nil {
		e.t.Fatal(err)
	}
	return rows
}

func (e *env) scalar(q string) string {
	e.t.Helper()
	rows := e.query(q)
	defer rows.Close()
	var v sql.NullString
	if rows.Next() {
		if err := rows.Scan(&v); err != nil {
			e.t.Fatal(err)
		}
	}
	return v.String
}

// The crash case of the ChannelInbox: the gateway accepts a webhook
// message (202), runs its turn, and is SIGKILLed while the reply is on its
// way (the callback holds it). After a restart there is still exactly one
// turn (lost, by restart recovery), the inbound is done as recovered, and
// nobody is answered twice. SIGTERM then drains and stops the gateway.
func TestGatewayWebhookSIGKILLBetweenAcceptAndReply(t *testing.T) {
	e := newEnv(t)
	if r := e.run("", "init"); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	port := freePort(t)
	e.enableWebhook(port)
	e.extra = append(e.extra, "DEMIURGE_WEBHOOK_TOKEN=hook-token-1234")

	var mu sync.Mutex
	var calls []string
	held := make(chan struct{})
	release := make(chan struct{})
	cb := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		calls = append(calls, string(b))
		n := len(calls)
		mu.Unlock()
		if n == 1 {
			close(held)
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go cb.Serve(ln)
	defer func() {
		close(release)
		cb.Close()
	}()

	gw, _ := e.startGateway(port)
	body, _ := json.Marshal(map[string]any{"text": "hello", "source": "ci", "request_id": "req-1",
		"callback_url": "http://" + ln.Addr().String() + "/reply"})
	post := func() int {
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/demiurge", port), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Demiurge-Token", "hook-token-1234")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(); got != 202 {
		t.Fatalf("POST: %d", got)
	}
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("the reply never reached the callback")
	}
	if err := gw.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	gw.Wait()

	gw2, stderr := e.startGateway(port)
	// The same request again (a client retrying after the crash) is a
	// duplicate: 202, nothing admitted.
	if got := post(); got != 202 {
		t.Fatalf("POST after restart: %d", got)
	}
	deadline := time.Now().Add(30 * time.Second)
	for e.scalar(`SELECT result FROM channel_inbox`) != "recovered" {
		if time.Now().After(deadline) {
			t.Fatalf("inbound not recovered: status %s; gateway: %s", e.scalar(`SELECT status FROM channel_inbox`), stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := e.scalar(`SELECT count(*) FROM channel_inbox`); n != "1" {
		t.Fatalf("%s inbounds, want 1", n)
	}
	if n, st := e.scalar(`SELECT count(*) FROM turns`), e.scalar(`SELECT status FROM turns`); n != "1" || st != "lost" {
		t.Fatalf("turns: %s (%s), want one lost turn", n, st)
	}
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	n := len(calls)
	mu.Unlock()
	if n != 1 {
		t.Fatalf("%d replies, want exactly 1: %q", n, calls)
	}

	r := e.run("", "gateway", "status", "--json")
	var st struct {
		Channels []struct {
			Name  string         `json:"name"`
			State string         `json:"state"`
			Inbox map[string]int `json:"inbox"`
		} `json:"channels"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 {
		t.Fatalf("gateway status: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if len(st.Channels) != 1 || st.Channels[0].State != "running" || st.Channels[0].Inbox["done"] != 1 {
		t.Fatalf("status %+v", st)
	}

	if err := gw2.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- gw2.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("gateway exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the gateway did not stop on SIGTERM")
	}
	if st := e.scalar(`SELECT state FROM channel_states`); st != "stopped" {
		t.Fatalf("channel state after SIGTERM: %s", st)
	}
}
