package delegation

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

// fixture is a Service over the embedded cores and an in-memory task
// list; submissions are recorded.
type fixture struct {
	svc *Service

	mu        sync.Mutex
	tasks     []demiurge.Task
	submitted []demiurge.TaskSpec
	trail     []string // audit event types, in order
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	agents := t.TempDir()
	if err := core.InstallTemplates(agents, "all", false); err != nil {
		t.Fatal(err)
	}
	f := &fixture{}
	f.svc = New(Deps{
		Submit: func(_ context.Context, spec demiurge.TaskSpec, src demiurge.TaskOrigin) (demiurge.Task, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.submitted = append(f.submitted, spec)
			return demiurge.Task{ID: spec.Payload["task_id"].(string), Kind: spec.Kind, Status: demiurge.TaskQueued}, nil
		},
		Tasks: func(context.Context, demiurge.TaskFilter) ([]demiurge.Task, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			return append([]demiurge.Task(nil), f.tasks...), nil
		},
		LoadCore: func(_ context.Context, id string) (*core.Core, error) {
			return core.Load(filepath.Join(agents, id))
		},
		VisibleTools: func(context.Context, *core.Core) ([]string, bool, error) {
			return []string{"read_file", "write_file", "terminal", "todo"}, false, nil
		},
		Audit: func(_ context.Context, evs []demiurge.Event, _ string, _ *demiurge.Expected) ([]demiurge.Event, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			for _, e := range evs {
				f.trail = append(f.trail, e.Type)
			}
			return evs, nil
		},
		History: func(context.Context, string, int) ([]demiurge.Message, error) {
			return []demiurge.Message{
				{Role: "user", Content: demiurge.MessageContent{Text: "first question", ModelVisible: true}},
				{Role: "assistant", Content: demiurge.MessageContent{Text: "", ModelVisible: true}},
				{Role: "assistant", Content: demiurge.MessageContent{Text: "hidden", ModelVisible: false}},
				{Role: "assistant", Content: demiurge.MessageContent{Text: "an answer", ModelVisible: true}},
			}, nil
		},
	})
	return f
}

func turnCtx(grants ...string) effect.TurnContext {
	return effect.TurnContext{
		SessionID: "session_parent", TurnID: "turn_parent", CoreID: "assistant",
		Scope:  demiurge.OperatorScope("session_parent"),
		Grants: policy.NewGrants(grants, nil),
	}
}

func TestSpawnValidationOrderAndMessages(t *testing.T) {
	spawnAll := []string{"agents.spawn:*"}
	tests := []struct {
		name   string
		tc     func() effect.TurnContext
		tasks  []demiurge.Task
		req    Request
		want   string
		denial bool
	}{
		{"blank goal first", func() effect.TurnContext { return turnCtx() }, nil,
			Request{Goal: "  ", ContextMode: "weird"}, "goal is required", false},
		{"capability before context mode", func() effect.TurnContext { return turnCtx("agents.spawn:evolver") }, nil,
			Request{Goal: "g", ContextMode: "weird"}, "capability denied: agents.spawn:assistant for host", true},
		{"context mode", func() effect.TurnContext { return turnCtx(spawnAll...) }, nil,
			Request{Goal: "g", ContextMode: "weird", NotifyPolicy: "weird"}, "unsupported context_mode: weird", false},
		{"depth default 2", func() effect.TurnContext {
			tc := turnCtx(spawnAll...)
			tc.DelegationDepth = 2
			return tc
		}, nil, Request{Goal: "g"}, "delegation depth limit exceeded: max_depth=2", false},
		{"depth raised by max_depth", func() effect.TurnContext {
			tc := turnCtx(spawnAll...)
			tc.DelegationDepth = 2
			return tc
		}, nil, Request{Goal: "g", MaxDepth: 3, NotifyPolicy: "weird"}, "unsupported notify_policy: weird", false},
		{"children per turn", func() effect.TurnContext { return turnCtx(spawnAll...) },
			tasksOf(4, "turn_parent", demiurge.TaskSucceeded), Request{Goal: "g"}, "delegation limit exceeded: max_children=4", false},
		{"concurrent children", func() effect.TurnContext { return turnCtx(spawnAll...) },
			tasksOf(2, "turn_other", demiurge.TaskRunning), Request{Goal: "g"}, "delegation limit exceeded: max_concurrent_children=2", false},
		{"tools shape", func() effect.TurnContext { return turnCtx(spawnAll...) }, nil,
			Request{Goal: "g", Tools: 3.0}, "tools must be 'all', 'none', or a list of tool ids", false},
		{"tools item type", func() effect.TurnContext { return turnCtx(spawnAll...) }, nil,
			Request{Goal: "g", Tools: []any{1.0}}, "tools items must be strings", false},
		{"tools empty id", func() effect.TurnContext { return turnCtx(spawnAll...) }, nil,
			Request{Goal: "g", Tools: []any{" "}}, "tool id must not be empty", false},
		{"tools duplicate", func() effect.TurnContext { return turnCtx(spawnAll...) }, nil,
			Request{Goal: "g", Tools: []any{"todo", "todo"}}, "duplicate tool id: todo", false},
		{"tools unknown", func() effect.TurnContext { return turnCtx(spawnAll...) }, nil,
			Request{Goal: "g", Tools: []any{"nope"}}, "unknown child tool id: nope", false},
		{"slots shape", func() effect.TurnContext { return turnCtx(spawnAll...) }, nil,
			Request{Goal: "g", InputSlots: "some"}, "input_slots must be 'all' or a list of slot ids", false},
		{"slot unknown", func() effect.TurnContext { return turnCtx(spawnAll...) }, nil,
			Request{Goal: "g", OutputSlots: []any{"nope"}}, "unknown output slot id: nope", false},
		{"slot duplicate", func() effect.TurnContext { return turnCtx(spawnAll...) }, nil,
			Request{Goal: "g", InputSlots: []any{"base_input", "base_input"}}, "duplicate input slot id: base_input", false},
		{"use_bootstrap type", func() effect.TurnContext { return turnCtx(spawnAll...) }, nil,
			Request{Goal: "g", UseBootstrap: "yes"}, "use_bootstrap must be a boolean", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.tasks = tt.tasks
			_, err := f.svc.Spawn(context.Background(), tt.tc(), tt.req)
			if err == nil {
				t.Fatalf("Spawn succeeded, want %q", tt.want)
			}
			if got := demiurge.ErrorMessage(err); got != tt.want {
				t.Fatalf("error = %q, want %q", got, tt.want)
			}
			if (demiurge.ErrorCode(err) == demiurge.EUNAUTHORIZED) != tt.denial {
				t.Errorf("code %s, capability denial %v", demiurge.ErrorCode(err), tt.denial)
			}
			if len(f.submitted) != 0 {
				t.Errorf("a refused delegation submitted %d tasks", len(f.submitted))
			}
		})
	}
}

func tasksOf(n int, turnID, status string) []demiurge.Task {
	out := make([]demiurge.Task, n)
	for i := range out {
		out[i] = demiurge.Task{ID: demiurge.NewID("task"), Kind: demiurge.TaskKindAgentSpawn, OwnerTurnID: turnID, Status: status}
	}
	return out
}

func TestSpawnSubmitsResolvedChild(t *testing.T) {
	f := newFixture(t)
	task, err := f.svc.Spawn(context.Background(), turnCtx("agents.spawn:evolver"), Request{
		Goal: "tidy the notes", CoreID: "evolver", ContextMode: "fork", NotifyPolicy: "silent",
		Tools: []any{"todo", "read_file"}, ToolPolicy: map[string]any{"deny": []any{"write*"}},
		ParentSlot: "builtin:delegate_task",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.submitted) != 1 {
		t.Fatalf("submitted %d tasks", len(f.submitted))
	}
	if strings.Join(f.trail, ",") != "agent_spawn.started" {
		t.Errorf("audit trail = %v, want one start", f.trail)
	}
	spec := f.submitted[0]
	if spec.Kind != demiurge.TaskKindAgentSpawn || spec.Payload["notify_policy"] != "silent" || spec.Payload["task_id"] != task.ID {
		t.Errorf("spec = %+v", spec)
	}
	meta := spec.Payload["metadata"].(map[string]any)
	child, _ := meta["child_session_id"].(string)
	if !strings.HasPrefix(child, "session_child_") || spec.Payload["write_scope"] != "agent-session:"+child {
		t.Errorf("child session %q, write scope %v", child, spec.Payload["write_scope"])
	}
	plan, ok := f.svc.take(task.ID)
	if !ok {
		t.Fatal("no pending plan for the task")
	}
	if plan.Depth != 1 || plan.CoreID != "evolver" || plan.SessionID != child {
		t.Errorf("plan = %+v", plan)
	}
	// Registry order, restricted by the tools list; deny still applies.
	if got := strings.Join(plan.ToolPolicy.AllowExact, ","); got != "read_file,todo" {
		t.Errorf("allow_exact = %s, want read_file,todo", got)
	}
	if plan.ToolPolicy.Allows("write_file", "medium") || !plan.ToolPolicy.Allows("todo", "low") {
		t.Error("tool policy does not combine tools and tool_policy")
	}
	want := "Parent session fork context:\nuser: first question\nassistant: an answer"
	if plan.SystemContext != want {
		t.Errorf("fork context = %q, want %q", plan.SystemContext, want)
	}
	scope := plan.Scope()
	if err := scope.Validate(); err != nil || !scope.Allows(child) || scope.Allows("session_parent") {
		t.Errorf("child scope %+v (validate: %v)", scope, err)
	}
}

func TestDelegateToolReportsCapabilityDenial(t *testing.T) {
	f := newFixture(t)
	out := f.svc.Delegate(context.Background(), effect.Invocation{
		Args: map[string]any{"goal": "x"}, Turn: turnCtx(),
	})
	if strings.Join(f.trail, ",") != "agent_spawn.rejected" {
		t.Errorf("audit trail = %v, want one rejection", f.trail)
	}
	if !out.IsError || out.Denial != "capability" || out.ExecutionStarted {
		t.Fatalf("outcome = %+v", out)
	}
	if out.Content != "capability denied: agents.spawn:assistant for host" {
		t.Errorf("content = %q", out.Content)
	}
}

// A child never gets a tool its parent turn could not use: the parent's
// policy rides along even when the child asks for every tool.
func TestSpawnInheritsParentToolPolicy(t *testing.T) {
	f := newFixture(t)
	tc := turnCtx("agents.spawn:*")
	tc.DelegationDepth = 1
	tc.ToolPolicy = &effect.ToolPolicy{Deny: []string{"terminal"}}
	task, err := f.svc.Spawn(context.Background(), tc, Request{Goal: "g", Tools: "all"})
	if err != nil {
		t.Fatal(err)
	}
	plan, ok := f.svc.take(task.ID)
	if !ok {
		t.Fatal("no plan")
	}
	if plan.ToolPolicy.Allows("terminal", "high") || !plan.ToolPolicy.Allows("todo", "low") {
		t.Fatalf("grandchild policy = %+v", plan.ToolPolicy)
	}
	if _, err := f.svc.Spawn(context.Background(), turnCtx("agents.spawn:*"), Request{Goal: "g", ToolPolicy: map[string]any{"deny": []any{"[bad"}}}); err == nil ||
		demiurge.ErrorMessage(err) != "tool_policy.deny has a malformed pattern: [bad" {
		t.Fatalf("malformed pattern: %v", err)
	}
}

// TestArgumentErrorMatchesSpawn: for arguments alone, ArgumentError gives
// the sentence Spawn gives for the same call (a turn that may spawn any
// core, at depth 0, with no children yet), first failure first; and ""
// exactly when Spawn gets past every argument check.
func TestArgumentErrorMatchesSpawn(t *testing.T) {
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "goal is required"},
		{map[string]any{"goal": "  ", "context_mode": "shared"}, "goal is required"},
		{map[string]any{"goal": "g", "context_mode": "shared", "notify_policy": "loud"}, "unsupported context_mode: shared"},
		{map[string]any{"goal": "g", "context_mode": " fork "}, ""},
		{map[string]any{"goal": "g", "max_depth": -1.0, "notify_policy": "loud"}, "delegation depth limit exceeded: max_depth=-1"},
		{map[string]any{"goal": "g", "max_depth": 0.0}, ""},
		{map[string]any{"goal": "g", "notify_policy": "loud", "tools": 5.0}, "unsupported notify_policy: loud"},
		{map[string]any{"goal": "g", "tools": 5.0, "use_bootstrap": "yes"}, "tools must be 'all', 'none', or a list of tool ids"},
		{map[string]any{"goal": "g", "tools": []any{"todo", 1.0}}, "tools items must be strings"},
		{map[string]any{"goal": "g", "tools": []any{" "}}, "tool id must not be empty"},
		{map[string]any{"goal": "g", "tools": []any{"todo", "todo"}}, "duplicate tool id: todo"},
		{map[string]any{"goal": "g", "tool_policy": "all"}, "tool_policy must be an object"},
		{map[string]any{"goal": "g", "use_bootstrap": "yes", "input_slots": "some"}, "use_bootstrap must be a boolean"},
		{map[string]any{"goal": "g", "input_slots": "some", "output_slots": "some"}, "input_slots must be 'all' or a list of slot ids"},
		{map[string]any{"goal": "g", "output_slots": []any{3.0}}, "output_slots items must be strings"},
		{map[string]any{"goal": "g", "output_slots": []any{""}}, "output slot id must not be empty"},
		{map[string]any{"goal": "g", "tools": "none", "input_slots": "all", "use_bootstrap": true}, ""},
	} {
		if got := ArgumentError(tt.args); got != tt.want {
			t.Errorf("ArgumentError(%v) = %q, want %q", tt.args, got, tt.want)
		}
		f := newFixture(t)
		_, err := f.svc.Spawn(context.Background(), turnCtx("agents.spawn:*"), parseArgs(tt.args))
		spawnMsg := ""
		if err != nil {
			spawnMsg = demiurge.ErrorMessage(err)
		}
		if spawnMsg != tt.want {
			t.Errorf("Spawn(%v) = %q, ArgumentError says %q", tt.args, spawnMsg, tt.want)
		}
	}
}
