package builtin

import (
	"context"
	"fmt"
	"strings"

	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

// pathTool is the adapter of a tool that acts on one path: its path is
// resolved as a pure Host check before approval, and its approval names
// the resolved target, so a session grant for one file never covers
// another (rule key "<tool>:<cap>:<action>:<target>"). The adapter
// resolves the path again when it runs.
//
// A write must lie inside the workspace; an escape, a sensitive path or a
// protected name is refused without asking the operator. A read inside the
// workspace of a path that is not sensitive keeps the entry's policy (auto
// for read_file and search_files). A read outside the workspace, of a
// sensitive path, or (search_files with include_sensitive) over sensitive
// files is never automatic: the operator is asked at risk high, and the
// question says why (spec tool-runtime §1.3, §4.3). A path private to the
// Host (the runtime home, its private sibling, the Host key) is refused
// for every operation, so no answer can open it.
type pathTool struct {
	effect.AdapterFunc
	deps   Deps
	op     string // opRead or opWrite
	arg    string // the path argument
	def    string // the path when the argument is absent
	action string // the approval's action: "read", "search", "fs.write"
	// summary is the approval's summary with %s for the target ("Read file
	// %s"); "" is "<tool> <target>".
	summary string
	// sensitiveFlag names a boolean argument that extends a read to the
	// sensitive files below its target (search_files' include_sensitive).
	sensitiveFlag string
	// check is the tool's own argument check, "" when the arguments are
	// fine (nil: none). It runs before the path is resolved and answers
	// for arguments the schema refuses (ArgumentError).
	check func(args map[string]any) string
}

var (
	_ effect.Prechecker        = pathTool{}
	_ effect.Approvable        = pathTool{}
	_ effect.ArgumentMessenger = pathTool{}
)

// Read approvals: the reasons a read needs the operator, in the order the
// question lists them.
const (
	reasonOutside   = "outside the workspace"
	reasonSensitive = "sensitive path"
	reasonBelow     = "including sensitive files"
)

func (p pathTool) path(inv effect.Invocation) string {
	if v := stringArg(inv.Args, p.arg); v != "" {
		return v
	}
	return p.def
}

// ArgumentError is the tool's own sentence for arguments the schema
// refuses, when its check names one.
func (p pathTool) ArgumentError(args map[string]any, _ string) string {
	if p.check == nil {
		return ""
	}
	return p.check(args)
}

// Precheck runs the tool's argument check, then resolves the path.
func (p pathTool) Precheck(_ context.Context, inv effect.Invocation) *effect.Outcome {
	if p.check != nil {
		if msg := p.check(inv.Args); msg != "" {
			out := invalid("%s", msg)
			return &out
		}
	}
	w, out, ok := openWorkspace(inv, p.deps)
	if !ok {
		return &out
	}
	if _, out, ok := w.resolve(p.path(inv), p.op); !ok {
		return &out
	}
	return nil
}

// ApprovalFacts names the resolved target; for a read it raises the call
// to prompt at risk high when the read needs the operator.
func (p pathTool) ApprovalFacts(inv effect.Invocation) effect.ApprovalFacts {
	shown := p.path(inv)
	var t target
	w, _, resolved := openWorkspace(inv, p.deps)
	if resolved {
		if t, _, resolved = w.resolve(shown, p.op); resolved {
			shown = t.show
		}
	}
	ruleKey := fmt.Sprintf("%s:%s:%s:%s", inv.Entry.Name, inv.Entry.Capability, p.action, shown)
	if p.op != opRead || p.summary == "" {
		return effect.ApprovalFacts{
			Action:  p.action,
			Target:  shown,
			Summary: fmt.Sprintf("%s %s", inv.Entry.Name, shown),
			RuleKey: effect.RuleKey(ruleKey),
		}
	}
	facts := effect.ApprovalFacts{Action: p.action, Target: shown, Summary: fmt.Sprintf(p.summary, shown)}
	if !resolved {
		// The path resolved in Precheck and no longer does: refuse rather
		// than ask about something else. The adapter would refuse it too.
		facts.Baseline, facts.RuleKey = policy.Deny, effect.RuleKey(ruleKey)
		return facts
	}
	wide := p.sensitiveFlag != "" && boolArg(inv.Args, p.sensitiveFlag, false)
	if wide {
		ruleKey += ":" + p.sensitiveFlag
	}
	facts.RuleKey = effect.RuleKey(ruleKey)
	var reasons []string
	if t.outside {
		reasons = append(reasons, reasonOutside)
	}
	if t.sensitive {
		reasons = append(reasons, reasonSensitive)
	}
	if wide && w.sensitiveBelow(t) {
		reasons = append(reasons, reasonBelow)
	}
	if len(reasons) == 0 {
		return facts
	}
	facts.Summary += " (" + strings.Join(reasons, ", ") + ")"
	facts.Baseline, facts.Risk = policy.Prompt, "high"
	facts.Notes = []string{
		"what is read is shown to the model",
		fmt.Sprintf("allow for this session covers %s only", shown),
	}
	return facts
}
