package authored

import (
	"fmt"
	"sort"
	"strings"

	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/starlark"
	sl "go.starlark.net/starlark"
)

// Result keys an authored tool may set.
const (
	keyContent     = "content"
	keyData        = "data"
	keyIsError     = "is_error"
	keyTerminate   = "terminate"
	keyModelOutput = "model_output"
	// keyDisplayOutput is what tool cards and line mode show instead of
	// the content (spec surfaces §1.1).
	keyDisplayOutput = "display_output"
)

var resultKeys = []string{keyContent, keyData, keyIsError, keyTerminate, keyModelOutput, keyDisplayOutput}

// result is the result of one call as ctx.output.set and the return value
// build it. It belongs to one call and is touched only by its thread.
type result struct {
	content       string
	modelOutput   string
	displayOutput string
	data          map[string]any
	isError       bool
	terminate     bool
}

// apply sets the fields present in fields; an absent or None value leaves a
// field as it is. Values are checked and converted now, so later mutation by
// authored code cannot change a staged result.
func (r *result) apply(fields map[string]sl.Value) error {
	next := *r
	for _, k := range resultKeys {
		v := fields[k]
		if v == nil || v == sl.None {
			continue
		}
		switch k {
		case keyContent, keyModelOutput, keyDisplayOutput:
			s, ok := v.(sl.String)
			if !ok {
				return fmt.Errorf("%s must be a string, got %s", k, v.Type())
			}
			switch k {
			case keyContent:
				next.content = string(s)
			case keyModelOutput:
				next.modelOutput = string(s)
			default:
				next.displayOutput = string(s)
			}
		case keyIsError, keyTerminate:
			b, ok := v.(sl.Bool)
			if !ok {
				return fmt.Errorf("%s must be a bool, got %s", k, v.Type())
			}
			if k == keyIsError {
				next.isError = bool(b)
			} else {
				next.terminate = bool(b)
			}
		case keyData:
			if _, ok := v.(*sl.Dict); !ok {
				return fmt.Errorf("data must be a dict, got %s", v.Type())
			}
			m, err := starlark.FromStarlark(v)
			if err != nil {
				return fmt.Errorf("data: %v", err)
			}
			next.data = m.(map[string]any)
		}
	}
	*r = next
	return nil
}

// applyReturn folds execute's return value into the result: None keeps the
// staged result, a string is the content, a dict names result fields, and
// anything else becomes its str() as content.
func (r *result) applyReturn(v sl.Value) error {
	switch x := v.(type) {
	case nil, sl.NoneType:
		return nil
	case sl.String:
		r.content = string(x)
		return nil
	case *sl.Dict:
		fields := make(map[string]sl.Value, x.Len())
		var unknown []string
		for _, item := range x.Items() {
			k, ok := item[0].(sl.String)
			if !ok {
				return fmt.Errorf("result keys must be strings, got %s", item[0].Type())
			}
			if !isResultKey(string(k)) {
				unknown = append(unknown, string(k))
				continue
			}
			fields[string(k)] = item[1]
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return fmt.Errorf("unknown key(s) %s (allowed: %s)", strings.Join(unknown, ", "), strings.Join(resultKeys, ", "))
		}
		return r.apply(fields)
	default:
		r.content = v.String()
		return nil
	}
}

func isResultKey(k string) bool {
	for _, rk := range resultKeys {
		if rk == k {
			return true
		}
	}
	return false
}

// outcome is the effect outcome of a call that ran to completion. An error
// result loses any authored "denial" or "approval" key: only the Host
// reports denials.
func (r *result) outcome() effect.Outcome {
	data := r.data
	if r.isError && data != nil {
		data = make(map[string]any, len(r.data))
		for k, v := range r.data {
			if k != "denial" && k != "approval" {
				data[k] = v
			}
		}
	}
	return effect.Outcome{
		Content:          r.content,
		ModelOutput:      r.modelOutput,
		DisplayOutput:    r.displayOutput,
		Data:             data,
		IsError:          r.isError,
		ExecutionStarted: true,
		Terminate:        r.terminate,
	}
}
