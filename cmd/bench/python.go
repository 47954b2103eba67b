package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/pyworker"
	"github.com/demiurge/demiurge/sandbox"
	"github.com/demiurge/demiurge/starlark"
)

// Targets of the Python worker figures (issue 16).
const (
	pythonWarmTarget = 3 * time.Millisecond
	pythonColdTarget = 150 * time.Millisecond
	// systemPython is the interpreter the figures use when it exists.
	systemPython = "/usr/bin/python3"
)

// pythonRows measures a module.py slot that makes one ctx call through a
// warm worker, and the cold start of a worker (sandboxed, as the Host runs
// it) up to the end of its first call.
func pythonRows(ctx context.Context, dir string, c counts) ([]row, error) {
	core := filepath.Join(dir, "core")
	slotDir := filepath.Join(core, "agent", "input", "s")
	if err := os.MkdirAll(slotDir, 0o700); err != nil {
		return nil, err
	}
	src := "def process(ctx):\n    ctx.input.add_context(ctx.input.raw_text, role='user')\n"
	if err := os.WriteFile(filepath.Join(slotDir, "module.py"), []byte(src), 0o600); err != nil {
		return nil, err
	}
	procs, err := process.NewManager(process.ManagerOptions{ArtifactRoot: filepath.Join(dir, "artifacts")})
	if err != nil {
		return nil, err
	}
	defer procs.Close(context.Background())
	// The system interpreter when there is one: a version manager's shim
	// first on PATH (pyenv's is a shell script) adds its own start, over
	// 100 ms here, to every cold start; config.yaml runtime.python is how
	// an operator makes the same choice.
	python := ""
	if _, err := os.Stat(systemPython); err == nil {
		python = systemPython
	}
	newPool := func() *pyworker.Pool {
		return pyworker.New(pyworker.Options{Python: python, Processes: procs, Sandbox: sandbox.Profile{},
			Scratch: func(key string) string { return filepath.Join(dir, "scratch", key) }})
	}
	calls := 0
	ctxObj := starlark.NewObject("ctx", sl.StringDict{"input": starlark.NewObject("ctx.input", sl.StringDict{
		"raw_text": sl.String("hello"),
		"add_context": sl.NewBuiltin("add_context", func(*sl.Thread, *sl.Builtin, sl.Tuple, []sl.Tuple) (sl.Value, error) {
			calls++
			return sl.None, nil
		}),
	})})
	call := func(pool *pyworker.Pool, key string) error {
		_, err := pool.CallForeign(ctx, starlark.ForeignCall{
			WorkerKey: key, Core: key, CoreDir: core, Kind: starlark.ForeignSlot,
			ModulePath: filepath.Join(slotDir, "module.py"), Function: "process", Component: "agent/input/s",
			Ctx: ctxObj, Timeout: 30 * time.Second,
		})
		return err
	}

	warm := newPool()
	defer warm.Close(context.Background())
	samples, err := sample(20, 20*c.turns, func() error { return call(warm, "warm") })
	if err != nil {
		return nil, fmt.Errorf("python warm call: %w", err)
	}
	rows := timedRows(figPythonWarm, samples, pythonWarmTarget)

	var cold []time.Duration
	for i := range max(3, c.runs) {
		pool := newPool()
		start := time.Now()
		err := call(pool, fmt.Sprintf("cold%d", i))
		cold = append(cold, time.Since(start))
		_ = pool.Close(context.Background())
		if err != nil {
			return nil, fmt.Errorf("python cold start: %w", err)
		}
	}
	rows = append(rows, timedRows(figPythonCold, cold, pythonColdTarget)...)
	if calls == 0 {
		return nil, fmt.Errorf("python slot made no ctx call")
	}
	state, err := pythonStateRows(ctx, filepath.Join(dir, "state"), c)
	if err != nil {
		return nil, fmt.Errorf("python state round trip: %w", err)
	}
	return append(rows, state...), nil
}
