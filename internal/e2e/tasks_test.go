package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func backgroundCall(command string) string {
	b, _ := json.Marshal(map[string]any{"name": "terminal", "arguments": map[string]any{"command": command, "background": true}})
	return "[" + string(b) + "]"
}

// taskJSON is the operator view the tasks commands print.
type taskJSON struct {
	TaskID         string         `json:"task_id"`
	Kind           string         `json:"kind"`
	Status         string         `json:"status"`
	OwnerSessionID string         `json:"owner_session_id"`
	Summary        string         `json:"summary"`
	ResultRef      string         `json:"result_ref"`
	Source         map[string]any `json:"source"`
	Logs           []struct {
		Text string `json:"text"`
	} `json:"log_tail"`
}

func (e *env) taskStatus(id string) taskJSON {
	e.t.Helper()
	r := e.run("", "tasks", "status", id, "--json")
	if r.code != 0 {
		e.t.Fatalf("tasks status: exit %d: %s", r.code, r.stderr)
	}
	var v taskJSON
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		e.t.Fatalf("tasks status: %v: %s", err, r.stdout)
	}
	return v
}

func (e *env) taskList() []taskJSON {
	e.t.Helper()
	r := e.run("", "tasks", "list", "--all", "--json")
	if r.code != 0 {
		e.t.Fatalf("tasks list: exit %d: %s", r.code, r.stderr)
	}
	var v []taskJSON
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		e.t.Fatalf("tasks list: %v: %s", err, r.stdout)
	}
	return v
}

func TestBackgroundTerminalWithWaitTasks(t *testing.T) {
	e := newEnv(t)
	script := e.writeFile("bg.json", `[{"tool_calls":`+backgroundCall("echo line-one; sleep 0.3; echo line-two")+`},{"content":"started"}]`)
	out, r := e.runJSON("--approve", "all", "--wait-tasks", "--fake-script", script, "go")
	if r.code != 0 || out.Outcome != "completed" {
		t.Fatalf("exit %d %+v: %s", r.code, out, r.stderr)
	}
	call := out.ToolCalls[0]
	if call.Status != "succeeded" || !strings.Contains(call.Content, `"task_id"`) {
		t.Fatalf("background call: %+v", call)
	}
	if len(out.Tasks) != 1 || out.Tasks[0]["kind"] != "terminal.exec" || out.Tasks[0]["status"] != "succeeded" {
		t.Fatalf("tasks = %v, want one succeeded terminal.exec", out.Tasks)
	}
	id := out.Tasks[0]["task_id"].(string)
	st := e.taskStatus(id)
	if st.Summary != "terminal command exited 0" || !strings.HasPrefix(st.ResultRef, "artifact:") {
		t.Errorf("status = %+v", st)
	}
	logs := e.run("", "tasks", "logs", id)
	if !strings.Contains(logs.stdout, "stdout: line-one") || !strings.Contains(logs.stdout, "stdout: line-two") {
		t.Errorf("logs: %q", logs.stdout)
	}
	// The completion notice reached the session that started the task.
	show := e.run("", "sessions", "show", out.SessionID)
	if !strings.Contains(show.stdout, "[SYSTEM: Background task event]") || !strings.Contains(show.stdout, "task_id: "+id) {
		t.Errorf("session has no completion notice:\n%s", show.stdout)
	}
}

func TestBackgroundTerminalRefusalsAndDenial(t *testing.T) {
	e := newEnv(t)
	denied := e.scripted("deny", backgroundCall("touch should-not-exist"))
	if c := denied.ToolCalls[0]; c.Status != "denied" || c.ExecutionStarted {
		t.Fatalf("background under deny: %+v", c)
	}
	if len(denied.Tasks) != 0 {
		t.Fatalf("a denied call submitted tasks: %v", denied.Tasks)
	}
	bound := e.scripted("all", `[{"name":"terminal","arguments":{"command":"true","background":true,"secret_bindings":[{"source":"env:X"}]}}]`)
	if c := bound.ToolCalls[0]; !c.IsError || !strings.Contains(c.Content, "secret_bindings are not supported for background terminal commands") {
		t.Fatalf("bindings in background: %+v", c)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "should-not-exist")); !os.IsNotExist(err) {
		t.Fatal("a refused command ran")
	}
}

func TestRunExitCancelsItsTasks(t *testing.T) {
	e := newEnv(t)
	marker := taskMarker(t)
	out := e.scripted("all", backgroundCall("exec -a "+marker+" sleep 60"))
	if len(out.Tasks) != 1 || out.Tasks[0]["status"] != "cancelled" {
		t.Fatalf("tasks = %v, want one cancelled", out.Tasks)
	}
	if left := pgrepMarker(marker); left != "" {
		t.Fatalf("the process of a cancelled task survived: %s", left)
	}
}

func TestSIGKILLDuringBackgroundTaskLeavesLostTaskAndNoProcess(t *testing.T) {
	e := newEnv(t)
	marker := taskMarker(t)
	script := e.writeFile("bg.json", `[{"tool_calls":`+backgroundCall("echo started >> runs.log; exec -a "+marker+" sleep 60")+`},{"content":"waiting"}]`)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := e.cmd(ctx, "", "run", "--approve", "all", "--wait-tasks", "--json", "--fake-script", script, "go")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pid := markerPID(marker, 30*time.Second)
	if pid <= 0 {
		c.Process.Kill()
		c.Wait()
		t.Fatal("the background command never started")
	}
	if err := c.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.Wait()

	// The next Host reconciles: the task is lost, its process group is
	// terminated (its start marker still matched), and nothing ran twice.
	tasks := e.taskList()
	if len(tasks) != 1 || tasks[0].Status != "lost" {
		t.Fatalf("tasks = %+v, want one lost", tasks)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("process %d of the lost task survived recovery", pid)
	}
	if b, _ := os.ReadFile(filepath.Join(e.workspace, "runs.log")); strings.Count(string(b), "started") != 1 {
		t.Fatalf("the command ran %d times", strings.Count(string(b), "started"))
	}
	// The lost task's completion reaches the session that started it.
	deadline = time.Now().Add(10 * time.Second)
	for {
		show := e.run("", "sessions", "show", tasks[0].OwnerSessionID)
		if strings.Contains(show.stdout, "status: lost") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no completion for the lost task:\n%s", show.stdout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestTasksCancelFromAnotherProcess(t *testing.T) {
	e := newEnv(t)
	marker := taskMarker(t)
	script := e.writeFile("bg.json", `[{"tool_calls":`+backgroundCall("exec -a "+marker+" sleep 60")+`},{"content":"waiting"}]`)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := e.cmd(ctx, "", "run", "--approve", "all", "--wait-tasks", "--json", "--fake-script", script, "go")
	var stdout strings.Builder
	c.Stdout = &stdout
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	pid := markerPID(marker, 30*time.Second)
	if pid <= 0 {
		t.Fatal("the background command never started")
	}
	tasks := e.taskList()
	if len(tasks) != 1 || tasks[0].Status != "running" {
		t.Fatalf("tasks = %+v", tasks)
	}
	start := time.Now()
	r := e.run("", "tasks", "cancel", tasks[0].TaskID, "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"status": "cancelled"`) {
		t.Fatalf("tasks cancel: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %s", d)
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("the owning run failed: %v", err)
	}
	var out runOut
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatalf("run output: %v: %s", err, stdout.String())
	}
	if len(out.Tasks) != 1 || out.Tasks[0]["status"] != "cancelled" {
		t.Fatalf("run tasks = %v", out.Tasks)
	}
	if alive(pid) {
		t.Fatalf("process %d survived the cancel", pid)
	}
	// Cancelling a finished task shows it unchanged.
	again := e.run("", "tasks", "cancel", tasks[0].TaskID, "--json")
	if again.code != 0 || !strings.Contains(again.stdout, `"status": "cancelled"`) {
		t.Fatalf("second cancel: %s %s", again.stdout, again.stderr)
	}
}

func TestDelegateTaskRunsChildAgent(t *testing.T) {
	e := newEnv(t)
	out := e.scripted("deny", `[{"name":"delegate_task","arguments":{"goal":"child work","core_id":"evolver","notify_policy":"return_to_parent"}}]`)
	if c := out.ToolCalls[0]; c.Status != "succeeded" || !strings.Contains(c.Content, `"task_id"`) {
		t.Fatalf("delegate_task: %+v", c)
	}
	// Without --wait-tasks the run cancels it on exit, unless it already
	// finished: either way it ends in exactly one terminal state.
	if len(out.Tasks) != 1 || out.Tasks[0]["kind"] != "agent.spawn" {
		t.Fatalf("tasks = %v", out.Tasks)
	}

	script := e.writeFile("d.json", `[{"tool_calls":[{"name":"delegate_task","arguments":{"goal":"child work","core_id":"evolver"}}]},{"content":"delegated"}]`)
	waited, r := e.runJSON("--wait-tasks", "--new", "--fake-script", script, "go")
	if r.code != 0 || len(waited.Tasks) != 1 || waited.Tasks[0]["status"] != "succeeded" {
		t.Fatalf("exit %d tasks %v: %s", r.code, waited.Tasks, r.stderr)
	}
	st := e.taskStatus(waited.Tasks[0]["task_id"].(string))
	if !strings.HasPrefix(st.ResultRef, "session:session_child_") {
		t.Fatalf("result_ref = %q", st.ResultRef)
	}
	childSession := strings.Split(st.ResultRef, ":")[1]
	child := e.run("", "sessions", "show", childSession)
	if !strings.Contains(child.stdout, "child work") {
		t.Errorf("child session:\n%s", child.stdout)
	}
	parent := e.run("", "sessions", "show", waited.SessionID)
	if !strings.Contains(parent.stdout, "kind: agent.spawn") {
		t.Errorf("parent session has no completion:\n%s", parent.stdout)
	}

	// The default assistant may not spawn itself.
	self := e.scripted("deny", `[{"name":"delegate_task","arguments":{"goal":"again"}}]`)
	if c := self.ToolCalls[0]; !c.IsError || c.Content != "capability denied: agents.spawn:assistant for host" {
		t.Fatalf("self delegation: %+v", c)
	}
}

// taskMarker is a name a test's command runs under (exec -a), unique to
// the test: inside the sandbox a command sees only its own PID namespace,
// so the Host finds it by name.
func taskMarker(t *testing.T) string {
	return "e2e-task-" + strconv.Itoa(os.Getpid()) + "-" + strings.ReplaceAll(t.Name(), "/", "-")
}

// markerPID waits up to wait for a process running as marker and returns
// its Host pid, 0 if none appeared.
func markerPID(marker string, wait time.Duration) int {
	deadline := time.Now().Add(wait)
	for {
		if fields := strings.Fields(pgrepMarker(marker)); len(fields) > 0 {
			if pid, err := strconv.Atoi(fields[0]); err == nil {
				return pid
			}
		}
		if time.Now().After(deadline) {
			return 0
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b))
	return len(fields) < 3 || fields[2] != "Z"
}

func TestSlotSpawnsChildAgent(t *testing.T) {
	e := newEnv(t)
	e.writeCoreFile("agent/output/base_output/module.star", `def process(ctx):
    h = ctx.agents.spawn("evolver", "from a slot", tools = "none", context = ["remember the slot"])
    ctx.output.send_text("spawned " + h["task_id"] + " in " + h["session_id"] + " as " + h["status"])
`)
	out, r := e.runJSON("--wait-tasks", "hi")
	if r.code != 0 || out.Outcome != "completed" {
		t.Fatalf("exit %d %+v: %s", r.code, out, r.stderr)
	}
	if len(out.Tasks) != 1 || out.Tasks[0]["kind"] != "agent.spawn" || out.Tasks[0]["status"] != "succeeded" {
		t.Fatalf("tasks = %v", out.Tasks)
	}
	if len(out.Deliveries) != 1 || !strings.Contains(out.Deliveries[0].Text, "spawned "+out.Tasks[0]["task_id"].(string)+" in session_child_") {
		t.Fatalf("deliveries = %+v", out.Deliveries)
	}
	// A slot without the grant is refused with the capability error.
	e.writeCoreFile("agent/output/base_output/module.star", `def process(ctx):
    ctx.agents.spawn("assistant", "again")
`)
	denied, _ := e.runJSON("again")
	if denied.Outcome != "failed" || denied.Error == nil || !strings.Contains(denied.Error.Message, "capability denied: agents.spawn:assistant for agent/output/base_output") {
		t.Fatalf("self spawn from a slot: %+v", denied)
	}
}

func TestSIGKILLDuringChildAgentLeavesLostTask(t *testing.T) {
	srv, arrived := hangingServer(t)
	e := newEnv(t)
	e.extra = []string{"OPENAI_API_KEY=" + fakeKey, "OPENAI_BASE_URL=" + srv.URL + "/v1"}
	if r := e.run("", "init"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	// The child's core uses the hanging provider; the parent stays on the
	// fake one.
	manifest := filepath.Join(e.home, "agents", "evolver", "agent.yaml")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, []byte(strings.Replace(string(b), "provider: auto", "provider: openai", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	script := e.writeFile("d.json", `[{"tool_calls":[{"name":"delegate_task","arguments":{"goal":"hang here","core_id":"evolver"}}]},{"content":"delegated"}]`)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := e.cmd(ctx, "", "run", "--provider", "fake", "--wait-tasks", "--json", "--fake-script", script, "go")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		c.Process.Kill()
		c.Wait()
		t.Fatal("the child agent never called its provider")
	}
	if err := c.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.Wait()

	tasks := e.taskList()
	if len(tasks) != 1 || tasks[0].Kind != "agent.spawn" || tasks[0].Status != "lost" {
		t.Fatalf("tasks = %+v, want one lost agent.spawn", tasks)
	}
	var children []struct {
		SessionID string `json:"session_id"`
	}
	list := e.run("", "--core", "evolver", "sessions", "list", "--json")
	if err := json.Unmarshal([]byte(list.stdout), &children); err != nil || len(children) != 1 {
		t.Fatalf("child sessions: %v %s", err, list.stdout)
	}
	turns := e.run("", "sessions", "turns", "--session", children[0].SessionID, "--json")
	if !strings.Contains(turns.stdout, `"status": "lost"`) || strings.Contains(turns.stdout, `"status": "running"`) {
		t.Fatalf("child turns: %s", turns.stdout)
	}
	// Nothing ran again: the provider saw the child's one request only.
	select {
	case <-arrived:
		t.Fatal("the child agent was run again after the restart")
	case <-time.After(300 * time.Millisecond):
	}
}

func TestSchedulesListAndRunNow(t *testing.T) {
	e := newEnv(t)
	if r := e.run("", "init"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	dir := filepath.Join(e.home, "agents", "assistant", "agent", "schedules")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "daily.yaml"), []byte("schedule: \"0 9 * * *\"\nprompt: \"daily check-in\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	list := e.run("", "schedules", "list", "--json")
	if list.code != 0 || !strings.Contains(list.stdout, `"schedule_id": "daily"`) || !strings.Contains(list.stdout, `"next_run": "`) {
		t.Fatalf("schedules list: %s %s", list.stdout, list.stderr)
	}
	run := e.run("", "schedules", "run", "daily", "--json")
	if run.code != 0 || !strings.Contains(run.stdout, `"status": "succeeded"`) {
		t.Fatalf("schedules run: exit %d %s %s", run.code, run.stdout, run.stderr)
	}
	tasks := e.taskList()
	if len(tasks) != 1 || tasks[0].Kind != "schedule.fire" || tasks[0].Status != "succeeded" || !strings.HasPrefix(tasks[0].ResultRef, "session:session_schedule_") {
		t.Fatalf("tasks = %+v", tasks)
	}
	session := strings.Split(tasks[0].ResultRef, ":")[1]
	show := e.run("", "sessions", "show", session)
	if !strings.Contains(show.stdout, "[fake] daily check-in") {
		t.Fatalf("scheduled session:\n%s", show.stdout)
	}

	// A cron expression that cannot parse: the core does not load, and
	// the error names the file.
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("schedule: \"not a cron\"\nprompt: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.run("", "run", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "broken.yaml") {
		t.Fatalf("broken schedule: exit %d %s", r.code, r.stderr)
	}
}
