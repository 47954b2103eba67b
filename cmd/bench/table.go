package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// Figure names, the first column of the table.
const (
	figTurn   = "turn with one tool call, in process"
	figCold   = "cold `demiurge run` process"
	figFresh  = "cold `demiurge run` process, fresh home (init included)"
	figExit   = "final model answer to `demiurge run` exit"
	figAppend = "Append vs raw INSERT throughput"
	// figAppendPG is figAppend on PostgreSQL (DEMIURGE_BENCH_POSTGRES).
	figAppendPG = "Append vs raw INSERT throughput, PostgreSQL"
	// The fleet figures: Host processes on one PostgreSQL ledger.
	figFleetTasks    = "trivial tasks, three Hosts on PostgreSQL, submit to succeeded"
	figFleetFailover = "failover of a SIGKILLed Host, PostgreSQL"
	figMemory        = "idle RSS of `demiurge chat`"

	figCatalog     = "catalog preparation, 200 authored tools"
	figDispatch    = "dispatch of a no-op builtin"
	figPythonWarm  = "module.py slot call, warm worker"
	figTokens      = "token counting of 1 MiB of prose and code, o200k_base"
	figPythonCold  = "module.py worker cold start and first call"
	figPythonState = "ctx.state.session.set round trip from module.py"
	figDispatch200 = "dispatch of a no-op builtin, 200-secret turn set"
	figReadFile    = "read_file, 20,000-char window of a 1 GiB file"
	figSearch      = "search_files over 1 GiB"

	figDrain     = "drain of 256 MiB stdout, sandboxed (tails, artifact, redaction)"
	figDiscovery = "terminal output discovery, 64 MiB of code-like text, in memory"
	figKill      = "timeout to whole tree gone, sandboxed (TERM-ignoring, setsid grandchild)"
	figSpawn     = "`true`, spawn to exit"
	figURL       = "URL policy verdict for a literal address"

	figTaskThroughput = "trivial tasks, submit to succeeded"
	figCompletion     = "task end to completion handler"
	figTaskLogs       = "task log of 100,000 lines, max_log_lines 4,000"
	figCoreSave       = "save of a one-file edit, 500-file core"
	figCoreReview     = "review of a 20-file proposal, all gates"
	figMCPDiscovery   = "MCP discovery, 4 healthy servers vs the slowest alone"
	figMCPCatalog     = "MCP catalog preparation, 4 connected servers × 50 tools"

	figWebhook       = "webhook accept at 200 requests/s, POST to durable 202"
	figConversations = "concurrent conversations on one `demiurge gateway`"

	figKeystroke = "terminal UI keystroke to frame, 10,000-line transcript"
	figTUIIdle   = "terminal UI idle CPU"
	figTUIMemory = "terminal UI with a 10,000-message session open"
)

// verdict is the ok column of a row.
type verdict int

const (
	info          verdict = iota // a figure without a target of its own
	met                          // the target is met
	missed                       // the target is missed (still exit 0)
	failedVerdict                // the measurement failed (exit 1)
)

func (v verdict) String() string {
	switch v {
	case met:
		return "ok"
	case missed:
		return "MISS"
	case failedVerdict:
		return "FAIL"
	}
	return "—"
}

// row is one line of the table.
type row struct {
	figure, value, target string
	verdict               verdict
}

// check returns met when ok holds and missed otherwise.
func check(ok bool) verdict {
	if ok {
		return met
	}
	return missed
}

// writeReport prints the machine line, the sample counts and the table.
func writeReport(w io.Writer, machine string, c counts, rows []row) {
	fmt.Fprintf(w, "Machine: %s\n\n", machine)
	fmt.Fprintf(w, "Samples: %d turns after %d warm-up; %d process runs after %d warm-up; %d batches of 100 events; %s idle; %d keystrokes, %s UI idle; %s of webhook load; %d gateway conversations.\n\n",
		c.turns, c.turnWarm, c.runs, c.coldWarm, c.batches, c.idle, c.keys, c.tuiIdle, c.webhookFor, c.conversations)
	fmt.Fprintln(w, "| figure | value | target | ok |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, r := range rows {
		target := cmp.Or(r.target, "—")
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r.figure, r.value, target, r.verdict)
	}
}

// machine names the CPU, core count, Go version and platform.
func machine() string {
	return fmt.Sprintf("%s, %d cores, %s, %s/%s", cpuModel("/proc/cpuinfo"), runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// cpuModel returns the first "model name" of a /proc/cpuinfo file, or
// "unknown CPU" where there is none (other platforms, some ARM kernels).
func cpuModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" && strings.TrimSpace(val) != "" {
			return strings.TrimSpace(val)
		}
	}
	return "unknown CPU"
}
