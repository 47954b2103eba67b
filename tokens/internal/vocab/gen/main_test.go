package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The files in package vocab are what the generator writes from the
// library now: after updating the library, run go generate.
func TestTheFilesAreUpToDate(t *testing.T) {
	for _, e := range encodings {
		bin, src, err := generate(e)
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		for name, want := range map[string][]byte{e.name + ".bin": bin, e.name + ".go": src} {
			got, err := os.ReadFile(filepath.Join("..", name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is not what the generator writes: run go generate in tokens/internal/vocab", name)
			}
		}
	}
}
