package builtin

import (
	"context"
	"fmt"

	"github.com/demiurge/demiurge/effect"
)

// pathTool is the adapter of a tool that acts on one workspace path: its
// path is resolved as a pure Host check before approval (an escape, a
// sensitive path or a protected name is refused without asking the
// operator), and its approval names the resolved target, so a session grant
// for one file never covers another (rule key "<tool>:<cap>:<action>:<target>").
// The adapter resolves the path again when it runs.
type pathTool struct {
	effect.AdapterFunc
	deps   Deps
	op     string // opRead or opWrite
	arg    string // the path argument
	def    string // the path when the argument is absent
	action string // e.g. "fs.write"
}

var (
	_ effect.Prechecker = pathTool{}
	_ effect.Approvable = pathTool{}
)

func (p pathTool) path(inv effect.Invocation) string {
	if v := stringArg(inv.Args, p.arg); v != "" {
		return v
	}
	return p.def
}

// Precheck resolves the path inside the workspace.
func (p pathTool) Precheck(_ context.Context, inv effect.Invocation) *effect.Outcome {
	w, out, ok := openWorkspace(inv, p.deps)
	if !ok {
		return &out
	}
	if _, out, ok := w.resolve(p.path(inv), p.op); !ok {
		return &out
	}
	return nil
}

// ApprovalFacts names the resolved target.
func (p pathTool) ApprovalFacts(inv effect.Invocation) effect.ApprovalFacts {
	target := p.path(inv)
	if w, _, ok := openWorkspace(inv, p.deps); ok {
		if t, _, ok := w.resolve(target, p.op); ok {
			target = t.show
		}
	}
	return effect.ApprovalFacts{
		Action:  p.action,
		Target:  target,
		Summary: fmt.Sprintf("%s %s", inv.Entry.Name, target),
		RuleKey: effect.RuleKey(fmt.Sprintf("%s:%s:%s:%s", inv.Entry.Name, inv.Entry.Capability, p.action, target)),
	}
}
