package starlark_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
	sl "go.starlark.net/starlark"
)

const modPath = "/core/agent/input/demo/module.star"

func mustLoad(t *testing.T, rt *starlark.Runtime, src string) *starlark.Module {
	t.Helper()
	m, err := rt.Load(modPath, []byte(src))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return m
}

// authoredError returns the *starlark.Error in err's chain and checks the
// domain code.
func authoredError(t *testing.T, err error, code string) *starlark.Error {
	t.Helper()
	if err == nil {
		t.Fatal("err=nil, want an error")
	}
	if got := demiurge.ErrorCode(err); got != code {
		t.Fatalf("code=%q, want %q (err: %v)", got, code, err)
	}
	var se *starlark.Error
	if !errors.As(err, &se) {
		t.Fatalf("err %v (%T) has no *starlark.Error", err, err)
	}
	if got, want := err.Error(), se.Error(); got != want {
		t.Fatalf("domain message %q differs from authored error %q", got, want)
	}
	return se
}

func TestStepBudgetExhausted(t *testing.T) {
	rt := starlark.NewRuntime(starlark.Options{MaxSteps: 5000, Timeout: time.Minute})
	m := mustLoad(t, rt, "def process():\n    n = 0\n    while True:\n        n += 1\n")
	_, err := m.Call(context.Background(), "process")
	se := authoredError(t, err, demiurge.EINVALID)
	if se.Kind != starlark.KindBudget {
		t.Fatalf("kind=%s, want budget", se.Kind)
	}
	if !strings.Contains(err.Error(), "step budget of 5000 steps exhausted") {
		t.Fatalf("err=%q, want the step budget named", err)
	}
	if se.Line < 1 || se.Line > 4 {
		t.Fatalf("line=%d, want a line of process (1-4)", se.Line)
	}
	if !strings.HasPrefix(err.Error(), modPath+":") {
		t.Fatalf("err=%q, want the module path first", err)
	}
}

func TestPerCallLimitsOverrideRuntime(t *testing.T) {
	rt := starlark.NewRuntime(starlark.Options{MaxSteps: 1 << 40, Timeout: time.Minute})
	m := mustLoad(t, rt, "def process():\n    for i in range(100000):\n        pass\n")
	_, err := m.CallLimited(context.Background(), starlark.Limits{MaxSteps: 100}, "process")
	if se := authoredError(t, err, demiurge.EINVALID); se.Kind != starlark.KindBudget {
		t.Fatalf("kind=%s, want budget", se.Kind)
	}
	if _, err := m.Call(context.Background(), "process"); err != nil {
		t.Fatalf("runtime budget should allow the loop: %v", err)
	}
}

func TestDeadlineStopsInfiniteLoop(t *testing.T) {
	rt := starlark.NewRuntime(starlark.Options{MaxSteps: math.MaxUint64})
	m := mustLoad(t, rt, "def process():\n    n = 0\n    while True:\n        n += 1\n")
	start := time.Now()
	_, err := m.CallLimited(context.Background(), starlark.Limits{Timeout: 50 * time.Millisecond}, "process")
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("call took %v after a 50ms deadline", elapsed)
	}
	se := authoredError(t, err, demiurge.ETIMEOUT)
	if se.Kind != starlark.KindDeadline {
		t.Fatalf("kind=%s, want deadline", se.Kind)
	}
	// A stopped thread reports the instruction it stopped at; a loop's
	// back-jump maps to the def line, so any line of the function is right.
	if se.Line < 1 || se.Line > 4 || se.Msg != "deadline of 50ms exceeded" {
		t.Fatalf("err=%q, want a line of process and the deadline", err)
	}
}

func TestContextCancelStopsCall(t *testing.T) {
	rt := starlark.NewRuntime(starlark.Options{MaxSteps: math.MaxUint64, Timeout: time.Minute})
	m := mustLoad(t, rt, "def process():\n    while True:\n        pass\n")

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	_, err := m.Call(ctx, "process")
	if se := authoredError(t, err, demiurge.ECANCELED); se.Kind != starlark.KindCancelled || se.Msg != "cancelled" {
		t.Fatalf("kind=%s msg=%q, want cancelled", se.Kind, se.Msg)
	}

	// A context that is already done never runs the code.
	_, err = m.Call(ctx, "process")
	authoredError(t, err, demiurge.ECANCELED)

	// The caller's own deadline is a deadline, not a cancellation.
	dctx, dcancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer dcancel()
	_, err = m.Call(dctx, "process")
	if se := authoredError(t, err, demiurge.ETIMEOUT); se.Msg != "deadline exceeded" {
		t.Fatalf("msg=%q, want %q", se.Msg, "deadline exceeded")
	}
}

func TestBuiltinSeesCallContext(t *testing.T) {
	rt := starlark.NewRuntime(starlark.Options{})
	m := mustLoad(t, rt, "def process(wait):\n    wait()\n")
	var sawDeadline atomic.Bool
	wait := sl.NewBuiltin("wait", func(th *sl.Thread, _ *sl.Builtin, _ sl.Tuple, _ []sl.Tuple) (sl.Value, error) {
		ctx := starlark.Context(th)
		_, ok := ctx.Deadline()
		sawDeadline.Store(ok)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	_, err := m.CallLimited(context.Background(), starlark.Limits{Timeout: 40 * time.Millisecond}, "process", wait)
	authoredError(t, err, demiurge.ETIMEOUT)
	if !sawDeadline.Load() {
		t.Fatal("built-in context had no deadline")
	}
}

func TestCompileErrorPositions(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"syntax", "def process(ctx):\n    x = (1,\n", modPath + ":3:1: got outdent, want primary expression"},
		{"indent", "def process(ctx):\nreturn 1\n", modPath + ":2:7: got return, want indent"},
		{"undefined", "def process(ctx):\n    return nope\n", modPath + ":2:12: undefined: nope"},
		{"no time", "def process(ctx):\n    return time.now()\n", modPath + ":2:12: undefined: time"},
		{"no load", "load(\"lib.star\", \"x\")\ndef process(ctx):\n    return x\n", modPath + `:1:1: load("lib.star") is not allowed: authored modules have no file access`},
		{"global reassign", "x = 1\nx = 2\n", modPath + ":2:1: cannot reassign global x declared at " + modPath + ":1:1"},
	}
	rt := starlark.NewRuntime(starlark.Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rt.Load(modPath, []byte(tt.src))
			se := authoredError(t, err, demiurge.EINVALID)
			if se.Kind != starlark.KindCompile {
				t.Fatalf("kind=%s, want compile", se.Kind)
			}
			if got := err.Error(); got != tt.want {
				t.Fatalf("err=%q, want %q", got, tt.want)
			}
		})
	}
}

func TestRuntimeErrorPositions(t *testing.T) {
	src := `def helper(x):
    return x + "a"

def process(ctx):
    y = 1
    return helper(y)

def failing():
    fail("boom")

def denied(check):
    check("tool.call:x")

def recursive(n):
    return recursive(n)
`
	rt := starlark.NewRuntime(starlark.Options{})
	m := mustLoad(t, rt, src)
	check := sl.NewBuiltin("check", func(_ *sl.Thread, _ *sl.Builtin, args sl.Tuple, _ []sl.Tuple) (sl.Value, error) {
		return nil, errors.New("capability denied: " + string(args[0].(sl.String)) + " for agent/input/demo")
	})
	unavailable := sl.NewBuiltin("check", func(*sl.Thread, *sl.Builtin, sl.Tuple, []sl.Tuple) (sl.Value, error) {
		return nil, demiurge.Errorf(demiurge.EUNAVAILABLE, "history store unavailable")
	})
	tests := []struct {
		fn   string
		args []sl.Value
		code string
		want string
	}{
		{"process", []sl.Value{sl.None}, demiurge.EINVALID, modPath + `:2: unknown binary op: int + string`},
		{"failing", nil, demiurge.EINVALID, modPath + ":9: fail: boom"},
		{"denied", []sl.Value{check}, demiurge.EINVALID, modPath + ":12: capability denied: tool.call:x for agent/input/demo"},
		{"denied", []sl.Value{unavailable}, demiurge.EUNAVAILABLE, modPath + ":12: history store unavailable"},
		{"recursive", []sl.Value{sl.MakeInt(1)}, demiurge.EINVALID, modPath + ":15: function recursive called recursively"},
		{"missing", nil, demiurge.EINVALID, modPath + ": module does not define missing"},
	}
	for _, tt := range tests {
		t.Run(tt.fn, func(t *testing.T) {
			_, err := m.Call(context.Background(), tt.fn, tt.args...)
			authoredError(t, err, tt.code)
			if got := err.Error(); got != tt.want {
				t.Fatalf("err=%q, want %q", got, tt.want)
			}
		})
	}

	var se *starlark.Error
	_, err := m.Call(context.Background(), "process", sl.None)
	if !errors.As(err, &se) || !strings.Contains(se.Backtrace, "in helper") {
		t.Fatalf("backtrace %q does not name the failing function", se.Backtrace)
	}
}

func TestTopLevelRunsOnceUnderBudget(t *testing.T) {
	var mu sync.Mutex
	var printed []string
	rt := starlark.NewRuntime(starlark.Options{
		MaxSteps: 10_000,
		Print: func(path, msg string) {
			mu.Lock()
			defer mu.Unlock()
			printed = append(printed, path+"|"+msg)
		},
	})
	src := "print('top')\ndef process():\n    print('call')\n    return 1\n"
	m1 := mustLoad(t, rt, src)
	m2 := mustLoad(t, rt, src)
	if m1 != m2 {
		t.Fatal("same path and content loaded twice, want the cached module")
	}
	if _, err := m1.Call(context.Background(), "process"); err != nil {
		t.Fatal(err)
	}
	m3 := mustLoad(t, rt, src+"\n")
	if m3 == m1 {
		t.Fatal("changed content returned the stale module")
	}
	mu.Lock()
	got := strings.Join(printed, ",")
	mu.Unlock()
	want := modPath + "|top," + modPath + "|call," + modPath + "|top"
	if got != want {
		t.Fatalf("printed=%q, want %q", got, want)
	}

	_, err := rt.Load(modPath, []byte("acc = []\nfor i in range(100000):\n    acc.append(i)\n"))
	if se := authoredError(t, err, demiurge.EINVALID); se.Kind != starlark.KindBudget || se.Line < 2 {
		t.Fatalf("top-level overrun: kind=%s line=%d", se.Kind, se.Line)
	}
}

func TestSourceSizeLimit(t *testing.T) {
	rt := starlark.NewRuntime(starlark.Options{MaxSource: 16})
	_, err := rt.Load(modPath, []byte("x = 1\n# padding padding padding\n"))
	if got := demiurge.ErrorCode(err); got != demiurge.EINVALID {
		t.Fatalf("code=%q, want invalid (err %v)", got, err)
	}
}

func TestGlobalsFrozen(t *testing.T) {
	rt := starlark.NewRuntime(starlark.Options{})
	m := mustLoad(t, rt, "seen = []\ndef process():\n    seen.append(1)\n")
	_, err := m.Call(context.Background(), "process")
	if err == nil || !strings.Contains(err.Error(), "frozen list") {
		t.Fatalf("err=%v, want frozen-list error", err)
	}
}

func TestPureEnvironment(t *testing.T) {
	rt := starlark.NewRuntime(starlark.Options{})
	m := mustLoad(t, rt, `def process():
    return json.encode({"a": [1, 2.5, None]}) + " " + str(math.floor(2.7))
`)
	v, err := m.Call(context.Background(), "process")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(v.(sl.String)), `{"a":[1,2.5,null]} 2`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	for _, name := range []string{"time", "os", "open", "file", "http", "env", "getenv"} {
		_, err := rt.Load("/x/"+name+".star", []byte("def f():\n    return "+name+"\n"))
		if err == nil || !strings.Contains(err.Error(), "undefined: "+name) {
			t.Errorf("%s: err=%v, want undefined", name, err)
		}
	}
}

func TestConcurrentCallsShareModule(t *testing.T) {
	rt := starlark.NewRuntime(starlark.Options{})
	m := mustLoad(t, rt, "TABLE = {'a': 1}\ndef process(n):\n    out = []\n    for i in range(n):\n        out.append(TABLE['a'] + i)\n    return len(out)\n")
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			v, err := m.Call(context.Background(), "process", sl.MakeInt(1000))
			if err != nil {
				errs <- err
				return
			}
			if n, _ := v.(sl.Int).Int64(); n != 1000 {
				errs <- errors.New("wrong result " + v.String())
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
