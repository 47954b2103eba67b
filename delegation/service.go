package delegation

import (
	"context"
	"sync"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
)

// Limits of spec host-runtime §6.1.
const (
	DefaultMaxDepth       = 2
	MaxChildrenPerTurn    = 4
	MaxConcurrentChildren = 2
	forkMessages          = 12
)

// Deps are the Host's collaborators of a Service. Every field is required.
type Deps struct {
	// Submit records and starts a task (the task worker).
	Submit func(ctx context.Context, spec controlplane.TaskSpec, src controlplane.Source) (demiurge.Task, error)
	// Tasks lists tasks (the store's task projection).
	Tasks func(ctx context.Context, f demiurge.TaskFilter) ([]demiurge.Task, error)
	// LoadCore loads a core by id (the child's slots and tools are checked
	// against it).
	LoadCore func(ctx context.Context, coreID string) (*core.Core, error)
	// VisibleTools lists the tool ids the child core would see, in
	// registry order (builtin toolsets and authored tools), and whether it
	// declares MCP servers.
	VisibleTools func(ctx context.Context, c *core.Core) (ids []string, hasMCP bool, err error)
	// History returns the newest limit model-visible messages of a session,
	// oldest first.
	History func(ctx context.Context, sessionID string, limit int) ([]demiurge.Message, error)
	// RunChild runs the child turn of an agent.spawn task.
	RunChild ChildRunner
	// Audit, when set, records the delegation trail (agent_spawn.started,
	// completed, blocked, failed, rejected; aggregate agent_spawn/<task or
	// parent turn>). A failure to record is logged by the caller's store,
	// never fatal.
	Audit func(ctx context.Context, events []demiurge.Event, key string, expected *demiurge.Expected) ([]demiurge.Event, error)
}

// audit records one delegation event; it never fails the delegation.
func (s *Service) audit(ctx context.Context, typ, id string, trail demiurge.AgentSpawnTrail) {
	if s.d.Audit == nil {
		return
	}
	p, err := trail.As(typ)
	if err != nil {
		return
	}
	ev := demiurge.NewEvent(demiurge.AggAgentSpawn, id, p)
	ev.Actor = map[string]any{"actor": "host.delegation"}
	_, _ = s.d.Audit(context.WithoutCancel(ctx), []demiurge.Event{ev}, "", nil)
}

// Service validates delegations, submits agent.spawn tasks and runs them.
type Service struct {
	d Deps

	mu       sync.Mutex
	pending  map[string]ChildTurn // task id → what Run needs, never stored raw
	sessions map[string]*sessionLock
}

// sessionLock serialises the delegations of one session; refs counts the
// holders and waiters so the entry is dropped when nobody needs it.
type sessionLock struct {
	mu   sync.Mutex
	refs int
}

// lockSession takes the delegation lock of a session and returns its
// release.
func (s *Service) lockSession(id string) func() {
	s.mu.Lock()
	l := s.sessions[id]
	if l == nil {
		l = &sessionLock{}
		s.sessions[id] = l
	}
	l.refs++
	s.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		s.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(s.sessions, id)
		}
		s.mu.Unlock()
	}
}

// New returns a Service.
func New(d Deps) *Service {
	return &Service{d: d, pending: map[string]ChildTurn{}, sessions: map[string]*sessionLock{}}
}

func (s *Service) put(id string, p ChildTurn) {
	s.mu.Lock()
	s.pending[id] = p
	s.mu.Unlock()
}

func (s *Service) take(id string) (ChildTurn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pending[id]
	delete(s.pending, id)
	return p, ok
}

// Delegate is the delegate_task tool body.
func (s *Service) Delegate(ctx context.Context, inv effect.Invocation) effect.Outcome {
	req := parseArgs(inv.Args)
	req.ParentSlot = "builtin:delegate_task"
	task, err := s.Spawn(ctx, inv.Turn, req)
	if err != nil {
		out := refused(errorText(err))
		if demiurge.ErrorCode(err) == demiurge.EUNAUTHORIZED {
			out.Denial = "capability"
			out.Data["denial"] = "capability"
		}
		return out
	}
	return spawned(task.ID)
}
