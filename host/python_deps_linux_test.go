package host_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/turn"
)

// interpreterWithPackage makes a Python environment whose site-packages
// holds one module of its own (demo_dep), as an operator's virtualenv
// holds what it installed, and returns its interpreter and site-packages.
func interpreterWithPackage(t *testing.T) (python, site string) {
	t.Helper()
	env := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command("/usr/bin/python3", "-m", "venv", "--without-pip", env).CombinedOutput(); err != nil {
		t.Skipf("python3 -m venv: %v: %s", err, out)
	}
	python = filepath.Join(env, "bin", "python3")
	out, err := exec.Command(python, "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").Output()
	if err != nil {
		t.Fatal(err)
	}
	site = strings.TrimSpace(string(out))
	writeFile(t, filepath.Join(site, "demo_dep.py"), "VALUE = 'from the interpreter packages'\n")
	return python, site
}

func listDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// dependencies.mode host_shared: a core's Python imports what the
// configured interpreter has installed, and nothing else; a module the
// interpreter lacks fails the slot with the module's name, and the Host
// installs nothing, whether allow_additional_dependencies is false (the
// default core's setting) or true (accepted, without effect).
func TestPythonDependenciesAreTheInterpreters(t *testing.T) {
	needPython(t)
	python, site := interpreterWithPackage(t)
	before := listDir(t, site)
	home := t.TempDir()
	if _, err := host.Init(home, ""); err != nil {
		t.Fatal(err)
	}
	pythonCore(t, home)
	core := filepath.Join(home, "agents", "assistant")
	agentYAML := filepath.Join(core, "agent.yaml")
	b, err := os.ReadFile(agentYAML)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "dependencies:\n  mode: host_shared\n  allow_additional_dependencies: false\n") {
		t.Fatalf("the default core's agent.yaml changed its dependencies section:\n%s", b)
	}
	writeFile(t, filepath.Join(core, "agent/input/deps/slot.yaml"), "failure_policy: hard\n")
	writeFile(t, filepath.Join(core, "agent/input/deps/module.py"), `
import json
import demo_dep

def process(ctx):
    if ctx.input.raw_text == "missing":
        import no_such_dependency_here
    ctx.input.progress("dep: " + demo_dep.VALUE + " " + json.dumps([1]))
`)
	writeFile(t, filepath.Join(core, "agent/pipelines.yaml"), "schema_version: 1\ninput:\n  serial: [deps, base_input]\n  parallel: []\noutput:\n  serial: [base_output]\n  parallel: []\nbootstrap:\n  serial: [session_context]\n")
	writeFile(t, filepath.Join(home, "config.yaml"), "runtime:\n  python: "+python+"\n")

	open := func() *host.Host {
		t.Helper()
		h, err := host.Open(context.Background(), host.Options{Home: home, FakeScript: demiurgetest.Script(t,
			demiurge.ModelResponse{Content: "a"}, demiurge.ModelResponse{Content: "b"})})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	ctx := context.Background()
	h := open()
	res, err := h.Run(ctx, turn.Request{Text: "hi", NewSession: true})
	if err != nil || res.Outcome != turn.OutcomeCompleted {
		t.Fatalf("turn: %v %+v", err, res)
	}
	if got := deliveredTexts(res); !strings.Contains(got, `dep: from the interpreter packages [1]`) {
		t.Errorf("deliveries %q", got)
	}
	res, err = h.Run(ctx, turn.Request{Text: "missing", NewSession: true})
	want := "input slot deps failed: agent/input/deps/module.py:7: ModuleNotFoundError: No module named 'no_such_dependency_here'"
	if err != nil || res.Outcome != turn.OutcomeFailed || res.Error == nil || res.Error.Message != want {
		t.Fatalf("a missing module: %v %+v", err, res)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// allow_additional_dependencies: true asks for nothing the Host does.
	writeFile(t, agentYAML, strings.Replace(string(b), "allow_additional_dependencies: false", "allow_additional_dependencies: true", 1))
	h = open()
	res, err = h.Run(ctx, turn.Request{Text: "missing", NewSession: true})
	if err != nil || res.Outcome != turn.OutcomeFailed || res.Error == nil || res.Error.Message != want {
		t.Fatalf("a missing module with allow_additional_dependencies: %v %+v", err, res)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if after := listDir(t, site); after != before {
		t.Errorf("the interpreter's packages changed: %s, before %s", after, before)
	}

	// Another interpreter has other packages: the system one lacks demo_dep.
	writeFile(t, filepath.Join(home, "config.yaml"), "runtime:\n  python: /usr/bin/python3\n")
	h = open()
	defer h.Close(ctx)
	res, err = h.Run(ctx, turn.Request{Text: "hi", NewSession: true})
	if err != nil || res.Outcome != turn.OutcomeFailed || res.Error == nil ||
		res.Error.Message != "input slot deps failed: agent/input/deps/module.py:3: ModuleNotFoundError: No module named 'demo_dep'" {
		t.Fatalf("the system interpreter: %v %+v", err, res)
	}
}
