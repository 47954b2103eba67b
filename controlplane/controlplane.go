package controlplane

import (
	"context"
	"time"

	"github.com/demiurge/demiurge"
)

// Store is the part of the RuntimeStore the control plane uses. The store
// adapter satisfies it; the control plane never imports the adapter.
type Store interface {
	Append(ctx context.Context, events []demiurge.Event, idempotencyKey string, expected *demiurge.Expected) ([]demiurge.Event, error)
	Task(ctx context.Context, id string) (demiurge.Task, error)
	ListTasks(ctx context.Context, f demiurge.TaskFilter) ([]demiurge.Task, error)
	Events(ctx context.Context, f demiurge.EventFilter) ([]demiurge.Event, error)
	LastSeq(ctx context.Context, aggType, aggID string) (int64, error)
	// AppendTaskLogs appends lines to a task's log and drops all but its
	// newest maxLines lines in the same transaction; ENOTFOUND for a
	// missing task.
	AppendTaskLogs(ctx context.Context, taskID string, lines []demiurge.TaskLogLine, maxLines int) error
	// TaskLogTail returns the newest n retained lines, oldest first.
	TaskLogTail(ctx context.Context, taskID string, n int) ([]demiurge.TaskLogLine, error)
}

// DefaultMaxLogLines is the log retention of a task when Options leaves it
// unset (spec max_log_lines).
const DefaultMaxLogLines = 4000

// Options configures a ControlPlane. The zero value is valid.
type Options struct {
	// Now stamps the events the control plane writes. Default time.Now.
	Now func() time.Time
	// MaxLogLines is the retention of one task's log: appends keep only
	// its newest MaxLogLines lines. Default DefaultMaxLogLines.
	MaxLogLines int
}

// ControlPlane is the task seam over the RuntimeStore: it validates task
// specs, enforces the task state machine and renders the task views. It
// holds no state of its own besides its configuration, so one value may be
// shared by every goroutine and several processes may run one each over the
// same database.
type ControlPlane struct {
	st          Store
	now         func() time.Time
	maxLogLines int
}

// New returns a ControlPlane over st.
func New(st Store, opts Options) *ControlPlane {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxLogLines <= 0 {
		opts.MaxLogLines = DefaultMaxLogLines
	}
	return &ControlPlane{st: st, now: opts.Now, maxLogLines: opts.MaxLogLines}
}
