package corerepo

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

func TestSummarizeMCPNamesHostVariables(t *testing.T) {
	s := summarizeMCP("x", "assistant/agent/mcp/x.yaml", []byte(`command: srv
env:
  LOG_LEVEL: "${AWS_SECRET_ACCESS_KEY}"
  MODE: "${APP_MODE}-${APP_MODE}"
  PLAIN: literal
headers:
  Authorization: "Bearer ${GITHUB_TOKEN}"
`))
	want := []MCPHostVariable{
		{Field: "env", Key: "LOG_LEVEL", Variable: "AWS_SECRET_ACCESS_KEY", Credential: true, Grant: "secret.bind:AWS_SECRET_ACCESS_KEY"},
		{Field: "env", Key: "MODE", Variable: "APP_MODE"},
		{Field: "header", Key: "Authorization", Variable: "GITHUB_TOKEN", Credential: true, Grant: "secret.bind:GITHUB_TOKEN"},
	}
	if !reflect.DeepEqual(s.HostVariables, want) {
		t.Fatalf("host variables\n got %+v\nwant %+v", s.HostVariables, want)
	}
	if got := s.HostVariables[0].String(); got != "env LOG_LEVEL ← ${AWS_SECRET_ACCESS_KEY}" {
		t.Fatalf("String = %q", got)
	}
	h := summarizeMCP("r", "p", []byte("transport: streamable_http\nurl: https://h/mcp?k=${API_TOKEN}\n"))
	if len(h.HostVariables) != 1 || h.HostVariables[0].Field != "url" || h.HostVariables[0].Variable != "API_TOKEN" || h.HostVariables[0].String() != "url ← ${API_TOKEN}" {
		t.Fatalf("url reference: %+v", h.HostVariables)
	}
	if p := summarizeMCP("p", "p", []byte("command: srv\nenv: {A: b}\n")); len(p.HostVariables) != 0 {
		t.Fatalf("literal values reference nothing: %+v", p.HostVariables)
	}
}

func TestReviewNamesHostVariablesOfAnMCPChange(t *testing.T) {
	_, r := newHome(t)
	const value = "wJalrXUtnFEMI-value-never-written"
	t.Setenv("AWS_SECRET_ACCESS_KEY", value)
	run := startEdited(t, r, func(a string) {
		writeFile(t, a, "assistant/agent/mcp/x.yaml", "command: srv\nenv: {LOG_LEVEL: \"${AWS_SECRET_ACCESS_KEY}\"}\n")
	})
	rv, err := r.Review(context.Background(), run.ID, ReviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rv.MCPChanges) != 1 || rv.MCPChanges[0].After == nil || len(rv.MCPChanges[0].After.HostVariables) != 1 {
		t.Fatalf("mcp changes %+v", rv.MCPChanges)
	}
	if v := rv.MCPChanges[0].After.HostVariables[0]; v.Variable != "AWS_SECRET_ACCESS_KEY" || v.Key != "LOG_LEVEL" || !v.Credential {
		t.Fatalf("host variable %+v", v)
	}
	report := readFile(t, run.Dir, "report.md")
	if !strings.Contains(report, "after Host variable: `env LOG_LEVEL ← ${AWS_SECRET_ACCESS_KEY}` (looks like a credential: exported only if the core grants secret.bind:AWS_SECRET_ACCESS_KEY)") {
		t.Fatalf("report.md does not name the variable:\n%s", report)
	}
	for _, name := range []string{"review.json", "report.md", "gates.json"} {
		if s := readFile(t, run.Dir, name); strings.Contains(s, value) {
			t.Fatalf("%s holds the value", name)
		}
	}
}
