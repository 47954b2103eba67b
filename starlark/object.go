package starlark

import (
	"fmt"
	"sort"

	sl "go.starlark.net/starlark"
)

// Property computes an attribute each time it is read, for state that a
// built-in of the same object changes (ctx.result.value after set). It should
// return a fresh value so authored code cannot mutate Host state through it.
type Property func() (sl.Value, error)

// Object is an immutable attribute value that exposes a ctx API to authored
// code: fields (frozen values, nested Objects, built-ins) and Properties.
// Authored code can read attributes and list them with dir(); it cannot assign
// to them. An Object is not hashable.
type Object struct {
	typ   string
	attrs sl.StringDict
	props map[string]Property
	names []string
}

var _ sl.HasAttrs = (*Object)(nil)

// NewObject returns an Object of type name typ (shown by type() and in
// errors, e.g. "ctx.input") with the given fields. The fields are frozen.
func NewObject(typ string, fields sl.StringDict) *Object {
	return NewDynamicObject(typ, fields, nil)
}

// NewDynamicObject is NewObject with Properties as well. A name present in
// both is a programming error and panics.
func NewDynamicObject(typ string, fields sl.StringDict, props map[string]Property) *Object {
	o := &Object{typ: typ, attrs: make(sl.StringDict, len(fields)), props: props}
	for name, v := range fields {
		v.Freeze()
		o.attrs[name] = v
		o.names = append(o.names, name)
	}
	for name := range props {
		if _, dup := o.attrs[name]; dup {
			panic(fmt.Sprintf("starlark.NewDynamicObject: %s.%s is both a field and a property", typ, name))
		}
		o.names = append(o.names, name)
	}
	sort.Strings(o.names)
	return o
}

// Attr returns the field or computed property name; (nil, nil) when absent,
// which Starlark reports as "<type> has no .<name> field or method".
func (o *Object) Attr(name string) (sl.Value, error) {
	if v, ok := o.attrs[name]; ok {
		return v, nil
	}
	if p, ok := o.props[name]; ok {
		return p()
	}
	return nil, nil
}

// AttrNames returns the sorted attribute names.
func (o *Object) AttrNames() []string { return o.names }

func (o *Object) String() string        { return "<" + o.typ + ">" }
func (o *Object) Type() string          { return o.typ }
func (o *Object) Freeze()               {} // fields are frozen at construction
func (o *Object) Truth() sl.Bool        { return sl.True }
func (o *Object) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: %s", o.typ) }
