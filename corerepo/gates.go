package corerepo

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Gate phases, in the order they run (spec host-runtime §7.4, plus
// approval_security of the approval rules).
const (
	PhasePathSafety       = "path_safety"
	PhaseArtifact         = "artifact"
	PhaseDependency       = "dependency"
	PhaseCoreLoad         = "core_load" // reported as core_load:<core>
	PhaseMCPSecurity      = "mcp_security"
	PhaseApprovalSecurity = "approval_security"
	PhaseCrossCore        = "cross_core_references"
)

// globalScope names the global fallback agents/agent.yaml in scopes and
// gate phases.
const globalScope = "global fallback"

// Gate is the outcome of one gate.
type Gate struct {
	Phase  string `json:"phase"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail"`
	Data   any    `json:"data,omitempty"`
}

// pathChange is one path that differs between the reference tree and the
// new tree.
type pathChange struct {
	Path string `json:"path"`
	Kind string `json:"change"`
}

// gateInput is what the gates judge: the new tree against a reference.
type gateInput struct {
	root     string                // directory holding the new tree's files (cores load from here)
	old, new flatTree              // reference and new trees
	problems map[string]string     // on-disk files that cannot be committed at all, with why
	content  map[string][]byte     // new contents known in memory (changed files of a scan)
	loaded   map[string]*core.Core // filled by the core_load gates
	changed  []pathChange
}

// newTreeFromScan applies a scan's changes to its base: the tree a commit
// of the checkout would have. Files that cannot be committed (special
// files, oversized files) are left out and listed as problems.
func newTreeFromScan(res *scanResult) (flatTree, map[string]string, map[string][]byte) {
	out := make(flatTree, len(res.base)+len(res.changes))
	for p, e := range res.base {
		out[p] = e
	}
	problems := map[string]string{}
	content := map[string][]byte{}
	for _, c := range res.changes {
		switch {
		case c.Kind == ChangeDeleted:
			delete(out, c.Path)
		case c.New.Kind == kindSpecial:
			delete(out, c.Path)
			problems[c.Path] = "not a regular file (device, pipe or socket)"
		case c.New.Kind == kindTooLarge:
			delete(out, c.Path)
			problems[c.Path] = fmt.Sprintf("file larger than %d MiB", MaxFileBytes>>20)
		default:
			out[c.Path] = entry{Hash: c.New.Stat.Hash, Mode: c.New.Stat.Mode}
			content[c.Path] = c.New.Content
		}
	}
	return out, problems, content
}

// diffTrees lists the paths whose entries differ, sorted.
func diffTrees(old, new flatTree) []pathChange {
	var out []pathChange
	for p, e := range new {
		if o, ok := old[p]; !ok {
			out = append(out, pathChange{p, ChangeAdded})
		} else if o != e {
			out = append(out, pathChange{p, ChangeModified})
		}
	}
	for p := range old {
		if _, ok := new[p]; !ok {
			out = append(out, pathChange{p, ChangeDeleted})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func (in *gateInput) prepare() {
	in.changed = diffTrees(in.old, in.new)
	for p := range in.problems {
		if _, ok := in.new[p]; !ok {
			in.changed = append(in.changed, pathChange{p, ChangeAdded})
		}
	}
	sort.Slice(in.changed, func(i, j int) bool { return in.changed[i].Path < in.changed[j].Path })
	in.loaded = map[string]*core.Core{}
}

// present lists changed paths that exist in the new tree (or on disk).
func (in *gateInput) present() []string {
	var out []string
	for _, c := range in.changed {
		if c.Kind != ChangeDeleted {
			out = append(out, c.Path)
		}
	}
	return out
}

// changedScopes returns the cores (top-level directories) with a changed
// path, sorted, and whether the global fallback changed.
func (in *gateInput) changedScopes() (cores []string, global bool) {
	seen := map[string]bool{}
	for _, c := range in.changed {
		top, rest, nested := strings.Cut(c.Path, "/")
		switch {
		case !nested && top == "agent.yaml":
			global = true
		case nested && rest != "" && !seen[top]:
			seen[top] = true
			cores = append(cores, top)
		}
	}
	sort.Strings(cores)
	return cores, global
}

// coresOf lists the cores of a tree: top-level directories.
func coresOf(t flatTree) []string {
	seen := map[string]bool{}
	var out []string
	for p := range t {
		if top, _, nested := strings.Cut(p, "/"); nested && !seen[top] {
			seen[top] = true
			out = append(out, top)
		}
	}
	sort.Strings(out)
	return out
}

func hasCore(t flatTree, id string) bool {
	_, ok := t[id+"/agent.yaml"]
	return ok
}

func pass(phase string) Gate { return Gate{Phase: phase, Passed: true} }

func fail(phase string, problems []string) Gate {
	return Gate{Phase: phase, Passed: false, Detail: strings.Join(problems, ", ")}
}

func gateOf(phase string, problems []string) Gate {
	if len(problems) == 0 {
		return pass(phase)
	}
	return fail(phase, problems)
}

// gatePathSafety: no links, no special or oversized files, no unsafe
// names. Links are looked for in the whole new tree.
func (in *gateInput) gatePathSafety() Gate {
	var problems []string
	for _, p := range sortedKeys(in.new) {
		if in.new[p].Mode == filemode.Symlink {
			problems = append(problems, p+": symbolic links are not allowed")
		}
	}
	for _, p := range sortedKeys(in.problems) {
		problems = append(problems, p+": "+in.problems[p])
	}
	for _, p := range in.present() {
		if why := nameReason(p); why != "" {
			problems = append(problems, p+": "+why)
		}
	}
	sort.Strings(problems)
	return gateOf(PhasePathSafety, problems)
}

func (in *gateInput) gateArtifact() Gate {
	var problems []string
	for _, p := range in.present() {
		if why := artifactReason(p); why != "" {
			problems = append(problems, p+": "+why)
		}
	}
	return gateOf(PhaseArtifact, problems)
}

func (in *gateInput) gateDependency() Gate {
	var problems []string
	for _, p := range in.present() {
		if why := dependencyReason(p); why != "" {
			problems = append(problems, p+": "+why)
		}
	}
	return gateOf(PhaseDependency, problems)
}

// gatesCoreLoad loads every changed core (every core when none changed)
// from the new tree's directory; a removed core passes. A changed global
// fallback is loaded as core_load:global.
func (in *gateInput) gatesCoreLoad() []Gate {
	cores, global := in.changedScopes()
	if len(cores) == 0 {
		cores = coresOf(in.new)
	}
	var out []Gate
	for _, id := range cores {
		phase := PhaseCoreLoad + ":" + id
		if !hasCore(in.new, id) && !hasAnyUnder(in.new, id) {
			out = append(out, pass(phase)) // removed core
			continue
		}
		c, err := core.Load(filepath.Join(in.root, filepath.FromSlash(id)))
		if err != nil {
			out = append(out, Gate{Phase: phase, Detail: loadMessage(err)})
			continue
		}
		in.loaded[id] = c
		out = append(out, pass(phase))
	}
	if global {
		phase := PhaseCoreLoad + ":global"
		if _, err := core.LoadGlobal(filepath.Join(in.root, "agent.yaml")); err != nil {
			out = append(out, Gate{Phase: phase, Detail: loadMessage(err)})
		} else {
			out = append(out, pass(phase))
		}
	}
	return out
}

func hasAnyUnder(t flatTree, dir string) bool {
	for p := range t {
		if strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

func loadMessage(err error) string {
	var de *demiurge.Error
	if errors.As(err, &de) {
		return de.Message
	}
	return "cannot load: internal error"
}

// gateCrossCore checks that components of the judged cores only name
// cores that exist in the new tree: agents.spawn:<core> grants. Cores
// judged are the loaded ones; when a core was removed, every core is
// loaded and judged.
func (in *gateInput) gateCrossCore() Gate {
	removed := false
	for _, c := range in.changed {
		if c.Kind == ChangeDeleted && strings.HasSuffix(c.Path, "/agent.yaml") && strings.Count(c.Path, "/") == 1 {
			removed = true
		}
	}
	if removed {
		for _, id := range coresOf(in.new) {
			if _, ok := in.loaded[id]; ok || !hasCore(in.new, id) {
				continue
			}
			if c, err := core.Load(filepath.Join(in.root, id)); err == nil {
				in.loaded[id] = c
			}
		}
	}
	var problems []string
	for _, id := range sortedKeys(in.loaded) {
		for _, ref := range coreReferences(in.loaded[id]) {
			if !hasCore(in.new, ref.target) {
				problems = append(problems, fmt.Sprintf("%s: %s names core %q, which does not exist", ref.where, ref.capability, ref.target))
			}
		}
	}
	sort.Strings(problems)
	problems = compactStrings(problems)
	return gateOf(PhaseCrossCore, problems)
}

type coreRef struct{ where, capability, target string }

// coreReferences lists the cores a core names: agents.spawn:<core> in its
// capability grants, slot and tool grants and tool capabilities.
func coreReferences(c *core.Core) []coreRef {
	var out []coreRef
	add := func(where, capability string) {
		target, ok := strings.CutPrefix(capability, "agents.spawn:")
		if !ok || target == "" || strings.ContainsAny(target, "*?") {
			return
		}
		out = append(out, coreRef{where, capability, target})
	}
	manifest := c.ID + "/agent.yaml"
	for capability := range c.Manifest.Capabilities.Defaults {
		add(manifest+" capabilities.defaults", capability)
	}
	for slot, grants := range c.Manifest.Capabilities.Slots {
		for capability := range grants {
			add(manifest+" capabilities.slots."+slot, capability)
		}
	}
	for _, phase := range core.Phases {
		for _, s := range c.AllSlots[phase] {
			for _, capability := range s.Capabilities {
				add(c.ID+"/"+s.RelPath+"/slot.yaml", capability)
			}
		}
	}
	for _, t := range c.Tools {
		for _, capability := range append([]string{t.Capability}, t.Capabilities...) {
			add(c.ID+"/"+t.RelPath+"/tool.yaml", capability)
		}
	}
	return out
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// failedGates returns the gates that did not pass.
func failedGates(gates []Gate) []Gate {
	var out []Gate
	for _, g := range gates {
		if !g.Passed {
			out = append(out, g)
		}
	}
	return out
}

// GateError is the cause carried by a gate refusal: every gate that ran
// and, when an approval change needs the operator and the refusal is
// Save's, a fresh token that confirms it (`demiurge core save --confirm`).
type GateError struct {
	Gates []Gate
	Token string // "" unless Save's approval_security asked for confirmation
}

func (e *GateError) Error() string { return "gates failed" }

// gateError is the ECONFIG refusal "<prefix>: <phase>: <detail>; …".
func gateError(prefix string, gates []Gate, token string) error {
	var parts []string
	for _, g := range failedGates(gates) {
		parts = append(parts, g.Phase+": "+g.Detail)
	}
	return &demiurge.Error{Code: demiurge.ECONFIG, Message: prefix + ": " + strings.Join(parts, "; "), Err: &GateError{Gates: gates, Token: token}}
}
