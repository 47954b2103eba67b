package process

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/sandbox"
)

func sandboxSpec(t *testing.T, script string) Spec {
	t.Helper()
	ws := t.TempDir()
	p := sandbox.Profile{UserHome: t.TempDir()}.Policy(ws)
	return Spec{Argv: sh(script), Dir: ws, Env: testEnv(), Sandbox: &p}
}

func TestSandboxedRunReportsOutputAndExit(t *testing.T) {
	m := mustManager(t)
	spec := sandboxSpec(t, `echo out; echo err >&2; exit 3`)
	res, err := m.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.Stdout.Tail != "out\n" || res.Stderr.Tail != "err\n" || res.Signal != "" {
		t.Fatalf("got %+v", res)
	}
}

// A timeout ends the whole sandbox: daemons that left the command's
// session and cleared their environment included.
func TestSandboxedTimeoutKillsEveryDescendant(t *testing.T) {
	m := mustManager(t)
	marker := "demiurge-sandboxed-daemon"
	spec := sandboxSpec(t, `(setsid env -i bash -c '(exec -a `+marker+` sleep 300 &)' &) ; exec -a `+marker+` sleep 300`)
	spec.Argv[0] = "bash"
	spec.Timeout = 200 * time.Millisecond
	start := time.Now()
	res, err := m.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut {
		t.Fatalf("not timed out: %+v", res)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("timeout took %s", d)
	}
	if out, _ := exec.Command("pgrep", "-f", marker).Output(); len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("a sandboxed daemon outlived the timeout: %s", out)
	}
}

func TestSandboxedLimitIsNamed(t *testing.T) {
	m := mustManager(t)
	res, err := m.Run(context.Background(), sandboxSpec(t, `kill -XCPU $$`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Signal != "SIGXCPU" || !strings.Contains(res.Limit, "cpu time limit") {
		t.Fatalf("got signal %q limit %q", res.Signal, res.Limit)
	}
}

func TestSandboxFailureRunsNothing(t *testing.T) {
	m := mustManager(t)
	ws := t.TempDir()
	prof := sandbox.Profile{SimulateMissing: "Landlock"}
	p := prof.Policy(ws)
	_, err := m.Run(context.Background(), Spec{Argv: sh("touch ran"), Dir: ws, Env: testEnv(), Sandbox: &p})
	if demiurge.ErrorCode(err) != demiurge.EUNAVAILABLE || !strings.Contains(err.Error(), "Landlock") {
		t.Fatalf("err = %v", err)
	}
	if _, err := exec.Command("test", "-e", ws+"/ran").Output(); err == nil {
		t.Fatal("the command ran without its sandbox")
	}
}

// The SIGKILL of a sandboxed tree is one step: no member sees another die
// and runs on.
func TestSandboxedKillIsOneStep(t *testing.T) {
	m := mustManager(t)
	for range 4 {
		spec := sandboxSpec(t, `trap '' TERM; printf started; sleep 30; printf never`)
		spec.Argv[0] = "bash"
		spec.Timeout = 400 * time.Millisecond // members are tracked by then
		res, err := m.Run(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut || res.Stdout.Tail != "started" {
			t.Fatalf("timed out %v, stdout %q", res.TimedOut, res.Stdout.Tail)
		}
	}
}
