package host

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/demiurge/demiurge"
)

// A channel uploads only what the turn could name: a file in the
// workspace or the session's artifact directory, never through a symbolic
// link leading out, never another session's.
func TestUploadOpener(t *testing.T) {
	ws, artifacts, outside := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("ws"), 0o600)
	os.MkdirAll(filepath.Join(artifacts, "sess_1"), 0o700)
	os.WriteFile(filepath.Join(artifacts, "sess_1", "b.txt"), []byte("artifact"), 0o600)
	os.MkdirAll(filepath.Join(artifacts, "sess_2"), 0o700)
	os.WriteFile(filepath.Join(artifacts, "sess_2", "c.txt"), []byte("other"), 0o600)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o600)
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	open := uploadOpener(ws, artifacts)
	for _, tt := range []struct {
		session, path, want, code string
	}{
		{"sess_1", filepath.Join(ws, "a.txt"), "ws", ""},
		{"sess_1", filepath.Join(artifacts, "sess_1", "b.txt"), "artifact", ""},
		{"sess_1", filepath.Join(artifacts, "sess_2", "c.txt"), "", demiurge.EUNAUTHORIZED},
		{"sess_1", filepath.Join(outside, "secret"), "", demiurge.EUNAUTHORIZED},
		{"sess_1", filepath.Join(ws, "link"), "", demiurge.EUNAUTHORIZED},
		{"sess_1", filepath.Join(ws, "..", filepath.Base(outside), "secret"), "", demiurge.EUNAUTHORIZED},
		{"../sess_2", filepath.Join(artifacts, "sess_2", "c.txt"), "", demiurge.EUNAUTHORIZED},
		{"sess_1", filepath.Join(ws, "missing"), "", demiurge.EINVALID},
	} {
		f, err := open(tt.session, tt.path)
		if demiurge.ErrorCode(err) != tt.code {
			t.Fatalf("%s %s: %v, want code %q", tt.session, tt.path, err, tt.code)
		}
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if string(b) != tt.want {
			t.Fatalf("%s: read %q, want %q", tt.path, b, tt.want)
		}
	}
}
