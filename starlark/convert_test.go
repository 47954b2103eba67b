package starlark_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/starlark"
	sl "go.starlark.net/starlark"
)

func TestConversionRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want any // after Go → Starlark → Go
	}{
		{"nil", nil, nil},
		{"bool", true, true},
		{"string", "héllo", "héllo"},
		{"int", 42, int64(42)},
		{"int64 max", int64(math.MaxInt64), int64(math.MaxInt64)},
		{"uint8", uint8(7), int64(7)},
		{"float", 2.5, 2.5},
		{"float32", float32(0.5), 0.5},
		{"json.Number int", json.Number("12"), int64(12)},
		{"json.Number float", json.Number("1.25"), 1.25},
		{"list", []any{1, "a", nil}, []any{int64(1), "a", nil}},
		{"typed slice", []string{"x", "y"}, []any{"x", "y"}},
		{"map", map[string]any{"b": 1, "a": []any{true}}, map[string]any{"b": int64(1), "a": []any{true}}},
		{"typed map", map[string]string{"k": "v"}, map[string]any{"k": "v"}},
		{"nested", map[string]any{"m": map[string]any{"n": []any{map[string]any{}}}}, map[string]any{"m": map[string]any{"n": []any{map[string]any{}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sv, err := starlark.ToStarlark(tt.in)
			if err != nil {
				t.Fatalf("ToStarlark: %v", err)
			}
			got, err := starlark.FromStarlark(sv)
			if err != nil {
				t.Fatalf("FromStarlark: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("round trip=%#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestToStarlarkSortsKeys(t *testing.T) {
	v, err := starlark.ToStarlark(map[string]any{"z": 1, "a": 2, "m": 3})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), `{"a": 2, "m": 3, "z": 1}`; got != want {
		t.Fatalf("dict=%s, want %s", got, want)
	}
}

func TestConversionRefusals(t *testing.T) {
	rt := starlark.NewRuntime(starlark.Options{})
	m := mustLoad(t, rt, `def nan(): return float("nan")
def inf(): return {"x": [float("inf")]}
def intkey(): return {1: "a"}
def aset(): return set([1])
def afunc(): return nan
def big(): return 1 << 70
def deep():
    v = []
    for i in range(100):
        v = [v]
    return v
def wide():
    a = [0] * 1000
    b = [a] * 1000
    return [b] * 10
def selfref():
    a = []
    a.append(a)
    return a
`)
	tests := []struct {
		fn      string
		problem starlark.ConversionProblem
		msg     string
	}{
		{"nan", starlark.ProblemNonFinite, "values must be finite JSON numbers"},
		{"inf", starlark.ProblemNonFinite, "values must be finite JSON numbers (at $.x[0])"},
		{"intkey", starlark.ProblemKey, "object keys must be strings, got int"},
		{"aset", starlark.ProblemType, "value must be JSON-compatible, got set"},
		{"afunc", starlark.ProblemType, "value must be JSON-compatible, got function"},
		{"big", starlark.ProblemRange, "integer does not fit in 64 bits"},
		{"deep", starlark.ProblemDepth, ""},
		{"wide", starlark.ProblemSize, ""},
		{"selfref", starlark.ProblemDepth, ""},
	}
	for _, tt := range tests {
		t.Run(tt.fn, func(t *testing.T) {
			v, err := m.Call(context.Background(), tt.fn)
			if err != nil {
				t.Fatal(err)
			}
			_, err = starlark.FromStarlark(v)
			var ce *starlark.ConversionError
			if !errors.As(err, &ce) {
				t.Fatalf("err=%v, want *ConversionError", err)
			}
			if ce.Problem != tt.problem {
				t.Fatalf("problem=%s, want %s (%v)", ce.Problem, tt.problem, err)
			}
			if tt.msg != "" && err.Error() != tt.msg {
				t.Fatalf("msg=%q, want %q", err.Error(), tt.msg)
			}
		})
	}

	for name, in := range map[string]any{
		"nan":      math.NaN(),
		"inf":      []any{math.Inf(1)},
		"int keys": map[int]string{1: "a"},
		"struct":   struct{}{},
		"chan":     make(chan int),
	} {
		if _, err := starlark.ToStarlark(in); err == nil {
			t.Errorf("ToStarlark(%s) succeeded, want refusal", name)
		}
	}
}

func TestObject(t *testing.T) {
	calls := 0
	obj := starlark.NewDynamicObject("ctx.demo", sl.StringDict{
		"name":  sl.String("x"),
		"items": sl.NewList([]sl.Value{sl.MakeInt(1)}),
		"inner": starlark.NewObject("ctx.demo.inner", sl.StringDict{"k": sl.True}),
	}, map[string]starlark.Property{
		"count": func() (sl.Value, error) { calls++; return sl.MakeInt(calls), nil },
	})
	if got, want := strings.Join(obj.AttrNames(), ","), "count,inner,items,name"; got != want {
		t.Fatalf("AttrNames=%s, want %s", got, want)
	}
	rt := starlark.NewRuntime(starlark.Options{})
	m := mustLoad(t, rt, `def read(o):
    return [o.name, o.inner.k, o.count, o.count, dir(o), type(o)]
def assign(o):
    o.name = "y"
def mutate(o):
    o.items.append(2)
def missing(o):
    return o.nope
def hashit(o):
    return {o: 1}
`)
	v, err := m.Call(context.Background(), "read", obj)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), `["x", True, 1, 2, ["count", "inner", "items", "name"], "ctx.demo"]`; got != want {
		t.Fatalf("read=%s, want %s", got, want)
	}
	for fn, want := range map[string]string{
		"assign":  "can't assign to .name field of ctx.demo",
		"mutate":  "frozen list",
		"missing": "ctx.demo has no .nope field or method",
		"hashit":  "unhashable type: ctx.demo",
	} {
		_, err := m.Call(context.Background(), fn, obj)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err=%v, want %q", fn, err, want)
		}
	}
}
