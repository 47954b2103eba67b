package process

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// writeArtifact writes n bytes of 'x' to a in chunks of 1 MiB.
func writeArtifact(a *artifactFile, n int) {
	chunk := bytes.Repeat([]byte{'x'}, 1<<20)
	for n > 0 {
		k := min(n, len(chunk))
		a.Write(chunk[:k])
		n -= k
	}
}

// TestArtifactSyncsWhileGrowing: an artifact past syncEvery is synced by a
// goroutine while it is written, which finish ends before closing the file;
// the stored file holds every byte.
func TestArtifactSyncsWhileGrowing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stdout.log")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	a := &artifactFile{path: path, f: f, w: f}
	n := syncEvery + 3<<20
	writeArtifact(a, n)
	if a.bg.req == nil {
		t.Fatal("no background sync started past syncEvery")
	}
	a.finish()
	if a.err != nil || a.bg.req != nil || a.storedPath() != path {
		t.Fatalf("finish: err %v, sync goroutine still owned %v, path %q", a.err, a.bg.req != nil, a.storedPath())
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != int64(n) {
		t.Fatalf("artifact %v, size %d, want %d", err, fi.Size(), n)
	}
}

// TestArtifactSmallNeverSyncsInBackground: below syncEvery no goroutine is
// started.
func TestArtifactSmallNeverSyncsInBackground(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stdout.log")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	a := &artifactFile{path: path, f: f, w: f}
	writeArtifact(a, syncEvery-1)
	if a.bg.req != nil {
		t.Fatal("background sync started below syncEvery")
	}
	a.finish()
	if a.err != nil || a.storedPath() != path {
		t.Fatalf("finish: err %v, path %q", a.err, a.storedPath())
	}
}

// TestArtifactBackgroundSyncFailureIsReported: a failed background sync
// fails the artifact even when the final fsync succeeds (the kernel tells
// a writeback error to one sync only). A pipe stands for the file while
// it grows, as syncing a pipe fails with EINVAL; the final fsync is then
// made on a real file.
func TestArtifactBackgroundSyncFailureIsReported(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = io.Copy(io.Discard, r) })
	path := filepath.Join(t.TempDir(), "stdout.log")
	a := &artifactFile{path: path, f: w, w: w}
	writeArtifact(a, syncEvery)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	a.f, a.w = f, f
	a.finish()
	w.Close()
	wg.Wait()
	if !errors.Is(a.err, syscall.EINVAL) || a.storedPath() != "" {
		t.Fatalf("err %v, path %q: want EINVAL and no artifact", a.err, a.storedPath())
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("failed artifact left on disk: %v", err)
	}
}
