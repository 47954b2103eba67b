package mcp_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/mcp"
	"github.com/demiurge/demiurge/policy"
)

func TestConnectSummaryHoldsNoValues(t *testing.T) {
	e := &env{t: t, coreDir: "/core"}
	d := e.decl("gh", `command: npx
args: ["-y", "@scope/server", "--token", "tok_123456", "--api-key=abcdef", "--port", "8080", "--mode=fast"]
env: {GITHUB_TOKEN: "${GH}", OTHER: x}
cwd: sub
approval_policy: auto
`)
	got := mcp.ConnectSummary(d, policy.Prompt)
	want := map[string]any{
		"server_id": "gh", "path": "agent/mcp/gh.yaml", "enabled": true, "transport": "stdio",
		"risk": "medium", "approval_policy": "auto", "effective_connect_approval_policy": "prompt",
		"call_capability": "mcp.call:gh", "connect_capability": "mcp.connect:gh",
		"command": "npx", "cwd": "sub", "env_names": []string{"GITHUB_TOKEN", "OTHER"},
		"host_variables": []string{"GH"}, "exports": []string{"env GITHUB_TOKEN ← ${GH}"},
	}
	args := got["args"].([]string)
	delete(got, "args")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("summary\n got %v\nwant %v", got, want)
	}
	if len(args) != 7 || args[0] != "-y" || args[2] != "--token=<redacted>" || args[3] != "--api-key=<redacted>" || args[4] != "--port" {
		t.Fatalf("args %q", args)
	}
	if !strings.HasPrefix(args[1], "<value sha256:") || !strings.HasSuffix(args[1], " length:13>") || !strings.HasPrefix(args[6], "--mode=<value sha256:") {
		t.Fatalf("values not opaque: %q", args)
	}
	for _, a := range args {
		if strings.Contains(a, "tok_123456") || strings.Contains(a, "=abcdef") || a == "8080" {
			t.Fatalf("a value leaked: %q", args)
		}
	}

	h := e.decl("remote", "transport: streamable_http\nurl: https://user:pw@mcp.example.com:8443/path?key=secret\nheaders: {Authorization: x}\n")
	got = mcp.ConnectSummary(h, policy.Prompt)
	if got["url"] != "https://mcp.example.com:8443" || !reflect.DeepEqual(got["header_names"], []string{"Authorization"}) {
		t.Fatalf("http summary %v", got)
	}
}

func TestApprovalGate(t *testing.T) {
	e := &env{t: t, coreDir: "/core"}
	d := e.decl("gh", "command: npx\napproval_policy: auto\nrisk: high\n")
	tc := effect.TurnContext{
		SessionID: "sess_1", TurnID: "turn_1", CoreID: "assistant", CoreRevision: "rev1",
		Scope:  demiurge.PrincipalScope{PrincipalID: "p1"},
		Grants: policy.NewGrants([]string{"mcp.connect:gh"}, nil),
	}
	rt := effect.NewApprovalRuntime(effect.ApprovalOptions{})
	gate := mcp.ApprovalGate(rt)
	req := func(p policy.Policy) mcp.ConnectRequest {
		return mcp.ConnectRequest{
			Declaration: d, Turn: tc, Policy: p, Action: mcp.ActionConnect, Capability: "mcp.connect:gh",
			Target: d.RelPath, Summary: "Connect and discover MCP server gh", Risk: d.Risk,
			RuleKey: effect.RuleKey("mcp.connect:gh:" + d.Fingerprint), Preview: mcp.ConnectSummary(d, p),
		}
	}

	// Headless: a prompt is a denial.
	err := gate(context.Background(), req(policy.Prompt))
	if err == nil || demiurge.ErrorCode(err) != demiurge.EUNAUTHORIZED || !strings.Contains(err.Error(), "no interactive approval provider configured") {
		t.Fatalf("headless: %v", err)
	}
	// The operator answers; "always allow for this session" covers the
	// same declaration version only.
	ap := demiurgetest.NewApprover(effect.DecisionAllowSession)
	tc.Approver = ap
	r := req(policy.Prompt)
	r.Turn = tc
	if err := gate(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if err := gate(context.Background(), r); err != nil || ap.Asked() != 1 {
		t.Fatalf("session grant: %v, asked %d", err, ap.Asked())
	}
	q := ap.Requests()[0]
	if q.Action != "mcp.connect" || q.Capability != "mcp.connect:gh" || q.Risk != "high" || q.Target != "agent/mcp/gh.yaml" || q.Summary != "Connect and discover MCP server gh" {
		t.Fatalf("question %+v", q)
	}
	r.RuleKey = "mcp.connect:gh:other-fingerprint"
	if err := gate(context.Background(), r); err != nil || ap.Asked() != 2 {
		t.Fatalf("changed declaration: %v, asked %d", err, ap.Asked())
	}
	// deny is final.
	r.Policy = policy.Deny
	if err := gate(context.Background(), r); err == nil || !strings.Contains(err.Error(), "denied by approval policy") {
		t.Fatalf("deny: %v", err)
	}
	if err := mcp.ApprovalGate(nil)(context.Background(), r); err == nil {
		t.Fatal("nil runtime allowed")
	}
}

func TestAutoManifestStillPromptsForConnect(t *testing.T) {
	requireLinux(t)
	e := newEnv(t)
	d, _ := e.stdioDecl("demo", "") // approval_policy: auto
	g := newGate()
	e.prepare(context.Background(), e.turn(sessionID(), "mcp.connect:demo"), g.fn, d)
	if p := g.last["demo"].Policy; p != policy.Prompt {
		t.Fatalf("effective connect policy %s, want prompt", p)
	}
	// The core configuration can only tighten it.
	g2 := newGate()
	e.m.Definitions(context.Background(), mcp.Request{
		Declarations: []mcp.Declaration{d}, Turn: e.turn(sessionID(), "mcp.connect:demo"), Gate: g2.fn,
		CoreApproval: policy.ApprovalConfig{Capabilities: map[string]string{"mcp.connect:demo": "auto"}},
	})
	if p := g2.last["demo"].Policy; p != policy.Prompt {
		t.Fatalf("auto config loosened connect to %s", p)
	}
}
