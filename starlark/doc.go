// Package starlark runs authored code: the module.star files of an Agent Core
// (slots with def process(ctx), tools with def execute(ctx, args)).
//
// # Usage
//
//	rt := starlark.NewRuntime(starlark.Options{})
//	mod, err := rt.Load("/core/agent/input/base_input/module.star", src)
//	v, err := mod.Call(ctx, "process", ctxObject)
//
// Load compiles a module and executes its top level once; the resulting
// globals are frozen and the Module is cached by path and content hash, so a
// module is compiled once per content and shared by every later call. Call
// runs one function on a fresh thread.
//
// # Sandbox
//
// Authored code has no ambient I/O. The predeclared environment holds only
// the Starlark universe (print is routed to Options.Print or discarded) and
// the pure json and math modules: no time, no os, no file, no network, no
// environment. load() statements are refused when the module is compiled.
// Every effect an authored module can cause goes through a built-in that the
// caller places in the arguments (a ctx Object), and that built-in checks
// capability. Recursion is disabled (a Go stack overflow would kill the
// process, so it must not be reachable from authored code).
//
// Every execution (the top level in Load, each Call) runs under a step budget
// (Options.MaxSteps, default 10,000,000) and a deadline (Options.Timeout,
// default 10 s, or Limits per call); a cancelled context cancels the thread.
// Built-ins that block must honour the context returned by Context(thread).
//
// # Concurrency
//
// A Runtime and its Modules are safe for concurrent use: module globals are
// frozen after the top level runs, and each Call has its own thread. Objects
// are immutable once built; their properties and built-ins must be safe for
// the goroutine that runs the call (one call never runs on two goroutines).
//
// # Failure modes
//
// Errors are *demiurge.Error values whose cause is an *Error carrying the kind,
// the module path and the position. Messages read
// "<path>:<line>:<col>: <msg>" for compile errors and "<path>:<line>: <msg>"
// for execution errors, the line being the innermost frame inside the module
// (for a thread stopped by its budget or deadline, the line of the instruction
// it stopped at, which for a loop's back-jump is the line of the def).
// Codes: EINVALID for authored defects (syntax, runtime error, exhausted step
// budget, a refused load), ETIMEOUT for a deadline, ECANCELED for a cancelled
// context; a coded error returned by a built-in keeps its code.
//
// Known limit: the step budget counts interpreter steps, not memory or work
// inside a single built-in ("x" * 10**9 allocates a gigabyte in one step).
//
// This package imports only the root vocabulary and go.starlark.net; engine
// packages (slot, effect) import it, never the reverse.
package starlark
