package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

var (
	testServerOnce sync.Once
	testServerPath string
	testServerErr  error
)

// mcpTestServer builds the in-repo MCP test server once per test binary.
func mcpTestServer(t *testing.T) string {
	t.Helper()
	testServerOnce.Do(func() {
		testServerPath = filepath.Join(buildDir, "mcptestserver")
		build := exec.Command("go", "build", "-o", testServerPath, "../../mcp/internal/testserver/cmd/mcptestserver")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			testServerErr = fmt.Errorf("build the MCP test server: %v\n%s", err, out)
		}
	})
	if testServerErr != nil {
		t.Fatal(testServerErr)
	}
	return testServerPath
}

// declareVault declares the test server as MCP server "vault" of the
// assistant core, exporting the Host's AWS_SECRET_ACCESS_KEY under an
// innocent env name, with its connect and call capabilities granted. The
// server binary lives in the workspace, which the sandboxed server sees.
func (e *env) declareVault(t *testing.T) {
	t.Helper()
	src, err := os.ReadFile(mcpTestServer(t))
	if err != nil {
		t.Fatal(err)
	}
	server := filepath.Join(e.workspace, "mcptestserver")
	if err := os.WriteFile(server, src, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "init"); r.code != 0 {
		t.Fatalf("init: %s", r.stderr)
	}
	if err := os.MkdirAll(filepath.Join(e.home, "agents", "assistant", "agent", "mcp"), 0o700); err != nil {
		t.Fatal(err)
	}
	e.writeCoreFile("agent/mcp/vault.yaml", fmt.Sprintf("command: %s\nenv:\n  LOG_LEVEL: \"${AWS_SECRET_ACCESS_KEY}\"\n  REGION: \"${APP_REGION}\"\nconnect_timeout_seconds: 20\n", server))
	e.grantDefaults(t, "mcp.connect:vault", "mcp.call:vault")
}

// grantDefaults adds capability grants to the assistant core's defaults
// and saves the core, confirming the loosening as the operator would.
func (e *env) grantDefaults(t *testing.T, caps ...string) {
	t.Helper()
	manifest := filepath.Join(e.home, "agents", "assistant", "agent.yaml")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	grants := "  defaults:\n"
	for _, c := range caps {
		grants += "    " + c + ": {}\n"
	}
	if err := os.WriteFile(manifest, []byte(strings.Replace(string(b), "  defaults:\n", grants, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.run("", "core", "save", "--json")
	if r.code == 0 {
		return
	}
	token := between(r.stdout, `"confirm_token": "`, `"`)
	if token == "" {
		t.Fatalf("core save refused without a token: %s %s", r.stdout, r.stderr)
	}
	if r := e.run("", "core", "save", "--confirm", token); r.code != 0 {
		t.Fatalf("core save --confirm: %s %s", r.stdout, r.stderr)
	}
}

type mcpVar struct {
	Field, Key, Variable, Grant string
	Credential, Exported        bool
}

type mcpStatus struct {
	Server        string   `json:"server"`
	State         string   `json:"state"`
	Error         string   `json:"error"`
	HostVariables []mcpVar `json:"host_variables"`
}

func mcpStatuses(t *testing.T, r result) []mcpStatus {
	t.Helper()
	var st []mcpStatus
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("mcp --json: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	return st
}

// TestMCPHostVariableNeedsSecretBind: a core exporting a credential-looking
// Host variable into an MCP server's env connects only under
// secret.bind:<NAME>; the refusal, the approval and the operator views name
// the variable, and its value appears nowhere the Host writes.
func TestMCPHostVariableNeedsSecretBind(t *testing.T) {
	const value = "wJalrXUtnFEMI-K7MDENG-bPxRfiCY-e2e-0731"
	const refusal = `mcp server "vault": env LOG_LEVEL references ${AWS_SECRET_ACCESS_KEY}, which looks like a credential; grant secret.bind:AWS_SECRET_ACCESS_KEY in the core to export it`
	e := newEnv(t)
	e.declareVault(t)
	e.extra = append(e.extra, "AWS_SECRET_ACCESS_KEY="+value, "APP_REGION=eu-central-e2e")
	var outputs []string
	keep := func(r result) result { outputs = append(outputs, r.stdout, r.stderr); return r }
	getenv := `[{"name":"vault__getenv","arguments":{"name":"LOG_LEVEL"}}]`

	// Without the grant: no tool, and every view says why.
	out := e.scripted("all", getenv)
	if c := out.ToolCalls[0]; c.Status != "not_found" {
		t.Fatalf("the server connected without secret.bind: %+v", c)
	}
	logs := readTree(t, filepath.Join(e.home, "logs"))
	if !bytes.Contains(logs, []byte(jsonText(refusal))) {
		t.Fatalf("the Host log does not give the reason %q:\n%s", refusal, logs)
	}
	check := keep(e.run("", "mcp", "check"))
	if check.code == 0 || !strings.Contains(check.stdout, refusal) ||
		!strings.Contains(check.stdout, "vault  env LOG_LEVEL ← ${AWS_SECRET_ACCESS_KEY}  credential, not granted (needs secret.bind:AWS_SECRET_ACCESS_KEY)") {
		t.Fatalf("mcp check without the grant: exit %d\n%s\n%s", check.code, check.stdout, check.stderr)
	}
	st := mcpStatuses(t, keep(e.run("", "mcp", "list", "--json")))
	if len(st) != 1 || len(st[0].HostVariables) != 2 {
		t.Fatalf("mcp list: %+v", st)
	}
	if v := st[0].HostVariables[0]; v.Variable != "AWS_SECRET_ACCESS_KEY" || v.Key != "LOG_LEVEL" || !v.Credential || v.Exported {
		t.Fatalf("mcp list, credential without grant: %+v", v)
	}
	if v := st[0].HostVariables[1]; v.Variable != "APP_REGION" || v.Credential || !v.Exported {
		t.Fatalf("mcp list, plain variable: %+v", v)
	}

	// With the grant: the operator is asked, with the variable named.
	e.grantDefaults(t, "secret.bind:AWS_SECRET_ACCESS_KEY")
	script := e.writeFile("script-granted.json", `[{"tool_calls":`+getenv+`},{"content":"done"}]`)
	// f shows the full arguments before the answer.
	granted := keep(e.run("f\n1\n1\n", "run", "--json", "--approve", "ask", "--fake-script", script, "go"))
	for _, want := range []string{
		"Connect and discover MCP server vault",
		"exports Host variable AWS_SECRET_ACCESS_KEY into env LOG_LEVEL (looks like a credential; granted by secret.bind:AWS_SECRET_ACCESS_KEY)",
		"\"host_variables\": [\n      \"APP_REGION\",\n      \"AWS_SECRET_ACCESS_KEY\"\n    ]",
		"env LOG_LEVEL ← ${AWS_SECRET_ACCESS_KEY}",
	} {
		if !strings.Contains(granted.stderr, want) {
			t.Fatalf("the connect approval does not show %q:\n%s", want, granted.stderr)
		}
	}
	var run runOut
	if err := json.Unmarshal([]byte(granted.stdout), &run); err != nil || granted.code != 0 {
		t.Fatalf("run: exit %d %v\n%s\n%s", granted.code, err, granted.stdout, granted.stderr)
	}
	if c := run.ToolCalls[0]; c.Status != "succeeded" || c.Content == "" {
		t.Fatalf("getenv under the grant: %+v", c)
	}
	st = mcpStatuses(t, keep(e.run("", "mcp", "list", "--json")))
	if v := st[0].HostVariables[0]; v.Variable != "AWS_SECRET_ACCESS_KEY" || v.Grant != "secret.bind:AWS_SECRET_ACCESS_KEY" || !v.Exported {
		t.Fatalf("mcp list, credential with grant: %+v", v)
	}
	if c := keep(e.run("", "mcp", "check", "--json")); c.code != 0 || mcpStatuses(t, c)[0].State != "connected" {
		t.Fatalf("mcp check with the grant: %s %s", c.stdout, c.stderr)
	}

	// The value reached the server and nothing the Host wrote.
	for i, o := range outputs {
		if strings.Contains(o, value) {
			t.Fatalf("output %d holds the secret:\n%s", i, o)
		}
	}
	if b, _ := json.Marshal(out); bytes.Contains(b, []byte(value)) {
		t.Fatal("the first run's output holds the secret")
	}
	var files []string
	err := filepath.WalkDir(e.home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		files = append(files, filepath.Base(p))
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(value)) {
			t.Errorf("%s holds the secret", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "runtime.sqlite3") {
		t.Fatalf("no runtime.sqlite3 under the home: %v", files)
	}
	t.Logf("scanned %d files under the home (WAL present: %t); getenv answered %q", len(files), slices.Contains(files, "runtime.sqlite3-wal"), run.ToolCalls[0].Content)
}

// readTree concatenates the regular files under dir.
func readTree(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			all = append(all, b...)
		}
		return nil
	})
	return all
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
