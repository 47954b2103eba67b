package demiurge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
)

// Authored state (ctx.state.core and ctx.state.session, spec surfaces
// §1.7): one JSON document per core and per session, changed only by
// state.module_updated events (aggregate authored_state
// "<scope>:<owner>") whose projection applies the operation to the stored
// document.
const (
	AggAuthoredState     = "authored_state"
	EvStateModuleUpdated = "state.module_updated"

	StateScopeCore    = "core"    // owner: the core id
	StateScopeSession = "session" // owner: the session id

	StateSet    = "set"
	StateMerge  = "merge"
	StateAppend = "append"

	// MaxStateDocumentBytes bounds one state document as compact JSON;
	// a write that would pass it is refused.
	MaxStateDocumentBytes = 256 << 10
	// MaxStateTargetChars bounds a target dot path.
	MaxStateTargetChars = 256
)

// StateModuleUpdatedPayload is one accepted state write.
type StateModuleUpdatedPayload struct {
	TurnID     string `json:"turn_id"`
	Slot       string `json:"slot"`
	Scope      string `json:"scope"`
	Owner      string `json:"owner"` // core id or session id
	ProposalID string `json:"proposal_id"`
	Target     string `json:"target"`
	Operation  string `json:"operation"`
	Patch      any    `json:"patch"`
}

func (StateModuleUpdatedPayload) Type() string { return EvStateModuleUpdated }

// StateAggregateID is the aggregate id of a state document.
func StateAggregateID(scope, owner string) string { return scope + ":" + owner }

// NewStateDocument is the document of a scope nothing wrote yet.
func NewStateDocument() map[string]any { return map[string]any{"schema_version": json.Number("1")} }

// StateSegments splits a dot path, dropping empty segments; a path of
// dots only has none (the empty-target error).
func StateSegments(target string) []string {
	var out []string
	for _, s := range strings.Split(target, ".") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// StateGet walks doc along target; ok is false when a segment is missing
// or a non-object is hit.
func StateGet(doc map[string]any, target string) (v any, ok bool) {
	var cur any = doc
	for _, seg := range StateSegments(target) {
		m, isMap := cur.(map[string]any)
		if !isMap {
			return nil, false
		}
		if cur, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// ApplyStateOperation returns a copy of doc with op applied at target, and
// the new value at target. The copy shares nothing with doc along the
// target path (other branches are shared: treat both as immutable). Errors
// are EINVALID with the original's texts.
func ApplyStateOperation(doc map[string]any, target, op string, patch any) (map[string]any, any, error) {
	segs := StateSegments(target)
	if len(segs) == 0 {
		return nil, nil, Errorf(EINVALID, "state proposal target is required")
	}
	if len(target) > MaxStateTargetChars {
		return nil, nil, Errorf(EINVALID, "state target is longer than %d characters", MaxStateTargetChars)
	}
	out := maps.Clone(doc)
	if out == nil {
		out = NewStateDocument()
	}
	parent := out
	for _, seg := range segs[:len(segs)-1] {
		next, ok := parent[seg]
		if !ok || next == nil {
			child := map[string]any{}
			parent[seg] = child
			parent = child
			continue
		}
		m, isMap := next.(map[string]any)
		if !isMap {
			return nil, nil, Errorf(EINVALID, "state target is not an object: %s", seg)
		}
		m = maps.Clone(m)
		parent[seg] = m
		parent = m
	}
	leaf := segs[len(segs)-1]
	var value any
	switch op {
	case StateSet:
		value = patch
	case StateMerge:
		cur, ok := parent[leaf]
		if !ok || cur == nil {
			cur = map[string]any{}
		}
		curMap, okCur := cur.(map[string]any)
		p, okPatch := patch.(map[string]any)
		if !okCur || !okPatch {
			return nil, nil, Errorf(EINVALID, "merge requires object target and object patch")
		}
		merged := maps.Clone(curMap)
		maps.Copy(merged, p)
		value = merged
	case StateAppend:
		cur, ok := parent[leaf]
		if !ok || cur == nil {
			cur = []any{}
		}
		list, isList := cur.([]any)
		if !isList {
			return nil, nil, Errorf(EINVALID, "append requires array target")
		}
		value = append(append(make([]any, 0, len(list)+1), list...), patch)
	default:
		return nil, nil, Errorf(EINVALID, "unsupported state operation: %s", op)
	}
	parent[leaf] = value
	if n, err := StateDocumentSize(out); err != nil {
		return nil, nil, WrapError(EINVALID, err, "state value is not JSON-compatible")
	} else if n > MaxStateDocumentBytes {
		return nil, nil, Errorf(EINVALID, "state document would be %d bytes, over the limit of %d", n, MaxStateDocumentBytes)
	}
	return out, value, nil
}

// StateDocumentSize is the size of doc as compact JSON.
func StateDocumentSize(doc map[string]any) (int, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return 0, fmt.Errorf("encode state document: %w", err)
	}
	return buf.Len() - 1, nil
}
