package controlplane_test

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/process"
)

// A task's recorded process survives its Host; the next Host's
// reconciliation marks the task lost and reports the process, whose group
// it can then end because the start marker still matches. Nothing is run
// again.
func TestRecordedProcessIsReportedForRecovery(t *testing.T) {
	path := dbPath(t)
	old := newRig(t, path, controlplane.WorkerOptions{}, nil)
	child := exec.Command("sleep", "60")
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- child.Wait() }()
	t.Cleanup(func() {
		child.Process.Kill()
		<-waited
	})
	marker, err := process.StartMarker(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	tk := old.run(t, "process", map[string]any{"pid": child.Process.Pid, "marker": marker})
	eventually(t, 2*time.Second, "the process record", func() bool {
		return len(events(t, old.db, demiurge.AggTask, tk.ID, demiurge.EvTaskProcessRecorded)) == 1
	})
	ctx := context.Background()
	if err := old.host.Close(ctx); err != nil { // the Host is gone
		t.Fatal(err)
	}

	fresh := newRig(t, path, controlplane.WorkerOptions{}, nil)
	rep, err := fresh.db.Reconcile(ctx, fresh.host.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.LostTaskProcesses) != 1 || rep.LostTaskProcesses[0].TaskID != tk.ID ||
		rep.LostTaskProcesses[0].PID != child.Process.Pid || rep.LostTaskProcesses[0].Marker != marker {
		t.Fatalf("report %+v", rep)
	}
	if err := process.KillGroupIfSame(rep.LostTaskProcesses[0].PID, rep.LostTaskProcesses[0].Marker); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		waited <- err
		if err == nil {
			t.Fatal("the recorded process exited normally")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the recorded process survived")
	}
	// The old worker's runner returns late: the task stays lost.
	old.gates.release(tk.ID)
	if got := old.wait(t, tk.ID); got.Status != demiurge.TaskLost {
		t.Fatalf("status %s", got.Status)
	}
	if n := len(terminalEvents(t, fresh.db, tk.ID)); n != 1 {
		t.Fatalf("%d terminal events", n)
	}
	if got, err := fresh.db.Task(ctx, tk.ID); err != nil || got.Status != demiurge.TaskLost {
		t.Fatalf("row %+v, %v", got, err)
	}
}
