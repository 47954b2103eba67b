package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/mcp"
)

func TestHealthyServerOffersPrefixedToolsAndCalls(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	d, state := e.stdioDecl("demo", "")
	g := newGate()
	tc := e.turn(sessionID(), "mcp.connect:demo", "mcp.call:demo")
	ctx := context.Background()

	defs, sts := e.prepare(ctx, tc, g.fn, d)
	st := status(t, sts, "demo")
	if st.State != mcp.StateConnected || st.Error != "" {
		t.Fatalf("status = %+v", st)
	}
	if !hasName(defs, "demo__echo") || !hasName(defs, "demo__sleep") || st.Tools != len(defs) {
		t.Fatalf("definitions = %v (status says %d)", names(defs), st.Tools)
	}
	if !slices.IsSorted(names(defs)) {
		t.Fatalf("definitions not sorted: %v", names(defs))
	}
	for _, def := range defs {
		if def.Source != effect.SourceMCP || def.Capability != "mcp.call:demo" || def.Adapter == nil || !strings.HasPrefix(def.Provenance, "mcp:demo/") {
			t.Fatalf("definition %+v", def)
		}
	}
	if g.count("demo") != 1 {
		t.Fatalf("gate asked %d times", g.count("demo"))
	}
	req := g.last["demo"]
	if req.Policy != "prompt" || req.Action != "mcp.connect" || req.Capability != "mcp.connect:demo" ||
		req.Summary != "Connect and discover MCP server demo" || string(req.RuleKey) != "mcp.connect:demo:"+d.Fingerprint {
		t.Fatalf("connect request: %+v", req)
	}

	res := call(t, ctx, tc, defs, "demo__echo", map[string]any{"text": "hi"})
	if res.Status != demiurge.EffectSucceeded || res.ModelView != "echo: hi" {
		t.Fatalf("echo: %+v", res)
	}
	if res.Data["mcpServer"] != "demo" || res.Data["mcpTool"] != "echo" || res.Data["executionStarted"] != true {
		t.Fatalf("echo data: %v", res.Data)
	}

	// The second turn reuses the connection: no new approval, no new process.
	defs2, _ := e.prepare(ctx, tc, g.fn, d)
	if !reflect.DeepEqual(names(defs), names(defs2)) || g.count("demo") != 1 || len(starts(t, state)) != 1 {
		t.Fatalf("second turn: names %v, gate %d, starts %v", names(defs2), g.count("demo"), starts(t, state))
	}
}

func TestCallCapabilityIsChecked(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	d, _ := e.stdioDecl("demo", "")
	tc := e.turn(sessionID(), "mcp.connect:demo") // no mcp.call:demo
	defs, _ := e.prepare(context.Background(), tc, newGate().fn, d)
	res := call(t, context.Background(), tc, defs, "demo__echo", map[string]any{"text": "hi"})
	if res.Status != demiurge.EffectDenied || !strings.Contains(res.ModelView, "capability denied: mcp.call:demo") || res.ExecutionStarted {
		t.Fatalf("result %+v", res)
	}
}

func TestCallApprovalIsTheResolvedEntrys(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	d, _ := e.stdioDecl("demo", "approval_policy: prompt\nrisk: high\n")
	tc := e.turn(sessionID(), "mcp.connect:demo", "mcp.call:demo")
	ap := demiurgetest.NewApprover(effect.DecisionDeny)
	tc.Approver = ap
	defs, _ := e.prepare(context.Background(), tc, newGate().fn, d)
	cat, err := effect.Prepare(effect.Sources{CoreID: tc.CoreID, Revision: tc.CoreRevision, MCP: defs})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := cat.Bind(demiurge.ToolCall{ID: "c1", Name: "demo__echo", Arguments: map[string]any{"text": "hi"}}, "model")
	rt := effect.NewRuntime(effect.Options{Approvals: effect.NewApprovalRuntime(effect.ApprovalOptions{})})
	res := rt.Execute(context.Background(), cat, req, tc)
	if res.Status != demiurge.EffectDenied || res.ModelView != "approval denied: Call MCP tool demo/echo" || res.ExecutionStarted {
		t.Fatalf("result %+v", res)
	}
	if ap.Asked() != 1 {
		t.Fatalf("approver asked %d times", ap.Asked())
	}
	r := ap.Requests()[0]
	if r.Action != "mcp.call" || r.Target != "demo/echo" || r.Risk != "high" || r.Capability != "mcp.call:demo" || r.Tool != "demo__echo" {
		t.Fatalf("approval request %+v", r)
	}
}

func TestConnectDeniedSpawnsNothing(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	for _, tc := range []struct {
		name  string
		caps  []string
		deny  bool
		asked int
		want  string
	}{
		{"no capability", nil, false, 0, "capability denied: mcp.connect:demo"},
		{"wildcard of another server", []string{"mcp.connect:other"}, false, 0, "capability denied: mcp.connect:demo"},
		{"operator denies", []string{"mcp.connect:*"}, true, 1, "approval denied: Connect and discover MCP server demo (denied by operator)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, state := e.stdioDecl("demo", "")
			g := newGate()
			if tc.deny {
				g = newGate("demo")
			}
			turn := e.turn(sessionID(), tc.caps...)
			for i := 1; i <= 2; i++ {
				defs, sts := e.prepare(context.Background(), turn, g.fn, d)
				st := status(t, sts, "demo")
				if len(defs) != 0 || st.State != mcp.StateDenied || st.Error != tc.want {
					t.Fatalf("turn %d: defs %v, status %+v", i, names(defs), st)
				}
				// A denial is not cached: every turn asks again.
				if g.count("demo") != tc.asked*i {
					t.Fatalf("turn %d: gate asked %d times", i, g.count("demo"))
				}
			}
			time.Sleep(100 * time.Millisecond)
			if s := starts(t, state); len(s) != 0 {
				t.Fatalf("server started although denied: %v", s)
			}
		})
	}
}

func TestUnboundAuthorityDeniesEverything(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	d, state := e.stdioDecl("demo", "")
	off := e.decl("off", "command: x\nenabled: false\n")
	tc := e.turn(sessionID(), "mcp.connect:demo")
	defs, sts := e.prepare(context.Background(), tc, nil, d, off)
	if len(defs) != 0 || status(t, sts, "demo").Error != "MCP connect authority is not bound to tool preparation" {
		t.Fatalf("no gate: %v %+v", names(defs), sts)
	}
	if st := status(t, sts, "off"); st.State != mcp.StateDisabled {
		t.Fatalf("disabled server: %+v", st)
	}
	tc.Scope.PrincipalID = ""
	if defs, _ := e.prepare(context.Background(), tc, newGate().fn, d); len(defs) != 0 {
		t.Fatalf("no principal: %v", names(defs))
	}
	if len(starts(t, state)) != 0 {
		t.Fatal("server started without bound authority")
	}
}

func TestFaultsDoNotBlockHealthyServers(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	fast := "connect_timeout_seconds: 1\n"
	healthy, _ := e.stdioDecl("healthy", fast)
	hangInit, hangState := e.stdioDecl("hang_init", fast, "-mode", "hang-initialize", "-ignore-term")
	hangList, _ := e.stdioDecl("hang_list", fast, "-mode", "hang-list")
	malformed, _ := e.stdioDecl("malformed", fast, "-mode", "malformed")
	missing := e.decl("missing", "command: /nonexistent/server\napproval_policy: auto\n")
	tc := e.turn(sessionID(), "mcp.connect:*", "mcp.call:*")

	start := time.Now()
	defs, sts := e.prepare(context.Background(), tc, newGate().fn, healthy, hangInit, hangList, malformed, missing)
	wall := time.Since(start)
	if wall > 3*time.Second {
		t.Fatalf("preparation took %s; the faults held it beyond their 1 s timeout", wall)
	}
	if st := status(t, sts, "healthy"); st.State != mcp.StateConnected || !hasName(defs, "healthy__echo") {
		t.Fatalf("healthy: %+v", st)
	}
	for id, want := range map[string]string{
		"hang_init": "MCP discovery timed out after 1s",
		"hang_list": "MCP discovery timed out after 1s",
		"malformed": `calling "initialize": invalid character`,
		"missing":   "executable /nonexistent/server not found",
	} {
		st := status(t, sts, id)
		if st.State != mcp.StateFailed || !strings.Contains(st.Error, want) || st.RetryAfter.IsZero() {
			t.Errorf("%s: %+v", id, st)
		}
		for _, n := range names(defs) {
			if strings.HasPrefix(n, id+"__") {
				t.Errorf("%s offered tool %s", id, n)
			}
		}
	}
	// The hung server ignored SIGTERM: it was killed and reaped anyway.
	pids := starts(t, hangState)
	if len(pids) != 1 {
		t.Fatalf("hang_init starts: %v", pids)
	}
	eventually(t, 5*time.Second, "the hung server to be gone", func() bool { return !pidAlive(pids[0]) })
}

func TestNegativeCacheKeepsHealthyPeers(t *testing.T) {
	requireLinux(t)
	now := time.Now()
	clock := &now
	e := newEnv(t, func(o *mcp.Options) { o.Now = func() time.Time { return *clock } })
	healthy, healthyState := e.stdioDecl("healthy", "")
	broken, brokenState := e.stdioDecl("broken", "connect_timeout_seconds: 0.5\n", "-mode", "hang-list")
	g := newGate()
	tc := e.turn(sessionID(), "mcp.connect:*")
	ctx := context.Background()

	_, sts := e.prepare(ctx, tc, g.fn, healthy, broken)
	first := status(t, sts, "broken")
	if first.State != mcp.StateFailed || first.Error != "MCP discovery timed out after 0.5s" {
		t.Fatalf("broken: %+v", first)
	}
	// Inside the TTL the failure is reused: no approval, no process.
	*clock = now.Add(10 * time.Second)
	_, sts = e.prepare(ctx, tc, g.fn, healthy, broken)
	if st := status(t, sts, "broken"); st.State != mcp.StateFailed || st.Error != first.Error || g.count("broken") != 1 || len(starts(t, brokenState)) != 1 {
		t.Fatalf("inside TTL: %+v, gate %d, starts %v", st, g.count("broken"), starts(t, brokenState))
	}
	// Past the TTL only the failed server is retried.
	*clock = now.Add(31 * time.Second)
	_, sts = e.prepare(ctx, tc, g.fn, healthy, broken)
	if g.count("broken") != 2 || len(starts(t, brokenState)) != 2 {
		t.Fatalf("past TTL: gate %d, starts %v", g.count("broken"), starts(t, brokenState))
	}
	if st := status(t, sts, "healthy"); st.State != mcp.StateConnected || g.count("healthy") != 1 || len(starts(t, healthyState)) != 1 {
		t.Fatalf("healthy peer reconnected: %+v, gate %d, starts %v", st, g.count("healthy"), starts(t, healthyState))
	}
}

func TestCancelledPreparationIsNotCached(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	hang, state := e.stdioDecl("hang", "connect_timeout_seconds: 30\n", "-mode", "hang-list")
	g := newGate()
	tc := e.turn(sessionID(), "mcp.connect:*")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	defs, sts := e.prepare(ctx, tc, g.fn, hang)
	if time.Since(start) > 3*time.Second || len(defs) != 0 {
		t.Fatalf("cancelled preparation took %s", time.Since(start))
	}
	if st := status(t, sts, "hang"); st.State != mcp.StateNotConnected {
		t.Fatalf("status %+v", st)
	}
	pids := starts(t, state)
	if len(pids) != 1 {
		t.Fatalf("starts %v", pids)
	}
	eventually(t, 5*time.Second, "the abandoned server to be gone", func() bool { return !pidAlive(pids[0]) })
	// Nothing was cached: the next turn tries again at once.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	e.prepare(ctx2, tc, g.fn, hang)
	if g.count("hang") != 2 {
		t.Fatalf("gate asked %d times", g.count("hang"))
	}
}

func TestCallTimeoutCancelsOnTheServer(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	d, state := e.stdioDecl("demo", "timeout_seconds: 0.5\n")
	tc := e.turn(sessionID(), "mcp.connect:demo", "mcp.call:demo")
	defs, _ := e.prepare(context.Background(), tc, newGate().fn, d)

	start := time.Now()
	res := call(t, context.Background(), tc, defs, "demo__sleep", map[string]any{"ms": 20000, "tag": "timeout"})
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("call took %s", took)
	}
	if res.Status != demiurge.EffectFailed || res.ModelView != "MCP tool failed: MCP call timed out after 0.5s" || !res.ExecutionStarted {
		t.Fatalf("result %+v", res)
	}
	eventually(t, 3*time.Second, "the server to see notifications/cancelled", func() bool {
		_, err := os.Stat(filepath.Join(state, "cancelled-timeout"))
		return err == nil
	})

	// The caller's cancellation is the runtime's to report.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res = call(t, ctx, tc, defs, "demo__sleep", map[string]any{"ms": 20000, "tag": "caller"})
	if res.Status != demiurge.EffectCancelled {
		t.Fatalf("cancelled call: %+v", res)
	}
	eventually(t, 3*time.Second, "the server to see the caller's cancellation", func() bool {
		_, err := os.Stat(filepath.Join(state, "cancelled-caller"))
		return err == nil
	})
	// The connection survives both.
	if res := call(t, context.Background(), tc, defs, "demo__echo", map[string]any{"text": "still"}); res.ModelView != "echo: still" {
		t.Fatalf("after cancellations: %+v", res)
	}
}

func TestCrashMidCallReconnectsNextTurn(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	d, state := e.stdioDecl("demo", "")
	g := newGate()
	tc := e.turn(sessionID(), "mcp.connect:demo", "mcp.call:demo")
	defs, _ := e.prepare(context.Background(), tc, g.fn, d)
	res := call(t, context.Background(), tc, defs, "demo__crash", nil)
	if res.Status != demiurge.EffectFailed || !strings.HasPrefix(res.ModelView, "MCP tool failed: ") || !res.ExecutionStarted {
		t.Fatalf("crash: %+v", res)
	}
	// The frozen entry now reports the dead connection without running.
	eventually(t, 3*time.Second, "the connection to be seen dead", func() bool {
		r := call(t, context.Background(), tc, defs, "demo__echo", map[string]any{"text": "x"})
		return r.ModelView == "MCP server is not connected for tool: demo__echo" && !r.ExecutionStarted
	})
	defs, sts := e.prepare(context.Background(), tc, g.fn, d)
	if status(t, sts, "demo").State != mcp.StateConnected || g.count("demo") != 2 || len(starts(t, state)) != 2 {
		t.Fatalf("reconnect: %+v gate %d starts %v", sts, g.count("demo"), starts(t, state))
	}
	if res := call(t, context.Background(), tc, defs, "demo__echo", map[string]any{"text": "back"}); res.ModelView != "echo: back" {
		t.Fatalf("after reconnect: %+v", res)
	}
}

func TestResultConversion(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	d, _ := e.stdioDecl("demo", "")
	tc := e.turn(sessionID(), "mcp.connect:demo", "mcp.call:demo")
	defs, _ := e.prepare(context.Background(), tc, newGate().fn, d)
	ctx := context.Background()

	res := call(t, ctx, tc, defs, "demo__structured", nil)
	want := "{\n  \"answer\": 42,\n  \"items\": [\n    \"a\",\n    \"b\"\n  ]\n}"
	if res.ModelView != want || res.OperatorView != want {
		t.Fatalf("structured: %q", res.ModelView)
	}
	sc, _ := json.Marshal(res.Data["structuredContent"])
	if string(sc) != `{"answer":42,"items":["a","b"]}` {
		t.Fatalf("structuredContent = %s", sc)
	}

	res = call(t, ctx, tc, defs, "demo__media", nil)
	if want := "look:\n[image image/png]\n[Doc] file:///doc.txt\ninline resource\nmem://blob"; res.ModelView != want {
		t.Fatalf("media: %q", res.ModelView)
	}

	res = call(t, ctx, tc, defs, "demo__fail", nil)
	if res.Status != demiurge.EffectFailed || res.ModelView != "it failed" || res.Data["status"] != "error" || !res.ExecutionStarted {
		t.Fatalf("isError: %+v", res)
	}

	res = call(t, ctx, tc, defs, "demo__empty", nil)
	if res.ModelView != `{"mcpServer":"demo","mcpTool":"empty","status":"ok"}` {
		t.Fatalf("empty: %q", res.ModelView)
	}

	res = call(t, ctx, tc, defs, "demo__big", map[string]any{"n": 200000})
	if !strings.HasSuffix(res.OperatorView, "...[truncated: 134464 more characters]") {
		t.Fatalf("big result not bounded: %d chars", len(res.OperatorView))
	}
	if len(res.OperatorView) > 70000 {
		t.Fatalf("big result is %d chars", len(res.OperatorView))
	}
}

func TestToolErrorIsRedactedAndKeepsTheConnection(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	d, _ := e.stdioDecl("demo", "env: {DEMO_TOKEN: literal-secret-abc}\n")
	tc := e.turn(sessionID(), "mcp.connect:demo", "mcp.call:demo")
	defs, _ := e.prepare(context.Background(), tc, newGate().fn, d)
	res := call(t, context.Background(), tc, defs, "demo__protocol_error", nil)
	if res.Status != demiurge.EffectFailed || !strings.Contains(res.ModelView, "boom with token=") || strings.Contains(res.ModelView, "literal-secret-abc") {
		t.Fatalf("tool error: %+v", res)
	}
	for _, v := range []map[string]any{res.EventView, res.DurableView, res.DebugView} {
		if b, _ := json.Marshal(v); strings.Contains(string(b), "literal-secret-abc") {
			t.Fatalf("secret in a view: %s", b)
		}
	}
	if r := call(t, context.Background(), tc, defs, "demo__echo", map[string]any{"text": "ok"}); r.ModelView != "echo: ok" {
		t.Fatalf("connection lost after a tool error: %+v", r)
	}
}
