package pyworker_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/pyworker"
	"github.com/demiurge/demiurge/sandbox"
	"github.com/demiurge/demiurge/starlark"
)

type fixture struct {
	pool    *pyworker.Pool
	coreDir string
	home    string
	log     []string
}

func newFixture(t *testing.T, settings sandbox.Settings) *fixture {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("python3 is required")
	}
	base := t.TempDir()
	procs, err := process.NewManager(process.ManagerOptions{ArtifactRoot: filepath.Join(base, "artifacts")})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{coreDir: filepath.Join(base, "home", "agents", "c"), home: filepath.Join(base, "home")}
	f.pool = pyworker.New(pyworker.Options{
		Processes: procs,
		Sandbox:   sandbox.Profile{Settings: settings, Hidden: []string{f.home}},
		Scratch:   func(key string) string { return filepath.Join(base, "home.private", "py", fmt.Sprintf("%x", len(key))) },
	})
	t.Cleanup(func() {
		_ = f.pool.Close(context.Background())
		_ = procs.Close(context.Background())
	})
	return f
}

func (f *fixture) write(t *testing.T, rel, src string) {
	t.Helper()
	p := filepath.Join(f.coreDir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ctxObject is a small ctx: a fact, a recording built-in, a denying one
// and a property.
func (f *fixture) ctxObject() *starlark.Object {
	counter := 0
	return starlark.NewObject("ctx", sl.StringDict{
		"slot_id": sl.String("s"),
		"input": starlark.NewDynamicObject("ctx.input", sl.StringDict{
			"raw_text": sl.String("hello"),
			"add_context": sl.NewBuiltin("add_context", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
				var content, role string = "", "system"
				if err := sl.UnpackArgs(b.Name(), args, kwargs, "content", &content, "role?", &role); err != nil {
					return nil, err
				}
				f.log = append(f.log, role+":"+content)
				counter++
				return starlark.NewObject("delivery", sl.StringDict{"delivery_id": sl.String("d1")}), nil
			}),
			"secret": sl.NewBuiltin("secret", func(*sl.Thread, *sl.Builtin, sl.Tuple, []sl.Tuple) (sl.Value, error) {
				return nil, demiurge.Errorf(demiurge.EUNAUTHORIZED, "capability denied: secret.read for agent/input/s")
			}),
		}, map[string]starlark.Property{
			"count": func() (sl.Value, error) { return sl.MakeInt(counter), nil },
		}),
	})
}

func (f *fixture) call(kind, rel string) starlark.ForeignCall {
	return starlark.ForeignCall{
		WorkerKey: "c@1", Core: "c", CoreDir: f.coreDir, Kind: kind,
		ModulePath: filepath.Join(f.coreDir, filepath.FromSlash(rel)), Function: map[string]string{starlark.ForeignSlot: "process", starlark.ForeignTool: "execute"}[kind],
		Component: filepath.ToSlash(filepath.Dir(rel)), Ctx: f.ctxObject(), Timeout: 20 * time.Second,
	}
}

func TestSlotCallsCtxAndImportsLib(t *testing.T) {
	f := newFixture(t, sandbox.Settings{})
	f.write(t, "agent/lib/helpers/__init__.py", "")
	f.write(t, "agent/lib/helpers/fmt.py", "def shout(s):\n    return s.upper() + '!'\n")
	f.write(t, "agent/input/s/module.py", `
from .helpers.fmt import shout
from demiurge.sdk import ToolResult

async def process(ctx):
    h = ctx.input.add_context(shout(ctx.input.raw_text), role="user")
    assert h.delivery_id == "d1", h
    ctx.input.add_context("n=%d" % ctx.input.count)
    try:
        ctx.input.secret()
    except PermissionError as e:
        ctx.input.add_context("denied: " + str(e))
    return 7
`)
	ret, err := f.pool.CallForeign(context.Background(), f.call(starlark.ForeignSlot, "agent/input/s/module.py"))
	if err != nil {
		t.Fatal(err)
	}
	if ret.ReturnType != "int" {
		t.Errorf("return type = %q, want int", ret.ReturnType)
	}
	want := []string{"user:HELLO!", "system:n=1", "system:denied: capability denied: secret.read for agent/input/s"}
	if strings.Join(f.log, "|") != strings.Join(want, "|") {
		t.Errorf("log = %q, want %q", f.log, want)
	}
}

func TestToolResultAndException(t *testing.T) {
	f := newFixture(t, sandbox.Settings{})
	f.write(t, "agent/tools/t/module.py", `
from demiurge.sdk import ToolResult

def execute(ctx, args):
    if args.get("fail"):
        return {}["missing"]
    return ToolResult(content="n=%d" % args["n"], display_output="shown")
`)
	c := f.call(starlark.ForeignTool, "agent/tools/t/module.py")
	c.Args = map[string]any{"n": 3}
	ret, err := f.pool.CallForeign(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if ret.Tool["content"] != "n=3" || ret.Tool["display_output"] != "shown" {
		t.Errorf("tool result = %v", ret.Tool)
	}
	c.Args = map[string]any{"fail": true}
	_, err = f.pool.CallForeign(context.Background(), c)
	if got := demiurge.ErrorMessage(err); got != "agent/tools/t/module.py:6: KeyError: 'missing'" {
		t.Errorf("error = %q", got)
	}
}

func TestCrashTimeoutAndMalformedRestartTheWorker(t *testing.T) {
	f := newFixture(t, sandbox.Settings{})
	f.write(t, "agent/input/s/module.py", `
import os, sys, time
def process(ctx):
    mode = ctx.input.raw_text
    if mode == "crash":
        os._exit(9)
    if mode == "hang":
        time.sleep(600)
    if mode == "garbage":
        sys.__stdout__.write("not json\n"); sys.__stdout__.flush()
        time.sleep(600)
`)
	run := func(mode string, timeout time.Duration) error {
		c := f.call(starlark.ForeignSlot, "agent/input/s/module.py")
		c.Ctx = starlark.NewObject("ctx", sl.StringDict{"input": starlark.NewObject("ctx.input", sl.StringDict{"raw_text": sl.String(mode)})})
		c.Timeout = timeout
		_, err := f.pool.CallForeign(context.Background(), c)
		return err
	}
	if err := run("ok", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	pid := f.pool.PID("c@1")
	if err := run("crash", 20*time.Second); demiurge.ErrorCode(err) != demiurge.EUNAVAILABLE {
		t.Errorf("crash: %v", err)
	}
	if err := run("hang", 300*time.Millisecond); demiurge.ErrorCode(err) != demiurge.ETIMEOUT {
		t.Errorf("hang: %v", err)
	}
	if err := run("garbage", 20*time.Second); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Errorf("garbage: %v", err)
	}
	if err := run("ok", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := f.pool.PID("c@1"); got == pid || got == 0 {
		t.Errorf("worker pid %d after faults, first %d: want a fresh worker", got, pid)
	}
}

// TestContainment: authored Python cannot write outside its scratch, sees
// none of the Host's environment, has no network and cannot fork-bomb, not
// even around the worker's audit hook (the kernel refuses the fork: this
// test runs as root here, where RLIMIT_NPROC binds nothing).
func TestContainment(t *testing.T) {
	t.Setenv("DEMIURGE_TEST_SECRET", "s3cret")
	f := newFixture(t, sandbox.Settings{})
	f.write(t, "agent/input/s/module.py", `
import os, socket, errno
def process(ctx):
    out = []
    try:
        open("/etc/passwd", "w")
        out.append("passwd:written")
    except OSError as e:
        out.append("passwd:" + type(e).__name__)
    out.append("env:" + ",".join(sorted(k for k in os.environ if "SECRET" in k or k.startswith("DEMIURGE_TEST"))))
    out.append("core:" + ("visible" if os.path.exists(CORE) else "hidden"))
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", PORT))
        out.append("socket:connected")
    except OSError as e:
        out.append("socket:" + type(e).__name__)
    finally:
        s.close()
    kids = []
    failed = False
    for _ in range(50):
        try:
            pid = os.fork()
        except OSError:
            failed = True
            break
        except PermissionError:
            failed = True
            break
        if pid == 0:
            import time
            time.sleep(30)
            os._exit(0)
        kids.append(pid)
    out.append("fork:" + ("limited" if failed else "unlimited"))
    # Around the audit hook: subprocess calls sys.audit through its module
    # global, and _posixsubprocess forks in C without an audit event of its
    # own; only the kernel can refuse this one.
    import subprocess, sys, types
    class Quiet(types.ModuleType):
        def __getattr__(self, name):
            return getattr(sys, name)
    quiet = Quiet("sys")
    quiet.audit = lambda *a: None
    subprocess.sys = quiet
    try:
        r = subprocess.run(["/bin/echo", "escaped"], capture_output=True)
        out.append("bypass:" + r.stdout.decode().strip())
    except OSError as e:
        out.append("bypass:" + errno.errorcode.get(e.errno, "?"))
    ctx.input.add_context(" ".join(out))
`)
	ln, err := listenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	src, _ := os.ReadFile(filepath.Join(f.coreDir, "agent/input/s/module.py"))
	src = []byte(strings.NewReplacer("CORE", fmt.Sprintf("%q", filepath.Join(f.coreDir, "agent/input/s/module.py")), "PORT", fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)).Replace(string(src)))
	f.write(t, "agent/input/s/module.py", string(src))

	if _, err := f.pool.CallForeign(context.Background(), f.call(starlark.ForeignSlot, "agent/input/s/module.py")); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(f.log, "")
	for _, want := range []string{"env:", "core:hidden", "fork:limited", "bypass:EPERM"} {
		if !strings.Contains(got, want+" ") && !strings.HasSuffix(got, want) {
			t.Errorf("containment report %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "passwd:written") {
		t.Errorf("the worker wrote /etc/passwd: %q", got)
	}
	if strings.Contains(got, "socket:connected") {
		t.Errorf("the worker reached a loopback socket of the Host: %q", got)
	}
}

func listenLoopback() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// A runtime.python that is a script starting the interpreter as its child
// (a version manager's shim) works: the worker runs the interpreter the
// script names, since the worker itself may not fork.
func TestShimInterpreter(t *testing.T) {
	f := newFixture(t, sandbox.Settings{})
	shim := filepath.Join(t.TempDir(), "python3")
	if err := os.WriteFile(shim, []byte("#!/bin/sh\n/usr/bin/python3 \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	procs, err := process.NewManager(process.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer procs.Close(context.Background())
	scratch := t.TempDir()
	pool := pyworker.New(pyworker.Options{
		Python: shim, Processes: procs, Sandbox: sandbox.Profile{Hidden: []string{f.home}},
		Scratch: func(string) string { return scratch },
	})
	defer pool.Close(context.Background())
	f.write(t, "agent/input/s/module.py", "import sys\ndef process(ctx):\n    ctx.input.add_context(sys.executable)\n")
	c := f.call(starlark.ForeignSlot, "agent/input/s/module.py")
	if _, err := pool.CallForeign(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.log, ""); !strings.HasPrefix(got, "system:/usr/bin/python3") {
		t.Errorf("the worker ran %q", got)
	}
}
