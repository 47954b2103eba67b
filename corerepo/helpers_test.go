package corerepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/coregate"
)

// racySlackFine is the storage's racy slack on file systems with
// sub-second timestamps (gitrepo): a file older than this is trusted.
const racySlackFine = 50 * time.Millisecond

// newHome makes a runtime home with the default cores installed and the
// repository initialised.
func newHome(t testing.TB) (Paths, *Repo) {
	t.Helper()
	p := HomePaths(t.TempDir())
	if err := core.InstallTemplates(p.Agents, core.TemplateAll, false); err != nil {
		t.Fatal(err)
	}
	r, res, err := Init(context.Background(), p, Options{}, "test")
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	if !res.Created || len(res.Revision) != 40 {
		t.Fatalf("Init result = %+v", res)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return p, r
}

func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	abs := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(abs, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, root, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// editFile replaces old with new in a file, failing when old is absent.
func editFile(t testing.TB, root, rel, old, new string) {
	t.Helper()
	s := readFile(t, root, rel)
	if !strings.Contains(s, old) {
		t.Fatalf("%s does not contain %q", rel, old)
	}
	writeFile(t, root, rel, strings.Replace(s, old, new, 1))
}

func mustLive(t testing.TB, r *Repo) string {
	t.Helper()
	live, err := r.Live()
	if err != nil {
		t.Fatal(err)
	}
	return live
}

func mustClean(t testing.TB, r *Repo) {
	t.Helper()
	if f := r.Check(); len(f) > 0 {
		t.Fatalf("Check = %+v", f)
	}
}

func wantCode(t testing.TB, err error, code, substr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want %s containing %q", code, substr)
	}
	if got := demiurge.ErrorCode(err); got != code {
		t.Fatalf("code = %s (%v), want %s", got, err, code)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Fatalf("err = %q, want it to contain %q", err, substr)
	}
}

func gateErr(t testing.TB, err error) *coregate.GateError {
	t.Helper()
	var ge *coregate.GateError
	if !errors.As(err, &ge) {
		t.Fatalf("err = %v, want a *coregate.GateError cause", err)
	}
	return ge
}

func removeFile(t testing.TB, root, rel string) {
	t.Helper()
	if err := os.Remove(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
		t.Fatal(err)
	}
}

func exists(root, rel string) bool {
	_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
	return err == nil
}

func installOnly(agents string, which ...string) error {
	for _, w := range which {
		if err := core.InstallTemplates(agents, w, false); err != nil {
			return err
		}
	}
	return nil
}
