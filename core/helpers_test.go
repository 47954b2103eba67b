package core_test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// baseCore is a small valid core "demo". Tests override or delete files
// (a nil value deletes) to build the case they need; line numbers in
// expected messages refer to the contents written by the test.
func baseCore() map[string]*string {
	return map[string]*string{
		"agent.yaml": s(`schema_version: 1
agent:
  id: demo
tools:
  toolsets: [coding]
slots:
  tools: agent/tools
`),
		"agent/SOUL.md": s("You are demo.\n"),
		"agent/pipelines.yaml": s(`schema_version: 1
input:
  serial: [base_input]
output:
  serial: [base_output]
`),
		"agent/input/base_input/slot.yaml":     s("failure_policy: hard\n"),
		"agent/input/base_input/module.star":   s("def process(ctx):\n    ctx.input.add_context(ctx.input.raw_text, role = \"user\")\n"),
		"agent/output/base_output/slot.yaml":   s("failure_policy: hard\n"),
		"agent/output/base_output/module.star": s("def process(ctx):\n    ctx.output.send_text(ctx.output.response_text)\n"),
	}
}

func s(v string) *string { return &v }

// writeCore writes files (base overridden by extra) under <tmp>/agents/demo
// and returns the core directory.
func writeCore(t *testing.T, extra map[string]*string) string {
	t.Helper()
	files := baseCore()
	for k, v := range extra {
		files[k] = v
	}
	dir := filepath.Join(t.TempDir(), "agents", "demo")
	for name, content := range files {
		if content == nil {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(*content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// snapshot records every file and directory under dir with its mode, size,
// modification time and content hash.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sum := ""
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(data))
		}
		out[p] = fmt.Sprintf("%v %d %d %s", info.Mode(), info.Size(), info.ModTime().UnixNano(), sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
