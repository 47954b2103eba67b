package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// coldTarget is figure 2's limit on the median of a run on a kept home.
const coldTarget = 25 * time.Millisecond

// coldTimeout bounds one child process; a run this slow is a failure, not
// a sample.
const coldTimeout = 60 * time.Second

// coldRows measures figure 2: the wall time of `demiurge run hello` as a
// new process on an initialised home under dir.
func coldRows(ctx context.Context, bin, dir string, c counts) ([]row, error) {
	home, workspace := filepath.Join(dir, "home"), filepath.Join(dir, "workspace")
	if err := os.MkdirAll(workspace, 0o700); err != nil {
		return nil, err
	}
	if _, _, err := runChild(ctx, bin, home, workspace, "init"); err != nil {
		return nil, err
	}
	// Warm-up runs create the session and bring the binary and the
	// database into the page cache, as on any machine that used it before.
	for i := range max(c.coldWarm, 1) {
		if _, err := coldRun(ctx, bin, home, workspace); err != nil {
			return nil, fmt.Errorf("warm-up run %d: %w", i+1, err)
		}
	}
	walls := make([]time.Duration, 0, c.runs)
	cpus := make([]time.Duration, 0, c.runs)
	for i := range c.runs {
		r, err := coldRun(ctx, bin, home, workspace)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", i+1, err)
		}
		walls, cpus = append(walls, r.wall), append(cpus, r.cpu)
	}
	// The CPU time (user + system) moves less with the load of a shared
	// machine than the wall time, which is what the target is about.
	rows := append(timedRows(figCold, walls, coldTarget),
		row{figure: figCold + ", CPU time (user+sys), median", value: ms(summarize(cpus).median)})
	fresh, err := freshRows(ctx, bin, filepath.Join(dir, "fresh"), c)
	if err != nil {
		return nil, err
	}
	exit, err := exitRows(ctx, bin, filepath.Join(dir, "exit"), c)
	if err != nil {
		return nil, err
	}
	return append(append(rows, fresh...), exit...), nil
}

// coldResult is one timed process run.
type coldResult struct{ wall, cpu time.Duration }

// coldRun runs `demiurge run hello` once and checks its answer.
func coldRun(ctx context.Context, bin, home, workspace string) (coldResult, error) {
	start := time.Now()
	out, state, err := runChild(ctx, bin, home, workspace, "run", "hello")
	wall := time.Since(start)
	if err != nil {
		return coldResult{}, err
	}
	if !strings.Contains(out, "[fake] hello") {
		return coldResult{}, fmt.Errorf("demiurge run hello printed %q, want [fake] hello", out)
	}
	return coldResult{wall: wall, cpu: state.UserTime() + state.SystemTime()}, nil
}

// runChild runs one demiurge command to completion and returns its stdout
// and exit state; a non-zero exit is an error carrying its stderr.
func runChild(ctx context.Context, bin, home, workspace string, args ...string) (string, *os.ProcessState, error) {
	ctx, cancel := context.WithTimeout(ctx, coldTimeout)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := demiurgeCmd(ctx, bin, home, workspace, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", nil, fmt.Errorf("demiurge %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), cmd.ProcessState, nil
}
