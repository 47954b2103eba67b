package coregate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"
	"sort"
	"strings"

	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/coretree"
	"github.com/demiurge/demiurge/internal/yamlx"
)

// Security is what an edit changes of MCP declarations and approval
// configuration, and a digest of exactly these changes and contents, which
// the operator's confirmation token binds (see confirm.go).
type Security struct {
	MCP      []MCPChange
	Approval []ApprovalChange
	Digest   string // "" when nothing needs the operator
}

func fingerprint(data []byte, ok bool) string {
	if !ok {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// decodeManifest decodes agent.yaml contents without validating them
// (the core_load gate does that); nil when absent or undecodable.
func decodeManifest(p string, data []byte, ok bool) *core.Manifest {
	if !ok {
		return nil
	}
	var m core.Manifest
	if err := yamlx.DecodeStrict(p, data, &m); err != nil {
		return nil
	}
	return &m
}

// Security computes the MCP and approval changes between the reference
// and the new tree. withMCP adds the MCP declaration diff (evolve review);
// approval loosening of MCP declarations is found either way.
func (e *Edit) Security(withMCP bool) (*Security, error) {
	if !touchesYAML(e.changed) {
		// Manifests, tool.yaml, slot.yaml and MCP declarations are all
		// YAML: without a YAML change nothing here can differ.
		return &Security{}, nil
	}
	readOld, readNew := e.ReadOld, e.ReadNew
	sr := &Security{}
	type prints struct{ Path, Before, After string }
	var files []prints
	printed := map[string]bool{}
	addPrints := func(p string) error {
		if printed[p] {
			return nil
		}
		printed[p] = true
		od, ook, err := readOld(p)
		if err != nil {
			return err
		}
		nd, nok, err := readNew(p)
		if err != nil {
			return err
		}
		files = append(files, prints{p, fingerprint(od, ook), fingerprint(nd, nok)})
		return nil
	}
	changed := map[string]bool{}
	for _, c := range e.changed {
		changed[c.Path] = true
	}

	if changed["agent.yaml"] {
		od, ook, err := readOld("agent.yaml")
		if err != nil {
			return nil, err
		}
		nd, nok, err := readNew("agent.yaml")
		if err != nil {
			return nil, err
		}
		if nok {
			var og, ng core.GlobalConfig
			if ook {
				_ = yamlx.DecodeStrict("agents/agent.yaml", od, &og)
			}
			if err := yamlx.DecodeStrict("agents/agent.yaml", nd, &ng); err == nil {
				sr.Approval = append(sr.Approval, approvalLoosening("agent.yaml", og.Approval, ng.Approval)...)
			}
		}
	}
	cores, _ := e.changedScopes()
	for _, id := range cores {
		mp := id + "/agent.yaml"
		od, ook, err := readOld(mp)
		if err != nil {
			return nil, err
		}
		nd, nok, err := readNew(mp)
		if err != nil {
			return nil, err
		}
		oldM, newM := decodeManifest(mp, od, ook), decodeManifest(mp, nd, nok)
		if changed[mp] && newM != nil {
			sr.Approval = append(sr.Approval, manifestLoosening(mp, oldM, newM)...)
		}
		// Components: tool.yaml and slot.yaml anywhere in the core.
		for _, c := range e.changed {
			if c.Kind == coretree.Deleted || !strings.HasPrefix(c.Path, id+"/") {
				continue
			}
			base := path.Base(c.Path)
			if base != "tool.yaml" && base != "slot.yaml" {
				continue
			}
			var oldC *componentFile
			if d, ok, err := readOld(c.Path); err != nil {
				return nil, err
			} else if ok {
				if m, err := decodeLoose(c.Path, d); err == nil {
					cf := componentFrom(m)
					oldC = &cf
				}
			}
			d, _, err := readNew(c.Path)
			if err != nil {
				return nil, err
			}
			m, err := decodeLoose(c.Path, d)
			if err != nil {
				continue // core_load reports it
			}
			newC := componentFrom(m)
			if base == "tool.yaml" {
				sr.Approval = append(sr.Approval, componentLoosening(c.Path, oldC, &newC, "prompt", "medium", "")...)
			} else {
				sr.Approval = append(sr.Approval, componentLoosening(c.Path, oldC, &newC, "", "", "")...)
			}
		}
		// MCP declarations, compared by server id across old and new roots.
		oldDecls, newDecls := mcpDecls(e.in.Old, id, oldM), mcpDecls(e.in.New, id, newM)
		for _, server := range unionKeys(oldDecls, newDecls) {
			op, had := oldDecls[server]
			np, has := newDecls[server]
			if had && has && op == np && e.in.Old[op] == e.in.New[np] {
				continue
			}
			ch := MCPChange{Path: np, Change: "modified"}
			var od, nd []byte
			if had {
				if od, _, err = readOld(op); err != nil {
					return nil, err
				}
				ch.Before = summarizeMCP(server, op, od)
			}
			if has {
				if nd, _, err = readNew(np); err != nil {
					return nil, err
				}
				ch.After = summarizeMCP(server, np, nd)
			}
			switch {
			case !had:
				ch.Change = "added"
			case !has:
				ch.Change, ch.Path = "removed", op
			}
			if has {
				var oldC *componentFile
				if had {
					if m, err := decodeLoose(op, od); err == nil {
						cf := componentFrom(m)
						oldC = &cf
					}
				}
				if m, err := decodeLoose(np, nd); err == nil {
					newC := componentFrom(m)
					sr.Approval = append(sr.Approval, componentLoosening(np, oldC, &newC, "prompt", "medium", "mcp.call:"+server)...)
				}
			}
			if withMCP {
				sr.MCP = append(sr.MCP, ch)
				for _, p := range []string{op, np} {
					if p != "" {
						if err := addPrints(p); err != nil {
							return nil, err
						}
					}
				}
			}
		}
	}
	sort.SliceStable(sr.Approval, func(i, j int) bool { return sr.Approval[i].Path < sr.Approval[j].Path })
	for _, a := range sr.Approval {
		if err := addPrints(a.Path); err != nil {
			return nil, err
		}
	}
	if len(sr.MCP) == 0 && len(sr.Approval) == 0 {
		return sr, nil
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	type mcpPrint struct {
		Path   string `json:"path"`
		Change string `json:"change"`
		Before string `json:"before_fingerprint"`
		After  string `json:"after_fingerprint"`
	}
	var mcpPrints []mcpPrint
	var paths []string
	fp := map[string]prints{}
	for _, f := range files {
		fp[f.Path] = f
		paths = append(paths, f.Path)
	}
	for _, c := range sr.MCP {
		var before, after string
		if c.Before != nil {
			before = fp[c.Before.Path].Before
		}
		if c.After != nil {
			after = fp[c.After.Path].After
		}
		mcpPrints = append(mcpPrints, mcpPrint{c.Path, c.Change, before, after})
	}
	canonical, _ := json.Marshal(struct {
		ChangedPaths    []string         `json:"changed_paths"`
		Changes         []mcpPrint       `json:"changes"`
		ApprovalChanges []ApprovalChange `json:"approval_changes"`
		Files           []prints         `json:"files"`
	}{paths, mcpPrints, sr.Approval, files})
	sum := sha256.Sum256(canonical)
	sr.Digest = hex.EncodeToString(sum[:])
	return sr, nil
}

// mcpChangedPaths lists the declaration paths an MCP diff touches.
func mcpChangedPaths(changes []MCPChange) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range changes {
		for _, s := range []*MCPSummary{c.Before, c.After} {
			if s != nil && !seen[s.Path] {
				seen[s.Path] = true
				out = append(out, s.Path)
			}
		}
	}
	sort.Strings(out)
	return out
}

func touchesYAML(changes []coretree.Change) bool {
	for _, c := range changes {
		if ext := path.Ext(c.Path); ext == ".yaml" || ext == ".yml" {
			return true
		}
	}
	return false
}
