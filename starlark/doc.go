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
// or allocation budget, a refused load), ETIMEOUT for a deadline, ECANCELED for a cancelled
// context; a coded error returned by a built-in keeps its code.
//
// # Allocation budget
//
// Every execution also runs under an allocation budget (Options.MemoryLimit or
// Limits.MemoryLimit, default 256 MiB): the bytes that the values it builds
// cost the Go heap, counted as they are built, garbage included (a call's
// budget is on what it allocates, not on what it keeps). Once a charge would
// pass the budget the execution fails with KindMemory, code EINVALID,
// "<path>:<line>: authored code exceeded its memory budget of 256 MiB", before
// the allocation happens; the Host's heap never holds more than about twice
// the budget on behalf of one execution (TestMemoryBudgetStopsBlowUps).
//
// go.starlark.net has no allocation accounting, so Load rewrites the parsed
// module (rewrite.go) to route each operation that builds a value of
// operand-dependent size through a predeclared guard (guards.go) that
// estimates the size from the operands (costs.go, size.go), charges it, then
// runs the operation unchanged: calls (built-ins by a cost per built-in and
// method: repetition and concatenation, str, repr, %, format, join, replace,
// split, list, sorted, json and the rest; a Host built-in by what it is
// passed and by the value it returns), attribute reads (a computed Property),
// arithmetic (repetition, concatenation, big ints), slices, comprehension
// elements, new dict keys, augmented assignments and *args/**kwargs. A
// function's return value is charged by its rendering, which the Host makes
// of it. Guard names begin with '$', which Starlark source cannot spell; the
// rewrite keeps the meaning and evaluation order of the code (operands it
// reads twice are read once into '$' temporaries), error messages and their
// lines included (TestInstrumentedCodeKeepsMeaning compares it with the plain
// interpreter). A rendered value nested deeper than 1000 levels counts as over
// budget, since rendering it would recurse that deep on the Go stack.
//
// What is not charged: allocations of a fixed size per interpreter step (a
// literal, a call's argument list, an int between 2^31 and 2^128, a tuple
// assignment into a dict), which the step budget bounds and the collector
// reclaims; the charge is an estimate that errs high (a non-ASCII string is
// charged as if every byte were escaped when rendered). The deadline cannot
// interrupt a single long built-in (sorting or hashing a huge value, squaring
// a huge int): that work is bounded by the memory it may use, not by time. An
// error message of the interpreter that renders a value (a missing dict key)
// is not charged.
//
// This package imports only the root vocabulary and go.starlark.net; engine
// packages (slot, effect) import it, never the reverse.
package starlark
