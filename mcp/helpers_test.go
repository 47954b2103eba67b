package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/mcp"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/sandbox"
)

// serverDir holds the test server binary, built on first use.
var (
	serverDir  string
	serverOnce sync.Once
	serverPath string
	serverErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if serverDir != "" {
		_ = os.RemoveAll(serverDir)
	}
	os.Exit(code)
}

// testServer builds the test server once per test binary and returns its
// path. Fuzz workers and tests that need no server never build it.
func testServer(tb testing.TB) string {
	tb.Helper()
	serverOnce.Do(func() {
		serverDir, serverErr = os.MkdirTemp("", "mcp-testserver-")
		if serverErr != nil {
			return
		}
		serverPath = filepath.Join(serverDir, "mcptestserver")
		out, err := exec.Command("go", "build", "-o", serverPath, "./internal/testserver/cmd/mcptestserver").CombinedOutput()
		if err != nil {
			serverErr = fmt.Errorf("building the test server: %v\n%s", err, out)
		}
	})
	if serverErr != nil {
		tb.Fatal(serverErr)
	}
	return serverPath
}

// requireLinux skips tests that spawn stdio servers off Linux, where the
// Host refuses them.
func requireLinux(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("stdio MCP servers need Linux")
	}
}

// env is one test's Manager and its directories.
type env struct {
	t         *testing.T
	m         *mcp.Manager
	workspace string
	logDir    string
	homes     string
	coreDir   string
}

func newEnv(t *testing.T, tweak ...func(*mcp.Options)) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{
		t: t, workspace: filepath.Join(root, "ws"), logDir: filepath.Join(root, "logs"),
		homes: filepath.Join(root, "homes"), coreDir: filepath.Join(root, "core"),
	}
	for _, d := range []string{e.workspace, e.coreDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := mcp.Options{
		LogDir:      e.logDir,
		PrivateHome: func(id string) string { return filepath.Join(e.homes, id) },
		CloseGrace:  300 * time.Millisecond,
		BaseEnv:     func() []string { return []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"} },
		// These tests watch the server's pids and state files from the
		// Host's side; sandbox_linux_test.go runs servers sandboxed.
		Sandbox: sandbox.Profile{Settings: sandbox.Settings{Mode: sandbox.ModeOff}},
	}
	for _, f := range tweak {
		f(&opts)
	}
	e.m = mcp.NewManager(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := e.m.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// decl parses a declaration of server id with the given YAML body.
func (e *env) decl(id, body string) mcp.Declaration {
	e.t.Helper()
	rel := "agent/mcp/" + id + ".yaml"
	d, err := mcp.ParseDeclaration(id, filepath.Join(e.coreDir, rel), rel, []byte(body))
	if err != nil {
		e.t.Fatalf("declaration %s: %v", id, err)
	}
	return d
}

// stdioDecl declares the test server over stdio with a state dir, which
// it returns.
func (e *env) stdioDecl(id string, extra string, flags ...string) (mcp.Declaration, string) {
	e.t.Helper()
	state := e.t.TempDir()
	args := append([]string{"-state", state}, flags...)
	var b strings.Builder
	fmt.Fprintf(&b, "command: %s\nargs:\n", testServer(e.t))
	for _, a := range args {
		fmt.Fprintf(&b, "  - %q\n", a)
	}
	if !strings.Contains(extra, "approval_policy:") {
		b.WriteString("approval_policy: auto\n")
	}
	b.WriteString(extra)
	return e.decl(id, b.String()), state
}

// turn is a turn context for session sid granting caps.
func (e *env) turn(sid string, caps ...string) effect.TurnContext {
	return effect.TurnContext{
		SessionID: sid, TurnID: "turn_1", CoreID: "assistant", CoreRevision: "rev1",
		Workspace: e.workspace,
		Scope:     demiurge.PrincipalScope{PrincipalID: "principal_1", SessionID: sid},
		Grants:    policy.NewGrants(caps, nil),
		Secrets:   effect.NewSecrets(),
	}
}

// prepare runs Definitions with gate.
func (e *env) prepare(ctx context.Context, tc effect.TurnContext, gate mcp.ConnectGate, decls ...mcp.Declaration) ([]effect.Definition, []mcp.ServerStatus) {
	return e.m.Definitions(ctx, mcp.Request{Declarations: decls, Turn: tc, Gate: gate, CoreDir: e.coreDir})
}

// gate counts the connect requests it answers, per server.
type gate struct {
	mu    sync.Mutex
	asked map[string]int
	deny  map[string]bool
	last  map[string]mcp.ConnectRequest
}

func newGate(deny ...string) *gate {
	g := &gate{asked: map[string]int{}, deny: map[string]bool{}, last: map[string]mcp.ConnectRequest{}}
	for _, id := range deny {
		g.deny[id] = true
	}
	return g
}

func (g *gate) fn(_ context.Context, r mcp.ConnectRequest) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked[r.Declaration.ID]++
	g.last[r.Declaration.ID] = r
	if g.deny[r.Declaration.ID] {
		return demiurge.Errorf(demiurge.EUNAUTHORIZED, "approval denied: %s (denied by operator)", r.Summary)
	}
	return nil
}

func (g *gate) count(id string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.asked[id]
}

// starts returns the pids the test server recorded in state, one per start.
func starts(t *testing.T, state string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(state, "started"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// status finds one server's status.
func status(t *testing.T, sts []mcp.ServerStatus, id string) mcp.ServerStatus {
	t.Helper()
	for _, s := range sts {
		if s.Server == id {
			return s
		}
	}
	t.Fatalf("no status for %s in %+v", id, sts)
	return mcp.ServerStatus{}
}

func names(defs []effect.Definition) []string {
	out := make([]string, 0, len(defs))
	for _, d := range defs {
		out = append(out, d.Name)
	}
	return out
}

func hasName(defs []effect.Definition, name string) bool {
	for _, d := range defs {
		if d.Name == name {
			return true
		}
	}
	return false
}

// call prepares a catalog of defs and executes one call through the
// effect runtime, the way the turn engine does.
func call(t *testing.T, ctx context.Context, tc effect.TurnContext, defs []effect.Definition, name string, args map[string]any) demiurge.EffectResult {
	t.Helper()
	cat, err := effect.Prepare(effect.Sources{CoreID: tc.CoreID, Revision: tc.CoreRevision, MCP: defs})
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	req, ok := cat.Bind(demiurge.ToolCall{ID: "call_1", Name: name, Arguments: args}, "model")
	if !ok {
		t.Fatalf("catalog does not offer %s (has %v)", name, names(defs))
	}
	return effect.NewRuntime(effect.Options{}).Execute(ctx, cat, req, tc)
}

// pidAlive reports whether pid exists and is not a zombie.
func pidAlive(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// eventually waits up to d for cond.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var seq atomic.Int64

func sessionID() string { return fmt.Sprintf("sess_%d", seq.Add(1)) }

// policyDenyAll is an approval configuration that denies everything.
func policyDenyAll() policy.ApprovalConfig { return policy.ApprovalConfig{Default: "deny"} }
