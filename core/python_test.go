package core_test

import (
	"testing"

	"github.com/demiurge/demiurge/core"
)

// A slot whose directory holds module.py and no module.star resolves the
// default entrypoint to the Python module; the core then needs the worker.
func TestPythonEntrypoints(t *testing.T) {
	c := mustLoad(t, map[string]*string{
		"agent/input/base_input/module.star": nil,
		"agent/input/base_input/module.py":   s("def process(ctx):\n    ctx.input.add_context(ctx.input.raw_text, role='user')\n"),
		"agent/lib/util.py":                  s("X = 1\n"),
	})
	sl, _ := c.Slot(core.PhaseInput, "base_input")
	if got := c.RelPath(sl.ModulePath); got != "agent/input/base_input/module.py" || sl.Function != "process" {
		t.Fatalf("module=%q function=%q", got, sl.Function)
	}
	if !c.HasPython() {
		t.Error("HasPython = false for a core with a module.py slot")
	}
	if mustLoad(t, nil).HasPython() {
		t.Error("HasPython = true for a Starlark core")
	}
	p := mustLoad(t, map[string]*string{"agent/input/base_input/slot.yaml": s("entrypoint: agent/lib/util.py:handle\n"), "agent/lib/util.py": s("def handle(ctx):\n    pass\n")})
	sl, _ = p.Slot(core.PhaseInput, "base_input")
	if got := p.RelPath(sl.ModulePath); got != "agent/lib/util.py" || sl.Function != "handle" {
		t.Fatalf("path entrypoint: module=%q function=%q", got, sl.Function)
	}
}
