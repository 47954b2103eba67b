package yamlx

import (
	"encoding"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// walker checks a tree against a destination type: unknown keys and kinds of
// values. It drops the keys of open structs from the tree, so that go-yaml's
// strict decoding, which runs next, accepts them.
type walker struct{}

func (w walker) walk(n ast.Node, t reflect.Type, path string, open bool) *posError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if isNull(n) || decodesItself(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Interface:
		return nil
	case reflect.Struct:
		m, ok := asMapping(n)
		if !ok {
			return kindError(n, path, "a mapping")
		}
		fields := fieldsOf(t)
		kept := m.Values[:0:0]
		for _, mv := range m.Values {
			key, _ := keyString(mv.Key)
			f, known := fields.byName[key]
			if !known {
				if open {
					continue
				}
				return keyError(&KeyError{Line: nodeLine(mv.Key), Parent: path, Key: key, Expected: fields.names})
			}
			kept = append(kept, mv)
			if pe := w.walk(mv.Value, f.typ, join(path, key), f.open); pe != nil {
				return pe
			}
		}
		m.Values = kept
		return nil
	case reflect.Map:
		m, ok := asMapping(n)
		if !ok {
			return kindError(n, path, "a mapping")
		}
		for _, mv := range m.Values {
			key, _ := keyString(mv.Key)
			if pe := w.walk(mv.Value, t.Elem(), join(path, key), false); pe != nil {
				return pe
			}
		}
		return nil
	case reflect.Slice, reflect.Array:
		s, ok := n.(*ast.SequenceNode)
		if !ok {
			return kindError(n, path, "a list")
		}
		for i, item := range s.Values {
			if pe := w.walk(item, t.Elem(), index(path, i), false); pe != nil {
				return pe
			}
		}
		return nil
	case reflect.String:
		if !isScalar(n) {
			return kindError(n, path, "a string")
		}
	case reflect.Bool:
		if _, ok := n.(*ast.BoolNode); !ok {
			return kindError(n, path, "a boolean (true or false)")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if _, ok := n.(*ast.IntegerNode); !ok {
			if s, ok := n.(*ast.StringNode); ok && looksNumeric(s) {
				// The lexer leaves integers too large for int64 as strings.
				return atLine(nodeLine(n), "invalid value for %s: %s is out of range", orDocument(path), OneLine(s.Value))
			}
			return kindError(n, path, "an integer")
		}
	case reflect.Float32, reflect.Float64:
		switch n.(type) {
		case *ast.IntegerNode, *ast.FloatNode:
		default:
			return kindError(n, path, "a number")
		}
	}
	return nil
}

// asMapping returns the mapping at n; a lone MappingValueNode is a mapping
// of one key.
func asMapping(n ast.Node) (*ast.MappingNode, bool) {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m, true
	case *ast.MappingValueNode:
		return &ast.MappingNode{BaseNode: m.BaseNode, Values: []*ast.MappingValueNode{m}}, true
	}
	return nil, false
}

func kindError(n ast.Node, path, want string) *posError {
	return atLine(nodeLine(n), "invalid value for %s: expected %s, got %s", orDocument(path), want, describe(n))
}

func orDocument(path string) string {
	if path == "" {
		return "the document"
	}
	return path
}

// looksNumeric reports whether s is an unquoted run of digits.
func looksNumeric(s *ast.StringNode) bool {
	tk := s.GetToken()
	if tk == nil || tk.Type != token.StringType || s.Value == "" {
		return false
	}
	v := strings.TrimLeft(s.Value, "+-")
	if v == "" {
		return false
	}
	for _, r := range v {
		if (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return true
}

// describe names the kind of a node for messages.
func describe(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.IntegerNode:
		return "an integer"
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	case *ast.NullNode, nil:
		return "null"
	}
	return "a " + n.Type().String()
}

// describeDecodeError rewrites an error of go-yaml's decoder, which names Go
// types, into the package's vocabulary where it can.
func describeDecodeError(root ast.Node, base string, err error) *posError {
	var pe *posError
	if errors.As(err, &pe) {
		return pe
	}
	var oe *yaml.OverflowError
	if errors.As(err, &oe) && oe.Token != nil && oe.Token.Position != nil {
		at := pathAt(root, base, oe.Token.Position.Line, oe.Token.Position.Column)
		return &posError{line: oe.Token.Position.Line, msg: "invalid value for " + at + ": " + OneLine(oe.SrcNum) + " is out of range", cause: err}
	}
	return asPosError(err, "invalid value: ")
}

// pathAt finds the dotted path of the scalar at line:col, for messages.
func pathAt(n ast.Node, path string, line, col int) string {
	var found string
	var visit func(n ast.Node, path string) bool
	visit = func(n ast.Node, path string) bool {
		switch m := n.(type) {
		case *ast.MappingNode, *ast.MappingValueNode:
			for _, mv := range mappingValues(m) {
				key, _ := keyString(mv.Key)
				if visit(mv.Value, join(path, key)) {
					return true
				}
			}
		case *ast.SequenceNode:
			for i, item := range m.Values {
				if visit(item, index(path, i)) {
					return true
				}
			}
		case nil:
		default:
			if tk := n.GetToken(); tk != nil && tk.Position != nil && tk.Position.Line == line && tk.Position.Column == col {
				found = path
				return true
			}
		}
		return false
	}
	visit(n, path)
	if found == "" {
		return "the value"
	}
	return found
}

// field is what the walker needs of a struct field.
type field struct {
	typ  reflect.Type
	open bool
}

type fieldSet struct {
	byName map[string]field
	names  []string // in declaration order, for messages
}

var fieldCache sync.Map // reflect.Type -> *fieldSet

// fieldsOf lists the YAML keys of struct type t the way go-yaml names them:
// the `yaml` tag, else the `json` tag, else the lower-cased field name;
// "-" and unexported fields are skipped; ",inline" structs are flattened.
func fieldsOf(t reflect.Type) *fieldSet {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(*fieldSet)
	}
	fs := &fieldSet{byName: map[string]field{}}
	addFields(fs, t)
	fieldCache.Store(t, fs)
	return fs
}

func addFields(fs *fieldSet, t reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if sf.PkgPath != "" && !sf.Anonymous {
			continue
		}
		tag := sf.Tag.Get("yaml")
		if tag == "" {
			tag = sf.Tag.Get("json")
		}
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		ft := sf.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if hasOption(opts, "inline") && ft.Kind() == reflect.Struct {
			addFields(fs, ft)
			continue
		}
		if _, dup := fs.byName[name]; !dup {
			fs.names = append(fs.names, name)
		}
		fs.byName[name] = field{typ: sf.Type, open: sf.Tag.Get("yamlx") == "open"}
	}
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

var (
	bytesUnmarshaler     = reflect.TypeFor[yaml.BytesUnmarshaler]()
	bytesUnmarshalerCtx  = reflect.TypeFor[yaml.BytesUnmarshalerContext]()
	ifaceUnmarshaler     = reflect.TypeFor[yaml.InterfaceUnmarshaler]()
	ifaceUnmarshalerCtx  = reflect.TypeFor[yaml.InterfaceUnmarshalerContext]()
	nodeUnmarshaler      = reflect.TypeFor[yaml.NodeUnmarshaler]()
	nodeUnmarshalerCtx   = reflect.TypeFor[yaml.NodeUnmarshalerContext]()
	textUnmarshaler      = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeType, durationTy = reflect.TypeFor[time.Time](), reflect.TypeFor[time.Duration]()
)

// decodesItself reports whether go-yaml hands values of t to t's own code;
// the walker leaves those values to it.
func decodesItself(t reflect.Type) bool {
	if t == timeType || t == durationTy {
		return true
	}
	p := reflect.PointerTo(t)
	for _, i := range []reflect.Type{bytesUnmarshaler, bytesUnmarshalerCtx, ifaceUnmarshaler, ifaceUnmarshalerCtx, nodeUnmarshaler, nodeUnmarshalerCtx, textUnmarshaler} {
		if p.Implements(i) || t.Implements(i) {
			return true
		}
	}
	return false
}

// mappingValues returns the key/value pairs of a mapping node.
func mappingValues(n ast.Node) []*ast.MappingValueNode {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}
	}
	return nil
}

// keyString returns the text of a scalar key; ok is false for keys that are
// collections (or merge keys, which precheck rejects).
func keyString(k ast.Node) (string, bool) {
	if mk, ok := k.(*ast.MappingKeyNode); ok {
		k = mk.Value
	}
	switch k := k.(type) {
	case *ast.StringNode:
		return k.Value, true
	case *ast.NullNode:
		return "null", true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode, *ast.LiteralNode:
		if tk := k.GetToken(); tk != nil {
			return tk.Value, true
		}
	}
	return "", false
}

func isScalar(n ast.Node) bool {
	switch n.(type) {
	case *ast.StringNode, *ast.LiteralNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode,
		*ast.InfinityNode, *ast.NanNode, *ast.NullNode:
		return true
	}
	return false
}

func isNull(n ast.Node) bool {
	if n == nil {
		return true
	}
	_, ok := n.(*ast.NullNode)
	return ok
}

func nodeLine(n ast.Node) int {
	if n == nil {
		return 0
	}
	if mk, ok := n.(*ast.MappingKeyNode); ok && mk.Value != nil {
		n = mk.Value
	}
	if m, ok := n.(*ast.MappingNode); ok && len(m.Values) > 0 {
		return nodeLine(m.Values[0].Key)
	}
	if m, ok := n.(*ast.MappingValueNode); ok {
		return nodeLine(m.Key)
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}
