package mcp_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/mcp"
	"github.com/demiurge/demiurge/policy"
)

const leakedValue = "AKIAvalue-of-the-host-secret-0731"

func TestHostVariablesAreNamed(t *testing.T) {
	e := &env{t: t, coreDir: "/core"}
	d := e.decl("x", `command: srv
env:
  LOG_LEVEL: "${AWS_SECRET_ACCESS_KEY}"
  MODE: "${APP_MODE}-${APP_MODE}-${REGION}"
  PLAIN: literal
`)
	got := d.HostVariables(policy.NewGrants([]string{"secret.bind:*"}, nil))
	want := []mcp.HostVariable{
		{Field: "env", Key: "LOG_LEVEL", Variable: "AWS_SECRET_ACCESS_KEY", Credential: true, Grant: "secret.bind:AWS_SECRET_ACCESS_KEY", Exported: false},
		{Field: "env", Key: "MODE", Variable: "APP_MODE", Exported: true},
		{Field: "env", Key: "MODE", Variable: "REGION", Exported: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("a wildcard must not grant a binding:\n got %+v\nwant %+v", got, want)
	}
	if got := d.HostVariables(policy.NewGrants([]string{"secret.bind:AWS_SECRET_ACCESS_KEY"}, nil)); !got[0].Exported {
		t.Fatalf("the exact grant exports it: %+v", got[0])
	}
	if s := got[0].String(); s != "env LOG_LEVEL ← ${AWS_SECRET_ACCESS_KEY}" {
		t.Fatalf("String = %q", s)
	}
	if names := mcp.HostVariableNames(got); !slices.Equal(names, []string{"APP_MODE", "AWS_SECRET_ACCESS_KEY", "REGION"}) {
		t.Fatalf("names %v", names)
	}
	sum := mcp.ConnectSummary(d, policy.Prompt)
	if !reflect.DeepEqual(sum["host_variables"], []string{"APP_MODE", "AWS_SECRET_ACCESS_KEY", "REGION"}) ||
		!reflect.DeepEqual(sum["exports"], []string{"env LOG_LEVEL ← ${AWS_SECRET_ACCESS_KEY}", "env MODE ← ${APP_MODE}", "env MODE ← ${REGION}"}) {
		t.Fatalf("connect summary: %v", sum)
	}
	if _, has := mcp.ConnectSummary(e.decl("y", "command: srv\nenv: {A: b}\n"), policy.Prompt)["host_variables"]; has {
		t.Fatal("a declaration without references lists host_variables")
	}

	h := e.decl("remote", "transport: streamable_http\nurl: https://mcp.example.com/mcp\nheaders: {Authorization: \"Bearer ${GITHUB_TOKEN}\", X-Trace: \"${TRACE_ID}\"}\n")
	hv := h.HostVariables(policy.Grants{})
	if len(hv) != 2 || hv[0].String() != "header Authorization ← ${GITHUB_TOKEN}" || !hv[0].Credential || hv[0].Exported ||
		hv[1].Variable != "TRACE_ID" || hv[1].Credential || !hv[1].Exported {
		t.Fatalf("header references: %+v", hv)
	}
}

// credentialDecl is the test server exporting a credential-looking Host
// variable under an innocent env name, and a non-credential one.
func credentialDecl(e *env) (mcp.Declaration, string) {
	return e.stdioDecl("x", "env:\n  LOG_LEVEL: \"${AWS_SECRET_ACCESS_KEY}\"\n  REGION: \"${APP_REGION}\"\n")
}

func credentialEnv(t *testing.T) *env {
	return newEnv(t, func(o *mcp.Options) {
		o.Getenv = func(k string) string {
			switch k {
			case "AWS_SECRET_ACCESS_KEY":
				return leakedValue
			case "APP_REGION":
				return "eu-west-region-1"
			}
			return ""
		}
	})
}

const wantUnbound = `mcp server "x": env LOG_LEVEL references ${AWS_SECRET_ACCESS_KEY}, which looks like a credential; grant secret.bind:AWS_SECRET_ACCESS_KEY in the core to export it`

func TestCredentialVariableNeedsExactGrant(t *testing.T) {
	requireLinux(t)
	e := credentialEnv(t)
	d, state := credentialDecl(e)
	for _, caps := range [][]string{{"mcp.connect:x"}, {"mcp.connect:x", "secret.bind:*"}} {
		g := newGate()
		tc := e.turn(sessionID(), caps...)
		defs, sts := e.prepare(context.Background(), tc, g.fn, d)
		st := status(t, sts, "x")
		if st.State != mcp.StateDenied || st.Error != wantUnbound || len(defs) != 0 {
			t.Fatalf("grants %v: status %+v", caps, st)
		}
		if g.count("x") != 0 {
			t.Fatalf("grants %v: the operator was asked about a server that cannot connect", caps)
		}
		if !slices.ContainsFunc(st.HostVariables, func(v mcp.HostVariable) bool {
			return v.Variable == "AWS_SECRET_ACCESS_KEY" && v.Credential && !v.Exported
		}) {
			t.Fatalf("status does not name the refused variable: %+v", st.HostVariables)
		}
		b, _ := json.Marshal(sts)
		if strings.Contains(string(b), leakedValue) {
			t.Fatalf("status holds the value: %s", b)
		}
	}
	if len(starts(t, state)) != 0 {
		t.Fatal("the server was started without the grant")
	}

	// With the exact grant: the approval names the variable, the server
	// gets the value, and every view of the turn redacts it.
	rt := effect.NewApprovalRuntime(effect.ApprovalOptions{})
	ap := demiurgetest.NewApprover(effect.DecisionAllowOnce)
	tc := e.turn(sessionID(), "mcp.connect:x", "mcp.call:x", "secret.bind:AWS_SECRET_ACCESS_KEY")
	tc.Approver = ap
	defs, sts := e.prepare(context.Background(), tc, mcp.ApprovalGate(rt), d)
	if st := status(t, sts, "x"); st.State != mcp.StateConnected {
		t.Fatalf("granted: %+v", st)
	}
	if ap.Asked() != 1 {
		t.Fatalf("asked %d times", ap.Asked())
	}
	q := ap.Requests()[0]
	notes := strings.Join(q.Notes, "\n")
	if !strings.Contains(notes, "exports Host variable AWS_SECRET_ACCESS_KEY into env LOG_LEVEL (looks like a credential; granted by secret.bind:AWS_SECRET_ACCESS_KEY)") ||
		!strings.Contains(notes, "exports Host variable APP_REGION into env REGION") {
		t.Fatalf("approval notes: %q", q.Notes)
	}
	if !reflect.DeepEqual(previewStrings(q.Preview["host_variables"]), []string{"APP_REGION", "AWS_SECRET_ACCESS_KEY"}) ||
		!slices.Contains(previewStrings(q.Preview["exports"]), "env LOG_LEVEL ← ${AWS_SECRET_ACCESS_KEY}") {
		t.Fatalf("approval preview: %v", q.Preview)
	}
	if b, _ := json.Marshal(q); strings.Contains(string(b), leakedValue) {
		t.Fatalf("the question holds the value: %s", b)
	}
	known := false
	for _, s := range tc.Secrets.Redactor().Secrets() {
		known = known || s.Value == leakedValue
	}
	if !known {
		t.Fatal("the exported value is not a secret of the turn")
	}
	res := call(t, context.Background(), tc, defs, "x__getenv", map[string]any{"name": "LOG_LEVEL"})
	if res.Status != demiurge.EffectSucceeded || res.ModelView != "<redacted>" || strings.Contains(res.OperatorView, leakedValue) {
		t.Fatalf("getenv: %+v", res)
	}
}

func TestNonCredentialVariableNeedsNoGrant(t *testing.T) {
	requireLinux(t)
	e := credentialEnv(t)
	d, _ := e.stdioDecl("plain", "env: {REGION: \"${APP_REGION}\"}\n")
	tc := e.turn(sessionID(), "mcp.connect:plain", "mcp.call:plain")
	defs, sts := e.prepare(context.Background(), tc, newGate().fn, d)
	if st := status(t, sts, "plain"); st.State != mcp.StateConnected || len(st.HostVariables) != 1 || !st.HostVariables[0].Exported {
		t.Fatalf("status %+v", st)
	}
	if res := call(t, context.Background(), tc, defs, "plain__getenv", map[string]any{"name": "REGION"}); res.Status != demiurge.EffectSucceeded || strings.Contains(res.OperatorView, "eu-west-region-1") {
		t.Fatalf("getenv: %+v", res)
	}
}

func TestCheckHonoursSecretBindGrants(t *testing.T) {
	requireLinux(t)
	e := credentialEnv(t)
	d, _ := credentialDecl(e)
	st := e.m.Check(context.Background(), []mcp.Declaration{d}, mcp.CheckOptions{Workspace: e.workspace, Gate: mcp.AllowOperator})
	if st[0].State != mcp.StateDenied || st[0].Error != wantUnbound {
		t.Fatalf("check without grant: %+v", st[0])
	}
	st = e.m.Check(context.Background(), []mcp.Declaration{d}, mcp.CheckOptions{
		Workspace: e.workspace, Gate: mcp.AllowOperator, Grants: policy.NewGrants([]string{"secret.bind:AWS_SECRET_ACCESS_KEY"}, nil),
	})
	if st[0].State != mcp.StateConnected || len(st[0].HostVariables) != 2 || !st[0].HostVariables[0].Exported {
		t.Fatalf("check with grant: %+v", st[0])
	}
	if list := e.m.Status("nobody", []mcp.Declaration{d}, policy.Grants{}); list[0].HostVariables[0].Variable != "AWS_SECRET_ACCESS_KEY" || list[0].HostVariables[0].Exported {
		t.Fatalf("status: %+v", list[0])
	}
}

func TestUnboundCredentialNamesEveryMissingGrant(t *testing.T) {
	requireLinux(t)
	e := credentialEnv(t)
	d, _ := e.stdioDecl("x", "env: {A: \"${DB_PASSWORD}\", B: \"${GITHUB_TOKEN}\", C: \"${APP_REGION}\"}\n")
	_, sts := e.prepare(context.Background(), e.turn(sessionID(), "mcp.connect:x", "secret.bind:GITHUB_TOKEN"), newGate().fn, d)
	if got, want := status(t, sts, "x").Error, `mcp server "x": env A references ${DB_PASSWORD}, which looks like a credential; grant secret.bind:DB_PASSWORD in the core to export it`; got != want {
		t.Fatalf("error %q, want %q", got, want)
	}
	_, sts = e.prepare(context.Background(), e.turn(sessionID(), "mcp.connect:x"), newGate().fn, d)
	if got := status(t, sts, "x").Error; !strings.HasSuffix(got, "to export it (also without a grant: env B ← ${GITHUB_TOKEN})") {
		t.Fatalf("error %q", got)
	}
}

// previewStrings reads a list of strings out of an approval preview
// (sanitised previews hold []any).
func previewStrings(v any) []string {
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		out := make([]string, 0, len(x))
		for _, item := range x {
			s, _ := item.(string)
			out = append(out, s)
		}
		return out
	}
	return nil
}
