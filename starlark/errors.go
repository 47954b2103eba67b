package starlark

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/demiurge/demiurge"
	"go.starlark.net/resolve"
	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// ErrorKind classifies an authored-code failure.
type ErrorKind string

const (
	KindCompile   ErrorKind = "compile"   // syntax or resolve error, refused load
	KindRuntime   ErrorKind = "runtime"   // an error raised while executing
	KindBudget    ErrorKind = "budget"    // the step budget was exhausted
	KindMemory    ErrorKind = "memory"    // the allocation budget was exhausted
	KindDeadline  ErrorKind = "deadline"  // the call's deadline passed
	KindCancelled ErrorKind = "cancelled" // the caller's context was cancelled
)

// Error is a failure of authored code, positioned in its module. Path is the
// path given to Load; Line and Col are 1-based (0 when unknown; Col is set for
// compile errors only).
type Error struct {
	Kind      ErrorKind
	Path      string
	Line      int
	Col       int
	Msg       string
	Backtrace string // the Starlark backtrace of an execution error, for operators
	cause     error
}

// Error renders "<path>:<line>:<col>: <msg>" (compile), "<path>:<line>: <msg>"
// (execution) or "<path>: <msg>" when no position is known.
func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Col, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	default:
		return fmt.Sprintf("%s: %s", e.Path, e.Msg)
	}
}

// Unwrap returns the underlying Starlark or built-in error.
func (e *Error) Unwrap() error { return e.cause }

// code maps the kind to a domain error code. A coded error raised by a
// built-in (say EUNAVAILABLE from a history store) keeps its code.
func (e *Error) code() string {
	switch e.Kind {
	case KindDeadline:
		return demiurge.ETIMEOUT
	case KindCancelled:
		return demiurge.ECANCELED
	case KindRuntime:
		var de *demiurge.Error
		if errors.As(e.cause, &de) {
			return de.Code
		}
	}
	return demiurge.EINVALID
}

// coded wraps e in the domain error every caller of this package receives.
func coded(e *Error) error {
	return &demiurge.Error{Code: e.code(), Message: e.Error(), Err: e}
}

// execError converts an error of sl.Call into an *Error positioned at the
// innermost frame that belongs to the module at path.
func execError(path string, kind ErrorKind, msg string, err error) *Error {
	e := &Error{Kind: kind, Path: path, Msg: msg, cause: err}
	var ee *sl.EvalError
	if !errors.As(err, &ee) {
		if e.Msg == "" {
			e.Msg = err.Error()
		}
		return e
	}
	e.Msg = cmp.Or(e.Msg, ee.Msg)
	e.Backtrace = ee.Backtrace()
	for i := len(ee.CallStack) - 1; i >= 0; i-- {
		if pos := ee.CallStack[i].Pos; pos.Filename() == path && pos.Line > 0 {
			e.Line = int(pos.Line)
			break
		}
	}
	return e
}

// compileError converts a scanner or resolver error into an *Error with line
// and column. Only the first resolver error is reported, with a count of the
// others, so the message stays one line.
func compileError(path string, err error) *Error {
	e := &Error{Kind: KindCompile, Path: path, Msg: err.Error(), cause: err}
	var pos syntax.Position
	switch x := err.(type) {
	case syntax.Error:
		pos, e.Msg = x.Pos, x.Msg
	case resolve.ErrorList:
		if len(x) > 0 {
			pos, e.Msg = x[0].Pos, x[0].Msg
			if len(x) > 1 {
				e.Msg = fmt.Sprintf("%s (and %d more errors)", e.Msg, len(x)-1)
			}
		}
	}
	e.Line, e.Col = int(pos.Line), int(pos.Col)
	return e
}
