package process

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// countingWriter counts the writes that reach it.
type countingWriter struct {
	w      io.Writer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.w.Write(p)
}

// TestArtifactGathersSmallWrites: writes of any size, small ones among
// large ones, reach the file whole and in order, through the file itself
// (small writes ride along with the next large one in one system call)
// and through a wrapping writer; small writes alone are written together.
func TestArtifactGathersSmallWrites(t *testing.T) {
	for _, hooked := range []bool{false, true} {
		dir := t.TempDir()
		a := &artifactFile{path: filepath.Join(dir, "stdout.log")}
		f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		a.f, a.w = f, f
		var cw *countingWriter
		if hooked {
			cw = &countingWriter{w: f}
			a.w = cw
		}
		r := rand.New(rand.NewPCG(5, 6))
		var want []byte
		for range 2000 {
			n := 1 + r.IntN(64)
			if r.IntN(50) == 0 {
				n = gatherMax - 10 + r.IntN(3*gatherMax)
			}
			p := make([]byte, n)
			for i := range p {
				p[i] = byte(r.Uint32())
			}
			want = append(want, p...)
			a.Write(p)
		}
		a.finish()
		got, err := os.ReadFile(a.storedPath())
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("hooked %v: artifact of %d bytes differs from the %d written (%v)", hooked, len(got), len(want), err)
		}
	}

	a := &artifactFile{path: filepath.Join(t.TempDir(), "stdout.log")}
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cw := &countingWriter{w: f}
	a.f, a.w = f, cw
	for range 100 {
		a.Write([]byte("a line of output\n"))
	}
	a.finish()
	if cw.writes != 1 {
		t.Fatalf("%d writes for 1,700 bytes in small pieces, want 1", cw.writes)
	}

	// What a pipe hands over from `head -c`: 8 KiB pieces, gathered. The
	// 33rd piece overflows the first gatherMax and is written behind it
	// (two calls through the hook, one writev to a file); the other 31
	// are written at the end.
	a = &artifactFile{path: filepath.Join(t.TempDir(), "stdout.log")}
	if f, err = os.OpenFile(a.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
		t.Fatal(err)
	}
	cw = &countingWriter{w: f}
	a.f, a.w = f, cw
	piece := bytes.Repeat([]byte{'x'}, 8<<10)
	for range 2 * gatherMax / len(piece) {
		a.Write(piece)
	}
	a.finish()
	if cw.writes != 3 {
		t.Fatalf("%d writes for %d pieces of 8 KiB, want 3", cw.writes, 2*gatherMax/len(piece))
	}
}
