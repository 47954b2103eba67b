package authored_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/authored"
	"github.com/demiurge/demiurge/effect"
)

// Definitions reads no module: every module file may disappear after the
// core is loaded, and the definitions are still built. Only Invoke reads,
// compiles (the top level runs) and reports the problem.
func TestModuleIsReadOnlyOnInvoke(t *testing.T) {
	dir := copyCore(t)
	f := newFixture(t, dir, authored.Options{MaxSource: 256})
	if err := os.RemoveAll(filepath.Join(dir, "agent", "tools")); err != nil {
		t.Fatal(err)
	}
	if len(f.defs) != len(f.core.Tools) {
		t.Fatalf("%d definitions, want %d", len(f.defs), len(f.core.Tools))
	}
	if got := f.loads.n.Load(); got != 0 {
		t.Fatalf("a module top level ran %d times before any Invoke", got)
	}
	out := f.invoke(t, "counted", nil)
	want := effect.Outcome{Content: "agent/tools/counted/module.star: module not found", IsError: true, ExecutionStarted: true}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("outcome=%#v\nwant    %#v", out, want)
	}
}

func TestModuleChangedAfterLoad(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.star")
	writeFile(t, outside, "def execute(ctx, args):\n    return 'outside'\n")
	tests := []struct {
		name   string
		change func(t *testing.T, module string)
		want   effect.Outcome
	}{
		{"edited", func(t *testing.T, m string) {
			writeFile(t, m, "def execute(ctx, args):\n    return 'v2'\n")
		}, effect.Outcome{Content: "v2", ExecutionStarted: true}},
		{"syntax error", func(t *testing.T, m string) {
			writeFile(t, m, "def execute(ctx, args)\n    return 1\n")
		}, failedWith("agent/tools/echo/module.star:2:1: got newline, want ':'")},
		{"no execute", func(t *testing.T, m string) {
			writeFile(t, m, "def other(ctx, args):\n    return 1\n")
		}, failedWith("agent/tools/echo/module.star: module does not define execute")},
		{"execute not callable", func(t *testing.T, m string) {
			writeFile(t, m, "execute = 1\n")
		}, failedWith("agent/tools/echo/module.star: execute is a int, not a function")},
		{"failing top level", func(t *testing.T, m string) {
			writeFile(t, m, "x = 1 // 0\ndef execute(ctx, args):\n    return 1\n")
		}, failedWith("agent/tools/echo/module.star:1: floored division by zero")},
		{"too large", func(t *testing.T, m string) {
			writeFile(t, m, "def execute(ctx, args):\n    return 1\n"+strings.Repeat("# padding\n", 40))
		}, failedWith("agent/tools/echo/module.star: module is larger than the limit of 256 bytes")},
		{"directory", func(t *testing.T, m string) {
			if err := os.Remove(m); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(m, 0o700); err != nil {
				t.Fatal(err)
			}
		}, failedWith("agent/tools/echo/module.star: module is not a regular file")},
		{"symlink out of the core", func(t *testing.T, m string) {
			if err := os.Remove(m); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, m); err != nil {
				t.Skipf("symlinks unavailable: %v", err)
			}
		}, failedWith("agent/tools/echo/module.star: module resolves outside the core")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyCore(t)
			f := newFixture(t, dir, authored.Options{MaxSource: 256})
			tt.change(t, filepath.Join(dir, "agent", "tools", "echo", "module.star"))
			got := f.invoke(t, "echo", map[string]any{"text": "hi"})
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("outcome=%#v\nwant    %#v", got, tt.want)
			}
		})
	}
}

func failedWith(content string) effect.Outcome {
	return effect.Outcome{Content: content, IsError: true, ExecutionStarted: true}
}
