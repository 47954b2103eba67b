package demiurge_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/demiurge/demiurge"
)

func TestIOReasonKeepsTheSystemReasonAndDropsTheRest(t *testing.T) {
	_, err := os.ReadFile(filepath.Join(t.TempDir(), "secret-name", "missing"))
	if got, want := demiurge.IOReason(err), "no such file or directory"; got != want {
		t.Fatalf("IOReason(%v)=%q, want %q", err, got, want)
	}
	wrapped := fmt.Errorf("token=hunter2: %w", &fs.PathError{Op: "open", Path: "/x", Err: fs.ErrPermission})
	if got, want := demiurge.IOReason(wrapped), fs.ErrPermission.Error(); got != want {
		t.Fatalf("IOReason(wrapped)=%q, want %q", got, want)
	}
	odd := &fs.PathError{Op: "exec", Path: "/secret/x", Err: errors.New("not a regular file")}
	if got, want := demiurge.IOReason(odd), "not a regular file"; got != want {
		t.Fatalf("IOReason(odd)=%q, want %q", got, want)
	}
	if got, want := demiurge.IOReason(errors.New("token=hunter2")), "unexpected error"; got != want {
		t.Fatalf("IOReason(plain)=%q, want %q", got, want)
	}
}
