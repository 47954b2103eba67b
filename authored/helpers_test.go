package authored_test

import (
	"bufio"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/demiurge/demiurge/authored"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/starlark"
)

const fixtureCore = "testdata/agents/demo"

// copyCore copies the fixture core into a fresh temporary agents directory
// and returns the new core directory, for tests that change files.
func copyCore(t testing.TB) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "agents", "demo")
	err := filepath.WalkDir(fixtureCore, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(fixtureCore, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func loadCore(t testing.TB, dir string) *core.Core {
	t.Helper()
	c, err := core.Load(dir)
	if err != nil {
		t.Fatalf("core.Load: %v", err)
	}
	return c
}

// printCounter counts the print() calls of authored code; a module's
// top-level print runs once per compilation, so it counts Loads.
type printCounter struct{ n atomic.Int32 }

func (p *printCounter) print(string, string) { p.n.Add(1) }

// fixture is a loaded core with its definitions by name.
type fixture struct {
	core  *core.Core
	defs  map[string]effect.Definition
	order []string
	loads *printCounter
}

func newFixture(t testing.TB, dir string, opts authored.Options) *fixture {
	t.Helper()
	c := loadCore(t, dir)
	loads := &printCounter{}
	rt := starlark.NewRuntime(starlark.Options{Print: loads.print})
	f := &fixture{core: c, defs: map[string]effect.Definition{}, loads: loads}
	for _, d := range authored.Definitions(c, rt, opts) {
		f.defs[d.Name] = d
		f.order = append(f.order, d.Name)
	}
	return f
}

func (f *fixture) def(t testing.TB, name string) effect.Definition {
	t.Helper()
	d, ok := f.defs[name]
	if !ok {
		t.Fatalf("no definition %q", name)
	}
	return d
}

// coreGrants is the capability snapshot a turn pins for the fixture core:
// defaults and capabilities.slots path grants, without component lists.
func coreGrants(c *core.Core) policy.Grants {
	src := c.CapabilitySources()
	return policy.NewGrants(src.Defaults, src.Paths)
}

func turnContext(c *core.Core, grants policy.Grants) effect.TurnContext {
	return effect.TurnContext{
		SessionID: "ses_1", TurnID: "turn_1", StepID: "step_1",
		CoreID: c.ID, CoreRevision: "rev_1", Workspace: "/work/space",
		Grants: grants,
	}
}

// invoke calls the adapter of tool name directly and fails the test on a Go
// error.
func (f *fixture) invoke(t testing.TB, name string, args map[string]any) effect.Outcome {
	t.Helper()
	return f.invokeWith(t, context.Background(), name, args, turnContext(f.core, coreGrants(f.core)))
}

func (f *fixture) invokeWith(t testing.TB, ctx context.Context, name string, args map[string]any, tc effect.TurnContext) effect.Outcome {
	t.Helper()
	out, err := run(ctx, f.def(t, name).Adapter, effect.Invocation{CallID: "call_1", Args: args, Turn: tc})
	if err != nil {
		t.Fatalf("Invoke(%s): Go error %v, want an outcome", name, err)
	}
	return out
}

// run prepares and runs one call of a, as the dispatcher does once its
// checks and the approval have passed.
func run(ctx context.Context, a effect.Adapter, inv effect.Invocation) (effect.Outcome, error) {
	call, out := a.Prepare(ctx, inv)
	if out != nil {
		return *out, nil
	}
	return call.Run(ctx)
}

// lineOf returns the 1-based line of the fixture file that carries
// "# @marker".
func lineOf(t testing.TB, rel, marker string) int {
	t.Helper()
	f, err := os.Open(filepath.Join(fixtureCore, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.Contains(sc.Text(), "# @"+marker) {
			return n
		}
	}
	t.Fatalf("%s has no # @%s", rel, marker)
	return 0
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func invocation(text string, tc effect.TurnContext) effect.Invocation {
	return invocationArgs(map[string]any{"text": text}, tc)
}

func invocationArgs(args map[string]any, tc effect.TurnContext) effect.Invocation {
	return effect.Invocation{CallID: "call_1", Args: args, Turn: tc}
}
