package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge/internal/cli"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

type taskJSON struct {
	TaskID    string `json:"task_id"`
	Kind      string `json:"kind"`
	Status    string `json:"status"`
	Running   bool   `json:"running"`
	ResultRef string `json:"result_ref"`
}

// writeSchedule adds a schedule to the assistant core.
func (h *home) writeSchedule(id, body string) {
	h.t.Helper()
	h.ok("init")
	h.coreFile(filepath.Join("assistant", "agent", "schedules", id+".yaml"), body)
}

func TestSchedulesListAndRun(t *testing.T) {
	h := newHome(t)
	if r := h.ok("schedules", "list"); r.stdout != "No schedules.\n" {
		t.Fatalf("no schedules: %q", r.stdout)
	}
	h.writeSchedule("daily", "schedule: \"0 9 * * *\"\nprompt: \"daily check-in\"\n")
	r := h.ok("schedules", "list")
	if !strings.HasPrefix(r.stdout, "CORE") || !strings.Contains(r.stdout, "assistant  daily") {
		t.Fatalf("schedules list:\n%s", r.stdout)
	}
	var list []struct {
		CoreID     string `json:"core_id"`
		ScheduleID string `json:"schedule_id"`
		NextRun    string `json:"next_run"`
	}
	h.decode(0, &list, "schedules", "list", "--json")
	if len(list) != 1 || list[0].ScheduleID != "daily" || list[0].NextRun == "" {
		t.Fatalf("schedules list --json = %+v", list)
	}
	if r := h.ok("schedules", "run", "assistant/daily"); !strings.HasPrefix(r.stdout, "schedule assistant/daily run ") || !strings.HasSuffix(r.stdout, ": succeeded\n") {
		t.Fatalf("schedules run: %q", r.stdout)
	}
	var run struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	if h.decode(0, &run, "schedules", "run", "daily", "--json"); run.Status != "succeeded" || run.RunID == "" {
		t.Fatalf("schedules run --json = %+v", run)
	}
}

// A schedule run that fails exits 1 with its error on stderr.
func TestScheduleRunFailedExits1(t *testing.T) {
	h := newHome(t)
	h.writeSchedule("asks", "schedule: \"0 9 * * *\"\nprompt: \"ask me\"\n")
	script := demiurgetest.Script(t, demiurgetest.Call("clarify", map[string]any{"question": "which one?"}))
	t.Setenv("DEMIURGE_FAKE_SCRIPT", script)
	r := h.run("", "schedules", "run", "asks")
	if r.code != 1 || !strings.HasSuffix(r.stdout, ": failed\n") || r.stderr != "schedule run requested user input\n" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

// The operator's task commands over a finished task (a schedule run).
func TestTasks(t *testing.T) {
	h := newHome(t)
	if r := h.ok("tasks", "list"); r.stdout != "No tasks.\n" {
		t.Fatalf("no tasks: %q", r.stdout)
	}
	h.writeSchedule("daily", "schedule: \"0 9 * * *\"\nprompt: \"daily check-in\"\n")
	h.ok("schedules", "run", "daily")

	var active, all []taskJSON
	h.decode(0, &active, "tasks", "list", "--json")
	h.decode(0, &all, "tasks", "list", "--all", "--json")
	if len(active) != 0 || len(all) != 1 || all[0].Kind != "schedule.fire" || all[0].Status != "succeeded" || all[0].Running {
		t.Fatalf("tasks list: active %+v, all %+v", active, all)
	}
	id := all[0].TaskID
	if r := h.ok("tasks", "list", "--all"); !strings.HasPrefix(r.stdout, "TASK") || !strings.Contains(r.stdout, id+"  schedule.fire  succeeded") {
		t.Fatalf("tasks list --all:\n%s", r.stdout)
	}
	var status struct {
		taskJSON
		Summary string `json:"summary"`
		Source  any    `json:"source"`
		Logs    []any  `json:"log_tail"`
	}
	h.decode(0, &status, "tasks", "status", id, "--json")
	if status.TaskID != id || status.Summary != "[fake] daily check-in" || status.Logs == nil {
		t.Fatalf("tasks status --json = %+v", status)
	}
	if r := h.ok("tasks", "status", id); !strings.Contains(r.stdout, "\nsummary:\n[fake] daily check-in\n") {
		t.Fatalf("tasks status:\n%s", r.stdout)
	}
	var logs []any
	if h.decode(0, &logs, "tasks", "logs", id, "--json", "--tail", "5"); logs == nil {
		t.Fatal("tasks logs --json is not a list")
	}
	for _, sub := range []string{"wait", "cancel"} {
		var tk taskJSON
		if h.decode(0, &tk, "tasks", sub, id, "--json"); tk.TaskID != id || tk.Status != "succeeded" {
			t.Errorf("tasks %s of a finished task = %+v, want it unchanged", sub, tk)
		}
		if r := h.ok("tasks", sub, id); !strings.Contains(r.stdout, id) {
			t.Errorf("tasks %s:\n%s", sub, r.stdout)
		}
	}
}

// serve runs until its context ends (SIGINT or SIGTERM in the binary)
// and then exits 0.
func TestServeUntilCancelled(t *testing.T) {
	h := newHome(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb demiurgetest.Buffer
	done := make(chan int, 1)
	go func() { done <- cli.Run(ctx, []string{"--home", h.dir, "serve"}, strings.NewReader(""), &out, &errb) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errb.String(), "stop with Ctrl-C") {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("serve did not start: %q", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 || !strings.HasPrefix(errb.String(), "demiurge serve: home "+h.dir+", timezone ") {
		t.Fatalf("serve: exit %d stderr %q", code, errb.String())
	}
}
