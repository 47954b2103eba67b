package starlark_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/starlark"
	"go.starlark.net/lib/json"
	"go.starlark.net/lib/math"
	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// plain runs src's f() on the unmodified interpreter: the reference the
// instrumented runtime must agree with.
func plain(t *testing.T, src string) (string, string, []string) {
	t.Helper()
	var printed []string
	th := &sl.Thread{Print: func(_ *sl.Thread, msg string) { printed = append(printed, msg) }}
	opts := &syntax.FileOptions{Set: true, While: true, TopLevelControl: true}
	globals, err := sl.ExecFileOptions(opts, th, modPath, src, sl.StringDict{"json": json.Module, "math": math.Module})
	if err != nil {
		t.Fatalf("plain exec: %v", err)
	}
	v, err := sl.Call(th, globals["f"], nil, nil)
	if err != nil {
		var ee *sl.EvalError
		if !errors.As(err, &ee) {
			t.Fatalf("plain: %v", err)
		}
		return "", ee.Msg, printed
	}
	return v.String(), "", printed
}

// Instrumented code computes what the plain interpreter computes: values,
// printed lines, error messages, aliasing and evaluation order.
func TestInstrumentedCodeKeepsMeaning(t *testing.T) {
	snippets := map[string]string{
		"arithmetic": `def f():
    x = 7
    return [x + 1, x - 10, x * 3, x / 2, x // 2, x % 4, -x, ~x, +x, 1 << 70, (1 << 70) >> 3, x | 8, x & 3, x ^ 1, 2.5 * 2, -(1 << 80)]`,
		"strings": `def f():
    s = "a,b,c"
    return [s + "!", s * 2, 3 * s, s[1:], s[::-1], s[::2], s.split(","), ",".join(["x", "y"]), s.replace(",", ";"), "{}-{x}".format(1, x = 2), "%s=%d" % ("a", 3), "%(k)s" % {"k": "v"}, s.upper(), s.partition(","), "a b  c".split(), "l1\nl2".splitlines(), s.title()]`,
		"list aliasing": `def f():
    a = [1]
    b = a
    a += [2]
    a += (3,)
    c = a
    a = a + [4]
    c.append(5)
    return [a, b, c]`,
		"dict aliasing": `def f():
    a = {"x": 1}
    b = a
    a |= {"y": 2}
    s = set([1])
    t = s
    s |= set([2])
    return [a, b, s, t]`,
		"augmented targets evaluated once": `calls = []
def key(k):
    calls.append(k)
    return k
def f():
    d = {"a": [1], "b": 2}
    l = [d]
    d[key("b")] += 3
    l[0][key("a")] += [5]
    d[key("c")] = key("v")
    return [d, calls]`,
		"store order": `def f():
    d = {}
    d[print("key") or "k"] = print("value") or "v"
    return d`,
		"slices": `def f():
    l = list(range(10))
    t = tuple(l)
    return [l[2:5], l[-3:], l[::-2], l[8:2:-2], t[1::3], l[:], "hello"[1:-1], b"bytes"[::2], l[100:], l[5:1]]`,
		"comprehensions": `def f():
    return [[x * y for x in range(4) if x % 2 for y in range(3)], {k: v for k, v in [("a", 1), ("b", 2)]}, [(a, b) for a, b in enumerate("xy")]]`,
		"functions": `def g(a, b = 2 + 1, *args, c = "x" * 2, **kw):
    return [a, b, args, c, kw]
h = lambda x, y = [0] * 2: x + len(y)
def f():
    args = [1, 2, 3]
    kw = {"c": "z", "d": 4}
    return [g(1), g(*args), g(0, **kw), g(*args, **kw), h(1), sorted([3, 1, 2], key = lambda v: -v)]`,
		"methods and attributes": `def f():
    l = [3, 1]
    l.append(2)
    l.extend([0])
    l.insert(0, 9)
    app = l.append
    app(7)
    d = {}
    d.setdefault("a", []).append(1)
    d.update(b = 2)
    up = "x".upper
    return [l, d, d.items(), d.keys(), up(), getattr("y", "upper")(), hasattr(l, "pop"), set([1, 2]).union([3]), "abc".elems()]`,
		"json and builtins": `def f():
    v = {"a": [1, 2.5, None, True], "b": "t"}
    s = json.encode(v)
    return [s, json.decode(s), json.indent(s), json.encode_indent(v, indent = "  "), str(v), repr("q\"\n"), list("ab".elems()), dict([("k", 1)], z = 2), zip([1, 2], "ab"), reversed([1, 2]), bytes("hé"), math.floor(2.5), len(str(1 << 200))]`,
		"control flow": `def f():
    out = []
    i = 0
    while i < 5:
        i += 1
        if i == 2:
            continue
        elif i == 4:
            break
        out.append(i if i % 2 else -i)
    for a, b in [(1, 2), (3, 4)]:
        out += [a * b]
    return out`,
		"top level": `acc = []
d = {}
for i in range(3):
    acc.append(i * i)
    d[str(i)] = i
    d[str(i)] += 1
if acc:
    d["x" + "y"] = [1][0:1]
total = len(acc) * 2
def f():
    return [acc, total, d]`,
		"error binary": `def f():
    return 1 + "a"`,
		"error attribute hint": `def f():
    return "abc".uper()`,
		"error attribute read": `def f():
    x = [1]
    return x.lenght`,
		"error index": `def f():
    return [1][5]`,
		"error key": `def f():
    d = {}
    d["missing"] += 1`,
		"error frozen": `L = [1]
def f():
    L.append(2)`,
		"error frozen augmented": `L = [1]
def f():
    L += [2]`,
		"error frozen store": `D = {}
def f():
    D["k"] = 1`,
		"error call": `def f():
    return len(1, 2)`,
		"error not callable": `def f():
    x = 1
    return x()`,
		"error repeat": `def f():
    return "x" * "y"`,
		"error unhashable store": `def f():
    d = {}
    d[[1]] = 2`,
		"error slice step": `def f():
    return [1][::0]`,
		"error spread": `def f():
    return len(*1)`,
		"error fail": `def f():
    fail("boom", 1, [2])`,
	}
	rt := starlark.NewRuntime(starlark.Options{Print: func(_, msg string) {}})
	for name, src := range snippets {
		t.Run(name, func(t *testing.T) {
			want, wantErr, wantPrinted := plain(t, src)
			var printed []string
			rt := starlark.NewRuntime(starlark.Options{Print: func(_, msg string) { printed = append(printed, msg) }})
			m, err := rt.Load(modPath, []byte(src))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			v, err := m.Call(context.Background(), "f")
			if wantErr != "" {
				var se *starlark.Error
				if !errors.As(err, &se) {
					t.Fatalf("err=%v, want %q", err, wantErr)
				}
				if se.Msg != wantErr {
					t.Fatalf("message %q, want the plain interpreter's %q", se.Msg, wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Call: %v (plain gave %s)", err, want)
			}
			if got := v.String(); got != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
			if strings.Join(printed, "|") != strings.Join(wantPrinted, "|") {
				t.Fatalf("printed %q, want %q", printed, wantPrinted)
			}
		})
	}
	_ = rt
}

// The rewrite's temporaries are not globals authored code can see, and a name
// with a '$' cannot be written.
func TestInstrumentedNamesHidden(t *testing.T) {
	rt := starlark.NewRuntime(starlark.Options{})
	m := mustLoad(t, rt, "d = {}\nd[len(\"k\")] = 1\ndef process():\n    return d\n")
	if got := strings.Join(m.Globals(), ","); got != "d,process" {
		t.Fatalf("Globals=%s, want d,process", got)
	}
	if _, err := rt.Load(modPath, []byte("x = $call\n")); err == nil {
		t.Fatal("a '$' name compiled, want a syntax error")
	}
}

// Error positions stay on the line of the operation that failed.
func TestInstrumentedErrorLines(t *testing.T) {
	rt := starlark.NewRuntime(starlark.Options{})
	m := mustLoad(t, rt, "def process():\n    a = [1]\n    b = a[0] +\\\n        \"x\"\n")
	_, err := m.Call(context.Background(), "process")
	var se *starlark.Error
	if !errors.As(err, &se) || se.Line != 3 {
		t.Fatalf("err=%v, want line 3", err)
	}
}
