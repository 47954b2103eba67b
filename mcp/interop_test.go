//go:build linux

package mcp_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/mcp"
)

// The interop tests run the MCP reference servers from npm (exact versions
// in testdata/interop/package-lock.json). Install them with
//
//	npm ci --prefix mcp/testdata/interop
//
// Without them the tests skip, except under CI, where they fail.

const interopDir = "testdata/interop/node_modules/@modelcontextprotocol"

// interopServer returns the absolute entry point of one reference server.
func interopServer(t *testing.T, name string) string {
	t.Helper()
	requireLinux(t)
	entry, err := filepath.Abs(filepath.Join(interopDir, name, "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entry); err != nil {
		msg := "MCP reference servers are not installed: run `npm ci --prefix mcp/testdata/interop`"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not installed")
		}
		t.Skip("node is not installed")
	}
	return entry
}

func TestInteropEverythingStdio(t *testing.T) {
	entry := interopServer(t, "server-everything")
	t.Setenv("DEMIURGE_INTEROP_SECRET", "interop-host-secret-0451")
	e := newEnv(t, func(o *mcp.Options) { o.Getenv = os.Getenv })
	d := e.decl("everything", fmt.Sprintf("command: node\nargs: [%q, stdio]\napproval_policy: auto\ntimeout_seconds: 1\n", entry))
	tc := e.turn(sessionID(), "mcp.connect:everything", "mcp.call:everything")
	ctx := context.Background()
	defs, sts := e.prepare(ctx, tc, newGate().fn, d)
	if st := status(t, sts, "everything"); st.State != mcp.StateConnected {
		t.Fatalf("status %+v", st)
	}
	for _, want := range []string{"everything__echo", "everything__get-env", "everything__trigger-long-running-operation"} {
		if !hasName(defs, want) {
			t.Fatalf("missing %s in %v", want, names(defs))
		}
	}

	t.Run("echo", func(t *testing.T) {
		res := call(t, ctx, tc, defs, "everything__echo", map[string]any{"message": "round trip"})
		if res.Status != demiurge.EffectSucceeded || res.ModelView != "Echo: round trip" {
			t.Fatalf("echo: %+v", res)
		}
	})
	t.Run("get-env", func(t *testing.T) {
		res := call(t, ctx, tc, defs, "everything__get-env", nil)
		if res.Status != demiurge.EffectSucceeded || !strings.Contains(res.OperatorView, `"HOME": "`+filepath.Join(e.homes, "everything")+`"`) {
			t.Fatalf("get-env: %+v", res)
		}
		if strings.Contains(res.OperatorView, "interop-host-secret-0451") || strings.Contains(res.OperatorView, "DEMIURGE_INTEROP_SECRET") {
			t.Fatalf("a Host variable reached the server: %s", res.OperatorView)
		}
	})
	t.Run("long operation cancelled at its deadline", func(t *testing.T) {
		start := time.Now()
		res := call(t, ctx, tc, defs, "everything__trigger-long-running-operation", map[string]any{"duration": 10, "steps": 10})
		if took := time.Since(start); took > 4*time.Second {
			t.Fatalf("call took %s", took)
		}
		if res.Status != demiurge.EffectFailed || res.ModelView != "MCP tool failed: MCP call timed out after 1s" {
			t.Fatalf("long operation: %+v", res)
		}
		if res := call(t, ctx, tc, defs, "everything__echo", map[string]any{"message": "after"}); res.ModelView != "Echo: after" {
			t.Fatalf("connection unusable after the cancellation: %+v", res)
		}
	})
}

func TestInteropFilesystemConfined(t *testing.T) {
	entry := interopServer(t, "server-filesystem")
	e := newEnv(t)
	allowed := filepath.Join(e.workspace, "allowed")
	if err := os.MkdirAll(allowed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(allowed, "note.txt"), []byte("inside the workspace"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(e.workspace, "secret.txt")
	if err := os.WriteFile(secret, []byte("outside the allowed folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := e.decl("files", fmt.Sprintf("command: node\nargs: [%q, allowed]\ncwd: .\napproval_policy: auto\n", entry))
	tc := e.turn(sessionID(), "mcp.connect:files", "mcp.call:files")
	ctx := context.Background()
	defs, sts := e.prepare(ctx, tc, newGate().fn, d)
	if st := status(t, sts, "files"); st.State != mcp.StateConnected || !hasName(defs, "files__read_text_file") {
		t.Fatalf("status %+v, tools %v", st, names(defs))
	}
	res := call(t, ctx, tc, defs, "files__read_text_file", map[string]any{"path": filepath.Join(allowed, "note.txt")})
	// The server answers with structured content, which the model sees as
	// indented JSON.
	if res.Status != demiurge.EffectSucceeded || res.ModelView != "{\n  \"content\": \"inside the workspace\"\n}" {
		t.Fatalf("inside: %+v", res)
	}
	for _, p := range []string{secret, filepath.Join(allowed, "..", "secret.txt"), "/etc/hostname"} {
		res := call(t, ctx, tc, defs, "files__read_text_file", map[string]any{"path": p})
		if res.Status == demiurge.EffectSucceeded || !strings.Contains(res.ModelView, "Access denied") || strings.Contains(res.ModelView, "outside the allowed folder") {
			t.Fatalf("%s: %+v", p, res)
		}
	}
}

func TestInteropEverythingStreamableHTTP(t *testing.T) {
	entry := interopServer(t, "server-everything")
	port := freePort(t)
	cmd := exec.Command("node", entry, "streamableHttp")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PORT=" + port, "HOME=" + t.TempDir()}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "listening on port") {
				once = true
				close(listening)
			}
		}
	}()
	select {
	case <-listening:
	case <-time.After(20 * time.Second):
		t.Fatal("server-everything did not start listening")
	}

	e := newEnv(t, func(o *mcp.Options) { o.URLPolicy = loopback })
	d := e.decl("everything", "transport: streamable_http\nurl: http://127.0.0.1:"+port+"/mcp\napproval_policy: auto\ntimeout_seconds: 1\n")
	tc := e.turn(sessionID(), "mcp.connect:everything", "mcp.call:everything")
	ctx := context.Background()
	defs, sts := e.prepare(ctx, tc, newGate().fn, d)
	if st := status(t, sts, "everything"); st.State != mcp.StateConnected {
		t.Fatalf("status %+v", st)
	}
	if res := call(t, ctx, tc, defs, "everything__echo", map[string]any{"message": "over http"}); res.ModelView != "Echo: over http" {
		t.Fatalf("echo: %+v", res)
	}
	start := time.Now()
	res := call(t, ctx, tc, defs, "everything__trigger-long-running-operation", map[string]any{"duration": 10, "steps": 10})
	if time.Since(start) > 4*time.Second || res.ModelView != "MCP tool failed: MCP call timed out after 1s" {
		t.Fatalf("long operation over HTTP: %s %+v", time.Since(start), res)
	}
	if res := call(t, ctx, tc, defs, "everything__echo", map[string]any{"message": "still"}); res.ModelView != "Echo: still" {
		t.Fatalf("after the cancellation: %+v", res)
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}
