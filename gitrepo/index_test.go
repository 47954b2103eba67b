package gitrepo

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestIndexTrustsOldFiles: once a file's times are older than the racy
// slack, a scan records its stat facts and later scans trust them; an
// edit that keeps size and mtime is still seen (ctime and inode change).
func TestIndexTrustsOldFiles(t *testing.T) {
	r, p := newStorage(t, map[string]string{"assistant/agent.yaml": "id: assistant\n", "assistant/agent/SOUL.md": "soul\n"})
	abs := filepath.Join(p.Checkout, "assistant/agent/SOUL.md")
	old := time.Now().Add(-time.Hour).Truncate(time.Millisecond).Add(123 * time.Microsecond)
	if err := os.Chtimes(abs, old, old); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * racySlackFine)
	if _, res, err := r.ScanLive(); err != nil || !res.Clean() { // refreshes the index
		t.Fatalf("scan = %+v, %v", res, err)
	}
	ix := readIndex(p.liveIndex())
	if ix == nil || !ix.trusted(ix.Files["assistant/agent/SOUL.md"]) {
		t.Fatal("index does not trust an old, unchanged file")
	}
	data, _ := os.ReadFile(abs)
	data[0] ^= 0x20
	if err := os.WriteFile(abs, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(abs, old, old); err != nil {
		t.Fatal(err)
	}
	if _, res, err := r.ScanLive(); err != nil || res.Clean() {
		t.Fatalf("same-size same-mtime edit not detected: %+v, %v", res, err)
	}
}
