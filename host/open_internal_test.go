package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// openUnder lists this process's descriptors that refer to files under dir.
func openUnder(t *testing.T, dir string) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(os.PathSeparator)) {
			out = append(out, target)
		}
	}
	return out
}

// An Open that fails after any step closes what the steps before it
// opened: no descriptor of the log file, the database or anything else of
// the home stays open, the lease is released (the home opens again at
// once) and the stack has nothing left to close.
func TestFailedOpenClosesWhatItOpened(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the Host opens on Linux only")
	}
	ctx := context.Background()
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	h, err := Open(ctx, Options{Home: home, failAfter: func(step string) error {
		steps = append(steps, step)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"log", "store", "lease", "processes", "mcp", "turns", "tasks"} {
		if !strings.Contains(" "+strings.Join(steps, " ")+" ", " "+want+" ") {
			t.Fatalf("steps %v lack %s", steps, want)
		}
	}
	if left := openUnder(t, home); len(left) != 0 {
		t.Fatalf("after Close: still open %v", left)
	}
	injected := errors.New("injected failure")
	for _, failing := range steps {
		t.Run(failing, func(t *testing.T) {
			var seen []string
			h, err := Open(ctx, Options{Home: home, failAfter: func(step string) error {
				seen = append(seen, step)
				if step == failing {
					return injected
				}
				return nil
			}})
			if !errors.Is(err, injected) || h != nil {
				t.Fatalf("Open = %v, %v; want the injected failure", h, err)
			}
			if seen[len(seen)-1] != failing {
				t.Fatalf("Open went on past %s: %v", failing, seen)
			}
			if left := openUnder(t, home); len(left) != 0 {
				t.Fatalf("after failing at %s: still open %v", failing, left)
			}
			again, err := Open(ctx, Options{Home: home})
			if err != nil {
				t.Fatalf("reopen after failing at %s: %v", failing, err)
			}
			if err := again.Close(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
