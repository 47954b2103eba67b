package authored_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/demiurge/demiurge/authored"
	"github.com/demiurge/demiurge/starlark"
)

// BenchmarkDefinitions200 measures catalog preparation for a core with 200
// authored tools (target: at most 5 ms per call). Loading the core, which
// parses the modules and checks the schemas, happens once, outside the loop.
func BenchmarkDefinitions200(b *testing.B) {
	dir := copyCore(b)
	tools := filepath.Join(dir, "agent", "tools")
	if err := os.RemoveAll(tools); err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		td := filepath.Join(tools, fmt.Sprintf("tool_%03d", i))
		if err := os.MkdirAll(td, 0o700); err != nil {
			b.Fatal(err)
		}
		writeFile(b, filepath.Join(td, "tool.yaml"), fmt.Sprintf(`description: Tool number %d.
input_schema:
  type: object
  properties:
    text: {type: string, description: The text.}
    count: {type: integer, minimum: 0}
  required: [text]
risk: low
approval_policy: auto
capabilities: [net.fetch]
`, i))
		writeFile(b, filepath.Join(td, "module.star"), "def execute(ctx, args):\n    return args[\"text\"]\n")
	}
	c := loadCore(b, dir)
	if len(c.Tools) != 200 {
		b.Fatalf("%d tools loaded, want 200", len(c.Tools))
	}
	rt := starlark.NewRuntime(starlark.Options{})
	b.ReportAllocs()
	for b.Loop() {
		if defs := authored.Definitions(c, rt, authored.Options{}); len(defs) != 200 {
			b.Fatalf("%d definitions", len(defs))
		}
	}
}
