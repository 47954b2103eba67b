package effect

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compiledSchemas caches compiled argument schemas by the digest of their
// canonical JSON. Builtin schemas are the same every turn, so catalog
// preparation compiles each distinct schema once per process.
var compiledSchemas sync.Map // [32]byte → *jsonschema.Schema

// compileSchema compiles raw (canonical JSON) as a JSON Schema. References
// to other documents are refused: a tool schema is self-contained.
func compileSchema(raw []byte) (*jsonschema.Schema, error) {
	key := sha256.Sum256(raw)
	if s, ok := compiledSchemas.Load(key); ok {
		return s.(*jsonschema.Schema), nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refusingLoader{})
	const loc = "mem://tool-arguments.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, err
	}
	compiledSchemas.Store(key, s)
	return s, nil
}

// schemaValidator returns the compiled form of raw, compiling it now or,
// when lazy, on first use. A lazy schema that does not compile validates
// nothing: every call is refused with the compile error.
func schemaValidator(raw []byte, lazy bool) (func() *jsonschema.Schema, error) {
	if !lazy {
		s, err := compileSchema(raw)
		if err != nil {
			return nil, err
		}
		return func() *jsonschema.Schema { return s }, nil
	}
	return sync.OnceValue(func() *jsonschema.Schema {
		s, err := compileSchema(raw)
		if err != nil {
			return refusingSchema(err)
		}
		return s
	}), nil
}

// refusingSchema is a schema no value satisfies, for a lazily compiled
// schema that did not compile after all (a builtin's is a build defect the
// tests catch; an authored one passed its core's gates).
func refusingSchema(err error) *jsonschema.Schema {
	s, cerr := compileSchema([]byte(`false`))
	if cerr != nil {
		panic(fmt.Sprintf("effect: compile the refusing schema: %v (after %v)", cerr, err))
	}
	return s
}

type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema reference %s refused: tool schemas must be self-contained", url)
}

// argumentError validates args against the entry's schema and returns ""
// or the content of the invalid result: the tool's own sentence when its
// adapter names one (ArgumentMessenger), else "invalid arguments for
// <tool>: <the schema's reasons>". The messenger gets a copy of args, so
// nothing it does reaches what the caller records.
func argumentError(e *Entry, args map[string]any) string {
	msg := validateArgs(e.validator(), args)
	if msg == "" {
		return ""
	}
	if m, ok := e.adapter.(ArgumentMessenger); ok {
		if own := m.ArgumentError(freeze(args), msg); own != "" {
			return own
		}
	}
	return fmt.Sprintf("invalid arguments for %s: %s", e.Name, msg)
}

// validateArgs checks args against s and returns "" or one line naming the
// JSON path and the reason of the first failures.
func validateArgs(s *jsonschema.Schema, args map[string]any) string {
	err := s.Validate(args)
	if err == nil {
		return ""
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err.Error()
	}
	var parts []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		loc := u.InstanceLocation
		loc = cmp.Or(loc, "/")
		parts = append(parts, fmt.Sprintf("at %s: %s", loc, u.Error.String()))
		if len(parts) == 3 {
			break
		}
	}
	if len(parts) == 0 {
		return "arguments do not match the tool schema"
	}
	return strings.Join(parts, "; ")
}
