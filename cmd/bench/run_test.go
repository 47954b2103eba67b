package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestRunMeasuresEveryFigure runs the whole driver with the smallest
// counts: it builds the binary, starts real processes and must report
// every figure with a value and exit 0 (met or missed both count).
func TestRunMeasuresEveryFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	var out, errb bytes.Buffer
	c := counts{turnWarm: 1, turns: 3, coldWarm: 1, runs: 2, batches: 2, idle: 100 * time.Millisecond, keys: 4, tuiIdle: 500 * time.Millisecond,
		webhookFor: 100 * time.Millisecond, conversations: 5}
	if code := run(context.Background(), c, &out, &errb); code != 0 {
		t.Fatalf("run exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	table := out.String()
	for _, fig := range []string{figTurn + ", median", figCold + ", median", figAppend + ", ratio", figMemory + ", VmRSS",
		figCatalog + ", median", figDispatch + ", median", figPythonWarm + ", median", figPythonCold + ", median", figPythonState + ", median", figReadFile + ", median", figReadFile + ", peak RSS growth", figSearch + ", peak RSS growth",
		figDrain + ", ratio to cat", figKill + ", median", figSpawn + ", sandboxed − unsandboxed median", figURL + ", median", figTokens + ", first count, median",
		figRedact + ", ratio to cat", figKeystroke + ", median", figTUIIdle, figTUIMemory + ", VmRSS",
		figWebhook + ", a new conversation each, model answering in 1 s, p50 / p99", "5 " + figConversations + ", peak RSS (VmHWM)"} {
		line := ""
		for _, l := range strings.Split(table, "\n") {
			if strings.HasPrefix(l, "| "+fig+" |") {
				line = l
			}
		}
		if line == "" {
			t.Errorf("no row for %q in:\n%s", fig, table)
			continue
		}
		if !strings.HasSuffix(line, "| ok |") && !strings.HasSuffix(line, "| MISS |") {
			t.Errorf("row %q has no verdict", line)
		}
	}
	if errb.Len() != 0 {
		t.Errorf("stderr: %s", errb.String())
	}
}

// TestRunFailsOnCancelledContext checks that a measurement that cannot run
// makes the driver exit 1 and mark the figures FAIL, rather than report
// figures it did not measure.
func TestRunFailsOnCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	if code := run(ctx, countsFor(true, 1), &out, &errb); code != 1 {
		t.Fatalf("run exit %d, want 1\nstdout:\n%s", code, out.String())
	}
	// The PostgreSQL figures (Append, the fleet's tasks and failover) are
	// measured (and so fail here) only where a database is named;
	// elsewhere they report n/a.
	want := 20
	if os.Getenv(benchPostgresEnv) != "" {
		want += 3
	}
	if got := strings.Count(out.String(), "| FAIL |"); got != want {
		t.Fatalf("%d FAIL rows, want one per figure (%d):\n%s", got, want, out.String())
	}
}

// TestRunGatewayFigures runs the gateway figures alone, with a real
// `demiurge gateway`: every request must be accepted and found in the
// inbox once, every conversation admitted, and the rows reported.
func TestRunGatewayFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	var out, errb bytes.Buffer
	c := counts{webhookFor: 100 * time.Millisecond, conversations: 5, only: []string{"webhook", "conversations"}}
	if code := run(context.Background(), c, &out, &errb); code != 0 {
		t.Fatalf("run exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	rows := 0
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "| "+figWebhook) || strings.HasPrefix(l, "| 5 "+figConversations) {
			rows++
			if !strings.HasSuffix(l, "| ok |") && !strings.HasSuffix(l, "| MISS |") && !strings.HasSuffix(l, "| — |") {
				t.Errorf("row %q has no verdict", l)
			}
		}
	}
	if rows != 4 {
		t.Fatalf("%d gateway rows, want 4:\n%s", rows, out.String())
	}
}
