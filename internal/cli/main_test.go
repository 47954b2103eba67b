package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge/internal/cli"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// TestMain removes the variables of the operator running the tests that
// would change what a command does (a home, a fake script, provider keys),
// so every invocation starts from the environment a test sets. The test
// database (demiurgetest.EnvPostgres) stays: it names no home.
func TestMain(m *testing.M) {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		for _, p := range []string{"DEMIURGE_", "OPENAI_", "ANTHROPIC_"} {
			if strings.HasPrefix(name, p) && name != demiurgetest.EnvPostgres {
				os.Unsetenv(name)
			}
		}
	}
	os.Exit(m.Run())
}

// home is one runtime home and workspace; every invocation runs in
// process through cli.Run with --home.
type home struct {
	t         *testing.T
	dir       string
	workspace string
}

func newHome(t *testing.T) *home {
	t.Helper()
	root := t.TempDir()
	h := &home{t: t, dir: filepath.Join(root, "home"), workspace: filepath.Join(root, "ws")}
	if err := os.MkdirAll(h.workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DEMIURGE_WORKSPACE", h.workspace)
	return h
}

type result struct {
	code   int
	stdout string
	stderr string
}

// run runs `demiurge --home DIR args...` with stdin.
func (h *home) run(stdin string, args ...string) result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb demiurgetest.Buffer
	code := cli.Run(ctx, append([]string{"--home", h.dir}, args...), strings.NewReader(stdin), &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// ok runs args and fails the test unless they exit 0.
func (h *home) ok(args ...string) result {
	h.t.Helper()
	r := h.run("", args...)
	if r.code != 0 {
		h.t.Fatalf("%v: exit %d\nstdout %s\nstderr %s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

// decode runs args (which print JSON), fails the test unless they exit
// want, and decodes stdout into v.
func (h *home) decode(want int, v any, args ...string) result {
	h.t.Helper()
	r := h.run("", args...)
	if r.code != want {
		h.t.Fatalf("%v: exit %d, want %d\nstdout %s\nstderr %s", args, r.code, want, r.stdout, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		h.t.Fatalf("%v: stdout is not JSON: %v\n%s", args, err, r.stdout)
	}
	return r
}

// coreFile writes a file of the live agents tree (a local edit).
func (h *home) coreFile(rel, content string) {
	h.t.Helper()
	p := filepath.Join(h.dir, "agents", rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

// wantOneLine fails unless r exited code with exactly one line on stderr
// that holds each of want.
func wantOneLine(t *testing.T, r result, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d (stdout %q, stderr %q)", r.code, code, r.stdout, r.stderr)
	}
	if !strings.HasPrefix(r.stderr, "demiurge: ") || strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") {
		t.Errorf("stderr %q, want one line \"demiurge: ...\"", r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr %q does not say %q", r.stderr, w)
		}
	}
}
