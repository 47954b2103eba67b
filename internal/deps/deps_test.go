package deps

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/demiurge/demiurge"

// layer of every package of the module. A package missing here fails the
// test, so a new package must be placed deliberately.
var layers = map[string]string{
	"":                  "root",
	"policy":            "pure",
	"urlpolicy":         "pure",
	"cmdguard":          "pure",
	"redact":            "pure",
	"internal/yamlx":    "util",
	"core":              "model",
	"store":             "adapter",
	"provider":          "adapter",
	"starlark":          "adapter",
	"process":           "adapter",
	"sandbox":           "adapter",
	"gitrepo":           "adapter",
	"session":           "engine",
	"turn":              "engine",
	"effect":            "engine",
	"slot":              "engine",
	"delivery":          "engine",
	"controlplane":      "engine",
	"corerepo":          "engine", // core repository and evolution: imports core and the pure packages
	"schedule":          "engine",
	"delegation":        "engine",
	"builtin":           "tools",
	"authored":          "tools",
	"mcp":               "tools",
	"host":              "composition",
	"internal/cli":      "cli",
	"cmd/demiurge":      "main",
	"bench":             "main",
	"internal/deps":     "test",
	"internal/e2e":      "test",
	"internal/testutil": "test",

	"internal/demiurgetest":                     "test",
	"mcp/internal/testserver":                   "test",
	"mcp/internal/testserver/cmd/mcptestserver": "test",

	// The task worker's measurements, for the bench driver: they wire the
	// store to the worker like the composition root does.
	"internal/taskbench": "composition",
}

// allowed lists, per layer, the layers it may import.
var allowed = map[string][]string{
	"root":        {},
	"pure":        {"root"},
	"util":        {"root"},
	"model":       {"root", "pure", "util"},
	"adapter":     {"root", "pure", "util"},
	"engine":      {"root", "pure", "util", "model", "engine"},
	"tools":       {"root", "pure", "util", "model", "engine", "adapter"},
	"composition": {"root", "pure", "util", "model", "engine", "adapter", "tools"},
	"cli":         {"root", "pure", "util", "model", "engine", "adapter", "tools", "composition"},
	"main":        {"cli", "composition", "root", "adapter", "engine", "model", "util", "pure", "tools"},
	"test":        {"root", "pure", "util", "model", "engine", "adapter", "tools", "composition", "cli"},
}

// exceptions are single edges allowed across the rules above, each with its
// reason.
var exceptions = map[[2]string]string{
	{"process", "sandbox"}: "every command the process manager starts may run inside the OS sandbox",
	{"slot", "starlark"}:   "the slot runtime is the slot ABI over the Starlark interpreter; authored code reaches nothing else",
	{"mcp/internal/testserver/cmd/mcptestserver", "mcp/internal/testserver"}: "the MCP test server's command runs the test server",
}

type pkg struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	return pkgs
}

func rel(path string) (string, bool) {
	if path == module {
		return "", true
	}
	if r, ok := strings.CutPrefix(path, module+"/"); ok {
		return r, true
	}
	return "", false
}

func TestLayering(t *testing.T) {
	for _, p := range listPackages(t) {
		from, _ := rel(p.ImportPath)
		layer, ok := layers[from]
		if !ok {
			t.Errorf("package %q has no layer in internal/deps; place it deliberately", from)
			continue
		}
		for _, imp := range p.Imports {
			if imp == "testing" && layer != "test" {
				t.Errorf("%s imports testing in production code", p.ImportPath)
			}
			to, ours := rel(imp)
			if !ours {
				continue
			}
			if _, ok := exceptions[[2]string{from, to}]; ok {
				continue
			}
			toLayer := layers[to]
			if !contains(allowed[layer], toLayer) {
				t.Errorf("%s (%s) imports %s (%s): not allowed", orRoot(from), layer, orRoot(to), toLayer)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func orRoot(p string) string {
	if p == "" {
		return "demiurge (root)"
	}
	return p
}
