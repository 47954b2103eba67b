package deps

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/demiurge/demiurge"

// layers places every package of the module. A package missing here fails
// the test, so a new package must be placed deliberately; an entry that
// names no package fails too, so the table only lists what exists.
var layers = map[string]string{
	"":          "root",
	"policy":    "pure",
	"urlpolicy": "pure",
	"cmdguard":  "pure",
	"redact":    "pure",
	"coretree":  "pure",
	"tokens":    "pure", // token counting: the providers' limits and the turn's budget share it
	// The byte-pair vocabularies as static tables, and their generator.
	"tokens/internal/vocab":     "util",
	"tokens/internal/vocab/gen": "main",
	"internal/yamlx":            "util",
	"internal/filelock":         "util",
	"internal/atomicfile":       "util",
	// The runtime home's private .env: parsing, checks, rendering.
	"internal/envfile": "util",
	// A program on a pseudo-terminal read through a VT emulator, for the
	// terminal UI's end-to-end tests and the bench driver's terminal figures.
	"internal/vtpty": "util",
	// The bench driver's reader of /proc/<pid>/status.
	"cmd/bench/internal/procstat": "util",
	"core":                        "model",
	"store":                       "adapter",
	"provider":                    "adapter",
	"starlark":                    "adapter",
	"process":                     "adapter",
	"sandbox":                     "adapter",
	"gitrepo":                     "adapter",
	"channels/webhook":            "adapter", // the HTTP webhook channel
	"channels/telegram":           "adapter", // the Telegram Bot API channel (long polling)
	"channels/email":              "adapter", // the IMAP/SMTP email channel
	"session":                     "engine",
	"turn":                        "engine",
	"effect":                      "engine",
	"slot":                        "engine",
	"delivery":                    "engine",
	"controlplane":                "engine",
	"corerepo":                    "engine",
	"coregate":                    "engine",
	"schedule":                    "engine",
	"delegation":                  "engine",
	"gateway":                     "engine",   // the channel inbox worker and the channels' supervisor
	"builtin":                     "registry", // assembles the builtin toolsets
	"builtin/files":               "tools",
	"builtin/terminal":            "tools",
	"builtin/web":                 "tools",
	"builtin/skills":              "tools",
	"builtin/todo":                "tools",
	"builtin/dialog":              "tools",
	"builtin/sessions":            "tools",
	"builtin/tasks":               "tools",
	"builtin/delegate":            "tools",
	"builtin/evolve":              "tools",
	"builtin/schedules":           "tools",
	"authored":                    "tools",
	// The out-of-process runner of authored Python: it drives the process
	// manager and the sandbox and serves the ctx built-ins of package starlark.
	"pyworker":     "tools",
	"mcp":          "tools",
	"host":         "composition",
	"internal/cli": "cli",
	// Host processes over one shared ledger, for the multi-Host tests and
	// the bench's fleet figures: a front end over the Host like the CLI.
	"internal/fleet":    "cli",
	"cmd/demiurge":      "main",
	"cmd/bench":         "main",
	"internal/deps":     "test",
	"internal/e2e":      "test",
	"internal/testutil": "test",

	// The bench driver's measurements of single packages: they wire what
	// they measure like the composition root does.
	"cmd/bench/internal/corebench":  "bench",
	"cmd/bench/internal/mcpbench":   "bench",
	"cmd/bench/internal/procbench":  "bench",
	"cmd/bench/internal/storebench": "bench",
	"cmd/bench/internal/taskbench":  "bench",
	"cmd/bench/internal/tuibench":   "bench",

	// What several builtin toolsets share: argument and result helpers,
	// the workspace sandbox, safe file I/O under a root, bounded text
	// reads, unified diffs, HTML to text.
	"builtin/internal/tool":      "toolkit",
	"builtin/internal/workspace": "toolkit",
	"builtin/internal/rootfs":    "toolkit",
	"builtin/internal/textread":  "toolkit",
	"builtin/internal/udiff":     "toolkit",
	"builtin/internal/htmltext":  "toolkit",

	"internal/demiurgetest":                     "test",
	"mcp/internal/testserver":                   "test",
	"mcp/internal/testserver/cmd/mcptestserver": "test",

	// The terminal UI and its slash commands: front ends over the Host,
	// below the CLI that launches the UI.
	"internal/tui":       "ui",
	"internal/tui/slash": "ui",
}

// allowed lists, per layer, the layers it may import. Engines do not
// import engines: they declare the narrow interfaces they need and the
// composition root passes the real runtimes (exceptions below).
var allowed = map[string][]string{
	"root":        {},
	"pure":        {"root"},
	"util":        {"root"},
	"model":       {"root", "pure", "util"},
	"adapter":     {"root", "pure", "util"},
	"engine":      {"root", "pure", "util", "model"},
	"toolkit":     {"root", "pure", "util", "model", "engine", "adapter", "toolkit"},
	"tools":       {"root", "pure", "util", "model", "engine", "adapter", "toolkit"},
	"registry":    {"root", "pure", "util", "model", "engine", "adapter", "toolkit", "tools"},
	"composition": {"root", "pure", "util", "model", "engine", "adapter", "tools", "registry"},
	"ui":          {"root", "pure", "util", "model", "engine", "adapter", "tools", "registry", "composition"},
	"cli":         {"root", "pure", "util", "model", "engine", "adapter", "tools", "registry", "composition", "ui"},
	"bench":       {"root", "pure", "util", "model", "engine", "adapter", "tools", "registry", "composition"},
	"main":        {"cli", "composition", "root", "adapter", "engine", "model", "util", "pure", "tools", "registry", "bench"},
	"test":        {"root", "pure", "util", "model", "engine", "adapter", "toolkit", "tools", "registry", "composition", "cli"},
}

// exceptions are single edges allowed across the rules above, each with its
// reason. An exception the rules allow anyway, or one no import uses, fails
// the test: remove it.
var exceptions = map[[2]string]string{
	{"tokens", "tokens/internal/vocab"}: "token counting merges pieces over its own encodings' tables, an internal package of its own",
	{"corerepo", "gitrepo"}:             "the core repository's workflows keep every revision in its git storage, which is theirs alone",
	{"corerepo", "coregate"}: "the core repository's workflows run the gates and the security review on every save and review; " +
		"the gates know nothing of the workflows",
	{"turn", "effect"}:                     "a turn runs the model ⇄ tools loop over the effect runtime's per-turn catalog (TurnContext, Catalog, Secrets)",
	{"delegation", "effect"}:               "delegate_task is an effect adapter: it answers effect's Invocation with an Outcome under the parent's ToolPolicy",
	{"process", "sandbox"}:                 "every command the process manager starts may run inside the OS sandbox",
	{"internal/tui", "internal/tui/slash"}: "the terminal UI renders the slash commands' outcomes and is their Env; the commands know nothing of the drawing",
	{"slot", "starlark"}:                   "the slot runtime is the slot ABI over the Starlark interpreter; authored code reaches nothing else",
	{"mcp/internal/testserver/cmd/mcptestserver", "mcp/internal/testserver"}: "the MCP test server's command runs the test server",
}

type pkg struct {
	ImportPath string
	Imports    []string
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

// rules are a layering: the layer of each package, what each layer may
// import, and the named exceptions.
type rules struct {
	layers     map[string]string
	allowed    map[string][]string
	exceptions map[[2]string]string
}

// check returns every violation of r by pkgs: a package without a layer,
// a layer entry without a package, a forbidden import, testing imported by
// production code, and an exception that is needless or unused.
func (r rules) check(pkgs []pkg) []string {
	var problems []string
	seen := map[string]bool{}
	used := map[[2]string]bool{}
	for _, p := range pkgs {
		from, _ := rel(p.ImportPath)
		seen[from] = true
		layer, ok := r.layers[from]
		if !ok {
			problems = append(problems, fmt.Sprintf("package %q has no layer in internal/deps; place it deliberately", from))
			continue
		}
		for _, imp := range p.Imports {
			if imp == "testing" && layer != "test" {
				problems = append(problems, fmt.Sprintf("%s imports testing in production code", p.ImportPath))
			}
			to, ours := rel(imp)
			if !ours {
				continue
			}
			edge := [2]string{from, to}
			if _, ok := r.exceptions[edge]; ok {
				used[edge] = true
				continue
			}
			if toLayer := r.layers[to]; !slices.Contains(r.allowed[layer], toLayer) {
				problems = append(problems, fmt.Sprintf("%s (%s) imports %s (%s): not allowed", orRoot(from), layer, orRoot(to), toLayer))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.layers)) {
		if !seen[name] {
			problems = append(problems, fmt.Sprintf("internal/deps places %q (%s), which is no package: remove the entry", orRoot(name), r.layers[name]))
		}
	}
	for _, edge := range slices.SortedFunc(maps.Keys(r.exceptions), func(a, b [2]string) int {
		return strings.Compare(a[0]+" "+a[1], b[0]+" "+b[1])
	}) {
		switch {
		case slices.Contains(r.allowed[r.layers[edge[0]]], r.layers[edge[1]]):
			problems = append(problems, fmt.Sprintf("exception %s -> %s is allowed by the layers anyway: remove it", orRoot(edge[0]), orRoot(edge[1])))
		case !used[edge]:
			problems = append(problems, fmt.Sprintf("exception %s -> %s: no such import any more: remove it", orRoot(edge[0]), orRoot(edge[1])))
		}
	}
	return problems
}

func TestLayering(t *testing.T) {
	for _, problem := range (rules{layers, allowed, exceptions}).check(listPackages(t)) {
		t.Error(problem)
	}
}

// TestCheckRejects runs the check on a made-up module: every kind of
// violation is reported, a ghost entry included.
func TestCheckRejects(t *testing.T) {
	r := rules{
		layers:     map[string]string{"": "root", "a": "engine", "b": "engine", "c": "adapter", "ghost": "engine"},
		allowed:    map[string][]string{"root": {}, "engine": {"root"}, "adapter": {"root"}},
		exceptions: map[[2]string]string{{"a", "c"}: "allowed on purpose", {"b", ""}: "needless", {"b", "c"}: "stale"},
	}
	pkgs := []pkg{
		{ImportPath: module},
		{ImportPath: module + "/a", Imports: []string{module + "/b", module + "/c", "testing"}},
		{ImportPath: module + "/b", Imports: []string{module}},
		{ImportPath: module + "/c"},
		{ImportPath: module + "/unplaced"},
	}
	want := []string{
		"a (engine) imports b (engine): not allowed",
		module + "/a imports testing in production code",
		`package "unplaced" has no layer in internal/deps; place it deliberately`,
		`internal/deps places "ghost" (engine), which is no package: remove the entry`,
		"exception b -> demiurge (root) is allowed by the layers anyway: remove it",
		"exception b -> c: no such import any more: remove it",
	}
	if got := r.check(pkgs); !slices.Equal(got, want) {
		t.Fatalf("problems\n got %q\nwant %q", got, want)
	}
}

func orRoot(p string) string {
	if p == "" {
		return "demiurge (root)"
	}
	return p
}
