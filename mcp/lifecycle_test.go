package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/mcp"
	"github.com/demiurge/demiurge/mcp/internal/testserver"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/redact"
)

func TestServerEnvironmentIsAllowlisted(t *testing.T) {
	requireLinux(t)
	t.Setenv("DEMIURGE_FAKE_SECRET", "host-secret-value-123")
	t.Setenv("HOST_TOKEN", "declared-token-value-456")
	e := newEnv(t, func(o *mcp.Options) { o.Getenv = os.Getenv })
	d, _ := e.stdioDecl("demo", "env:\n  DEMO_TOKEN: \"tok-${HOST_TOKEN}\"\n  PLAIN: plain-value\n")
	tc := e.turn(sessionID(), "mcp.connect:demo", "mcp.call:demo", "secret.bind:HOST_TOKEN")
	defs, _ := e.prepare(context.Background(), tc, newGate().fn, d)

	res := call(t, context.Background(), tc, defs, "demo__env", nil)
	if res.Status != demiurge.EffectSucceeded {
		t.Fatalf("env: %+v", res)
	}
	if strings.Contains(res.OperatorView, "host-secret-value-123") || strings.Contains(res.OperatorView, "DEMIURGE_FAKE_SECRET") {
		t.Fatalf("a Host secret reached the server: %s", res.OperatorView)
	}
	if strings.Contains(res.OperatorView, "declared-token-value-456") {
		t.Fatalf("the declared secret came back unredacted: %s", res.OperatorView)
	}
	var names []string
	for _, kv := range strings.Split(strings.Trim(res.OperatorView, "[]"), ",") {
		k, _, _ := strings.Cut(strings.Trim(kv, `"`), "=")
		names = append(names, k)
	}
	want := []string{"DEMO_TOKEN", "HOME", "LANG", "PATH", "PLAIN"}
	if !slices.Equal(names, want) {
		t.Fatalf("server environment names = %v, want %v", names, want)
	}
	// Every declared value is a secret of the connection: it reaches the
	// server, and comes back redacted.
	if !strings.Contains(res.OperatorView, "PLAIN=<redacted:mcp.env:PLAIN>") || !strings.Contains(res.OperatorView, "HOME="+filepath.Join(e.homes, "demo")) {
		t.Fatalf("declared value or private HOME missing: %s", res.OperatorView)
	}
	fi, err := os.Stat(filepath.Join(e.homes, "demo"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("private home: %v %v", fi, err)
	}
	// The server sees the interpolated value: the debug view's marker
	// carries its fingerprint.
	res = call(t, context.Background(), tc, defs, "demo__getenv", map[string]any{"name": "DEMO_TOKEN"})
	fp := redact.Secret{Value: "tok-declared-token-value-456"}.Fingerprint()
	// (The marker's name is the first one the turn learnt the value under:
	// mcp.env:DEMO_TOKEN, or DEMO_TOKEN once the env listing above made
	// it a discovery of the turn.)
	if content, _ := res.DebugView["content"].(string); res.ModelView != "<redacted>" || !strings.HasPrefix(content, "<redacted:") || !strings.HasSuffix(content, "DEMO_TOKEN:"+fp+">") {
		t.Fatalf("getenv views: %q %v", res.ModelView, res.DebugView["content"])
	}
}

func TestMissingVariableConstructsNothing(t *testing.T) {
	requireLinux(t)
	e := newEnv(t, func(o *mcp.Options) { o.Getenv = func(string) string { return "" } })
	d, state := e.stdioDecl("demo", "env: {TOKEN: \"${NOT_SET_ANYWHERE}\"}\n")
	tc := e.turn(sessionID(), "mcp.connect:demo")
	_, sts := e.prepare(context.Background(), tc, newGate().fn, d)
	if st := status(t, sts, "demo"); st.State != mcp.StateFailed || st.Error != "missing environment variable: NOT_SET_ANYWHERE" {
		t.Fatalf("status %+v", st)
	}
	if len(starts(t, state)) != 0 {
		t.Fatal("server spawned with a missing variable")
	}
}

func TestWorkingDirectoryStaysInWorkspace(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	if err := os.MkdirAll(filepath.Join(e.workspace, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(e.workspace, "escape")); err != nil {
		t.Fatal(err)
	}
	tc := e.turn(sessionID(), "mcp.connect:*", "mcp.call:*")
	inside, _ := e.stdioDecl("inside", "cwd: sub\n")
	up, upState := e.stdioDecl("up", "cwd: ../\n")
	link, linkState := e.stdioDecl("link", "cwd: escape\n")
	abs, _ := e.stdioDecl("abs", "cwd: "+outside+"\n")
	g := newGate()
	defs, sts := e.prepare(context.Background(), tc, g.fn, inside, up, link, abs)
	for id, cwd := range map[string]string{"up": "../", "link": "escape", "abs": outside} {
		if st := status(t, sts, id); st.State != mcp.StateDenied || st.Error != "path escapes workspace: "+cwd {
			t.Errorf("%s: %+v", id, st)
		}
		if g.count(id) != 0 {
			t.Errorf("%s: approval asked before the cwd check", id)
		}
	}
	if len(starts(t, upState))+len(starts(t, linkState)) != 0 {
		t.Fatal("an escaping server was started")
	}
	res := call(t, context.Background(), tc, defs, "inside__pwd", nil)
	real, _ := filepath.EvalSymlinks(filepath.Join(e.workspace, "sub"))
	if res.ModelView != real {
		t.Fatalf("pwd = %q, want %q", res.ModelView, real)
	}
}

func TestDeclarationChangeReconnectsOnlyThatServer(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	a, aState := e.stdioDecl("a", "")
	b, bState := e.stdioDecl("b", "")
	g := newGate()
	tc := e.turn(sessionID(), "mcp.connect:*")
	ctx := context.Background()
	e.prepare(ctx, tc, g.fn, a, b)
	firstB := starts(t, bState)

	// b's declaration changes: only b is approved and started again, and
	// its old process goes away.
	b2 := e.decl("b", string(b.Raw)+"timeout_seconds: 5\n")
	_, sts := e.prepare(ctx, tc, g.fn, a, b2)
	if status(t, sts, "b").State != mcp.StateConnected {
		t.Fatalf("b: %+v", sts)
	}
	if g.count("a") != 1 || len(starts(t, aState)) != 1 {
		t.Fatalf("a reconnected: gate %d, starts %v", g.count("a"), starts(t, aState))
	}
	if g.count("b") != 2 || len(starts(t, bState)) != 2 {
		t.Fatalf("b: gate %d, starts %v", g.count("b"), starts(t, bState))
	}
	eventually(t, 5*time.Second, "b's old process to end", func() bool { return !pidAlive(firstB[0]) })

	// b's declaration is removed: its connection closes, a's stays.
	bPids := starts(t, bState)
	_, sts = e.prepare(ctx, tc, g.fn, a)
	if len(sts) != 1 || g.count("a") != 1 {
		t.Fatalf("after removal: %+v, gate %d", sts, g.count("a"))
	}
	eventually(t, 5*time.Second, "removed server to end", func() bool { return !pidAlive(bPids[1]) })
	if !pidAlive(starts(t, aState)[0]) {
		t.Fatal("a's process ended")
	}

	// Disabled: closed too.
	aOff := e.decl("a", string(a.Raw)+"enabled: false\n")
	_, sts = e.prepare(ctx, tc, g.fn, aOff)
	if status(t, sts, "a").State != mcp.StateDisabled {
		t.Fatalf("disabled: %+v", sts)
	}
	eventually(t, 5*time.Second, "disabled server to end", func() bool { return !pidAlive(starts(t, aState)[0]) })
}

func TestAuthorityChangeClosesTheScope(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	a, aState := e.stdioDecl("a", "")
	g := newGate()
	sid := sessionID()
	ctx := context.Background()
	e.prepare(ctx, e.turn(sid, "mcp.connect:*"), g.fn, a)
	for i, tc := range []effect.TurnContext{
		e.turn(sid, "mcp.connect:*", "fs.read"), // capability snapshot
		func() effect.TurnContext {
			tc := e.turn(sid, "mcp.connect:*", "fs.read")
			tc.CoreRevision = "rev2"
			return tc
		}(),
		func() effect.TurnContext {
			tc := e.turn(sid, "mcp.connect:*", "fs.read")
			tc.CoreRevision = "rev2"
			tc.Scope.PrincipalID = "principal_2"
			return tc
		}(),
	} {
		_, sts := e.prepare(ctx, tc, g.fn, a)
		if status(t, sts, "a").State != mcp.StateConnected || g.count("a") != i+2 || len(starts(t, aState)) != i+2 {
			t.Fatalf("change %d: gate %d, starts %v", i, g.count("a"), starts(t, aState))
		}
	}
	// A stricter effective connect policy is an authority change too.
	tc := e.turn(sid, "mcp.connect:*", "fs.read")
	tc.CoreRevision, tc.Scope.PrincipalID = "rev2", "principal_2"
	e.m.Definitions(ctx, mcp.Request{
		Declarations: []mcp.Declaration{a}, Turn: tc, Gate: g.fn, CoreDir: e.coreDir,
		CoreApproval: policyDenyAll(),
	})
	if g.count("a") != 5 || g.last["a"].Policy != "deny" {
		t.Fatalf("policy change: gate %d, policy %s", g.count("a"), g.last["a"].Policy)
	}
	pids := starts(t, aState)
	for _, p := range pids[:len(pids)-1] {
		eventually(t, 5*time.Second, "replaced connections to close", func() bool { return !pidAlive(p) })
	}
}

func TestEvictionClosesOnlyThatSession(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	a, aState := e.stdioDecl("a", "")
	s1, s2 := sessionID(), sessionID()
	ctx := context.Background()
	g := newGate()
	defs1, _ := e.prepare(ctx, e.turn(s1, "mcp.connect:*", "mcp.call:*"), g.fn, a)
	defs2, _ := e.prepare(ctx, e.turn(s2, "mcp.connect:*", "mcp.call:*"), g.fn, a)
	child := mcp.Request{Declarations: []mcp.Declaration{a}, Turn: e.turn(s2, "mcp.connect:*"), Gate: g.fn, CoreDir: e.coreDir, ScopeID: "child_1"}
	e.m.Definitions(ctx, child)
	pids := starts(t, aState)
	if len(pids) != 3 {
		t.Fatalf("starts %v", pids)
	}
	if st := e.m.Status(s1, []mcp.Declaration{a}, policy.Grants{}); st[0].State != mcp.StateConnected || st[0].Tools == 0 {
		t.Fatalf("Status: %+v", st)
	}

	if err := e.m.EvictScope(ctx, s2, "child_1"); err != nil {
		t.Fatal(err)
	}
	if pidAlive(pids[2]) || !pidAlive(pids[0]) || !pidAlive(pids[1]) {
		t.Fatalf("EvictScope: alive %v %v %v", pidAlive(pids[0]), pidAlive(pids[1]), pidAlive(pids[2]))
	}
	if err := e.m.EvictSession(ctx, s1); err != nil {
		t.Fatal(err)
	}
	if pidAlive(pids[0]) || !pidAlive(pids[1]) {
		t.Fatal("EvictSession closed the wrong session")
	}
	tc1 := e.turn(s1, "mcp.connect:*", "mcp.call:*")
	if r := call(t, ctx, tc1, defs1, "a__echo", map[string]any{"text": "x"}); r.ModelView != "MCP server is not connected for tool: a__echo" {
		t.Fatalf("evicted entry: %+v", r)
	}
	if r := call(t, ctx, e.turn(s2, "mcp.connect:*", "mcp.call:*"), defs2, "a__echo", map[string]any{"text": "x"}); r.ModelView != "echo: x" {
		t.Fatalf("other session: %+v", r)
	}
	if st := e.m.Status(s1, []mcp.Declaration{a}, policy.Grants{}); st[0].State != mcp.StateNotConnected {
		t.Fatalf("Status after eviction: %+v", st)
	}
	// No declarations evicts the session's state.
	e.prepare(ctx, e.turn(s2, "mcp.connect:*"), g.fn)
	eventually(t, 5*time.Second, "s2's server to end", func() bool { return !pidAlive(pids[1]) })
}

func TestCloseReapsTheWholeTree(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	d, state := e.stdioDecl("demo", "")
	tc := e.turn(sessionID(), "mcp.connect:demo", "mcp.call:demo")
	defs, _ := e.prepare(context.Background(), tc, newGate().fn, d)
	res := call(t, context.Background(), tc, defs, "demo__spawn", nil)
	child := strings.TrimSpace(res.ModelView)
	if res.Status != demiurge.EffectSucceeded || !pidAlive(child) {
		t.Fatalf("spawn: %+v", res)
	}
	server := starts(t, state)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if pidAlive(server) || pidAlive(child) {
		t.Fatalf("after Close: server alive %v, grandchild alive %v", pidAlive(server), pidAlive(child))
	}
	if _, err := os.Stat("/proc/" + server); err == nil {
		t.Fatalf("server %s not reaped", server)
	}
	// Closed: preparation contributes nothing.
	if defs, sts := e.prepare(context.Background(), tc, newGate().fn, d); len(defs) != 0 || status(t, sts, "demo").Error != "MCP runtime is closed" {
		t.Fatalf("after Close: %v %+v", names(defs), sts)
	}
}

func TestListChangedRefreshesNextTurnOnly(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	d, state := e.stdioDecl("demo", "")
	g := newGate()
	tc := e.turn(sessionID(), "mcp.connect:demo", "mcp.call:demo")
	ctx := context.Background()
	defs, _ := e.prepare(ctx, tc, g.fn, d)
	cat, err := effect.Prepare(effect.Sources{CoreID: tc.CoreID, Revision: tc.CoreRevision, MCP: defs})
	if err != nil {
		t.Fatal(err)
	}
	before := cat.Definitions()
	if r := call(t, ctx, tc, defs, "demo__add_tool", map[string]any{"name": "fresh"}); r.ModelView != "added fresh" {
		t.Fatalf("add_tool: %+v", r)
	}
	if hasName(defs, "demo__fresh") || len(cat.Definitions()) != len(before) {
		t.Fatal("the current turn's catalog changed")
	}
	var defs2 []effect.Definition
	eventually(t, 3*time.Second, "the next turn to list the new tool", func() bool {
		defs2, _ = e.prepare(ctx, tc, g.fn, d)
		return hasName(defs2, "demo__fresh")
	})
	if g.count("demo") != 1 || len(starts(t, state)) != 1 {
		t.Fatalf("re-listing reconnected: gate %d, starts %v", g.count("demo"), starts(t, state))
	}
	if r := call(t, ctx, tc, defs2, "demo__fresh", nil); r.ModelView != "added tool fresh" {
		t.Fatalf("fresh: %+v", r)
	}
}

func TestBadSchemaDropsOnlyThatTool(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	d, _ := e.stdioDecl("demo", "", "-mode", testserver.ModeBadSchema)
	tc := e.turn(sessionID(), "mcp.connect:demo")
	defs, sts := e.prepare(context.Background(), tc, newGate().fn, d)
	st := status(t, sts, "demo")
	if hasName(defs, "demo__bad_schema") || !hasName(defs, "demo__echo") || !slices.Equal(st.Skipped, []string{"bad_schema: invalid input schema"}) {
		t.Fatalf("defs %v, status %+v", names(defs), st)
	}
	if _, err := effect.Prepare(effect.Sources{CoreID: "assistant", Revision: "rev1", MCP: defs}); err != nil {
		t.Fatalf("catalog: %v", err)
	}
}

func TestCollidingNamesAndFilters(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	d, _ := e.stdioDecl("my.srv", "tools:\n  include: [\"*\"]\n  exclude: [\"t*\", echo]\n", "-mode", testserver.ModeCollide, "-tools", "3")
	d2, _ := e.stdioDecl("my-srv", "tools:\n  include: [echo]\n")
	tc := e.turn(sessionID(), "mcp.connect:*")
	defs, _ := e.prepare(context.Background(), tc, newGate().fn, d, d2)
	got := names(defs)
	for _, want := range []string{"my-srv__A-B", "my-srv__a-b-2", "my-srv__a-b-3", "my-srv__tool-9lives", "my-srv-2__echo"} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %s in %v", want, got)
		}
	}
	for _, n := range got {
		if len(n) > mcp.MaxToolNameLen || strings.HasPrefix(n, "my-srv__t0") || n == "my-srv__echo" {
			t.Errorf("unexpected name %s", n)
		}
	}
	if !slices.Contains(got, "my-srv__"+strings.Repeat("long", 20)[:56]) {
		t.Errorf("long name not cut to 64: %v", got)
	}
}

func TestCollisionWithBuiltinNamesBothProvenances(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	d, _ := e.stdioDecl("demo", "")
	defs, _ := e.prepare(context.Background(), e.turn(sessionID(), "mcp.connect:demo"), newGate().fn, d)
	builtin := effect.Definition{Name: "demo__echo", Source: effect.SourceBuiltin, Provenance: "builtin:demo__echo"}
	_, err := effect.Prepare(effect.Sources{CoreID: "assistant", Revision: "rev1", Builtins: []effect.Definition{builtin}, MCP: defs})
	if err == nil || !strings.Contains(err.Error(), "builtin:demo__echo conflicts with mcp:demo/echo") {
		t.Fatalf("collision: %v", err)
	}
}

func TestStderrIsBoundedRedactedAndPrivate(t *testing.T) {
	requireLinux(t)
	e := newEnv(t, func(o *mcp.Options) {
		o.Getenv = func(k string) string {
			if k == "HOST_TOKEN" {
				return "stderr-secret-789"
			}
			return ""
		}
	})
	d, state := e.stdioDecl("noisy", "env: {DEMO_TOKEN: \"${HOST_TOKEN}\"}\nconnect_timeout_seconds: 10\n", "-mode", testserver.ModeFloodStderr)
	healthy, _ := e.stdioDecl("healthy", "")
	tc := e.turn(sessionID(), "mcp.connect:*", "secret.bind:HOST_TOKEN")
	defs, sts := e.prepare(context.Background(), tc, newGate().fn, d, healthy)
	if status(t, sts, "noisy").State != mcp.StateConnected || !hasName(defs, "noisy__echo") || !hasName(defs, "healthy__echo") {
		t.Fatalf("a stderr flood blocked the server: %+v", sts)
	}
	server := starts(t, state)[0]
	if err := e.m.EvictSession(context.Background(), tc.SessionID); err != nil {
		t.Fatal(err)
	}
	if pidAlive(server) {
		t.Fatal("server alive after eviction")
	}
	path := filepath.Join(e.logDir, mcp.StderrLogName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	section := log[strings.Index(log, "===== MCP server 'noisy' stderr =====\n"):]
	if strings.Contains(log, "stderr-secret-789") || !strings.Contains(section, "token in stderr: <redacted:mcp.env:DEMO_TOKEN>") {
		t.Fatalf("stderr not redacted: %.200s", section)
	}
	if !strings.Contains(section, "eeee\n...[stderr capture truncated]\n") {
		t.Fatal("no truncation line")
	}
	if len(b) > 3*12000+1000 {
		t.Fatalf("log is %d bytes: capture not bounded", len(b))
	}
	for p, want := range map[string]os.FileMode{e.logDir: 0o700, path: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s mode %v, want %v (%v)", p, fi.Mode().Perm(), want, err)
		}
	}
}

func TestDiscoveryConcurrencyIsBounded(t *testing.T) {
	requireLinux(t)
	const delay = 400 * time.Millisecond
	e := newEnv(t, func(o *mcp.Options) { o.MaxConcurrentConnects = 2 })
	var decls []mcp.Declaration
	for _, id := range []string{"s1", "s2", "s3", "s4"} {
		d, _ := e.stdioDecl(id, "", "-init-delay", delay.String())
		decls = append(decls, d)
	}
	start := time.Now()
	defs, _ := e.prepare(context.Background(), e.turn(sessionID(), "mcp.connect:*"), newGate().fn, decls...)
	wall := time.Since(start)
	if len(defs) == 0 || wall < 2*delay {
		t.Fatalf("4 servers with 2 slots took %s, want at least %s", wall, 2*delay)
	}
}

func TestStatusAndCheck(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	ok, okState := e.stdioDecl("ok", "")
	bad, _ := e.stdioDecl("bad", "connect_timeout_seconds: 0.5\n", "-mode", testserver.ModeHangInitialize)
	off := e.decl("off", "command: x\nenabled: false\n")
	decls := []mcp.Declaration{ok, bad, off}
	if st := e.m.Status("nobody", decls, policy.Grants{}); st[0].State != mcp.StateNotConnected || st[2].State != mcp.StateDisabled {
		t.Fatalf("Status before any turn: %+v", st)
	}
	sts := e.m.Check(context.Background(), decls, mcp.CheckOptions{Workspace: e.workspace, Gate: mcp.AllowOperator})
	if sts[0].State != mcp.StateConnected || !slices.Contains(sts[0].ToolNames, "ok__echo") || sts[0].Tools != len(sts[0].ToolNames) {
		t.Fatalf("check ok: %+v", sts[0])
	}
	if sts[1].State != mcp.StateFailed || sts[1].Error != "MCP discovery timed out after 0.5s" || sts[2].State != mcp.StateDisabled {
		t.Fatalf("check: %+v", sts)
	}
	if pid := starts(t, okState)[0]; pidAlive(pid) {
		t.Fatal("Check left the server running")
	}
	b, _ := json.Marshal(sts[0])
	if !strings.Contains(string(b), `"state":"connected"`) || strings.Contains(string(b), "retry_after") {
		t.Fatalf("json: %s", b)
	}
	denied := e.decl("strict", "command: x\napproval_policy: deny\n")
	if sts := e.m.Check(context.Background(), []mcp.Declaration{denied}, mcp.CheckOptions{Workspace: e.workspace, Gate: mcp.AllowOperator}); sts[0].State != mcp.StateDenied {
		t.Fatalf("deny policy: %+v", sts[0])
	}
}
