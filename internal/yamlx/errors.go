package yamlx

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/demiurge/demiurge"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// maxMessage bounds the length of a rendered message, so that a hostile file
// cannot turn one error into megabytes of log.
const maxMessage = 400

// KeyError is the cause of an error about a mapping key: a key the
// destination does not declare (Duplicate false) or a key given twice.
type KeyError struct {
	Line      int      // line of the offending key
	Parent    string   // dotted path of the mapping holding the key; "" at the top
	Key       string   // the key as written
	Duplicate bool     // the key appears twice in one mapping
	FirstLine int      // for a duplicate: line of the first occurrence
	Expected  []string // for an unknown key: the accepted keys, in declaration order
}

// Error renders the problem without the file name, e.g.
// `unknown key "toolset" in tools (expected one of: toolsets, metadata)`.
func (e *KeyError) Error() string {
	where := ""
	if e.Parent != "" {
		where = " in " + e.Parent
	}
	if e.Duplicate {
		return fmt.Sprintf("duplicate key %s%s (first defined at line %d)", quote(e.Key), where, e.FirstLine)
	}
	return fmt.Sprintf("unknown key %s%s (%s)", quote(e.Key), where, expectedPhrase(e.Expected))
}

func expectedPhrase(keys []string) string {
	if len(keys) == 0 {
		return "no keys are allowed here"
	}
	return "expected one of: " + strings.Join(keys, ", ")
}

// posError is a problem at a line of the document being decoded. It carries
// no file name: DecodeStrict and Document.Decode add it. It passes unchanged
// through go-yaml when raised inside a custom unmarshaler (DecodeNode).
type posError struct {
	line  int
	msg   string
	cause error
}

func (e *posError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("line %d: %s", e.line, e.msg)
	}
	return e.msg
}

func (e *posError) Unwrap() error { return e.cause }

func atLine(line int, format string, args ...any) *posError {
	return &posError{line: line, msg: fmt.Sprintf(format, args...)}
}

func keyError(k *KeyError) *posError {
	return &posError{line: k.Line, msg: k.Error(), cause: k}
}

// Errorf returns the ECONFIG error "<path>:<line>: <message>" (or
// "<path>: <message>" when line <= 0). The message is folded onto one line.
func Errorf(path string, line int, format string, args ...any) *demiurge.Error {
	return render(path, &posError{line: line, msg: fmt.Sprintf(format, args...)})
}

func render(path string, e *posError) *demiurge.Error {
	msg := OneLine(e.msg)
	if e.line > 0 {
		msg = fmt.Sprintf("%s:%d: %s", path, e.line, msg)
	} else {
		msg = fmt.Sprintf("%s: %s", path, msg)
	}
	return &demiurge.Error{Code: demiurge.ECONFIG, Message: msg, Err: e.cause}
}

// asPosError turns any error met while parsing or decoding into a posError,
// keeping go-yaml's position and dropping its multi-line source excerpt.
func asPosError(err error, prefix string) *posError {
	var pe *posError
	if errors.As(err, &pe) {
		return pe
	}
	var ye yaml.Error
	if errors.As(err, &ye) {
		line := 0
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			line = tk.Position.Line
		}
		return &posError{line: line, msg: prefix + ye.GetMessage(), cause: err}
	}
	return &posError{msg: prefix + err.Error(), cause: err}
}

// OneLine folds s onto one line: every run of white space or control
// characters becomes one space, and the result is bounded in length.
func OneLine(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsSpace(r) || unicode.IsControl(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
		if b.Len() > maxMessage {
			b.WriteString("…")
			break
		}
	}
	return b.String()
}

// quote renders a key for a message: Go-quoted (so control characters stay
// visible) and bounded.
func quote(key string) string {
	const max = 64
	if utf8.RuneCountInString(key) > max {
		r := []rune(key)
		return fmt.Sprintf("%q…", string(r[:max]))
	}
	return fmt.Sprintf("%q", key)
}

// AtLine returns an error at line for an UnmarshalYAML(ast.Node) method to
// return: the enclosing Decode renders it with the file name.
func AtLine(line int, format string, args ...any) error {
	return atLine(line, format, args...)
}

// NodeLine returns the line of node (of its first key, for a mapping), or 0.
func NodeLine(node ast.Node) int { return nodeLine(node) }

// MappingKeys returns the keys of a mapping node with their value nodes and
// lines, in document order; nil for anything but a mapping.
func MappingKeys(node ast.Node) []MappingEntry {
	var out []MappingEntry
	for _, mv := range mappingValues(node) {
		key, _ := keyString(mv.Key)
		out = append(out, MappingEntry{Key: key, Line: nodeLine(mv.Key), Value: mv.Value})
	}
	return out
}

// MappingEntry is one key of a mapping node.
type MappingEntry struct {
	Key   string
	Line  int
	Value ast.Node
}
