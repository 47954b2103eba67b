package atomicfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWriteReplacesWholly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "state")
	for _, content := range []string{"first\n", "second, longer\n", ""} {
		if err := Write(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != content {
			t.Fatalf("content = %q, %v; want %q", got, err, content)
		}
	}
	if info, err := os.Stat(path); err != nil || (runtime.GOOS != "windows" && info.Mode().Perm() != 0o600) {
		t.Fatalf("mode = %v, %v", info.Mode(), err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
	// A directory in the way fails and leaves nothing behind.
	if err := Write(filepath.Join(dir, "sub"), []byte("x")); err == nil {
		t.Fatal("replacing a directory succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temporary files left after a failure: %v", entries)
	}
}
