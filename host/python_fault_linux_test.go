package host_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge/turn"
)

// A worker that crashes or hangs in a slot (past its timeout_seconds)
// fails that call only: under the soft policy the turn goes on, and the
// next call gets a fresh worker.
func TestPythonWorkerCrashAndHangInATurn(t *testing.T) {
	h, _ := openPythonHost(t, func(core string) {
		writeFile(t, filepath.Join(core, "agent/input/fault/slot.yaml"), "failure_policy: soft\ntimeout_seconds: 1\n")
		writeFile(t, filepath.Join(core, "agent/input/fault/module.py"), `
import builtins, os, time

def process(ctx):
    token = builtins.__dict__.setdefault("_worker_token", os.urandom(8).hex())
    if ctx.input.raw_text == "crash":
        os._exit(9)
    if ctx.input.raw_text == "hang":
        time.sleep(600)
    ctx.input.progress("worker=" + token)
`)
		writeFile(t, filepath.Join(core, "agent/pipelines.yaml"), "schema_version: 1\ninput:\n  serial: [fault, base_input]\n  parallel: []\noutput:\n  serial: [base_output]\n  parallel: []\nbootstrap:\n  serial: [session_context]\n")
	}, "1", "2", "3", "4", "5")
	ctx := context.Background()
	run := func(text string) (string, time.Duration) {
		t.Helper()
		start := time.Now()
		res, err := h.Run(ctx, turn.Request{Text: text, NewSession: true})
		if err != nil || res.Outcome != turn.OutcomeCompleted {
			t.Fatalf("%s: the turn did not go on: %v %+v", text, err, res)
		}
		token := ""
		for _, d := range res.Deliveries {
			if v, ok := strings.CutPrefix(d.Text, "worker="); ok {
				token = v
			}
		}
		return token, time.Since(start)
	}
	first, _ := run("ok")
	if first == "" {
		t.Fatal("the slot did not run")
	}
	if tok, _ := run("crash"); tok != "" {
		t.Fatalf("the crashing call reported %q", tok)
	}
	second, _ := run("ok")
	if second == "" || second == first {
		t.Fatalf("after a crash: worker %q, first %q; want a fresh one", second, first)
	}
	if tok, took := run("hang"); tok != "" || took > 15*time.Second {
		t.Fatalf("the hanging call reported %q after %s", tok, took)
	}
	third, _ := run("ok")
	if third == "" || third == second {
		t.Fatalf("after a hang: worker %q, before %q; want a fresh one", third, second)
	}
}
