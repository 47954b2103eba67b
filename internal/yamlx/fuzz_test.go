package yamlx_test

import (
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/yamlx"
)

// FuzzDecodeStrict checks that no input makes DecodeStrict panic or return
// anything but nil or a one-line ECONFIG error naming the file. The seed
// corpus is in testdata/fuzz/FuzzDecodeStrict.
func FuzzDecodeStrict(f *testing.F) {
	f.Add([]byte("schema_version: 1\ntools:\n  toolsets: [coding]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, v := range []any{new(manifest), new(map[string]any), new(any), new([]string)} {
			err := yamlx.DecodeStrict("f.yaml", data, v)
			if err == nil {
				continue
			}
			if got := demiurge.ErrorCode(err); got != demiurge.ECONFIG {
				t.Fatalf("code=%q (%v), want %q", got, err, demiurge.ECONFIG)
			}
			msg := demiurge.ErrorMessage(err)
			if strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("message spans lines: %q", msg)
			}
			if !strings.HasPrefix(msg, "f.yaml:") {
				t.Fatalf("message does not start with the file: %q", msg)
			}
		}
	})
}
