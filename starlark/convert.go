package starlark

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"

	sl "go.starlark.net/starlark"
)

// Conversion limits. Starlark values may share and nest (a = [0]*100;
// b = [a]*100; ...), so a small program can describe a value far larger than
// its memory; conversion fails closed instead of expanding it.
const (
	MaxConvertDepth = 64
	MaxConvertNodes = 1 << 20
)

// ConversionProblem names why a value is not JSON-compatible.
type ConversionProblem string

const (
	ProblemType      ConversionProblem = "type"      // not a JSON-compatible type
	ProblemNonFinite ConversionProblem = "nonfinite" // NaN or an infinity
	ProblemKey       ConversionProblem = "key"       // a dict key that is not a string
	ProblemRange     ConversionProblem = "range"     // an integer outside int64
	ProblemDepth     ConversionProblem = "depth"     // nested deeper than MaxConvertDepth
	ProblemSize      ConversionProblem = "size"      // more than MaxConvertNodes values
)

// ConversionError reports a value that cannot cross between Go and Starlark.
// Path locates it ("$", "$.a[2]"); Type is the offending value's type name
// (the key's type for ProblemKey).
type ConversionError struct {
	Problem ConversionProblem
	Path    string
	Type    string
}

func (e *ConversionError) Error() string {
	var msg string
	switch e.Problem {
	case ProblemNonFinite:
		msg = "values must be finite JSON numbers"
	case ProblemKey:
		msg = "object keys must be strings, got " + e.Type
	case ProblemRange:
		msg = "integer does not fit in 64 bits"
	case ProblemDepth:
		msg = fmt.Sprintf("value is nested deeper than %d levels", MaxConvertDepth)
	case ProblemSize:
		msg = fmt.Sprintf("value has more than %d elements", MaxConvertNodes)
	default:
		msg = "value must be JSON-compatible, got " + e.Type
	}
	if e.Path != "" && e.Path != "$" {
		msg += " (at " + e.Path + ")"
	}
	return msg
}

type walker struct{ nodes int }

func (w *walker) enter(path string, depth int) error {
	if depth > MaxConvertDepth {
		return &ConversionError{Problem: ProblemDepth, Path: path}
	}
	w.nodes++
	if w.nodes > MaxConvertNodes {
		return &ConversionError{Problem: ProblemSize, Path: path}
	}
	return nil
}

// FromStarlark converts a Starlark value to a JSON-compatible Go value:
// None→nil, bool, int→int64, float→float64 (finite only), string, list and
// tuple→[]any, dict→map[string]any (string keys only). Anything else fails
// with a *ConversionError.
func FromStarlark(v sl.Value) (any, error) {
	var w walker
	return w.from(v, "$", 0)
}

func (w *walker) from(v sl.Value, path string, depth int) (any, error) {
	if err := w.enter(path, depth); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case sl.NoneType:
		return nil, nil
	case sl.Bool:
		return bool(x), nil
	case sl.Int:
		i, ok := x.Int64()
		if !ok {
			return nil, &ConversionError{Problem: ProblemRange, Path: path, Type: "int"}
		}
		return i, nil
	case sl.Float:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, &ConversionError{Problem: ProblemNonFinite, Path: path, Type: "float"}
		}
		return f, nil
	case sl.String:
		return string(x), nil
	case *sl.List:
		return w.seq(x, x.Len(), path, depth)
	case sl.Tuple:
		return w.seq(x, x.Len(), path, depth)
	case *sl.Dict:
		out := make(map[string]any, x.Len())
		for _, item := range x.Items() {
			k, ok := item[0].(sl.String)
			if !ok {
				return nil, &ConversionError{Problem: ProblemKey, Path: path, Type: item[0].Type()}
			}
			val, err := w.from(item[1], path+"."+string(k), depth+1)
			if err != nil {
				return nil, err
			}
			out[string(k)] = val
		}
		return out, nil
	}
	if v == nil {
		return nil, nil
	}
	return nil, &ConversionError{Problem: ProblemType, Path: path, Type: v.Type()}
}

func (w *walker) seq(x sl.Indexable, n int, path string, depth int) (any, error) {
	out := make([]any, n)
	for i := range n {
		val, err := w.from(x.Index(i), path+"["+strconv.Itoa(i)+"]", depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = val
	}
	return out, nil
}

// ToStarlark converts a JSON-compatible Go value to a new, unfrozen Starlark
// value: nil→None, bool, every integer kind→int, float32/64→float (finite
// only), json.Number, string, slices and arrays→list, maps with string keys
// →dict (keys in sorted order, so the result is deterministic). A Starlark
// value is returned as is. Anything else fails with a *ConversionError.
func ToStarlark(v any) (sl.Value, error) {
	var w walker
	return w.to(v, "$", 0)
}

func (w *walker) to(v any, path string, depth int) (sl.Value, error) {
	if err := w.enter(path, depth); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case nil:
		return sl.None, nil
	case sl.Value:
		return x, nil
	case bool:
		return sl.Bool(x), nil
	case string:
		return sl.String(x), nil
	case int:
		return sl.MakeInt(x), nil
	case int64:
		return sl.MakeInt64(x), nil
	case float64:
		return w.float(x, path)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return sl.MakeInt64(i), nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, &ConversionError{Problem: ProblemType, Path: path, Type: "json.Number"}
		}
		return w.float(f, path)
	case []any:
		list := make([]sl.Value, len(x))
		for i, e := range x {
			sv, err := w.to(e, path+"["+strconv.Itoa(i)+"]", depth+1)
			if err != nil {
				return nil, err
			}
			list[i] = sv
		}
		return sl.NewList(list), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := sl.NewDict(len(x))
		for _, k := range keys {
			sv, err := w.to(x[k], path+"."+k, depth+1)
			if err != nil {
				return nil, err
			}
			if err := d.SetKey(sl.String(k), sv); err != nil {
				return nil, err
			}
		}
		return d, nil
	}
	return w.reflect(reflect.ValueOf(v), path, depth)
}

func (w *walker) float(f float64, path string) (sl.Value, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, &ConversionError{Problem: ProblemNonFinite, Path: path, Type: "float"}
	}
	return sl.Float(f), nil
}

// reflect handles the less common kinds: sized integers, float32, typed
// slices and maps ([]string, map[string]string, ...), and pointers to them.
func (w *walker) reflect(rv reflect.Value, path string, depth int) (sl.Value, error) {
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return sl.MakeInt64(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return sl.MakeUint64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return w.float(rv.Float(), path)
	case reflect.String:
		return sl.String(rv.String()), nil
	case reflect.Bool:
		return sl.Bool(rv.Bool()), nil
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return sl.None, nil
		}
		return w.to(rv.Elem().Interface(), path, depth)
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return sl.NewList(nil), nil
		}
		list := make([]sl.Value, rv.Len())
		for i := range rv.Len() {
			sv, err := w.to(rv.Index(i).Interface(), path+"["+strconv.Itoa(i)+"]", depth+1)
			if err != nil {
				return nil, err
			}
			list[i] = sv
		}
		return sl.NewList(list), nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, &ConversionError{Problem: ProblemKey, Path: path, Type: rv.Type().Key().String()}
		}
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		d := sl.NewDict(rv.Len())
		for _, k := range keys {
			sv, err := w.to(rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key())).Interface(), path+"."+k, depth+1)
			if err != nil {
				return nil, err
			}
			if err := d.SetKey(sl.String(k), sv); err != nil {
				return nil, err
			}
		}
		return d, nil
	}
	typ := "invalid"
	if rv.IsValid() {
		typ = rv.Type().String()
	}
	return nil, &ConversionError{Problem: ProblemType, Path: path, Type: typ}
}
