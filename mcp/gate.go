package mcp

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/redact"
	"github.com/demiurge/demiurge/urlpolicy"
)

// ActionConnect and ActionCall are the approval actions of the two MCP
// effects: connecting to a server (and discovering its tools) and calling
// one of its tools.
const (
	ActionConnect = "mcp.connect"
	ActionCall    = "mcp.call"
)

// ConnectRequest is the connect approval asked for one server, before any
// client is constructed or process spawned. Every field comes from the
// declaration and the Host; the capability check has already passed.
type ConnectRequest struct {
	Declaration Declaration
	Turn        effect.TurnContext
	// Policy is the effective connect policy: stricter(prompt, the
	// declaration's approval_policy), then the core and global approval
	// configuration folded in. An "auto" declaration still prompts.
	Policy     policy.Policy
	Action     string // ActionConnect
	Capability string // mcp.connect:<id>
	Target     string // the declaration's path
	Summary    string // "Connect and discover MCP server <id>"
	Risk       string
	// RuleKey is "mcp.connect:<id>:<declaration fingerprint>": a session
	// grant covers one version of one declaration.
	RuleKey effect.RuleKey
	// Preview is the safe connect summary: no argument, env or header
	// value, a credential-free URL; the Host variables the connection
	// exports by name.
	Preview map[string]any
	// HostVariables are the ${NAME} references of the declaration, each
	// credential-looking one already checked against its secret.bind
	// grant; Notes say in words what each exports where.
	HostVariables []HostVariable
	Notes         []string
}

// ConnectGate decides a ConnectRequest. nil allows the connection; an
// error refuses it, and its message (a *demiurge.Error's) becomes the
// server's denial reason. A gate must fail closed: when in doubt, refuse.
type ConnectGate func(ctx context.Context, req ConnectRequest) error

// ApprovalGate is the Host's ConnectGate: the request is decided by the
// approval runtime (session grants, the turn's Approver, headless denial)
// under the turn's identity. A nil runtime refuses every request.
func ApprovalGate(approvals *effect.ApprovalRuntime) ConnectGate {
	return func(ctx context.Context, r ConnectRequest) error {
		if approvals == nil {
			return deniedConnect(r, effect.ReasonNoOperator)
		}
		tc := r.Turn
		d, _ := approvals.Decide(ctx, effect.ApprovalQuestion{
			PrincipalID: tc.Scope.PrincipalID, SessionID: tc.SessionID, TurnID: tc.TurnID,
			CallID: r.Capability,
			Tool:   r.Capability, Action: r.Action, Target: r.Target, Summary: r.Summary,
			Risk: r.Risk, Capability: r.Capability, Provenance: "mcp:" + r.Declaration.ID,
			Preview: r.Preview, Notes: r.Notes, Policy: r.Policy,
			CoreID: tc.CoreID, CoreRevision: tc.CoreRevision,
			CapabilityFingerprint: tc.Grants.Fingerprint(),
			AdapterKey:            r.Capability, RuleKey: r.RuleKey,
		}, tc.Approver)
		if d.Allowed {
			return nil
		}
		return deniedConnect(r, d.Reason)
	}
}

// AllowOperator is a ConnectGate for commands an operator runs on purpose
// (`demiurge mcp check`): the command itself is the approval. It still
// refuses a declaration whose effective policy is deny.
func AllowOperator(_ context.Context, r ConnectRequest) error {
	if r.Policy == policy.Deny {
		return deniedConnect(r, effect.ReasonPolicyDeny)
	}
	return nil
}

func deniedConnect(r ConnectRequest, why string) error {
	return demiurge.Errorf(demiurge.EUNAUTHORIZED, "approval denied: %s (%s)", r.Summary, why)
}

// connectRequest builds the request for d under tc; grants decide the
// Exported flag of its Host variables.
func connectRequest(d Declaration, tc effect.TurnContext, grants policy.Grants, effective policy.Policy) ConnectRequest {
	vars := d.HostVariables(grants)
	return ConnectRequest{
		Declaration: d, Turn: tc, Policy: effective,
		Action: ActionConnect, Capability: d.ConnectCapability(), Target: d.RelPath,
		Summary: "Connect and discover MCP server " + d.ID, Risk: d.Risk,
		RuleKey: effect.RuleKey(d.ConnectCapability() + ":" + d.Fingerprint),
		Preview: ConnectSummary(d, effective), HostVariables: vars, Notes: hostVariableNotes(vars),
	}
}

// connectPolicy is the effective connect policy of d: never looser than
// prompt, then tightened by the core and global approval configuration.
func connectPolicy(d Declaration, core, global policy.ApprovalConfig) policy.Policy {
	base := policy.Stricter(policy.Prompt, policy.Policy(d.ApprovalPolicy))
	return policy.Fold(base, d.ConnectCapability(), d.ConnectCapability(), d.Risk, core, global)
}

// ConnectSummary is the safe description of d an operator approves: what
// runs or is reached, never a value that could be a secret. Option names
// of stdio arguments are kept; a sensitive option's value becomes
// "<redacted>" and every other value a digest and length; env and
// headers show their names only, and the Host variables their values
// reference by name: host_variables lists the names, exports says where
// each goes ("env LOG_LEVEL ← ${AWS_SECRET_ACCESS_KEY}"); the URL keeps
// scheme, host and port.
func ConnectSummary(d Declaration, effective policy.Policy) map[string]any {
	s := map[string]any{
		"server_id": d.ID, "path": d.RelPath, "enabled": d.Enabled, "transport": d.Transport,
		"risk": d.Risk, "approval_policy": d.ApprovalPolicy,
		"effective_connect_approval_policy": string(effective),
		"call_capability":                   d.Capability, "connect_capability": d.ConnectCapability(),
	}
	switch d.Transport {
	case TransportStdio:
		cwd := cmp.Or(d.Cwd, ".")
		s["command"] = d.Command
		s["args"] = safeArgs(d.Args)
		s["cwd"] = cwd
		// Never nil: a server without env lists [] in the summary.
		s["env_names"] = append([]string{}, slices.Sorted(maps.Keys(d.Env))...)
	case TransportStreamableHTTP:
		s["url"] = urlpolicy.AuditURL(d.URL)
		s["header_names"] = append([]string{}, slices.Sorted(maps.Keys(d.Headers))...)
	}
	if vars := d.HostVariables(policy.Grants{}); len(vars) > 0 {
		exports := make([]string, len(vars))
		for i, v := range vars {
			exports[i] = v.String()
		}
		s["host_variables"] = HostVariableNames(vars)
		s["exports"] = exports
	}
	return s
}

// safeArgs renders arguments for an approval: options are kept by name;
// the value of a sensitive option (inline or the next argument) becomes
// "<redacted>"; any other value becomes "<value sha256:<12 hex> length:<n>>".
func safeArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			out = append(out, opaque(a))
			continue
		}
		name, value, inline := strings.Cut(a, "=")
		if !redact.SensitiveField(strings.TrimLeft(name, "-")) {
			if inline {
				out = append(out, name+"="+opaque(value))
			} else {
				out = append(out, a)
			}
			continue
		}
		out = append(out, name+"=<redacted>")
		if !inline && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++ // the option's value
		}
	}
	return out
}

func opaque(v string) string {
	sum := sha256.Sum256([]byte(v))
	return fmt.Sprintf("<value sha256:%s length:%d>", hex.EncodeToString(sum[:])[:12], len([]rune(v)))
}
