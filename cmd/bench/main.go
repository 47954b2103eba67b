package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/fleet"
)

// counts are the sample counts of one run of the driver.
type counts struct {
	turnWarm, turns int // figure 1
	coldWarm, runs  int // figure 2
	batches         int // figure 3 (storebench.BenchBatchSize events each)
	idle            time.Duration
	keys            int           // keystrokes of the terminal UI figure
	tuiIdle         time.Duration // the terminal UI's idle CPU window
	webhookFor      time.Duration // the accept figure's load, at 200 requests a second
	conversations   int           // conversations of the gateway memory figure
	only            []string      // lower-case texts one of which a figure's name contains (none: all)
}

// selects reports whether -only asks for figure.
func (c counts) selects(figure string) bool {
	if len(c.only) == 0 {
		return true
	}
	name := strings.ToLower(figure)
	return slices.ContainsFunc(c.only, func(s string) bool { return s != "" && strings.Contains(name, s) })
}

func countsFor(short bool, n int) counts {
	c := counts{turnWarm: 20, turns: 300, coldWarm: 3, runs: 40, batches: 200, idle: time.Second, keys: 200, tuiIdle: 5 * time.Second,
		webhookFor: 2 * time.Second, conversations: 1000}
	if short {
		c = counts{turnWarm: 5, turns: 30, coldWarm: 1, runs: 8, batches: 20, idle: time.Second, keys: 40, tuiIdle: 3 * time.Second,
			webhookFor: time.Second, conversations: 100}
	}
	if n > 0 {
		c.turns, c.runs, c.batches = n, n, n
	}
	return c
}

func main() {
	// The fleet figures start this binary again as their Host processes.
	if code, ok := fleet.RunChild(); ok {
		os.Exit(code)
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	short := fs.Bool("short", false, "small sample counts (for CI); the figures are informational")
	n := fs.Int("n", 0, "samples of figures 1-3: turns, process runs, batches of 100 events (0: the mode's default)")
	only := fs.String("only", "", "measure only the figures whose name contains one of these comma-separated texts (case-insensitive)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *n < 0 || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./cmd/bench [-short] [-n N] [-only TEXT]")
		os.Exit(2)
	}
	c := countsFor(*short, *n)
	if *only != "" {
		c.only = strings.Split(strings.ToLower(*only), ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, c, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// inProcess runs a measurement that does not watch ctx itself, unless the
// run was already cancelled.
func inProcess(ctx context.Context, measure func() ([]row, error)) func() ([]row, error) {
	return func() ([]row, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return measure()
	}
}

// run measures every figure, prints the table and returns the exit code:
// 0 when every figure was measured (met or missed), 1 when one failed.
func run(ctx context.Context, c counts, stdout, stderr io.Writer) int {
	tmp, err := os.MkdirTemp("", "demiurge-bench-")
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	dir := func(name string) string { return filepath.Join(tmp, name) }

	bin, buildErr := buildBinary(ctx, dir("bin"))
	withBinary := func(measure func(bin string) ([]row, error)) func() ([]row, error) {
		return func() ([]row, error) {
			if buildErr != nil {
				return nil, buildErr
			}
			return measure(bin)
		}
	}
	steps := []struct {
		figure  string
		measure func() ([]row, error)
	}{
		{figTurn, func() ([]row, error) { return turnRows(ctx, dir("turn"), c) }},
		{figCold, withBinary(func(bin string) ([]row, error) { return coldRows(ctx, bin, dir("cold"), c) })},
		{figAppend, func() ([]row, error) { return appendRows(ctx, dir("append"), c) }},
		{figAppendPG, func() ([]row, error) { return appendPostgresRows(ctx, c) }},
		{figFleetTasks, func() ([]row, error) { return fleetTaskRows(ctx, dir("fleet-tasks"), c) }},
		{figFleetFailover, func() ([]row, error) { return fleetFailoverRows(ctx, dir("fleet-failover")) }},
		{figMemory, withBinary(func(bin string) ([]row, error) { return memoryRows(ctx, bin, dir("chat"), c) })},
		{figCatalog, inProcess(ctx, func() ([]row, error) { return catalogRows(dir("catalog"), c) })},
		{figDispatch, inProcess(ctx, func() ([]row, error) { return dispatchRows(c) })},
		{figPythonWarm, inProcess(ctx, func() ([]row, error) { return pythonRows(ctx, dir("python"), c) })},
		{figReadFile, inProcess(ctx, func() ([]row, error) { return fileRows(dir("files"), c) })},
		{figDrain, inProcess(ctx, func() ([]row, error) { return drainRows(ctx, dir("drain")) })},
		{figKill, inProcess(ctx, func() ([]row, error) { return killRows(ctx, dir("kill"), c) })},
		{figSpawn, inProcess(ctx, func() ([]row, error) { return spawnRows(ctx, dir("spawn"), c) })},
		{figURL, inProcess(ctx, func() ([]row, error) { return urlRows(c) })},
		{figTokens, inProcess(ctx, func() ([]row, error) { return tokenRows(c) })},
		{figRedact, inProcess(ctx, func() ([]row, error) { return redactRows(ctx) })},
		{figTaskThroughput, func() ([]row, error) { return taskRows(ctx, dir("tasks"), c) }},
		{figCoreSave, func() ([]row, error) { return coreRepoRows(ctx, dir("corerepo")) }},
		{figMCPDiscovery, func() ([]row, error) { return mcpRows(ctx, dir("mcp"), c) }},
		{figWebhook, withBinary(func(bin string) ([]row, error) { return webhookRows(ctx, bin, dir("webhook"), c) })},
		{figConversations, withBinary(func(bin string) ([]row, error) { return conversationRows(ctx, bin, dir("conversations"), c) })},
		{figKeystroke, withBinary(func(bin string) ([]row, error) { return tuiRows(ctx, bin, dir("tui"), c) })},
	}
	var rows []row
	failed := false
	for _, s := range steps {
		if !c.selects(s.figure) {
			continue
		}
		r, err := s.measure()
		if err != nil {
			failed = true
			fmt.Fprintf(stderr, "bench: %s: %s\n", s.figure, describe(err))
			r = []row{{figure: s.figure, value: "error", verdict: failedVerdict}}
		}
		rows = append(rows, r...)
	}
	writeReport(stdout, machine(), c, rows)
	if failed {
		return 1
	}
	return 0
}

// describe is an error's message and, for a coded error, its cause: the
// driver is a developer's tool, and a failed measurement needs the why.
func describe(err error) string {
	var de *demiurge.Error
	if errors.As(err, &de) && de.Err != nil {
		return err.Error() + ": " + de.Err.Error()
	}
	return err.Error()
}
