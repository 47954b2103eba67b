package coregate

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/coretree"
)

// Gate phases, in the order they run, plus approval_security of the
// approval rules.
const (
	PhasePathSafety       = "path_safety"
	PhaseArtifact         = "artifact"
	PhaseDependency       = "dependency"
	PhaseCoreLoad         = "core_load" // reported as core_load:<core>
	PhaseMCPSecurity      = "mcp_security"
	PhaseApprovalSecurity = "approval_security"
	PhaseCrossCore        = "cross_core_references"
)

// Gate is the outcome of one gate.
type Gate struct {
	Phase  string `json:"phase"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail"`
	Data   any    `json:"data,omitempty"`
}

// Blobs reads the content of a stored blob: the git storage, for the files
// of the trees judged that are not in Input.Content.
type Blobs interface {
	Blob(h coretree.Hash) ([]byte, error)
}

// Input is an edit for the gates: a new tree against a reference tree.
type Input struct {
	Root     string            // directory holding the new tree's files (cores load from here)
	Old, New coretree.Tree     // reference and new trees
	Problems map[string]string // files on disk that cannot be committed at all, with why
	Content  map[string][]byte // new contents known in memory (the changed files of a scan)
	Blobs    Blobs             // every other content
}

// Edit is an Input prepared for judging. The gates fill what they learn
// (the cores they loaded) for the gates after them: use an Edit for one
// sequence of gates, on one goroutine.
type Edit struct {
	in      Input
	changed []coretree.Change
	loaded  map[string]*core.Core // filled by the core_load gates
}

// NewEdit prepares in: the changed paths (those that differ, and the
// problem files, which count as added).
func NewEdit(in Input) *Edit {
	changed := coretree.Diff(in.Old, in.New)
	for p := range in.Problems {
		if _, ok := in.New[p]; !ok {
			changed = append(changed, coretree.Change{Path: p, Kind: coretree.Added})
		}
	}
	coretree.SortChanges(changed)
	return &Edit{in: in, changed: changed, loaded: map[string]*core.Core{}}
}

// Changed lists the changed paths, sorted.
func (e *Edit) Changed() []coretree.Change { return e.changed }

// ReadOld reads p of the reference tree; ok is false when absent.
func (e *Edit) ReadOld(p string) (data []byte, ok bool, err error) {
	en, ok := e.in.Old[p]
	if !ok {
		return nil, false, nil
	}
	data, err = e.in.Blobs.Blob(en.Hash)
	return data, err == nil, err
}

// ReadNew reads p of the new tree; ok is false when absent.
func (e *Edit) ReadNew(p string) (data []byte, ok bool, err error) {
	en, ok := e.in.New[p]
	if !ok {
		return nil, false, nil
	}
	if data, ok := e.in.Content[p]; ok {
		return data, true, nil
	}
	data, err = e.in.Blobs.Blob(en.Hash)
	return data, err == nil, err
}

// present lists changed paths that exist in the new tree (or on disk).
func (e *Edit) present() []string {
	var out []string
	for _, c := range e.changed {
		if c.Kind != coretree.Deleted {
			out = append(out, c.Path)
		}
	}
	return out
}

// changedScopes returns the cores (top-level directories) with a changed
// path, sorted, and whether the global fallback changed.
func (e *Edit) changedScopes() (cores []string, global bool) {
	seen := map[string]bool{}
	for _, c := range e.changed {
		top, rest, nested := strings.Cut(c.Path, "/")
		switch {
		case !nested && top == "agent.yaml":
			global = true
		case nested && rest != "" && !seen[top]:
			seen[top] = true
			cores = append(cores, top)
		}
	}
	slices.Sort(cores)
	return cores, global
}

func pass(phase string) Gate { return Gate{Phase: phase, Passed: true} }

func gateOf(phase string, problems []string) Gate {
	if len(problems) == 0 {
		return pass(phase)
	}
	return Gate{Phase: phase, Passed: false, Detail: strings.Join(problems, ", ")}
}

// PathSafety is the path_safety gate: no links, no special or oversized
// files, no unsafe names. Links are looked for in the whole new tree.
func (e *Edit) PathSafety() Gate {
	var problems []string
	for _, p := range slices.Sorted(maps.Keys(e.in.New)) {
		if e.in.New[p].Mode == coretree.Symlink {
			problems = append(problems, p+": symbolic links are not allowed")
		}
	}
	for _, p := range slices.Sorted(maps.Keys(e.in.Problems)) {
		problems = append(problems, p+": "+e.in.Problems[p])
	}
	for _, p := range e.present() {
		if why := nameReason(p); why != "" {
			problems = append(problems, p+": "+why)
		}
	}
	slices.Sort(problems)
	return gateOf(PhasePathSafety, problems)
}

// Artifact is the artifact gate: no generated or runtime artifacts.
func (e *Edit) Artifact() Gate {
	var problems []string
	for _, p := range e.present() {
		if why := artifactReason(p); why != "" {
			problems = append(problems, p+": "+why)
		}
	}
	return gateOf(PhaseArtifact, problems)
}

// Dependency is the dependency gate: no package manifests or lock files.
func (e *Edit) Dependency() Gate {
	var problems []string
	for _, p := range e.present() {
		if why := dependencyReason(p); why != "" {
			problems = append(problems, p+": "+why)
		}
	}
	return gateOf(PhaseDependency, problems)
}

// CoreLoad is the core_load:<core> gates: every changed core (every core
// when none changed) is loaded from Input.Root; a removed core passes. A
// changed global fallback is loaded as core_load:global.
func (e *Edit) CoreLoad() []Gate {
	cores, global := e.changedScopes()
	if len(cores) == 0 {
		cores = e.in.New.TopDirs()
	}
	var out []Gate
	for _, id := range cores {
		phase := PhaseCoreLoad + ":" + id
		if !e.in.New.HasCore(id) && !e.in.New.HasAnyUnder(id) {
			out = append(out, pass(phase)) // removed core
			continue
		}
		c, err := core.Load(filepath.Join(e.in.Root, filepath.FromSlash(id)))
		if err != nil {
			out = append(out, Gate{Phase: phase, Detail: loadMessage(err)})
			continue
		}
		e.loaded[id] = c
		out = append(out, pass(phase))
	}
	if global {
		phase := PhaseCoreLoad + ":global"
		if _, err := core.LoadGlobal(filepath.Join(e.in.Root, "agent.yaml")); err != nil {
			out = append(out, Gate{Phase: phase, Detail: loadMessage(err)})
		} else {
			out = append(out, pass(phase))
		}
	}
	return out
}

func loadMessage(err error) string {
	var de *demiurge.Error
	if errors.As(err, &de) {
		return de.Message
	}
	return "cannot load: internal error"
}

// CrossCore is the cross_core_references gate: components of the judged
// cores only name cores that exist in the new tree (agents.spawn:<core>
// grants). The cores judged are those CoreLoad loaded; when a core was
// removed, every core is loaded and judged.
func (e *Edit) CrossCore() Gate {
	removed := false
	for _, c := range e.changed {
		if c.Kind == coretree.Deleted && strings.HasSuffix(c.Path, "/agent.yaml") && strings.Count(c.Path, "/") == 1 {
			removed = true
		}
	}
	if removed {
		for _, id := range e.in.New.TopDirs() {
			if _, ok := e.loaded[id]; ok || !e.in.New.HasCore(id) {
				continue
			}
			if c, err := core.Load(filepath.Join(e.in.Root, id)); err == nil {
				e.loaded[id] = c
			}
		}
	}
	var problems []string
	for _, id := range slices.Sorted(maps.Keys(e.loaded)) {
		for _, ref := range coreReferences(e.loaded[id]) {
			if !e.in.New.HasCore(ref.target) {
				problems = append(problems, fmt.Sprintf("%s: %s names core %q, which does not exist", ref.where, ref.capability, ref.target))
			}
		}
	}
	slices.Sort(problems)
	return gateOf(PhaseCrossCore, slices.Compact(problems))
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

// Failed returns the gates that did not pass.
func Failed(gates []Gate) []Gate {
	var out []Gate
	for _, g := range gates {
		if !g.Passed {
			out = append(out, g)
		}
	}
	return out
}

// GateError is the cause carried by a gate refusal: every gate that ran
// and, when an approval change needs the operator and the refusal is a
// save's with Issue set, a fresh token that confirms it (`demiurge core
// save --confirm`).
type GateError struct {
	Gates []Gate
	Token string // "" unless the approval_security gate issued one
}

func (e *GateError) Error() string { return "gates failed" }

// Refusal is the ECONFIG refusal "<prefix>: <phase>: <detail>; …" of the
// failed gates, with a *GateError cause.
func Refusal(prefix string, gates []Gate, token string) error {
	var parts []string
	for _, g := range Failed(gates) {
		parts = append(parts, g.Phase+": "+g.Detail)
	}
	return &demiurge.Error{Code: demiurge.ECONFIG, Message: prefix + ": " + strings.Join(parts, "; "), Err: &GateError{Gates: gates, Token: token}}
}
