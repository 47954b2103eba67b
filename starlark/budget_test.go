package starlark_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
	sl "go.starlark.net/starlark"
)

const testBudget = 64 << 20

// allocated runs fn and returns the bytes the Go heap allocated meanwhile
// (TotalAlloc counts every allocation, whatever the collector reclaimed).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// memoryError asserts err is the allocation budget's failure.
func memoryError(t *testing.T, err error, limit string) *starlark.Error {
	t.Helper()
	se := authoredError(t, err, demiurge.EINVALID)
	if se.Kind != starlark.KindMemory {
		t.Fatalf("kind=%s, want memory (err: %v)", se.Kind, err)
	}
	if want := "authored code exceeded its memory budget of " + limit; !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("err=%q, want it to end with %q", err, want)
	}
	return se
}

// Each blow-up fails with the budget error having allocated less than twice
// the budget: the guards refuse before the allocation, not after.
func TestMemoryBudgetStopsBlowUps(t *testing.T) {
	host := sl.NewBuiltin("fetch", func(_ *sl.Thread, _ *sl.Builtin, args sl.Tuple, _ []sl.Tuple) (sl.Value, error) {
		return sl.String(strings.Repeat("h", 1<<20)), nil
	})
	tests := []struct {
		name string
		body string // the body of process(host)
	}{
		{"list repetition", "return [0] * 200000000"},
		{"string repetition", `return "x" * (1 << 31)`},
		{"reversed repetition", `return 200000000 * [0]`},
		{"tuple repetition", "return (0, 1) * 100000000"},
		{"bytes repetition", `return b"x" * (1 << 31)`},
		{"huge repetition count", `return "x" * (1 << 100)`},
		{"doubling concatenation", "s = \"x\"\n    for _ in range(64):\n        s = s + s\n    return s"},
		{"doubling augmented", "s = [0]\n    for _ in range(64):\n        s += s\n    return len(s)"},
		{"augmented repetition", "s = \"x\"\n    s *= 1 << 31\n    return s"},
		{"augmented index", "d = {\"k\": \"x\"}\n    for _ in range(64):\n        d[\"k\"] += d[\"k\"]\n    return len(d)"},
		{"list comprehension", "return [i for i in range(1 << 40)]"},
		{"dict comprehension", "return {i: i for i in range(1 << 40)}"},
		{"nested comprehension", "return [[j for j in range(1000)] for i in range(1 << 30)]"},
		{"join", `return ",".join(["abc" * 1000] * 100000)`},
		{"join separator", `return ("," * 1000000).join([""] * 1000)`},
		{"replace", `return ("x" * 10000).replace("x", "y" * 100000)`},
		{"format method", `return ("{0}" * 100000).format("y" * 10000)`},
		{"percent format", `return ("%s" * 1000) % (("y" * 100000,) * 1000)`},
		{"percent mapping", `return ("%(a)s" * 10000) % {"a": "y" * 100000}`},
		{"str of shared parts", "a = [\"x\" * 100000] * 1000\n    return len(str(a))"},
		{"nested sharing", "a = [\"x\" * 1000]\n    for _ in range(64):\n        a = [a, a]\n    return len(repr(a))"},
		{"json of shared parts", "a = [\"x\" * 100000] * 1000\n    return len(json.encode(a))"},
		{"json indent", `return len(json.indent("[" * 10000 + "]" * 10000, indent = " " * 10000))`},
		{"split", `return len(("," * 10000000).split(","))`},
		{"list of range", "return len(list(range(1 << 40)))"},
		{"sorted of range", "return len(sorted(range(1 << 40)))"},
		{"extend with range", "l = []\n    l.extend(range(1 << 40))\n    return len(l)"},
		{"spread range", "return len(*range(1 << 40))"},
		{"append loop", "l = []\n    for i in range(1 << 40):\n        l.append(i)\n    return len(l)"},
		{"dict store loop", "d = {}\n    for i in range(1 << 40):\n        d[i] = i\n    return len(d)"},
		{"kept slices", "l = [0] * 100000\n    return len([l[:] for _ in range(100000)])"},
		{"big int squaring", "x = 3\n    for _ in range(64):\n        x = x * x\n    return x > 0"},
		{"returned sharing", `return ["x" * 100000] * 1000`},
		{"deep nesting rendered", "a = []\n    for _ in range(100000):\n        a = [a]\n    return len(str(a))"},
		{"host results kept", "return len([host() for _ in range(100000)])"},
		{"sorted by a built-in key", "a = [[\"x\" * 100000] * 100] * 1000\n    return len(sorted(a, key = str))"},
		{"upper kept", "s = \"x\" * 1000000\n    return len([s.upper() for _ in range(1000)])"},
	}
	rt := starlark.NewRuntime(starlark.Options{MaxSteps: 1 << 62, Timeout: 5 * time.Minute, MemoryLimit: testBudget})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "def process(host):\n    " + tt.body + "\n"
			m, err := rt.Load(modPath, []byte(src))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			var callErr error
			n := allocated(func() { _, callErr = m.Call(context.Background(), "process", host) })
			memoryError(t, callErr, "64 MiB")
			if n > 2*testBudget {
				t.Fatalf("allocated %d MiB before failing, want under twice the budget (%d MiB)", n>>20, 2*testBudget>>20)
			}
		})
	}
}

func TestMemoryBudgetDefaultAndPosition(t *testing.T) {
	rt := starlark.NewRuntime(starlark.Options{})
	m := mustLoad(t, rt, "def process():\n    x = 1\n    return [0] * 200000000\n")
	_, err := m.Call(context.Background(), "process")
	se := memoryError(t, err, "256 MiB")
	if se.Line != 3 {
		t.Fatalf("line=%d, want 3 (err: %v)", se.Line, err)
	}
	if want := modPath + ":3: authored code exceeded its memory budget of 256 MiB"; err.Error() != want {
		t.Fatalf("err=%q, want %q", err, want)
	}
	if got := rt.MemoryLimit(); got != starlark.DefaultMemoryLimit {
		t.Fatalf("MemoryLimit=%d, want the default %d", got, starlark.DefaultMemoryLimit)
	}
}

// The budget is per execution: a call that fails leaves nothing behind for
// the next, and a per-call limit overrides the runtime's.
func TestMemoryBudgetPerCall(t *testing.T) {
	rt := starlark.NewRuntime(starlark.Options{MemoryLimit: 8 << 20})
	m := mustLoad(t, rt, "def process(n):\n    return len(\"x\" * n)\n")
	for range 3 {
		if _, err := m.Call(context.Background(), "process", sl.MakeInt(6<<20)); err != nil {
			t.Fatalf("6 MiB under an 8 MiB budget: %v", err)
		}
	}
	_, err := m.Call(context.Background(), "process", sl.MakeInt(9<<20))
	memoryError(t, err, "8 MiB")
	_, err = m.CallLimited(context.Background(), starlark.Limits{MemoryLimit: 1 << 20}, "process", sl.MakeInt(2<<20))
	memoryError(t, err, "1 MiB")
}

func TestMemoryBudgetAtTopLevel(t *testing.T) {
	rt := starlark.NewRuntime(starlark.Options{MemoryLimit: 1 << 20})
	_, err := rt.Load(modPath, []byte("big = \"x\" * (2 << 20)\ndef process():\n    return big\n"))
	se := memoryError(t, err, "1 MiB")
	if se.Line != 1 {
		t.Fatalf("line=%d, want 1", se.Line)
	}
}

// Ordinary authored code, generous by the standards of a slot, runs under the
// default budget.
func TestMemoryBudgetAllowsOrdinaryCode(t *testing.T) {
	src := `def process(n):
    rows = [{"id": i, "name": "row-%d" % i, "tags": ["a", "b"]} for i in range(n)]
    rows = sorted(rows, key = lambda r: -r["id"])
    by_name = {r["name"]: r for r in rows}
    text = "\n".join([json.encode(r) for r in rows])
    words = (text + " ") * 4
    parts = words.split()
    counts = {}
    for p in parts[:20000]:
        counts[p[:5]] = counts.get(p[:5], 0) + 1
    return {"rows": len(rows), "names": len(by_name), "text": len(text), "parts": len(parts), "keys": len(counts)}
`
	// The default memory budget is what is under test, not the deadline: a
	// loaded machine running -race may take longer than the default 10 s.
	rt := starlark.NewRuntime(starlark.Options{Timeout: 5 * time.Minute})
	m := mustLoad(t, rt, src)
	v, err := m.Call(context.Background(), "process", sl.MakeInt(50000))
	if err != nil {
		t.Fatalf("ordinary code failed under the default budget: %v", err)
	}
	if got := v.String(); !strings.Contains(got, `"rows": 50000`) {
		t.Fatalf("result %s", got)
	}
}
