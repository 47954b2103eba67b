package coregate

import (
	"reflect"
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
