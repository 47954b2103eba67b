package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/mcp"
	"github.com/demiurge/demiurge/sandbox"
)

// A stdio server runs inside the OS sandbox: its own PID namespace, no
// Host variable, writes only in the
// workspace and its private home.
func TestStdioServerRunsSandboxed(t *testing.T) {
	t.Setenv("DEMIURGE_MCP_HOST_CANARY", "host-canary-value")
	hidden := t.TempDir()
	e := newEnv(t, func(o *mcp.Options) {
		o.Sandbox = sandbox.Profile{Hidden: []string{hidden}}
		o.BaseEnv = func() []string { return []string{"PATH=" + os.Getenv("PATH")} }
	})
	// The server records its pid in a state directory inside the
	// workspace, the only place besides its home it may write.
	state := filepath.Join(e.workspace, "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	d := e.decl("boxed", "command: "+testServer(t)+"\nargs: [\"-state\", \""+state+"\"]\napproval_policy: auto\n")
	tc := e.turn(sessionID(), "mcp.connect:*", "mcp.call:*")
	defs, sts := e.prepare(context.Background(), tc, newGate().fn, d)
	if status(t, sts, "boxed").State != mcp.StateConnected {
		t.Fatalf("status %+v", sts)
	}
	// The pid the server sees is one of its own namespace: on the Host
	// that pid, if it exists at all, is some other program.
	got := starts(t, state)
	if len(got) != 1 {
		t.Fatalf("starts %v", got)
	}
	if exe, err := os.Readlink("/proc/" + got[0] + "/exe"); err == nil && exe == testServer(t) {
		t.Fatalf("the server's own pid %s is its Host pid: no PID namespace", got[0])
	}
	res := call(t, context.Background(), tc, defs, "boxed__getenv", map[string]any{"name": "DEMIURGE_MCP_HOST_CANARY"})
	if strings.Contains(res.ModelView, "host-canary-value") {
		t.Fatalf("the server saw a Host variable: %q", res.ModelView)
	}
}

// A sandbox that cannot be built leaves the server failed, and nothing of
// it runs.
func TestStdioServerWithoutSandboxDoesNotStart(t *testing.T) {
	e := newEnv(t, func(o *mcp.Options) { o.Sandbox = sandbox.Profile{SimulateMissing: "PID namespaces"} })
	d, state := e.stdioDecl("nobox", "")
	_, sts := e.prepare(context.Background(), e.turn(sessionID(), "mcp.connect:*"), newGate().fn, d)
	st := status(t, sts, "nobox")
	if st.State == mcp.StateConnected || !strings.Contains(st.Error, "PID namespaces") {
		t.Fatalf("status %+v", st)
	}
	if len(starts(t, state)) != 0 {
		t.Fatal("the server started without its sandbox")
	}
}
