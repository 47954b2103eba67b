package corerepo

import (
	"context"
	"strings"
	"testing"
)

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
