package mcp_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/mcp"
)

func TestParseDeclarationDefaults(t *testing.T) {
	d, err := mcp.ParseDeclaration("github", "/c/agent/mcp/github.yaml", "agent/mcp/github.yaml", []byte("command: npx\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := mcp.Declaration{
		ID: "github", Path: "/c/agent/mcp/github.yaml", RelPath: "agent/mcp/github.yaml",
		Enabled: true, Transport: mcp.TransportStdio, Command: "npx", Args: []string{},
		Env: map[string]string{}, Headers: map[string]string{},
		Risk: "medium", ApprovalPolicy: "prompt", Capability: "mcp.call:github",
		ConnectTimeout: 30 * time.Second, CallTimeout: 60 * time.Second,
		Raw: []byte("command: npx\n"), Fingerprint: d.Fingerprint,
	}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("got  %+v\nwant %+v", d, want)
	}
	if len(d.Fingerprint) != 64 {
		t.Fatalf("fingerprint %q is not hex sha256", d.Fingerprint)
	}
	if got := d.ConnectCapability(); got != "mcp.connect:github" {
		t.Fatalf("ConnectCapability = %q", got)
	}
}

func TestParseDeclarationValues(t *testing.T) {
	body := `enabled: false
transport: streamable_http
url: https://mcp.example.com/mcp
headers:
  Authorization: "Bearer ${TOKEN}"
tools:
  include: [" search* ", "search*", get]
  exclude: ["*_admin", ""]
risk: high
approval_policy: auto
capability: custom.cap
connect_timeout_seconds: 2.5
timeout_seconds: 90
supports_parallel_tool_calls: true
`
	d, err := mcp.ParseDeclaration("remote", "/c/agent/mcp/remote.yaml", "agent/mcp/remote.yaml", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if d.Enabled || d.Transport != mcp.TransportStreamableHTTP || d.URL != "https://mcp.example.com/mcp" {
		t.Fatalf("basic fields wrong: %+v", d)
	}
	if got, want := d.Headers["Authorization"], "Bearer ${TOKEN}"; got != want {
		t.Fatalf("header = %q, want %q (interpolation happens after approval)", got, want)
	}
	if !reflect.DeepEqual(d.Include, []string{"search*", "get"}) || !reflect.DeepEqual(d.Exclude, []string{"*_admin"}) {
		t.Fatalf("filters not trimmed and de-duplicated: %q %q", d.Include, d.Exclude)
	}
	if d.Risk != "high" || d.ApprovalPolicy != "auto" || d.Capability != "custom.cap" {
		t.Fatalf("policy fields wrong: %+v", d)
	}
	if d.ConnectTimeout != 2500*time.Millisecond || d.CallTimeout != 90*time.Second || !d.SupportsParallelToolCalls {
		t.Fatalf("timeouts wrong: %v %v", d.ConnectTimeout, d.CallTimeout)
	}
}

func TestParseDeclarationStringifies(t *testing.T) {
	d, err := mcp.ParseDeclaration("s", "/s.yaml", "s.yaml", []byte("command: srv\nargs: [--port, 8080, true]\nenv: {RETRIES: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"--port", "8080", "true"}; !reflect.DeepEqual(d.Args, want) {
		t.Fatalf("args = %q, want %q", d.Args, want)
	}
	if d.Env["RETRIES"] != "3" {
		t.Fatalf("env = %q", d.Env)
	}
}

func TestParseDeclarationErrors(t *testing.T) {
	const rel = "agent/mcp/x.yaml"
	for _, tc := range []struct {
		name, body, want string
	}{
		{"unknown key", "command: a\ncomand: b\n", `invalid MCP server agent/mcp/x.yaml: agent/mcp/x.yaml:2: unknown key "comand"`},
		{"stdio without command", "args: [a]\n", "invalid MCP server agent/mcp/x.yaml: stdio MCP server requires command"},
		{"http without url", "transport: streamable_http\n", "invalid MCP server agent/mcp/x.yaml: streamable_http MCP server requires url"},
		{"http bad scheme", "transport: streamable_http\nurl: ftp://x\n", "invalid MCP server agent/mcp/x.yaml: agent/mcp/x.yaml:2: streamable_http MCP server url must start with http:// or https://"},
		{"host variable in url", "transport: streamable_http\nurl: https://h/mcp?token=${API_TOKEN}\n", "invalid MCP server agent/mcp/x.yaml: agent/mcp/x.yaml:2: url references ${API_TOKEN}: only env and header values are interpolated from the Host environment (send a credential in a header)"},
		{"bad transport", "transport: sse\ncommand: a\n", "agent/mcp/x.yaml:1: transport must be stdio or streamable_http"},
		{"zero timeout", "command: a\nconnect_timeout_seconds: 0\n", "agent/mcp/x.yaml:2: connect_timeout_seconds must be greater than 0, got 0"},
		{"negative call timeout", "command: a\ntimeout_seconds: -1\n", "timeout_seconds must be greater than 0, got -1"},
		{"string timeout", "command: a\ntimeout_seconds: \"5\"\n", "agent/mcp/x.yaml:2:"},
		{"bad risk", "command: a\nrisk: extreme\n", "agent/mcp/x.yaml:2: invalid tool risk: extreme"},
		{"bad policy", "command: a\napproval_policy: maybe\n", "agent/mcp/x.yaml:2: invalid approval policy: maybe"},
		{"bad env name", "command: a\nenv: {\"A-B\": x}\n", `env name "A-B" is not a valid environment variable name`},
		{"bad header name", "transport: streamable_http\nurl: http://h\nheaders: {\"a b\": x}\n", `header name "a b" is not a valid HTTP header name`},
		{"unknown tools key", "command: a\ntools: {only: [x]}\n", `unknown key "only"`},
		{"args not a list", "command: a\nargs: --x\n", "agent/mcp/x.yaml:2:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mcp.ParseDeclaration("x", "/x.yaml", rel, []byte(tc.body))
			if err == nil {
				t.Fatal("no error")
			}
			if demiurge.ErrorCode(err) != demiurge.ECONFIG {
				t.Fatalf("code %s, want config: %v", demiurge.ErrorCode(err), err)
			}
			msg := demiurge.ErrorMessage(err)
			if !strings.HasPrefix(msg, "invalid MCP server agent/mcp/x.yaml: ") || !strings.Contains(msg, tc.want) {
				t.Fatalf("message %q\nwant it to contain %q", msg, tc.want)
			}
		})
	}
}

func TestLoadDeclarations(t *testing.T) {
	core := t.TempDir()
	dir := filepath.Join(core, "agent", "mcp")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.yml", "command: b\n")
	write("a.yaml", "command: a\n")
	write(".hidden.yaml", "garbage: [")
	write("notes.txt", "not a declaration")
	decls, err := mcp.LoadDeclarations(dir, core)
	if err != nil {
		t.Fatal(err)
	}
	if len(decls) != 2 || decls[0].ID != "a" || decls[1].ID != "b" || decls[1].RelPath != "agent/mcp/b.yml" {
		t.Fatalf("decls = %+v", decls)
	}

	write("a.yml", "command: other\n")
	_, err = mcp.LoadDeclarations(dir, core)
	if err == nil || !strings.Contains(err.Error(), "duplicate MCP server id a") {
		t.Fatalf("duplicate stems: err = %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "a.yml")); err != nil {
		t.Fatal(err)
	}

	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	_, err = mcp.LoadDeclarations(dir, core)
	if err == nil || !strings.Contains(err.Error(), "invalid MCP server agent/mcp/link.yaml: not a regular file") {
		t.Fatalf("symlink: err = %v", err)
	}

	decls, err = mcp.LoadDeclarations(filepath.Join(core, "missing"), core)
	if err != nil || decls != nil {
		t.Fatalf("missing dir: %v %v", decls, err)
	}
}

func TestServerIDRejectsGrantSyntax(t *testing.T) {
	for _, id := range []string{"a:b", "a*", "a b"} {
		if _, err := mcp.ParseDeclaration(id, "/x", "x.yaml", []byte("command: a\n")); err == nil {
			t.Errorf("id %q accepted", id)
		}
	}
}

func TestFingerprintFollowsContent(t *testing.T) {
	parse := func(rel, body string) string {
		d, err := mcp.ParseDeclaration("x", "/x", rel, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return d.Fingerprint
	}
	a := parse("agent/mcp/x.yaml", "command: a\n")
	if a != parse("agent/mcp/x.yaml", "command: a\n") {
		t.Fatal("same declaration, different fingerprint")
	}
	if a == parse("agent/mcp/x.yaml", "command: a # changed\n") || a == parse("agent/mcp/x.yml", "command: a\n") {
		t.Fatal("fingerprint ignores the raw manifest or the path")
	}
}
