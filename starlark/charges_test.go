package starlark

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	sl "go.starlark.net/starlark"
)

// The charges stand for what the heap really allocates: for each way of
// building a large value step by step, the bytes charged are at least half the
// bytes allocated (TotalAlloc), so a budget bounds the heap within twice itself.
func TestMemoryChargesCoverAllocation(t *testing.T) {
	const n = 200000
	bodies := []string{
		"return [i for i in range(N)]",
		"return {i: i for i in range(N)}",
		"return [(i, i) for i in range(N)]",
		"return [str(i) for i in range(N)]",
		"return [[i] for i in range(N)]",
		"l = []\n    for i in range(N):\n        l.append(i)\n    return l",
		"l = []\n    for i in range(N):\n        l += [i]\n    return l",
		"d = {}\n    for i in range(N):\n        d[i] = i\n    return d",
		"d = {}\n    for i in range(N):\n        d[str(i)] = [i]\n    return d",
		"s = set()\n    for i in range(N):\n        s.add(i)\n    return s",
		"return list(range(N))",
		"return dict(zip(range(N), range(N)))",
		"return enumerate(range(N))",
		"return \",\".join([str(i) for i in range(N)])",
		"return (\"a b \" * N).split()",
		"return json.decode(json.encode(list(range(N))))",
		"return sorted(range(N), reverse = True)",
		"return [0] * N + [1] * N",
		"return \"%s\" % list(range(N))",
		"return str([\"x\" * 100] * (N // 100))",
		"return str([\"\\x00\" * 100] * (N // 100))",
		"return json.encode([\"x\" * 100] * (N // 100))",
		"return \"{}\".format({\"k\": [\"x\" * 100] * (N // 100)})",
	}
	rt := NewRuntime(Options{MaxSteps: 1 << 62, Timeout: 5 * time.Minute, MemoryLimit: 1 << 40})
	for _, body := range bodies {
		t.Run(body, func(t *testing.T) {
			src := "N = " + strconv.Itoa(n) + "\ndef process():\n    " + body + "\n"
			m, err := rt.Load("/core/charges.star", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			var charged int64
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err = rt.exec(context.Background(), Limits{}, m.path, func(th *sl.Thread) (sl.Value, error) {
				v, err := sl.Call(th, m.globals["process"], nil, nil)
				charged = budgetOf(th).used
				return v, err
			})
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			allocated := int64(after.TotalAlloc - before.TotalAlloc)
			t.Logf("charged %d B/elem, allocated %d B/elem", charged/n, allocated/n)
			if 2*charged < allocated {
				t.Fatalf("charged %d bytes for %d allocated, want at least half", charged, allocated)
			}
		})
	}
}
