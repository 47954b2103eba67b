package builtin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/redact"
)

// termEnv is a terminal test environment: the file tools' env plus a real
// process manager, a private home per session, a Host environment for
// secret bindings, and the real dispatcher with an approval runtime.
type termEnv struct {
	*env
	artifacts string
	hostEnv   map[string]string
	approver  *countingApprover
	rt        *effect.Runtime
	policy    string // the terminal entry's (folded) approval policy
}

// countingApprover answers every question with decide (allow once by
// default) after delay, and counts the questions.
type countingApprover struct {
	asked  atomic.Int32
	decide string
	delay  time.Duration
	during func() // runs while the operator decides, when set
	last   atomic.Pointer[effect.ApprovalRequest]
}

func (a *countingApprover) Approve(ctx context.Context, req effect.ApprovalRequest) (string, error) {
	a.asked.Add(1)
	a.last.Store(&req)
	if a.during != nil {
		a.during()
	}
	if a.delay > 0 {
		select {
		case <-time.After(a.delay):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if a.decide == "" {
		return effect.DecisionAllowOnce, nil
	}
	return a.decide, nil
}

func newTermEnv(t *testing.T, grants ...string) *termEnv {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the terminal runs POSIX shells")
	}
	e := &termEnv{env: newEnv(t), hostEnv: map[string]string{}, approver: &countingApprover{}, policy: effect.ApprovalPrompt}
	e.artifacts = filepath.Join(e.home, "runtime", "artifacts")
	mgr, err := process.NewManager(process.ManagerOptions{ArtifactRoot: e.artifacts, KillGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := mgr.Close(ctx); err != nil {
			t.Errorf("closing the process manager: %v", err)
		}
	})
	e.deps.Processes = mgr
	e.deps.PrivateHome = func(sessionID string) string {
		sum := sha256.Sum256([]byte(sessionID))
		return filepath.Join(e.home, "runtime", "terminal-home", hex.EncodeToString(sum[:16]))
	}
	e.deps.Getenv = func(name string) string { return e.hostEnv[name] }
	e.tc.Grants = policy.NewGrants(append([]string{"fs.read", "fs.write", "terminal.exec"}, grants...), nil)
	e.tc.Approver = e.approver
	e.tc.Secrets = effect.NewSecrets()
	e.rt = effect.NewRuntime(effect.Options{Timeout: 5 * time.Minute, Approvals: effect.NewApprovalRuntime(effect.ApprovalOptions{})})
	return e
}

// exec runs one terminal call through the real dispatcher.
func (e *termEnv) exec(args map[string]any) demiurge.EffectResult {
	e.t.Helper()
	return e.execCtx(context.Background(), args)
}

func (e *termEnv) execCtx(ctx context.Context, args map[string]any) demiurge.EffectResult {
	e.t.Helper()
	var defs []effect.Definition
	for _, d := range builtin.Definitions([]string{"coding"}, e.deps) {
		if d.Name == "terminal" {
			d.ApprovalPolicy = e.policy
			defs = append(defs, d)
		}
	}
	cat, err := effect.NewCatalog(e.tc.CoreID, e.tc.CoreRevision, defs)
	if err != nil {
		e.t.Fatal(err)
	}
	req, ok := cat.Bind(demiurge.ToolCall{ID: "call_t", Name: "terminal", Arguments: jsonArgs(e.t, args)}, demiurge.OriginModel)
	if !ok {
		e.t.Fatal("terminal is not in the catalog")
	}
	return e.rt.Execute(ctx, cat, req, e.tc)
}

// num returns a JSON number of a result's data as float64, whatever Go
// type the adapter used.
func num(v any) float64 {
	raw, _ := json.Marshal(v)
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return -1
	}
	return f
}

func wantStatus(t *testing.T, res demiurge.EffectResult, status, view string) {
	t.Helper()
	if res.Status != status || res.ModelView != view {
		t.Fatalf("status=%s view=%q, want %s %q", res.Status, res.ModelView, status, view)
	}
}

// TestTerminalGuardAndApproval: a blocked command never reaches the
// operator, a command the guard does not allow always asks, and a command
// the guard allows runs without asking unless the folded policy is deny
// or the call carries an overlay (spec tool-runtime §7.5).
func TestTerminalGuardAndApproval(t *testing.T) {
	for _, tt := range []struct {
		name    string
		policy  string
		command string
		status  string
		view    string
		asked   int32
	}{
		{"block never asks", effect.ApprovalPrompt, "rm -rf /", demiurge.EffectDenied, "", 0},
		{"block never asks under auto", effect.ApprovalAuto, "rm -rf /", demiurge.EffectDenied, "", 0},
		{"prompt asks", effect.ApprovalPrompt, "printf hi > out.txt", demiurge.EffectSucceeded, "exit_code: 0", 1},
		{"prompt asks even under auto", effect.ApprovalAuto, "printf hi > out.txt", demiurge.EffectSucceeded, "exit_code: 0", 1},
		{"allow runs under prompt", effect.ApprovalPrompt, "echo hi", demiurge.EffectSucceeded, "exit_code: 0\nstdout:\nhi\n", 0},
		{"allow pipeline runs under prompt", effect.ApprovalPrompt, "printf 'b\\na\\n' | sort | head -1", demiurge.EffectSucceeded, "exit_code: 0\nstdout:\na\n", 0},
		{"unknown command asks under prompt", effect.ApprovalPrompt, "id -u", demiurge.EffectSucceeded, "", 1},
		{"allow runs under auto", effect.ApprovalAuto, "echo hi", demiurge.EffectSucceeded, "exit_code: 0\nstdout:\nhi\n", 0},
		{"deny policy never runs", effect.ApprovalDeny, "echo hi", demiurge.EffectDenied, "approval denied: terminal command in .", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newTermEnv(t)
			e.policy = tt.policy
			res := e.exec(map[string]any{"command": tt.command})
			if res.Status != tt.status {
				t.Fatalf("status=%s (%q), want %s", res.Status, res.ModelView, tt.status)
			}
			if tt.view != "" && res.ModelView != tt.view {
				t.Fatalf("view=%q, want %q", res.ModelView, tt.view)
			}
			if got := e.approver.asked.Load(); got != tt.asked {
				t.Fatalf("approver asked %d times, want %d", got, tt.asked)
			}
			if tt.command == "rm -rf /" {
				if !strings.HasPrefix(res.ModelView, "terminal command blocked: ") || res.Data["denial"] != "policy" || res.Data["executionStarted"] != false {
					t.Fatalf("blocked result %q %v", res.ModelView, res.Data)
				}
				guard, _ := res.Data["command_guard"].(map[string]any)
				if guard["action"] != "block" || guard["rule_key"] != "rm-critical-path" {
					t.Fatalf("command_guard=%v", guard)
				}
			}
		})
	}
}

func TestTerminalApprovalRequestAndDenial(t *testing.T) {
	e := newTermEnv(t)
	mkdir(t, e.path("sub"))
	e.approver.decide = effect.DecisionDeny
	res := e.exec(map[string]any{"command": "touch x", "cwd": "sub"})
	wantStatus(t, res, demiurge.EffectDenied, "approval denied: terminal command in sub")
	if _, err := os.Stat(e.path("sub/x")); !os.IsNotExist(err) {
		t.Fatal("a denied command ran")
	}
	req := e.approver.last.Load()
	if req == nil || req.Action != "terminal.exec" || req.Summary != "terminal command in sub" || req.Risk != "high" || req.Capability != "terminal.exec" {
		t.Fatalf("approval request %+v", req)
	}
	if real, _ := filepath.EvalSymlinks(e.path("sub")); req.Target != real {
		t.Fatalf("target %q, want the absolute cwd %q", req.Target, real)
	}
}

// TestTerminalSessionGrants: an "always allow for this session" answer
// covers the same command again, but never a call that binds a secret or
// sets an overlay.
func TestTerminalSessionGrants(t *testing.T) {
	e := newTermEnv(t, "secret.bind:GH_TOKEN")
	e.hostEnv["GH_TOKEN"] = "ghp_sessiongrant_value_123"
	e.approver.decide = effect.DecisionAllowSession
	for i, tt := range []struct {
		args      map[string]any
		wantAsked int32
	}{
		{map[string]any{"command": "printf a > a.txt"}, 1},
		{map[string]any{"command": "printf a > a.txt"}, 1}, // answered by the grant
		{map[string]any{"command": "printf b > a.txt"}, 2}, // another exact command
		{map[string]any{"command": "true", "secret_bindings": []any{map[string]any{"source": "env:GH_TOKEN"}}}, 3},
		{map[string]any{"command": "true", "secret_bindings": []any{map[string]any{"source": "env:GH_TOKEN"}}}, 4},
		{map[string]any{"command": "true", "env": map[string]any{"A": "1"}}, 5},
		{map[string]any{"command": "true", "env": map[string]any{"A": "1"}}, 6},
	} {
		res := e.exec(tt.args)
		if res.Status != demiurge.EffectSucceeded {
			t.Fatalf("call %d: status=%s %q", i, res.Status, res.ModelView)
		}
		if got := e.approver.asked.Load(); got != tt.wantAsked {
			t.Fatalf("call %d %v: asked %d times, want %d", i, tt.args, got, tt.wantAsked)
		}
	}
}

func TestTerminalRefusalsBeforeApproval(t *testing.T) {
	e := newTermEnv(t, "secret.bind:*", "secret.bind:OK_TOKEN")
	e.write("file.txt", "x")
	mkdir(t, e.path(".git"))
	for _, tt := range []struct {
		args   map[string]any
		status string
		view   string
	}{
		{map[string]any{"command": "ls", "cwd": "../"}, demiurge.EffectDenied, "path escapes workspace: ../"},
		{map[string]any{"command": "ls", "cwd": "/"}, demiurge.EffectDenied, "path escapes workspace: /"},
		{map[string]any{"command": "ls", "cwd": ".git"}, demiurge.EffectDenied, "sensitive path denied: .git"},
		{map[string]any{"command": "ls", "cwd": "missing"}, demiurge.EffectInvalid, "cwd does not exist: missing"},
		{map[string]any{"command": "ls", "cwd": "file.txt"}, demiurge.EffectInvalid, "cwd is not a directory: file.txt"},
		{map[string]any{"command": "   "}, demiurge.EffectInvalid, "command is required"},
		{map[string]any{"command": "ls", "env": map[string]any{"1BAD": "x"}}, demiurge.EffectInvalid, "invalid terminal environment name: 1BAD"},
		{map[string]any{"command": "ls", "background": true}, demiurge.EffectInvalid, "background terminal is not available: no task worker is configured"},
		{map[string]any{"command": "ls", "background": true, "secret_bindings": []any{map[string]any{"source": "env:OK_TOKEN"}}},
			demiurge.EffectInvalid, "secret_bindings are not supported for background terminal commands"},
		// secret.bind:* is granted, and still grants no secret.
		{map[string]any{"command": "ls", "secret_bindings": []any{map[string]any{"source": "env:GH_TOKEN"}}},
			demiurge.EffectDenied, "exact capability denied: secret.bind:GH_TOKEN for host"},
		{map[string]any{"command": "ls", "secret_bindings": []any{map[string]any{"source": "env:OK_TOKEN", "target": "LD_PRELOAD"}}},
			demiurge.EffectInvalid, "secret_bindings[0].target is a reserved execution environment target: LD_PRELOAD"},
		{map[string]any{"command": "ls", "secret_bindings": []any{map[string]any{"source": "env:OK_TOKEN", "target": "path"}}},
			demiurge.EffectInvalid, "secret_bindings[0].target is a reserved execution environment target: path"},
		{map[string]any{"command": "ls", "secret_bindings": []any{map[string]any{"source": "env:OK_TOKEN", "target": "DYLD_INSERT_LIBRARIES"}}},
			demiurge.EffectInvalid, "secret_bindings[0].target is a reserved execution environment target: DYLD_INSERT_LIBRARIES"},
		{map[string]any{"command": "ls", "secret_bindings": []any{map[string]any{"source": "env:OK_TOKEN", "target": "BASH_ENV"}}},
			demiurge.EffectInvalid, "secret_bindings[0].target is a reserved execution environment target: BASH_ENV"},
		{map[string]any{"command": "ls", "timeout_seconds": 5, "secret_bindings": []any{map[string]any{"source": "env:OK_TOKEN", "expires_in_seconds": 6}}},
			demiurge.EffectInvalid, "secret_bindings[0].expires_in_seconds must be between 1 and the terminal timeout (5)"},
		{map[string]any{"command": "ls", "secret_bindings": []any{map[string]any{"source": "OK_TOKEN"}}},
			demiurge.EffectInvalid, "secret_bindings[0].source must use env:<NAME>"},
		{map[string]any{"command": "ls", "secret_bindings": []any{map[string]any{"source": "env:OK_TOKEN"}, map[string]any{"source": "env:OK_TOKEN"}}},
			demiurge.EffectInvalid, "duplicate secret binding target: OK_TOKEN"},
	} {
		res := e.exec(tt.args)
		if res.Status != tt.status || res.ModelView != tt.view {
			t.Errorf("%v: status=%s view=%q, want %s %q", tt.args, res.Status, res.ModelView, tt.status, tt.view)
		}
		if res.ExecutionStarted || res.Data["executionStarted"] != false {
			t.Errorf("%v: executionStarted=%v", tt.args, res.Data["executionStarted"])
		}
	}
	if got := e.approver.asked.Load(); got != 0 {
		t.Fatalf("approver asked %d times for refused calls", got)
	}
	if _, err := os.Stat(e.deps.PrivateHome(e.tc.SessionID)); !os.IsNotExist(err) {
		t.Fatal("the private home was created for a refused call")
	}
}

// TestTerminalEnvironment: a command sees the allowlist only, with a
// private HOME and TMPDIR; no credential of the Host reaches it.
// TestTerminalRechecksCwdAfterApproval: the call is prepared once, and
// the working directory, which can go while the operator decides, is
// checked again before the command runs.
func TestTerminalRechecksCwdAfterApproval(t *testing.T) {
	e := newTermEnv(t)
	mkdir(t, e.path("sub"))
	e.approver.during = func() {
		if err := os.Remove(e.path("sub")); err != nil {
			t.Error(err)
		}
	}
	res := e.exec(map[string]any{"command": "touch ran", "cwd": "sub"})
	wantStatus(t, res, demiurge.EffectInvalid, "cwd does not exist: sub")
	if e.approver.asked.Load() != 1 || res.ExecutionStarted {
		t.Fatalf("asked %d started %v, want one question and nothing run", e.approver.asked.Load(), res.ExecutionStarted)
	}
}

// TestTerminalArgumentShapes: arguments of the wrong shape never reach the
// terminal's own checks; the schema refuses them before anything runs or
// anyone is asked.
func TestTerminalArgumentShapes(t *testing.T) {
	e := newTermEnv(t, "secret.bind:A")
	for _, args := range []map[string]any{
		{"command": "true", "env": "A=1"},
		{"command": "true", "env": []any{"A"}},
		{"command": "true", "secret_bindings": map[string]any{}},
		{"command": "true", "secret_bindings": []any{"env:A"}},
		{"command": "true", "secret_bindings": []any{map[string]any{"source": "env:A", "target": 1}}},
		{"command": "true", "secret_bindings": []any{map[string]any{"source": "env:A", "expires_in_seconds": 1.5}}},
		{"command": "true", "secret_bindings": []any{map[string]any{"source": "env:A", "expires_in_seconds": "5"}}},
		{"command": "true", "secret_bindings": []any{map[string]any{"source": "env:A", "expires_in_seconds": true}}},
	} {
		res := e.exec(args)
		if res.Status != demiurge.EffectInvalid || res.ExecutionStarted || !strings.HasPrefix(res.ModelView, "invalid arguments for terminal: at /") {
			t.Errorf("%v: %s %q, want the schema's refusal", args, res.Status, res.ModelView)
		}
	}
	if e.approver.asked.Load() != 0 {
		t.Fatal("an operator was asked about arguments of the wrong shape")
	}
}

func TestTerminalEnvironment(t *testing.T) {
	e := newTermEnv(t)
	creds := map[string]string{
		"OPENAI_API_KEY":        "sk-openai-host-credential-0001",
		"AWS_SECRET_ACCESS_KEY": "aws-host-credential-0002",
		"ANTHROPIC_API_KEY":     "sk-ant-host-credential-0003",
		"DEMIURGE_TIMEZONE":     "Mars/Olympus",
	}
	for k, v := range creds {
		t.Setenv(k, v)
		e.hostEnv[k] = v
	}
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("HOME", "/root-home-of-the-host")

	res := e.exec(map[string]any{"command": "env", "env": map[string]any{"EXTRA_FLAG": 7, "DEMIURGE_TIMEZONE": "x"}})
	if res.Status != demiurge.EffectSucceeded {
		t.Fatalf("status=%s %q", res.Status, res.ModelView)
	}
	out := res.ModelView
	for k, v := range creds {
		if strings.Contains(out, k) || strings.Contains(out, v) {
			t.Errorf("%s reached the command:\n%s", k, out)
		}
	}
	home := e.deps.PrivateHome(e.tc.SessionID)
	for _, want := range []string{"HOME=" + home + "\n", "TMPDIR=" + filepath.Join(home, "tmp") + "\n", "LANG=C.UTF-8\n", "EXTRA_FLAG=7\n", "PATH="} {
		if !strings.Contains(out, want) {
			t.Errorf("env output lacks %q:\n%s", want, out)
		}
	}
	info, err := os.Stat(home)
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("private home %v mode %v, want 0700", err, info)
	}
	audit := res.Data["audit"].(map[string]any)
	keys, _ := json.Marshal(audit["env_keys"])
	if !strings.Contains(string(keys), `"EXTRA_FLAG"`) || !strings.Contains(string(keys), `"HOME"`) || strings.Contains(string(keys), "/") {
		t.Fatalf("env_keys=%s", keys)
	}
	if got, _ := json.Marshal(audit["overlay_env_keys"]); string(got) != `["DEMIURGE_TIMEZONE","EXTRA_FLAG"]` {
		t.Fatalf("overlay_env_keys=%s", got)
	}
}

// TestTerminalSecretBinding: a bound value reaches the command and no
// view, tail or artifact.
func TestTerminalSecretBinding(t *testing.T) {
	e := newTermEnv(t, "secret.bind:GH_TOKEN")
	const value = "ghp_bound_secret_value_4242"
	e.hostEnv["GH_TOKEN"] = value
	t.Setenv("GH_TOKEN", "os-level-must-not-be-used")

	res := e.exec(map[string]any{
		// The marker shows only where the exact value was printed: it
		// proves the command received the value from Deps.Getenv.
		"command":         `printf '%s\n' "$TOKEN_FOR_TOOL"; printf 'err:%s' "$TOKEN_FOR_TOOL" >&2`,
		"secret_bindings": []any{map[string]any{"source": "env:GH_TOKEN", "target": "TOKEN_FOR_TOOL"}},
	})
	if res.Status != demiurge.EffectSucceeded {
		t.Fatalf("status=%s %q", res.Status, res.ModelView)
	}
	if want := "exit_code: 0\nstdout:\n<redacted:TOKEN_FOR_TOOL>\n\nstderr:\nerr:<redacted:TOKEN_FOR_TOOL>"; res.OperatorView != want {
		t.Fatalf("operator view %q, want %q", res.OperatorView, want)
	}
	views, _ := json.Marshal([]any{res.ModelView, res.OperatorView, res.Data, res.EventView, res.DurableView, res.DebugView})
	if strings.Contains(string(views), value) {
		t.Fatalf("a view holds the bound value: %s", views)
	}
	if !strings.Contains(string(views), `"capability":"secret.bind:GH_TOKEN"`) || !strings.Contains(string(views), `"expires_at"`) {
		t.Fatalf("binding audit missing: %s", views)
	}
	if e.approver.asked.Load() != 1 {
		t.Fatalf("asked %d times", e.approver.asked.Load())
	}
	// The artifact files hold the full streams, redacted.
	found := 0
	_ = filepath.WalkDir(e.artifacts, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		found++
		if strings.Contains(string(b), value) {
			t.Errorf("artifact %s holds the bound value", p)
		}
		if !strings.Contains(string(b), "<redacted:TOKEN_FOR_TOOL>") {
			t.Errorf("artifact %s lacks the marker: %q", p, b)
		}
		return nil
	})
	if found == 0 {
		t.Fatal("no artifact was stored")
	}
	// The turn knows the value now: every later view is redacted with it.
	later := e.tc.Secrets.Redactor().String("echo "+value, redact.Operator)
	if strings.Contains(later, value) {
		t.Fatalf("the turn's secret set does not know the bound value: %q", later)
	}
}

func TestTerminalSecretBindingAfterApproval(t *testing.T) {
	t.Run("source unset", func(t *testing.T) {
		e := newTermEnv(t, "secret.bind:MISSING")
		res := e.exec(map[string]any{"command": "true", "secret_bindings": []any{map[string]any{"source": "env:MISSING"}}})
		wantStatus(t, res, demiurge.EffectInvalid, "secret binding source is unavailable: env:MISSING")
		if e.approver.asked.Load() != 1 {
			t.Fatal("the value was read before approval")
		}
	})
	t.Run("expired while the operator decided", func(t *testing.T) {
		e := newTermEnv(t, "secret.bind:GH_TOKEN")
		e.hostEnv["GH_TOKEN"] = "ghp_expiring_value_1"
		e.approver.delay = 1100 * time.Millisecond
		res := e.exec(map[string]any{"command": "true", "secret_bindings": []any{map[string]any{"source": "env:GH_TOKEN", "expires_in_seconds": 1}}})
		wantStatus(t, res, demiurge.EffectInvalid, "secret binding expired before execution: env:GH_TOKEN")
	})
	t.Run("expiry clamps the timeout", func(t *testing.T) {
		e := newTermEnv(t, "secret.bind:GH_TOKEN")
		e.hostEnv["GH_TOKEN"] = "ghp_expiring_value_2"
		start := time.Now()
		res := e.exec(map[string]any{"command": "sleep 20", "timeout_seconds": 30,
			"secret_bindings": []any{map[string]any{"source": "env:GH_TOKEN", "expires_in_seconds": 1}}})
		if res.Status != demiurge.EffectFailed || !strings.HasPrefix(res.ModelView, "exit_code: 124\ntimed_out: true") {
			t.Fatalf("status=%s %q", res.Status, res.ModelView)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("took %v", d)
		}
		audit := res.Data["audit"].(map[string]any)
		if audit["timeout_reason"] != "secret_binding_expiry" || num(audit["timeout_seconds"]) != 30 {
			t.Fatalf("audit=%v", audit)
		}
	})
}

// TestTerminalTimeoutKillsTermIgnoringCommand: the timeout ends a command
// that ignores SIGTERM, and the result says so per spec §7.7.
func TestTerminalTimeoutKillsTermIgnoringCommand(t *testing.T) {
	e := newTermEnv(t)
	e.policy = effect.ApprovalAuto
	start := time.Now()
	res := e.exec(map[string]any{"command": `trap '' TERM; printf started; sleep 30; printf never`, "timeout_seconds": 1})
	wantStatus(t, res, demiurge.EffectFailed, "exit_code: 124\ntimed_out: true\nstdout:\nstarted")
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("a TERM-ignoring command survived the timeout for %v", d)
	}
	if !res.ExecutionStarted || res.Data["timed_out"] != true || num(res.Data["exit_code"]) != 124 {
		t.Fatalf("data=%v", res.Data)
	}
	if res.Data["audit"].(map[string]any)["timeout_reason"] != "command_timeout" {
		t.Fatalf("audit=%v", res.Data["audit"])
	}
}

// TestTerminalCancellation: cancelling the turn ends the command's tree
// and the call reports cancelled, not a command result.
func TestTerminalCancellation(t *testing.T) {
	e := newTermEnv(t)
	e.policy = effect.ApprovalAuto
	marker := e.path("still-running")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	res := e.execCtx(ctx, map[string]any{"command": "sleep 3; touch " + marker})
	if res.Status != demiurge.EffectCancelled || !res.ExecutionStarted {
		t.Fatalf("status=%s started=%v %q", res.Status, res.ExecutionStarted, res.ModelView)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Fatalf("cancellation took %v", d)
	}
	time.Sleep(3 * time.Second)
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("the command outlived its cancellation")
	}
}

// TestTerminalOuterDeadline: when a deadline above the call's own ends the
// command, the result is still the command's, timed out.
func TestTerminalOuterDeadline(t *testing.T) {
	e := newTermEnv(t)
	e.policy = effect.ApprovalAuto
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	res := e.execCtx(ctx, map[string]any{"command": "printf partial; sleep 5", "timeout_seconds": 60})
	wantStatus(t, res, demiurge.EffectFailed, "exit_code: 124\ntimed_out: true\nstdout:\npartial")
}

// TestTerminalOutputFormat: golden contents of spec §7.7.
func TestTerminalOutputFormat(t *testing.T) {
	e := newTermEnv(t)
	e.policy = effect.ApprovalAuto
	e.approver.decide = effect.DecisionAllowOnce
	for _, tt := range []struct {
		command string
		status  string
		view    string
	}{
		{"true", demiurge.EffectSucceeded, "exit_code: 0"},
		{"printf 'hi\\n'", demiurge.EffectSucceeded, "exit_code: 0\nstdout:\nhi\n"},
		{"printf out; printf err >&2; exit 3", demiurge.EffectFailed, "exit_code: 3\nstdout:\nout\nstderr:\nerr"},
		{"printf err >&2; false", demiurge.EffectFailed, "exit_code: 1\nstderr:\nerr"},
		{"printf 'h\\303\\251'", demiurge.EffectSucceeded, "exit_code: 0\nstdout:\nhé"},
	} {
		res := e.exec(map[string]any{"command": tt.command})
		if res.Status != tt.status || res.ModelView != tt.view {
			t.Errorf("%s: status=%s view=%q, want %s %q", tt.command, res.Status, res.ModelView, tt.status, tt.view)
		}
		if !res.ExecutionStarted {
			t.Errorf("%s: executionStarted false", tt.command)
		}
	}

	// 13,000 characters: the note and the tail are exactly 12,000.
	res := e.exec(map[string]any{"command": `i=0; while [ $i -lt 130 ]; do printf '%099d\n' $i; i=$((i+1)); done`})
	if res.Status != demiurge.EffectSucceeded {
		t.Fatalf("status=%s %q", res.Status, res.ModelView)
	}
	const note = "...[truncated 1040 chars; showing tail]\n"
	body, ok := strings.CutPrefix(res.OperatorView, "exit_code: 0\nstdout:\n")
	if !ok || !strings.HasPrefix(body, note) || len(body) != 12000 || !strings.HasSuffix(body, "0129\n") {
		t.Fatalf("truncated stdout: %d chars, starts %q", len(body), body[:min(len(body), 60)])
	}
	stats := res.Data["output"].(map[string]any)["stdout"].(map[string]any)
	if num(stats["total_chars"]) != 13000 || num(stats["retained_chars"]) != float64(12000-len(note)) || stats["truncated"] != true {
		t.Fatalf("stdout stats=%v", stats)
	}
	for _, k := range []string{"spawn_id", "pid", "duration_ms"} {
		if _, ok := res.Data["process"].(map[string]any)[k]; !ok {
			t.Errorf("process view lacks %s: %v", k, res.Data["process"])
		}
	}
	if a, _ := res.Data["output_artifact"].(map[string]any); a == nil || a["streams"].(map[string]any)["stdout"] == nil {
		t.Errorf("no stdout artifact: %v", res.Data["output_artifact"])
	}
}

func TestTerminalUnavailable(t *testing.T) {
	e := newTermEnv(t)
	e.deps.Processes = nil
	res := e.exec(map[string]any{"command": "true"})
	wantStatus(t, res, demiurge.EffectInvalid, "terminal is not available: no process manager is configured")
	if e.approver.asked.Load() != 0 {
		t.Fatal("asked the operator for an unavailable tool")
	}
}

func TestTerminalSchema(t *testing.T) {
	var schema map[string]any
	for _, d := range builtin.Definitions([]string{"coding"}, builtin.Deps{}) {
		if d.Name == "terminal" {
			schema = d.Schema
			if d.Risk != "high" || d.Capability != "terminal.exec" || d.ApprovalPolicy != effect.ApprovalPrompt {
				t.Fatalf("metadata %s %s %s", d.Risk, d.Capability, d.ApprovalPolicy)
			}
		}
	}
	s := compileSchema(t, schema)
	for _, tt := range []struct {
		args  string
		valid bool
	}{
		{`{"command":"ls"}`, true},
		{`{"command":"ls","cwd":"a","timeout_seconds":120,"background":false,"env":{"A":"1","B":2},"secret_bindings":[{"source":"env:X","target":"Y","expires_in_seconds":5}]}`, true},
		{`{}`, false},
		{`{"command":"ls","timeout_seconds":121}`, false},
		{`{"command":"ls","env":"A=1"}`, false},
		{`{"command":"ls","env":{"A":{"x":1}}}`, false},
		{`{"command":"ls","secret_bindings":[{"target":"Y"}]}`, false},
		{`{"command":"ls","secret_bindings":[{"source":"env:X","value":"v"}]}`, false},
		{`{"command":"ls","extra":1}`, false},
	} {
		var v any
		if err := json.Unmarshal([]byte(tt.args), &v); err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(v); (err == nil) != tt.valid {
			t.Errorf("%s: valid=%v, want %v (%v)", tt.args, err == nil, tt.valid, err)
		}
	}
}
