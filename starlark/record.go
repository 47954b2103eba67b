package starlark

import (
	sl "go.starlark.net/starlark"
)

// Record is an Object whose fields can also be read by key (r["content"]
// as well as r.content): the Host's answers to authored code (a
// ToolResult, an AgentRunResult, an agent handle), which code written for
// the original reads either way. The bridge renders it as any Object
// (RecordKey), and the Python worker gives it both forms too.
type Record struct{ *Object }

var _ sl.Mapping = (*Record)(nil)

// NewRecord returns a Record of type typ with the given (frozen) fields.
func NewRecord(typ string, fields sl.StringDict) *Record {
	return &Record{Object: NewObject(typ, fields)}
}

// Get implements r[key] for a string key naming a field.
func (r *Record) Get(k sl.Value) (sl.Value, bool, error) {
	s, ok := k.(sl.String)
	if !ok {
		return nil, false, nil
	}
	v, ok := r.attrs[string(s)]
	return v, ok, nil
}
