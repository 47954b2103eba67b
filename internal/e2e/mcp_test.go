package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// everythingEntry is the installed reference server (npm ci --prefix
// mcp/testdata/interop); the test skips without it, except under CI.
func everythingEntry(t *testing.T) string {
	t.Helper()
	entry, err := filepath.Abs("../../mcp/testdata/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	_, statErr := os.Stat(entry)
	_, nodeErr := exec.LookPath("node")
	if statErr != nil || nodeErr != nil {
		msg := "MCP reference servers are not installed: run `npm ci --prefix mcp/testdata/interop`"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return entry
}

// declareEverything declares server-everything for the assistant core,
// wrapped so that every start of the server leaves a line in spawns.log
// (in the workspace: the sandboxed server may write nowhere else),
// and grants the core its connect and call capabilities.
func (e *env) declareEverything(t *testing.T) string {
	entry := everythingEntry(t)
	spawns := filepath.Join(e.workspace, "spawns.log")
	node, _ := exec.LookPath("node")
	if r := e.run("", "init"); r.code != 0 {
		t.Fatalf("init: %s", r.stderr)
	}
	if err := os.MkdirAll(filepath.Join(e.home, "agents", "assistant", "agent", "mcp"), 0o700); err != nil {
		t.Fatal(err)
	}
	e.writeCoreFile("agent/mcp/everything.yaml", fmt.Sprintf(
		"command: /bin/sh\nargs: [\"-c\", \"echo started >> %s; exec %s %s stdio\"]\nconnect_timeout_seconds: 20\n", spawns, node, entry))
	manifest := filepath.Join(e.home, "agents", "assistant", "agent.yaml")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	grants := "  defaults:\n    mcp.connect:everything: {}\n    mcp.call:everything: {}\n"
	if err := os.WriteFile(manifest, []byte(strings.Replace(string(b), "  defaults:\n", grants, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	// Granting capabilities is never self-service: the operator confirms.
	r := e.run("", "core", "save", "--json")
	if r.code == 0 {
		return spawns
	}
	token := between(r.stdout, `"confirm_token": "`, `"`)
	if token == "" {
		t.Fatalf("core save refused without a token: %s %s", r.stdout, r.stderr)
	}
	if r := e.run("", "core", "save", "--confirm", token); r.code != 0 {
		t.Fatalf("core save --confirm: %s %s", r.stdout, r.stderr)
	}
	return spawns
}

func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, to)
	return v
}

func TestMCPConnectDeniedSpawnsNothing(t *testing.T) {
	e := newEnv(t)
	spawns := e.declareEverything(t)
	out := e.scripted("deny", `[{"name":"everything__echo","arguments":{"message":"hi"}}]`)
	if out.Outcome != "completed" {
		t.Fatalf("turn: %+v", out)
	}
	if c := out.ToolCalls[0]; c.Status != "not_found" {
		t.Fatalf("an MCP tool was offered without connect approval: %+v", c)
	}
	if _, err := os.Stat(spawns); !os.IsNotExist(err) {
		b, _ := os.ReadFile(spawns)
		t.Fatalf("the server was started without approval: %q", b)
	}
}

func TestMCPEchoRoundTripThroughRun(t *testing.T) {
	e := newEnv(t)
	spawns := e.declareEverything(t)
	e.extra = append(e.extra, "E2E_HOST_SECRET=e2e-host-secret-0452")
	out := e.scripted("all", `[{"name":"everything__echo","arguments":{"message":"round trip"}},{"name":"everything__get-env","arguments":{}}]`)
	if out.Outcome != "completed" {
		t.Fatalf("turn: %+v", out)
	}
	echo := out.ToolCalls[0]
	if echo.Status != "succeeded" || echo.Content != "Echo: round trip" {
		t.Fatalf("echo: %+v", echo)
	}
	env := out.ToolCalls[1]
	if env.Status != "succeeded" || strings.Contains(env.Content, "e2e-host-secret-0452") || strings.Contains(env.Content, "E2E_HOST_SECRET") {
		t.Fatalf("get-env shows a Host variable: %+v", env)
	}
	if b, _ := os.ReadFile(spawns); strings.Count(string(b), "started") != 1 {
		t.Fatalf("server starts: %q", b)
	}
	list := e.run("", "mcp", "list", "--json")
	if list.code != 0 || !strings.Contains(list.stdout, `"server": "everything"`) {
		t.Fatalf("mcp list: %s %s", list.stdout, list.stderr)
	}
	check := e.run("", "mcp", "check", "--json")
	if check.code != 0 || !strings.Contains(check.stdout, `"state": "connected"`) {
		t.Fatalf("mcp check: %s %s", check.stdout, check.stderr)
	}
}
