package starlark

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	sl "go.starlark.net/starlark"
)

// The bridge exposes a ctx Object tree to authored code that runs outside
// this interpreter (the Python worker): Describe renders the tree as plain
// data, and CallPath / GetPath run one of its built-ins or properties on
// behalf of that code. Both languages therefore reach the Host through the
// very same built-ins, with the same checks and the same messages.

// Description tags (the "t" key of a described node).
const (
	NodeObject   = "obj"  // {"t":"obj","type":<type>,"attrs":{name: node}}
	NodeValue    = "val"  // {"t":"val","v":<JSON value>}
	NodeFunc     = "fn"   // {"t":"fn"}: call it through CallPath
	NodeProperty = "prop" // {"t":"prop"}: read it through GetPath
)

// RecordKey marks a JSON object that stands for an Object returned by a
// built-in (a delivery handle): {"$obj": <type>, <attr>: <value>, ...}.
const RecordKey = "$obj"

// Describe renders o as nested maps: fields that are Objects recurse,
// callables become NodeFunc, properties NodeProperty, and every other
// field its JSON value. A field that is not JSON-compatible fails.
func Describe(o *Object) (map[string]any, error) {
	return describe(o, o.typ)
}

func describe(o *Object, path string) (map[string]any, error) {
	attrs := make(map[string]any, len(o.names))
	for name, v := range o.attrs {
		switch x := v.(type) {
		case *Record:
			j, err := toJSON(x)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", path, name, err)
			}
			attrs[name] = map[string]any{"t": NodeValue, "v": j}
		case *Object:
			d, err := describe(x, path+"."+name)
			if err != nil {
				return nil, err
			}
			attrs[name] = d
		case sl.Callable:
			attrs[name] = map[string]any{"t": NodeFunc}
		default:
			j, err := toJSON(v)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", path, name, err)
			}
			attrs[name] = map[string]any{"t": NodeValue, "v": j}
		}
	}
	for name := range o.props {
		attrs[name] = map[string]any{"t": NodeProperty}
	}
	return map[string]any{"t": NodeObject, "type": o.typ, "attrs": attrs}, nil
}

// toJSON converts a Starlark value for the bridge: JSON values as
// FromStarlark gives them, Objects as records (RecordKey).
func toJSON(v sl.Value) (any, error) {
	switch x := v.(type) {
	case *Record:
		return toJSON(x.Object)
	case *Object:
		rec := map[string]any{RecordKey: x.typ}
		for name, f := range x.attrs {
			if _, ok := f.(sl.Callable); ok {
				continue
			}
			j, err := toJSON(f)
			if err != nil {
				return nil, err
			}
			rec[name] = j
		}
		for name, p := range x.props {
			pv, err := p()
			if err != nil {
				return nil, err
			}
			j, err := toJSON(pv)
			if err != nil {
				return nil, err
			}
			rec[name] = j
		}
		return rec, nil
	case *sl.List:
		out := make([]any, x.Len())
		for i := range x.Len() {
			j, err := toJSON(x.Index(i))
			if err != nil {
				return nil, err
			}
			out[i] = j
		}
		return out, nil
	case sl.Tuple:
		out := make([]any, len(x))
		for i, e := range x {
			j, err := toJSON(e)
			if err != nil {
				return nil, err
			}
			out[i] = j
		}
		return out, nil
	case *sl.Dict:
		out := make(map[string]any, x.Len())
		for _, kv := range x.Items() {
			k, ok := kv[0].(sl.String)
			if !ok {
				return nil, fmt.Errorf("dict keys must be strings, got %s", kv[0].Type())
			}
			j, err := toJSON(kv[1])
			if err != nil {
				return nil, err
			}
			out[string(k)] = j
		}
		return out, nil
	}
	return FromStarlark(v)
}

// lookup walks a dotted path of attributes from root.
func lookup(root *Object, path string) (sl.Value, error) {
	var cur sl.Value = root
	for _, name := range strings.Split(path, ".") {
		o, ok := cur.(*Object)
		if !ok || name == "" {
			return nil, fmt.Errorf("%s: no such ctx attribute", path)
		}
		v, err := o.Attr(name)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, fmt.Errorf("%s has no attribute %s", o.typ, name)
		}
		cur = v
	}
	return cur, nil
}

// GetPath reads the attribute at path (a property such as result.value).
func GetPath(root *Object, path string) (any, error) {
	v, err := lookup(root, path)
	if err != nil {
		return nil, err
	}
	return toJSON(v)
}

// CallPath calls the built-in at path with JSON arguments, on a thread of its
// own that carries ctx (built-ins that block watch it) and an allocation
// budget of memoryLimit bytes (0: the default). The result is JSON, Objects
// as records. An error is the built-in's own: its code and message survive.
func CallPath(ctx context.Context, root *Object, path string, args []any, kwargs map[string]any, memoryLimit int64) (any, error) {
	v, err := lookup(root, path)
	if err != nil {
		return nil, err
	}
	fn, ok := v.(sl.Callable)
	if !ok {
		return nil, fmt.Errorf("%s is not callable", path)
	}
	sargs := make(sl.Tuple, len(args))
	for i, a := range args {
		if sargs[i], err = ToStarlark(a); err != nil {
			return nil, fmt.Errorf("%s: argument %d: %w", path, i+1, err)
		}
	}
	names := make([]string, 0, len(kwargs))
	for k := range kwargs {
		names = append(names, k)
	}
	sort.Strings(names)
	skw := make([]sl.Tuple, 0, len(names))
	for _, k := range names {
		sv, err := ToStarlark(kwargs[k])
		if err != nil {
			return nil, fmt.Errorf("%s: argument %s: %w", path, k, err)
		}
		skw = append(skw, sl.Tuple{sl.String(k), sv})
	}
	if memoryLimit <= 0 {
		memoryLimit = DefaultMemoryLimit
	}
	th := &sl.Thread{Name: path, Load: refuseLoad}
	th.SetLocal(threadContextKey, ctx)
	th.SetLocal(budgetKey, &budget{limit: memoryLimit})
	ret, err := sl.Call(th, fn, sargs, skw)
	if err != nil {
		var ee *sl.EvalError
		if errors.As(err, &ee) && ee.Unwrap() != nil {
			err = ee.Unwrap()
		}
		if exceeded(th) {
			return nil, &errMemory{limit: memoryLimit}
		}
		return nil, err
	}
	return toJSON(ret)
}
