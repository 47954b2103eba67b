package cli_test

import (
	"os"
	"path/filepath"
	"testing"
)

// Every command refuses a malformed command line with exit 2 and one line
// on stderr, before it does anything to the home.
func TestUsageErrors(t *testing.T) {
	h := newHome(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"no-such-command"}, `unknown command "no-such-command"`},
		{[]string{"init", "extra"}, `unknown command "extra"`},
		{[]string{"init", "--refresh", "everything"}, "--refresh must be assistant, evolver, global or all"},
		{[]string{"run"}, "requires at least 1 arg(s)"},
		{[]string{"run", "  "}, "run needs a non-empty TEXT"},
		{[]string{"run", "--new", "--session", "session_x", "hi"}, "--new and --session cannot be used together"},
		{[]string{"run", "--approve", "maybe", "hi"}, `--approve must be ask, deny or all, got "maybe"`},
		{[]string{"run", "--workspace", filepath.Join(h.workspace, "missing"), "hi"}, "is not a directory"},
		{[]string{"run", "--session", "session_missing", "hi"}, "session_missing"},
		{[]string{"--core", "no_such_core", "run", "hi"}, `unknown core "no_such_core"`},
		{[]string{"chat", "extra"}, `unknown command "extra"`},
		{[]string{"chat", "--approve", "maybe"}, `--approve must be ask, deny or all, got "maybe"`},
		{[]string{"sessions", "show"}, "accepts 1 arg(s), received 0"},
		{[]string{"sessions", "show", "session_missing"}, "session_missing"},
		{[]string{"sessions", "turns", "--session", "session_missing"}, "session_missing"},
		{[]string{"sessions", "list", "--limit", "many"}, "invalid argument"},
		{[]string{"tools", "list", "extra"}, `unknown command "extra"`},
		{[]string{"--core", "no_such_core", "tools", "list"}, `unknown core "no_such_core"`},
		{[]string{"tasks", "status"}, "accepts 1 arg(s), received 0"},
		{[]string{"tasks", "status", "task_missing"}, "task_missing"},
		{[]string{"tasks", "logs", "task_missing"}, "task_missing"},
		{[]string{"tasks", "cancel", "task_missing"}, "task_missing"},
		{[]string{"tasks", "wait", "task_missing"}, "task_missing"},
		{[]string{"tasks", "wait", "--timeout", "soon", "task_x"}, "invalid argument"},
		{[]string{"schedules", "run"}, "accepts 1 arg(s), received 0"},
		{[]string{"schedules", "run", "no_such_schedule"}, "no_such_schedule"},
		{[]string{"serve", "extra"}, `unknown command "extra"`},
		{[]string{"mcp", "list", "extra"}, `unknown command "extra"`},
		{[]string{"mcp", "check", "--workspace", filepath.Join(h.workspace, "missing")}, "is not a directory"},
		{[]string{"core", "versions", "--limit", "0"}, "--limit must be at least 1"},
		{[]string{"core", "discard"}, "discard requires --yes"},
		{[]string{"core", "rollback", "a", "b"}, "accepts at most 1 arg(s), received 2"},
		{[]string{"core", "evolve", "start"}, "goal is required"},
		{[]string{"core", "evolve", "review"}, "accepts 1 arg(s), received 0"},
		{[]string{"core", "evolve", "promote", "a", "b"}, "accepts 1 arg(s), received 2"},
		{[]string{"doctor", "extra"}, `unknown command "extra"`},
	} {
		r := h.run("", tc.args...)
		t.Run(tc.args[0], func(t *testing.T) { wantOneLine(t, r, 2, tc.want) })
	}
}

// A home that cannot be created is a configuration error (exit 2) for
// every command, doctor included, which says so in its JSON too.
func TestUnusableHome(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &home{t: t, dir: filepath.Join(blocker, "home")}
	for _, args := range [][]string{{"init"}, {"run", "hi"}, {"sessions", "list"}, {"core", "status"}, {"doctor"}} {
		wantOneLine(t, h.run("", args...), 2, blocker)
	}
	var failure struct {
		OK    bool `json:"ok"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	h.decode(2, &failure, "doctor", "--json")
	if failure.OK || failure.Error.Code != "doctor.execution_error" {
		t.Fatalf("doctor --json = %+v", failure)
	}
}
