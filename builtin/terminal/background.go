package terminal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/redact"
	"github.com/demiurge/demiurge/sandbox"
)

// TaskSubmitter is the task worker as the background terminal sees it.
// *controlplane.Worker implements it.
type TaskSubmitter interface {
	Submit(ctx context.Context, spec controlplane.TaskSpec, src controlplane.Source) (demiurge.Task, error)
}

// Tasks runs background terminal commands as terminal.exec tasks
// (spec tool-runtime §7.9). The tool submits the task; the worker calls Run
// on its own goroutine. What a command needs to run but must not be stored
// (the raw command line and environment overlay, which may carry secrets
// the model wrote) is handed from the submitting call to Run in memory,
// keyed by the task id: a task left queued by a crashed Host has nothing to
// run, which is what restart recovery wants (it is lost, never replayed).
type Tasks struct {
	deps  Deps
	tasks TaskSubmitter

	mu      sync.Mutex
	pending map[string]terminalExec
}

// terminalExec is what Run needs of an approved background call.
type terminalExec struct {
	command   string
	shell     string
	cwd       string
	env       []string
	timeout   time.Duration
	sessionID string
	redact    map[string]string
	sandbox   *sandbox.Policy
}

// NewTasks returns the background terminal runner over deps
// (Processes is required to run anything) submitting through submit.
func NewTasks(d Deps, submit TaskSubmitter) *Tasks {
	return &Tasks{deps: d, tasks: submit, pending: map[string]terminalExec{}}
}

// submit hands an approved call to the worker and returns the tool outcome:
// content and data exactly {"task_id": …}.
func (tt *Tasks) submit(ctx context.Context, inv effect.Invocation, c *terminalCall, env []string, box *sandbox.Policy, audit map[string]any) effect.Outcome {
	if tt == nil || tt.tasks == nil {
		return tool.Unavailable("background terminal", "no task worker is configured")
	}
	id := demiurge.NewID("task")
	known := inv.Turn.Secrets.Replacements()
	shownCommand := redact.ReplaceAll(c.command, known)
	exec := terminalExec{
		command: c.command, shell: c.shell, cwd: c.cwd.Abs, env: env,
		sessionID: inv.Turn.SessionID, redact: known, sandbox: box,
	}
	if t := c.args.TimeoutSeconds; t != nil && *t > 0 {
		exec.timeout = time.Duration(min(*t, terminalMaxTimeout)) * time.Second
	}
	notify := "completion_event"
	if !c.args.NotifyOnComplete {
		notify = "silent"
	}
	tt.mu.Lock()
	tt.pending[id] = exec
	tt.mu.Unlock()

	scope := "terminal:" + c.cwd.Abs
	task, err := tt.tasks.Submit(ctx, controlplane.TaskSpec{
		Kind: controlplane.KindTerminalExec,
		Payload: map[string]any{
			"task_id": id, "owner_session_id": inv.Turn.SessionID, "owner_turn_id": inv.Turn.TurnID,
			"core_id": inv.Turn.CoreID, "notify_policy": notify, "source_tool": "terminal", "write_scope": scope,
			"metadata": map[string]any{"command": shownCommand, "cwd": c.cwd.Show, "audit": audit},
		},
	}, controlplane.Source{
		Actor: "host.task_worker", SessionID: inv.Turn.SessionID, TurnID: inv.Turn.TurnID,
		CoreID: inv.Turn.CoreID, WriteScope: scope,
	})
	if err != nil || task.ID != id {
		tt.claim(id)
	}
	if err != nil {
		return effect.Outcome{IsError: true, Content: taskErrorText(err), Data: map[string]any{"audit": audit}}
	}
	body, _ := json.Marshal(map[string]any{"task_id": task.ID})
	return effect.Outcome{Content: string(body), Data: map[string]any{"task_id": task.ID}, ExecutionStarted: true}
}

// claim removes and returns the pending execution of a task.
func (tt *Tasks) claim(id string) (terminalExec, bool) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	e, ok := tt.pending[id]
	delete(tt.pending, id)
	return e, ok
}

// Run is the terminal.exec task body: it starts the command in its own
// process group, records its identity for restart recovery, drains the
// output in chunks into the task log and the artifacts, and ends with the
// exit code. A cancelled context terminates the whole tree.
func (tt *Tasks) Run(ctx context.Context, task demiurge.Task, h *controlplane.Handle) (controlplane.Result, error) {
	exec, ok := tt.claim(task.ID)
	if !ok {
		return controlplane.Result{}, demiurge.Errorf(demiurge.EUNAVAILABLE, "background terminal command is no longer available to this Host")
	}
	if tt.deps.Processes == nil {
		return controlplane.Result{}, demiurge.Errorf(demiurge.EUNAVAILABLE, "terminal is not available: no process manager is configured")
	}
	ph, err := tt.deps.Processes.Start(ctx, process.Spec{
		Argv:          []string{exec.shell, "-c", exec.command},
		Dir:           exec.cwd,
		Env:           exec.env,
		Timeout:       exec.timeout,
		SessionID:     exec.sessionID,
		Redact:        exec.redact,
		Discover:      outputDiscovery(nil),
		ArtifactLimit: tt.deps.artifactLimit(),
		TailChars:     terminalOutputChars,
		Sandbox:       exec.sandbox,
		OnChunk: func(stream, text string) {
			h.Log(stream, stream+": "+strings.TrimRight(text, " \t\r\n"))
		},
	})
	if err != nil {
		return controlplane.Result{}, demiurge.Errorf(demiurge.EINTERNAL, "terminal command failed to start: %s", replaceBound(err.Error(), exec.redact))
	}
	if err := h.RecordProcess(ph.PID(), ph.StartMarker()); err != nil {
		// Without a recorded identity restart recovery could not stop
		// this tree: do not let it run unowned.
		_, _ = ph.Cancel(context.WithoutCancel(ctx))
		return controlplane.Result{Metadata: map[string]any{"exit_reason": "failed"}},
			demiurge.WrapError(demiurge.EINTERNAL, err, "terminal task identity could not be recorded")
	}
	res, werr := ph.Wait(ctx)
	if ctx.Err() != nil {
		res, _ = ph.Cancel(context.WithoutCancel(ctx))
		return controlplane.Result{
			Summary:  "task cancelled",
			Metadata: map[string]any{"returncode": res.ExitCode, "exit_reason": "cancelled", "process": processView(res)},
		}, ctx.Err()
	}
	if werr != nil {
		return controlplane.Result{Metadata: map[string]any{"exit_reason": "failed"}},
			demiurge.Errorf(demiurge.EINTERNAL, "terminal command failed: %s", replaceBound(werr.Error(), exec.redact))
	}
	shown := formatTerminalResult(res, exec.redact)
	meta := map[string]any{
		"returncode": shown.exitCode, "exit_reason": "completed", "timed_out": shown.timedOut,
		"process": processView(res),
		"output":  map[string]any{"stdout": shown.stdout, "stderr": shown.stderr},
	}
	out := controlplane.Result{Summary: fmt.Sprintf("terminal command exited %d", shown.exitCode), Metadata: meta}
	if a := artifactView(res); a != nil {
		meta["output_artifact"] = a
		out.ResultRef = "artifact:" + res.SpawnID
	}
	switch {
	case res.ArtifactErr != nil:
		meta["exit_reason"] = "failed"
		out.Failed, out.Error = true, "terminal output artifact persistence failed: "+replaceBound(res.ArtifactErr.Error(), exec.redact)
	case shown.timedOut:
		meta["exit_reason"] = "timed_out"
		out.Failed, out.Error = true, out.Summary
	case shown.exitCode != 0:
		out.Failed, out.Error = true, out.Summary
	}
	return out, nil
}

// backgroundEnv builds the environment of a background command: the same
// allowlist, private HOME and overlay as a foreground one, never a bound
// secret (background calls refuse bindings).
func backgroundEnv(d Deps, sessionID string, overlay map[string]string) ([]string, error) {
	home := d.PrivateHome(sessionID)
	tmp, err := preparePrivateHome(home)
	if err != nil {
		return nil, err
	}
	return commandEnv(os.Environ(), home, tmp, overlay, nil), nil
}

// taskErrorText is how a refused submission reads to the model: the
// worker's and control plane's coded messages are written for it.
func taskErrorText(err error) string {
	if demiurge.ErrorCode(err) == demiurge.EINTERNAL {
		return "background task could not be started"
	}
	return demiurge.ErrorMessage(err)
}
