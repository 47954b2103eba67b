// Package pyworker runs authored Python (module.py slots and tools) out of
// process: one python3 worker per core revision, started on first use
// through the process manager, inside the terminal sandbox, speaking
// line-delimited JSON over its stdio (see worker.py, embedded and run with
// python3 -I -B -u -c). An interpreter that is a script (a version
// manager's shim, which would have to fork the real one) is asked once,
// in the sandbox, which interpreter it runs; the worker runs that one.
//
// # Usage
//
//	pool := pyworker.New(pyworker.Options{Python: cfg.Runtime.Python, Processes: procs, Sandbox: profile, Scratch: dirOf})
//	defer pool.Close(ctx)
//	ret, err := pool.CallForeign(ctx, starlark.ForeignCall{...})
//
// # What the worker may do
//
// Nothing is granted by being imported. The worker sees a ctx tree that
// mirrors the Starlark ctx of the same call (starlark.Describe): plain
// facts are copied, and every method and property is a request back to the
// Host, which runs the very built-in a Starlark module would call
// (starlark.CallPath), with its capability checks and messages, at the time
// of the call. A denial reaches Python as PermissionError naming the
// capability. Core modules are imported through a finder that asks the
// Host for their source, only beneath the component directory and
// agent/lib: the worker cannot read the core (the runtime home is hidden),
// and relative imports reach agent/lib as in the original. demiurge.sdk is
// provided by the worker (ToolResult, ArtifactRef, ...); any other import
// resolves against the interpreter's own installed packages (host_shared;
// nothing is ever installed). The worker's environment is a fixed minimal
// one (PATH, a private HOME and TMPDIR, a UTF-8 locale); nothing of the
// Host's environment reaches it.
//
// Sandbox (when sandbox.mode is not off): only the worker's scratch
// directory is writable, the runtime home, private homes and credentials
// are hidden, and the network is off unless the call's core is granted
// network.fetch. The worker cannot create a process at all: the sandbox's
// process filter (sandbox.Policy.NoProcesses, seccomp) makes fork, vfork
// and clone of a process fail, even for a Host running as root, where
// RLIMIT_NPROC (Options.MaxProcesses) binds nothing; worker.py's audit hook
// only words the refusal (and is all there is under sandbox.mode: off).
//
// # Faults
//
// A call past its timeout, a cancelled caller, a worker that exits and a
// malformed or unexpected protocol line all kill the worker; the call fails
// (ETIMEOUT, ECANCELED, EUNAVAILABLE) and the next call starts a fresh one.
// An exception of authored code fails the call (EINVALID, or EUNAUTHORIZED
// for an uncaught PermissionError) with "<file>:<line>: <Type>: <text>",
// the innermost frame of core code; the worker stays.
//
// # Concurrency
//
// A Pool is safe for concurrent use. Calls on one worker are serialised,
// except a call made from inside a ctx built-in of a running invocation of
// the same worker (a slot's ctx.tools.call of a Python tool of its core),
// which is nested into it. Workers of a core under an older key (revision)
// are retired when a call with a new key arrives: they stop once their
// running call ends. Close kills every worker and waits for them.
package pyworker
