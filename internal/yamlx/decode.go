package yamlx

import (
	"bytes"
	"reflect"
	"strconv"

	"github.com/demiurge/demiurge"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Limits on what Parse accepts. The Host's YAML files are small; these bound
// the parser's work on hostile input (an evolving core writes these files).
const (
	MaxBytes = 256 << 10 // bytes per file
	MaxKeys  = 10000     // mapping keys per file
	MaxDepth = 100       // nesting of flow collections and compact block entries
)

// Document is one parsed YAML document. Its methods are safe for concurrent
// use.
type Document struct {
	path string
	data []byte
	body ast.Node // nil for an empty document
}

// DecodeStrict decodes data, the contents of the file named path, into v
// (a non-nil pointer) under the rules of the package doc. An empty document
// leaves v unchanged. Errors are *demiurge.Error with code ECONFIG and a
// one-line message that starts with path.
func DecodeStrict(path string, data []byte, v any) error {
	d, err := Parse(path, data)
	if err != nil {
		return err
	}
	return d.Decode(v)
}

// Parse parses data, the contents of the file named path, and checks what
// does not depend on a destination type: size limits, syntax, a single
// document, no duplicate keys, no anchors, aliases, merge keys or tags.
func Parse(path string, data []byte) (*Document, error) {
	body, pe := parse(data)
	if pe != nil {
		return nil, render(path, pe)
	}
	return &Document{path: path, data: data, body: body}, nil
}

// Path returns the file name the document reports errors under.
func (d *Document) Path() string { return d.path }

// Empty reports whether the document has no content (or only null).
func (d *Document) Empty() bool { return isNull(d.body) }

// Decode decodes the document into v (a non-nil pointer): keys are checked
// against v's type, kinds of scalars against their destinations, and then
// go-yaml decodes in strict mode. An empty document leaves v unchanged.
func (d *Document) Decode(v any) error {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Kind() != reflect.Pointer || rv.IsNil() {
		return demiurge.Errorf(demiurge.EINTERNAL, "yamlx: Decode needs a non-nil pointer, got %T", v)
	}
	// Decode works on its own tree: checking open structs drops keys from it.
	body, pe := parse(d.data)
	if pe != nil {
		return render(d.path, pe)
	}
	if pe := decodeNode(body, "", v); pe != nil {
		return render(d.path, pe)
	}
	return nil
}

// DecodeNode decodes node into v with the checks of Document.Decode; path is
// the dotted location of node, used in messages. It is meant for
// UnmarshalYAML(ast.Node) methods of types that pick their own shape: its
// errors keep their line and get the file name from the enclosing Decode.
func DecodeNode(node ast.Node, path string, v any) error {
	if pe := decodeNode(node, path, v); pe != nil {
		return pe
	}
	return nil
}

// Errorf returns an ECONFIG error at line of this document (see Errorf).
func (d *Document) Errorf(line int, format string, args ...any) *demiurge.Error {
	return Errorf(d.path, line, format, args...)
}

// Line returns the line of the node at a key path: mapping keys, or decimal
// indexes into sequences. For a mapping key it is the line of the key, for a
// sequence item the line of the item. It returns 0 when the path does not
// exist; Line() with no keys returns the line of the document's content.
func (d *Document) Line(path ...string) int {
	n, line := d.body, 0
	if n != nil {
		line = nodeLine(n)
	}
	for _, key := range path {
		switch m := n.(type) {
		case *ast.MappingNode, *ast.MappingValueNode:
			found := false
			for _, mv := range mappingValues(m) {
				if k, ok := keyString(mv.Key); ok && k == key {
					n, line, found = mv.Value, nodeLine(mv.Key), true
					break
				}
			}
			if !found {
				return 0
			}
		case *ast.SequenceNode:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(m.Values) {
				return 0
			}
			n = m.Values[i]
			line = nodeLine(n)
		default:
			return 0
		}
	}
	return line
}

// Has reports whether the key path exists in the document (see Line).
func (d *Document) Has(path ...string) bool {
	return len(path) > 0 && d.Line(path...) > 0
}

func parse(data []byte) (body ast.Node, pe *posError) {
	defer func() {
		if r := recover(); r != nil {
			body, pe = nil, atLine(0, "invalid YAML: the parser failed on this input")
		}
	}()
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	tokens, pe := precheck(data)
	if pe != nil {
		return nil, pe
	}
	f, err := parser.Parse(tokens, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil, asPosError(err, "invalid YAML: ")
	}
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			return nil, atLine(nodeLine(doc.Body), "more than one YAML document (a file holds exactly one)")
		}
		body = doc.Body
	}
	if pe := checkTree(body, "", 0); pe != nil {
		return nil, pe
	}
	return body, nil
}

func decodeNode(node ast.Node, path string, v any) (pe *posError) {
	defer func() {
		if r := recover(); r != nil {
			pe = atLine(nodeLine(node), "invalid YAML: the decoder failed on this input")
		}
	}()
	if isNull(node) {
		return nil
	}
	w := walker{}
	if pe := w.walk(node, reflect.TypeOf(v), path, false); pe != nil {
		return pe
	}
	if err := yaml.NodeToValue(node, v, yaml.Strict()); err != nil {
		return describeDecodeError(node, path, err)
	}
	return nil
}

// Keys returns the keys of the mapping at a key path (see Line), in
// document order; nil when there is no mapping there.
func (d *Document) Keys(path ...string) []string {
	n := d.body
	for _, key := range path {
		next := ast.Node(nil)
		switch m := n.(type) {
		case *ast.MappingNode, *ast.MappingValueNode:
			for _, mv := range mappingValues(m) {
				if k, ok := keyString(mv.Key); ok && k == key {
					next = mv.Value
					break
				}
			}
		case *ast.SequenceNode:
			if i, err := strconv.Atoi(key); err == nil && i >= 0 && i < len(m.Values) {
				next = m.Values[i]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	var keys []string
	for _, mv := range mappingValues(n) {
		k, _ := keyString(mv.Key)
		keys = append(keys, k)
	}
	return keys
}
