package gitrepo

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge/coretree"
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

// An index decodes to what was encoded, paths with spaces included; a
// malformed one does not decode (a scan then hashes every file).
func TestIndexRoundTripAndMalformed(t *testing.T) {
	h := strings.Repeat("ab", 20)
	commit, _ := coretree.ParseHash(h)
	ix := &statIndex{Commit: commit, Written: 42, Files: map[string]stat{
		"a/agent.yaml":     {Hash: commit, Mode: 0o100644, Size: 3, MTime: 5, CTime: 6, Ino: 7},
		"a/with space.txt": {Hash: commit, Mode: 0o100755, Size: 1, MTime: 2, CTime: 3, Ino: 4},
	}}
	got, err := decodeIndex(encodeIndex(ix))
	if err != nil || !reflect.DeepEqual(got, ix) {
		t.Fatalf("round trip: %+v, %v; want %+v", got, err, ix)
	}
	head := indexMagic + " " + h + " 42\n"
	for name, data := range map[string]string{
		"empty":          "",
		"bad magic":      "nope " + h + " 42\n",
		"bad commit":     indexMagic + " xyz 42\n",
		"short line":     head + "100644 " + h + " 3 5 6\n",
		"bad size":       head + "100644 " + h + " x 5 6 7 a\n",
		"bad mode":       head + "9 " + h + " 3 5 6 7 a\n",
		"bad entry hash": head + "100644 zz 3 5 6 7 a\n",
	} {
		if got, err := decodeIndex([]byte(data)); err == nil {
			t.Errorf("%s: decoded to %+v", name, got)
		}
	}
}
