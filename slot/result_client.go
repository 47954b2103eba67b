package slot

import (
	"errors"
	"fmt"
	"maps"
	"sort"
	"sync"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge/starlark"
)

// resultState is the agent result of one output phase. Serial slots commit
// to it; parallel slots read it concurrently.
type resultState struct {
	mu    sync.Mutex // guards value, set
	value any
	set   bool
}

func (s *resultState) get() (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.value, s.set
}

func (s *resultState) put(v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.value, s.set = v, true
}

// resultClient implements ctx.result for one slot invocation. A writable
// (serial) client stages its writes and commits them when the slot completes.
type resultClient struct {
	state       *resultState
	writable    bool
	workspace   string
	sessionRoot string

	staged bool // set was called; value holds the staged result
	value  any
}

var errReadOnlyResult = errors.New("parallel output modules cannot modify the current agent result")

func (c *resultClient) object() *starlark.Object {
	return starlark.NewDynamicObject("ctx.result", sl.StringDict{
		"set": sl.NewBuiltin("set", c.set),
	}, map[string]starlark.Property{
		"value": func() (sl.Value, error) { return starlark.ToStarlark(c.current()) },
	})
}

func (c *resultClient) current() any {
	if c.staged {
		return c.value
	}
	v, _ := c.state.get()
	return v
}

// set is ctx.result.set(v): v must be JSON-compatible with finite numbers and
// string keys; a dict set onto a dict is a shallow merge, anything else
// replaces. It returns the new result.
func (c *resultClient) set(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if !c.writable {
		return nil, errReadOnlyResult
	}
	var v sl.Value
	if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &v); err != nil {
		return nil, err
	}
	next, err := starlark.FromStarlark(v)
	if err != nil {
		return nil, resultValueError(err)
	}
	if err := checkArtifacts(next, c.workspace, c.sessionRoot); err != nil {
		return nil, err
	}
	if add, ok := next.(map[string]any); ok {
		if cur, ok := c.current().(map[string]any); ok {
			merged := make(map[string]any, len(cur)+len(add))
			maps.Copy(merged, cur)
			maps.Copy(merged, add)
			next = merged
		}
	}
	c.staged, c.value = true, next
	return starlark.ToStarlark(next)
}

func (c *resultClient) commit() {
	if c.staged {
		c.state.put(c.value)
	}
}

// resultValueError words a conversion failure the way ctx.result reports it.
func resultValueError(err error) error {
	var ce *starlark.ConversionError
	if errors.As(err, &ce) {
		switch ce.Problem {
		case starlark.ProblemType:
			return fmt.Errorf("ctx.result value must be JSON-compatible, got %s", ce.Type)
		case starlark.ProblemNonFinite:
			return errors.New("ctx.result values must be finite JSON numbers")
		case starlark.ProblemKey:
			return errors.New("ctx.result object keys must be strings")
		}
	}
	return fmt.Errorf("ctx.result value: %v", err)
}

// Keys that mark a dict of a result as an artifact descriptor: one location
// key and one hint key.
var (
	artifactLocationKeys = []string{"path", "url", "content"}
	artifactHintKeys     = []string{"artifact_id", "kind", "media_type", "summary", "filename"}
)

// checkArtifacts validates artifact descriptors anywhere in a result: their
// metadata must be an object and a path must lie inside the workspace or the
// session root; the path is rewritten to its absolute form.
func checkArtifacts(v any, workspace, sessionRoot string) error {
	switch x := v.(type) {
	case []any:
		for _, item := range x {
			if err := checkArtifacts(item, workspace, sessionRoot); err != nil {
				return err
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := checkArtifacts(x[k], workspace, sessionRoot); err != nil {
				return err
			}
		}
		if !hasAny(x, artifactLocationKeys) || !hasAny(x, artifactHintKeys) {
			return nil
		}
		if md, ok := x["metadata"]; ok && md != nil {
			if _, isObject := md.(map[string]any); !isObject {
				return errors.New("result artifact metadata must be an object")
			}
		}
		p, ok := x["path"]
		if !ok || p == nil {
			return nil
		}
		raw := fmt.Sprint(p)
		abs, inside := containedPath(raw, workspace, sessionRoot)
		if !inside {
			return fmt.Errorf("result artifact path is outside the workspace or session: %s", raw)
		}
		x["path"] = abs
	}
	return nil
}

func hasAny(m map[string]any, keys []string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}
