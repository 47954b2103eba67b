// Command bench measures the performance figures Demiurge holds itself to
// and prints them as a Markdown table:
//
//	go run ./cmd/bench [-short] [-n N]
//
// It is run from inside the module (it builds ./cmd/demiurge). Every
// measurement uses its own runtime home in one temporary directory that is
// removed at the end, every child process is waited for, and the provider
// is always the fake one: the environment of child processes is stripped of
// DEMIURGE_*, OPENAI_* and ANTHROPIC_* variables, and the in-process Host
// sees an empty environment.
//
// # Figures
//
//  1. Turn overhead, in process (target: median ≤ 2 ms). One Host opened on
//     a fresh home runs turns with the text "please tools_list" in one
//     continuing session. The fake provider answers by calling tools_list
//     once and then replying, so one turn is two provider calls, one tool
//     call, the input and output slots and every SQLite append (the first
//     turn also runs the bootstrap slots and is a warm-up). After the
//     warm-up turns, the wall time of each turn is one sample; the median
//     and the 95th percentile are reported. Each turn must complete with
//     exactly one successful tools_list call, or the figure fails.
//     host.BenchmarkTurnOneToolCall is the same turn as a Go benchmark, the
//     handle for pprof.
//  2. Cold `demiurge run`, a new process (target: median ≤ 25 ms). The
//     binary is built once with CGO_ENABLED=0 and a home initialised once;
//     each sample is the wall time from starting `demiurge --home H run
//     hello` to reaping it. The session continues across runs, so each run
//     pays for opening the store, the lease, reconciliation, loading the
//     core and one turn. Runs must exit 0 and print "[fake] hello". The
//     median CPU time (user + system) of the runs is reported beside the
//     wall times: on a shared machine it moves less than they do. Two
//     more process figures belong to it: the same run on a home that does
//     not exist yet, so that each sample also initialises it (templates,
//     database, core repository; target: median ≤ 60 ms), and the time
//     from the model's final answer to the process's exit (target: median
//     ≤ 3 ms), with a loopback Chat Completions server as the provider
//     (`run --provider openai hello`): each sample runs from the moment the
//     server finished writing its answer to the reaping of the process.
//  3. Append throughput ratio (target: ≥ 0.5). storebench.MeasureAppendRatio
//     writes batches of storebench.BenchBatchSize events through Append
//     (idempotency key, events and projections in one transaction) and the
//     same rows as raw INSERTs in one transaction per batch (over a second
//     connection with the store writer's settings), on one fresh database;
//     the ratio of the two rates is reported with both rates. With
//     DEMIURGE_BENCH_POSTGRES set to a postgres:// URL the same is measured
//     on that PostgreSQL database (storebench.MeasurePostgresAppendRatio,
//     a schema of its own, dropped after), target ≥ 0.5 too; unset, that
//     row says so and is not a failure.
//     On the same database two fleet figures (internal/fleet; the driver
//     starts itself again as each Host process, a real host.Open on a home
//     of its own whose terminal.exec body is trivial, each standing for a
//     machine of its own). Tasks (target ≥ 2,000 tasks/s): three Hosts each
//     queue 1,000 tasks for any Host (300 with -short) in one write
//     (Worker.EnqueueMany), and the figure is the tasks from the first
//     submission to the last succeeded, every task started once. Failover (target ≤ 10 s): a Host
//     running a long task and holding a claim on a queued one is
//     SIGKILLed beside two others; the figure runs until its task is lost
//     and the claimed task has succeeded elsewhere, its lease's expiry
//     included.
//  4. Idle memory of `demiurge chat` (target: VmRSS ≤ 40 MiB). The binary
//     runs `chat` with a stdin pipe held open; after it has answered
//     "hello" and sat idle for a second, VmRSS is read from
//     /proc/<pid>/status. Then stdin is closed and the process must exit 0.
//     Outside Linux the figure is reported as n/a.
//  5. The terminal UI, through a pseudo-terminal read by a VT emulator
//     (internal/tuibench). Keystroke to frame (target: median ≤ 16 ms):
//     `demiurge chat` on a 100×30 terminal answers one message with a
//     10,000-line reply, then each sample types a character into the
//     composer or deletes one and lasts until the output that shows the
//     composer's new text has reached the terminal; the keys come at
//     moments spread over the frame clock's phases, as typing does. Idle
//     CPU (target: < 1 % of a core): the same process's user and system
//     time over a few seconds with nothing to do, with the bytes it drew
//     meanwhile (a UI that redraws while idle shows there). Memory with a long
//     session open (target: VmRSS ≤ 80 MiB): a session of 10,000 messages
//     is seeded through the Host and the store and opened with `chat
//     --session`; VmRSS and VmHWM are read once its newest message is on
//     the screen. Outside Linux the figures are reported as n/a.
//  6. Token counting (target: ≤ 50 ms per MiB): 1 MiB of generated prose
//     and code (a 5,000-word vocabulary drawn with a Zipf law, capitals,
//     numbers, punctuation, indented and blank lines) counted with
//     o200k_base, by a fresh counter each time (the first count of a text)
//     and again by one that has counted it (its piece cache warm).
//  7. Python workers (the Python rows use the system
//     interpreter, /usr/bin/python3, when there is one: a version manager's
//     shim first on PATH adds its own start to every cold start): a
//     module.py slot call through a warm worker, a worker's cold start up
//     to the end of its first call, and a ctx.state.session.set round trip.
//  8. The gateway, a real `demiurge gateway` process on a new home whose
//     assistant core enables the webhook channel on a loopback port.
//     Webhook accept at 200 requests a second (target: p50 ≤ 5 ms and
//     p99 ≤ 50 ms): an open-loop client (keep-alive connections, each
//     request leaving at its own time whatever the answers to the earlier
//     ones) posts for a few seconds after 50 warm-up requests; each sample
//     is the time from the POST to its 202, which the gateway answers only
//     once the message is committed to the inbox. Every request must be
//     answered 202 and, once the gateway has stopped, the inbox must hold
//     each message exactly once. It is measured with a new conversation
//     per request and the turns on a loopback Chat Completions model that
//     answers after 1 s (the gateway runs 16 turns at once, the inbox
//     queues the rest), and again with the requests cycling through 50
//     conversations (each message interrupts its conversation's turn) on
//     the built-in fake provider, whose turns run back to back: the worst
//     case, where the turns take every CPU and store cycle they can.
//     Concurrent conversations (target: VmHWM ≤ 200 MiB): 1,000
//     conversations each post one message, and post it again as a
//     retrying client would, 64 at a time; every message must be admitted
//     once, as a turn (fake provider) of a session of its own, and the
//     gateway's VmHWM is read from /proc once all of them are done.
//     Outside Linux the figures are reported as n/a.
//
// # Measurements
//
// The figures of single packages are measured by the driver's own
// packages, each with its Go benchmarks and smoke tests: internal/corebench
// (core repository saves and reviews), internal/tuibench (the terminal
// UI), internal/storebench (Append against
// raw inserts), internal/taskbench (task worker throughput, completion
// latency, bounded task logs), internal/procbench (output drain and, beside
// it, the same bytes written to a synced file on the artifacts' disk; kill
// latency, spawn, output discovery) and internal/mcpbench (MCP discovery
// and catalog preparation). They reach the packages they measure through
// their exported API only; nothing of the production packages exists for
// the bench alone.
//
// # Modes and exit status
//
// -short uses small sample counts so CI finishes well under a minute (1 s
// of webhook load, 100 conversations); -n
// sets the sample count of figures 1–3 (turns, process runs, batches). A
// figure that misses its target is marked MISS and the command still exits
// 0: on a shared or slow machine the figures are informational. The command
// exits 1 when a measurement itself fails (build error, a crashed or
// failing child, a turn that did not complete), after printing the table of
// what it could measure, and 2 on a usage error.
package main
