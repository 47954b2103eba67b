//go:build unix

package host

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
)

// A FIFO or a directory the turn made in the workspace is refused at once:
// opening a FIFO without a writer would block the delivery forever.
func TestUploadOpenerRefusesSpecialFiles(t *testing.T) {
	ws, artifacts := t.TempDir(), t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(ws, "out.png"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "dir.png"), 0o700); err != nil {
		t.Fatal(err)
	}
	open := uploadOpener(ws, artifacts)
	for _, name := range []string{"out.png", "dir.png"} {
		done := make(chan error, 1)
		go func() {
			f, err := open("sess_1", filepath.Join(ws, name))
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if demiurge.ErrorCode(err) != demiurge.EINVALID {
				t.Fatalf("%s: %v, want EINVALID (not a regular file)", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the open blocked", name)
		}
	}
}
