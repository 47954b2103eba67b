package core

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/yamlx"
	"go.starlark.net/syntax"
)

// entrypoint resolves a slot's or tool's entrypoint, "module:function"
// (module dotted, relative to the component directory: "<module>.star",
// else "<module>.py") or "<core-relative path>.star|.py:function", and checks
// that the module exists inside the core. A Starlark module must also parse
// and define function at top level, so a broken module is a load error (and
// so a failed core_load gate) rather than a failure at the first call. A
// Python module runs in the Host's Python worker (package pyworker); its
// syntax and function are checked when it is called, as in the original.
func (l *loader) entrypoint(doc *yamlx.Document, spec, def, componentDir string) (string, string, error) {
	line := doc.Line("entrypoint")
	if strings.TrimSpace(spec) == "" {
		spec = def
	}
	module, function, ok := cutLast(spec, ":")
	if !ok || module == "" || !validIdentifier(function) {
		return "", "", doc.Errorf(line, "invalid entrypoint %s: expected module:function", quoteShort(spec))
	}
	var abs string
	switch {
	case strings.HasSuffix(module, ".star"), strings.HasSuffix(module, ".py"):
		var problem string
		if abs, problem = l.resolve(module); problem != "" {
			return "", "", doc.Errorf(line, "invalid entrypoint %s: module path %s", quoteShort(spec), problem)
		}
	case validModulePath(module):
		base := filepath.Join(componentDir, filepath.FromSlash(strings.ReplaceAll(module, ".", "/")))
		abs = base + ".star"
		if _, err := l.read(abs, maxModuleBytes); errors.Is(err, fs.ErrNotExist) {
			if _, perr := l.read(base+".py", maxModuleBytes); perr == nil || !errors.Is(perr, fs.ErrNotExist) {
				abs = base + ".py"
			}
		}
	default:
		return "", "", doc.Errorf(line, "invalid entrypoint %s: expected module:function", quoteShort(spec))
	}
	src, err := l.read(abs, maxModuleBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", doc.Errorf(line, "entrypoint module not found: %s", l.rel(abs))
	}
	if err != nil {
		return "", "", l.readErr(abs, err)
	}
	if IsPython(abs) {
		return abs, function, nil
	}
	if err := l.checkModule(abs, src, function); err != nil {
		if de := (*demiurge.Error)(nil); errors.As(err, &de) {
			return "", "", err
		}
		return "", "", doc.Errorf(line, "%v", err)
	}
	return abs, function, nil
}

// IsPython reports whether a resolved module path is a Python module.
func IsPython(modulePath string) bool { return strings.HasSuffix(modulePath, ".py") }

// checkModule parses a Starlark module and looks for a top-level def (or
// assignment) of function. Syntax errors are reported at the module's line.
func (l *loader) checkModule(abs string, src []byte, function string) error {
	opts := &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}
	f, err := opts.Parse(abs, src, 0)
	if err != nil {
		var se syntax.Error
		if errors.As(err, &se) {
			return yamlx.Errorf(l.show(abs), int(se.Pos.Line), "Starlark syntax error: %s", se.Msg)
		}
		return yamlx.Errorf(l.show(abs), 0, "Starlark syntax error: %v", err)
	}
	for _, stmt := range f.Stmts {
		switch s := stmt.(type) {
		case *syntax.DefStmt:
			if s.Name.Name == function {
				return nil
			}
		case *syntax.AssignStmt:
			if id, ok := s.LHS.(*syntax.Ident); ok && id.Name == function {
				return nil
			}
		}
	}
	return errors.New("entrypoint function " + function + " is not defined at the top level of " + path.Clean(l.rel(abs)))
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}
