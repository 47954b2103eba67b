package pyworker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

// invokeParams is the "invoke" request.
type invokeParams struct {
	Kind       string         `json:"kind"`
	Package    string         `json:"package"`     // synthetic package name
	Search     []string       `json:"search"`      // its __path__: core-relative dirs
	Module     string         `json:"module"`      // dotted module under the package
	ModulePath string         `json:"module_path"` // core-relative, for errors
	Entrypoint string         `json:"entrypoint"`
	Function   string         `json:"function"`
	Roots      []string       `json:"roots"` // where frames of core code live
	Ctx        map[string]any `json:"ctx"`
	Args       map[string]any `json:"args,omitempty"`
}

type invokeResult struct {
	ReturnType *string        `json:"return_type"`
	Value      map[string]any `json:"value"`
}

type callParams struct {
	Path   string         `json:"path"`
	Args   []any          `json:"args"`
	Kwargs map[string]any `json:"kwargs"`
}

// reentryKey marks a context inside the ctx-call handler of a worker's
// invocation (its value a *reentry): a foreign call made there for the same
// worker is nested into the running invocation instead of waiting for the
// worker's lock.
type reentryKey struct{}

// reentry is one running invocation that calls may nest into. Nested calls
// into it are serialised by mu (parallel slots of a child turn may nest at
// once); each nested invocation is an entry point of its own.
type reentry struct {
	w  *worker
	mu sync.Mutex
}

// invoke runs one call on w; the caller holds w.mu or is nested inside an
// invocation of w. A protocol violation, a timeout or a crash kills the
// worker (the error says which); an authored exception does not.
func (p *Pool) invoke(ctx context.Context, w *worker, call starlark.ForeignCall, params invokeParams) (starlark.ForeignReturn, error) {
	ctxTree, err := starlark.Describe(call.Ctx)
	if err != nil {
		return starlark.ForeignReturn{}, demiurge.WrapError(demiurge.EINTERNAL, err, "python worker: ctx is not JSON-compatible")
	}
	params.Ctx = ctxTree
	id := w.nextID()
	if err := w.send(map[string]any{"id": id, "method": "invoke", "params": params}); err != nil {
		w.kill()
		return starlark.ForeignReturn{}, w.exitError(call.Core, "exited")
	}
	timeout := call.Timeout
	if timeout <= 0 {
		timeout = p.opts.DefaultTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	handlerCtx := context.WithValue(ctx, reentryKey{}, &reentry{w: w})
	src := &sources{coreDir: call.CoreDir, roots: params.Search, maxBytes: p.opts.MaxSource}
	for {
		var l lineOrErr
		var ok bool
		select {
		case l, ok = <-w.lines:
		case <-timer.C:
			w.kill()
			return starlark.ForeignReturn{}, demiurge.Errorf(demiurge.ETIMEOUT, "%s: timed out after %s; the python worker was stopped", params.ModulePath, timeout)
		case <-ctx.Done():
			w.kill()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return starlark.ForeignReturn{}, demiurge.WrapError(demiurge.ETIMEOUT, ctx.Err(), "%s: deadline exceeded", params.ModulePath)
			}
			return starlark.ForeignReturn{}, demiurge.WrapError(demiurge.ECANCELED, ctx.Err(), "%s: cancelled", params.ModulePath)
		}
		if !ok || l.err != nil {
			malformed := ok && errors.Is(l.err, errMalformed)
			w.kill()
			if malformed {
				return starlark.ForeignReturn{}, demiurge.Errorf(demiurge.EUNAVAILABLE, "python worker for core %s sent a malformed protocol line and was stopped", call.Core)
			}
			return starlark.ForeignReturn{}, w.exitError(call.Core, "exited during "+params.ModulePath)
		}
		m := l.msg
		switch {
		case m.Method == "" && idIs(m.ID, id):
			if m.Error != nil {
				return starlark.ForeignReturn{}, authoredError(params.ModulePath, m.Error)
			}
			var r invokeResult
			if err := decodeParams(m.Result, &r); err != nil {
				w.kill()
				return starlark.ForeignReturn{}, demiurge.Errorf(demiurge.EUNAVAILABLE, "python worker for core %s sent a malformed result and was stopped", call.Core)
			}
			out := starlark.ForeignReturn{Tool: r.Value}
			if r.ReturnType != nil {
				out.ReturnType = *r.ReturnType
			}
			return out, nil
		case m.Method != "" && isWorkerID(m.ID):
			reply := p.handle(handlerCtx, call, src, m)
			reply["id"] = m.ID
			if err := w.send(reply); err != nil {
				w.kill()
				return starlark.ForeignReturn{}, w.exitError(call.Core, "exited")
			}
		default:
			w.kill()
			return starlark.ForeignReturn{}, demiurge.Errorf(demiurge.EUNAVAILABLE, "python worker for core %s sent an unexpected protocol message and was stopped", call.Core)
		}
	}
}

// handle answers one request of the worker. Errors become error replies;
// they never end the invocation.
func (p *Pool) handle(ctx context.Context, call starlark.ForeignCall, src *sources, m message) map[string]any {
	var res any
	var err error
	switch m.Method {
	case "call":
		var cp callParams
		if err = decodeParams(m.Params, &cp); err == nil {
			res, err = starlark.CallPath(ctx, call.Ctx, cp.Path, cp.Args, cp.Kwargs, p.opts.MemoryLimit)
		}
	case "get":
		var cp callParams
		if err = decodeParams(m.Params, &cp); err == nil {
			res, err = starlark.GetPath(call.Ctx, cp.Path)
		}
	case "source":
		res, err = src.find(m.Params)
	default:
		err = fmt.Errorf("unknown request %q", m.Method)
	}
	if err != nil {
		return map[string]any{"error": wireError{Type: pythonType(err), Message: errorText(err)}}
	}
	return map[string]any{"result": res}
}

// pythonType picks the exception class the worker raises for a Host error.
func pythonType(err error) string {
	switch demiurge.ErrorCode(err) {
	case demiurge.EUNAUTHORIZED:
		return "PermissionError"
	case demiurge.ETIMEOUT:
		return "TimeoutError"
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "capability denied:"):
		return "PermissionError"
	case strings.Contains(msg, "unexpected keyword argument"), strings.Contains(msg, "missing argument"),
		strings.Contains(msg, "got ") && strings.Contains(msg, "want "), strings.Contains(msg, "accepts no more than"),
		strings.Contains(msg, "must be a path, URL"):
		return "TypeError"
	}
	return "RuntimeError"
}

// errorText is the message of a Host error as authored code sees it.
func errorText(err error) string {
	var de *demiurge.Error
	if errors.As(err, &de) {
		return demiurge.ErrorMessage(err)
	}
	return err.Error()
}

// authoredError renders an exception of authored code as the Starlark
// runtime renders its errors: "<file>:<line>: <Type>: <text>".
func authoredError(modulePath string, e *wireError) error {
	where := e.Where
	if where == "" {
		where = modulePath
	}
	text := e.Message
	switch e.Type {
	case "", "EntrypointError":
	default:
		text = e.Type + ": " + text
	}
	code := demiurge.EINVALID
	if e.Type == "PermissionError" || e.Type == "CapabilityDenied" {
		code = demiurge.EUNAUTHORIZED
	}
	if e.Type == "EntrypointError" {
		return demiurge.Errorf(code, "%s", text)
	}
	return demiurge.Errorf(code, "%s: %s", where, text)
}

func idIs(v any, id int64) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	i, err := n.Int64()
	return err == nil && i == id
}

func isWorkerID(v any) bool {
	s, ok := v.(string)
	return ok && strings.HasPrefix(s, "w")
}
