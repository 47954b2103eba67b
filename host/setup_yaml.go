package host

import (
	"bytes"

	"github.com/goccy/go-yaml"

	"github.com/demiurge/demiurge"
)

// yamlEdit is a YAML mapping document opened for editing: its keys keep
// their order, comments are not kept (as the original's setup writes).
type yamlEdit struct {
	path string
	root yaml.MapSlice
}

// openYAMLEdit parses data (a mapping, or empty) of the file at path.
func openYAMLEdit(path string, data []byte) (*yamlEdit, error) {
	e := &yamlEdit{path: path}
	if len(bytes.TrimSpace(data)) == 0 {
		return e, nil
	}
	var v any
	if err := yaml.UnmarshalWithOptions(data, &v, yaml.UseOrderedMap()); err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "%s: not valid YAML; fix it or remove it", path)
	}
	switch m := v.(type) {
	case nil:
	case yaml.MapSlice:
		e.root = m
	default:
		return nil, demiurge.Errorf(demiurge.ECONFIG, "%s: the top level must be a mapping", path)
	}
	return e, nil
}

// get returns the value at path and whether it is there.
func (e *yamlEdit) get(path ...string) (any, bool) {
	var cur any = e.root
	for _, k := range path {
		m, ok := cur.(yaml.MapSlice)
		if !ok {
			return nil, false
		}
		found := false
		for _, it := range m {
			if it.Key == k {
				cur, found = it.Value, true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return cur, true
}

// set puts v at path, creating the mappings on the way (a null or scalar
// in the way becomes a mapping); a new key goes last.
func (e *yamlEdit) set(v any, path ...string) {
	e.root = setIn(e.root, path, v)
}

func setIn(m yaml.MapSlice, path []string, v any) yaml.MapSlice {
	for i, it := range m {
		if it.Key != path[0] {
			continue
		}
		if len(path) == 1 {
			m[i].Value = v
		} else {
			sub, _ := it.Value.(yaml.MapSlice)
			m[i].Value = setIn(sub, path[1:], v)
		}
		return m
	}
	if len(path) == 1 {
		return append(m, yaml.MapItem{Key: path[0], Value: v})
	}
	return append(m, yaml.MapItem{Key: path[0], Value: setIn(nil, path[1:], v)})
}

// remove deletes the key at path (nothing when it is not there).
func (e *yamlEdit) remove(path ...string) {
	e.root = removeIn(e.root, path)
}

func removeIn(m yaml.MapSlice, path []string) yaml.MapSlice {
	for i, it := range m {
		if it.Key != path[0] {
			continue
		}
		if len(path) == 1 {
			return append(m[:i:i], m[i+1:]...)
		}
		if sub, ok := it.Value.(yaml.MapSlice); ok {
			m[i].Value = removeIn(sub, path[1:])
		}
		return m
	}
	return m
}

// bytes renders the document.
func (e *yamlEdit) bytes() ([]byte, error) {
	if len(e.root) == 0 {
		return []byte("{}\n"), nil
	}
	b, err := yaml.MarshalWithOptions(e.root, yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil {
		return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "%s: cannot render", e.path)
	}
	return b, nil
}
