package starlark_test

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge/starlark"
	"go.starlark.net/lib/json"
	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// benchSrc is a slot-like body: string building, a dict, method calls.
const benchSrc = `def process(n):
    out = []
    seen = {}
    for i in range(n):
        key = "k%d" % (i % 50)
        seen[key] = seen.get(key, 0) + 1
        out.append(key.upper())
    return len(", ".join(out)) + len(seen)
`

// BenchmarkCall compares one call on the plain interpreter with the same call
// instrumented by the allocation guards.
func BenchmarkCall(b *testing.B) {
	b.Run("plain", func(b *testing.B) {
		opts := &syntax.FileOptions{Set: true, While: true, TopLevelControl: true}
		th := &sl.Thread{}
		globals, err := sl.ExecFileOptions(opts, th, modPath, benchSrc, sl.StringDict{"json": json.Module})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := sl.Call(th, globals["process"], sl.Tuple{sl.MakeInt(1000)}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("instrumented", func(b *testing.B) {
		rt := starlark.NewRuntime(starlark.Options{})
		m, err := rt.Load(modPath, []byte(benchSrc))
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := m.Call(context.Background(), "process", sl.MakeInt(1000)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
