package files

import (
	"context"
	"fmt"
	"strings"

	"github.com/demiurge/demiurge/builtin/internal/rootfs"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/builtin/internal/workspace"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

// pathTool is the adapter of a tool that acts on one path, its arguments
// decoding into A: the path is resolved once, as a pure Host check before
// approval, and the approval names the resolved target, so a session
// grant for one file never covers another (rule key
// "<tool>:<cap>:<action>:<target>"). The target's links can change while
// the operator decides, so an approved call resolves the path again
// (Recheck) and acts on the fresh answer, or is refused by it.
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
type pathTool[A any] struct {
	deps   Deps
	op     string // opRead or opWrite
	action string // the approval's action: "read", "search", "fs.write"
	// summary is the approval's summary with %s for the target ("Read file
	// %s"); "" is "<tool> <target>".
	summary string
	// path is the path argument, its default applied.
	path func(A) string
	// wide, when set, says whether the read extends to the sensitive files
	// below its target (search_files' include_sensitive); flag names it in
	// the rule key.
	wide func(A) bool
	flag string
	// check is the tool's own argument check, "" when the arguments are
	// fine (nil: none). It runs before the path is resolved and answers
	// for arguments the schema refuses (ArgumentError).
	check func(A) string
	// run performs the effect on the resolved target.
	run func(ctx context.Context, c *pathCall[A]) (effect.Outcome, error)
}

// Read approvals: the reasons a read needs the operator, in the order the
// question lists them.
const (
	reasonOutside   = "outside the workspace"
	reasonSensitive = "sensitive path"
	reasonBelow     = "including sensitive files"
)

// adapter is the tool's adapter, its arguments starting as defaults.
func (p pathTool[A]) adapter(defaults A) tool.Typed[A] {
	return tool.Typed[A]{Defaults: defaults, Check: p.check, Call: p.prepare}
}

// prepare runs the tool's argument check, then resolves the path.
func (p pathTool[A]) prepare(_ context.Context, inv effect.Invocation, args A) (effect.Call, *effect.Outcome) {
	if p.check != nil {
		if msg := p.check(args); msg != "" {
			return tool.Refuse(tool.Invalid("%s", msg))
		}
	}
	w, out, ok := workspace.Open(inv, p.deps.paths())
	if !ok {
		return tool.Refuse(out)
	}
	t, out, ok := w.Resolve(p.path(args), p.op)
	if !ok {
		return tool.Refuse(out)
	}
	return &pathCall[A]{pt: p, inv: inv, args: args, w: w, t: t}, nil
}

// pathCall is a prepared call of a pathTool: its arguments, its
// workspace and the resolved target.
type pathCall[A any] struct {
	pt   pathTool[A]
	inv  effect.Invocation
	args A
	w    *workspace.Workspace
	t    workspace.Target
}

// Recheck resolves the path again after approval: a link swapped while
// the operator decided is refused, or followed, exactly as a fresh call
// would be.
func (c *pathCall[A]) Recheck(context.Context) *effect.Outcome {
	t, out, ok := c.w.Resolve(c.pt.path(c.args), c.pt.op)
	if !ok {
		return &out
	}
	c.t = t
	return nil
}

func (c *pathCall[A]) Run(ctx context.Context) (effect.Outcome, error) { return c.pt.run(ctx, c) }

// ApprovalFacts names the resolved target; for a read it raises the call
// to prompt at risk high when the read needs the operator.
func (c *pathCall[A]) ApprovalFacts() effect.ApprovalFacts {
	p, t, entry := c.pt, c.t, c.inv.Entry
	ruleKey := fmt.Sprintf("%s:%s:%s:%s", entry.Name, entry.Capability, p.action, t.Show)
	if p.op != workspace.OpRead || p.summary == "" {
		return effect.ApprovalFacts{
			Action:  p.action,
			Target:  t.Show,
			Summary: fmt.Sprintf("%s %s", entry.Name, t.Show),
			RuleKey: effect.RuleKey(ruleKey),
		}
	}
	facts := effect.ApprovalFacts{Action: p.action, Target: t.Show, Summary: fmt.Sprintf(p.summary, t.Show)}
	wide := p.wide != nil && p.wide(c.args)
	if wide {
		ruleKey += ":" + p.flag
	}
	facts.RuleKey = effect.RuleKey(ruleKey)
	var reasons []string
	if t.Outside {
		reasons = append(reasons, reasonOutside)
	}
	if t.Sensitive {
		reasons = append(reasons, reasonSensitive)
	}
	if wide && sensitiveBelow(c.w, t) {
		reasons = append(reasons, reasonBelow)
	}
	if len(reasons) == 0 {
		return facts
	}
	facts.Summary += " (" + strings.Join(reasons, ", ") + ")"
	facts.Baseline, facts.Risk = policy.Prompt, "high"
	facts.Notes = []string{
		"what is read is shown to the model",
		fmt.Sprintf("allow for this session covers %s only", t.Show),
	}
	return facts
}

// Deps is what the file tools need of the Host.
type Deps struct {
	// Home is the runtime home: no file tool touches it.
	Home string
	// Hidden are the paths the sandbox hides from agent processes (the
	// runtime home, its private sibling, the Host's configuration and
	// key): every file tool refuses them, as the terminal's sandbox does.
	Hidden []string
	// ProtectedNames are file names (compared case-insensitively) that
	// write_file and patch refuse to write anywhere in the workspace, with
	// "write blocked for protected file: <name>".
	ProtectedNames []string

	writer rootfs.Writer // tests fail writes through it
}

func (d Deps) paths() workspace.HostPaths {
	return workspace.HostPaths{Home: d.Home, Hidden: d.Hidden, Protected: d.ProtectedNames}
}
