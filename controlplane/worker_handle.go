package controlplane

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
)

// Handle is a running task's view of the worker: its row, its log and its
// process record. It is safe for concurrent use by the runner's
// goroutines; after the task ended, Log drops lines and the other methods
// fail.
type Handle struct {
	w       *Worker
	run     *run
	task    demiurge.Task
	payload map[string]any

	mu           sync.Mutex // guards pending, pendingBytes, closed
	pending      []LogLine
	pendingBytes int
	closed       bool

	flushMu sync.Mutex // serializes flushes, so lines are stored in order
}

// Task returns the task as it was when it started.
func (h *Handle) Task() demiurge.Task { return h.task }

// Payload returns a copy of the submitted TaskSpec.Payload (the task's
// action: what to run), with task_id set.
func (h *Handle) Payload() map[string]any { return maps.Clone(h.payload) }

// Log adds text to the task's log, one line per line of text (see
// AppendLog). Lines are buffered and written in batches, every
// logFlushInterval or every logFlushLines lines, and at the end of the
// task, so Log never waits for the database. If writing falls behind, the
// oldest unwritten lines are dropped first: at most MaxLogLines lines and
// maxPendingLogSize bytes wait per task. Runners must redact secrets
// before they log.
func (h *Handle) Log(stream, text string) {
	now := h.w.opts.Now()
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	from := len(h.pending)
	h.pending = splitLog(text, stream, h.pending)
	for i := from; i < len(h.pending); i++ {
		h.pending[i].CreatedAt = now
		h.pendingBytes += len(h.pending[i].Text)
	}
	// Lines beyond the retention would be trimmed on write anyway.
	drop := max(len(h.pending)-h.w.opts.MaxLogLines, 0)
	for _, l := range h.pending[:drop] {
		h.pendingBytes -= len(l.Text)
	}
	for drop < len(h.pending)-1 && h.pendingBytes > maxPendingLogSize {
		h.pendingBytes -= len(h.pending[drop].Text)
		drop++
	}
	if drop > 0 {
		h.pending = append(h.pending[:0], h.pending[drop:]...)
	}
	n := len(h.pending)
	h.mu.Unlock()

	h.w.logMu.Lock()
	h.w.dirty[h] = struct{}{}
	h.w.logMu.Unlock()
	if n >= logFlushLines {
		signal(h.w.flushKick)
	}
}

// flush writes the buffered lines. Lines that cannot be written are
// dropped (and the failure logged): the log is best effort, the task's
// outcome is not.
func (h *Handle) flush(ctx context.Context) {
	h.flushMu.Lock()
	defer h.flushMu.Unlock()
	h.mu.Lock()
	lines := h.pending
	h.pending, h.pendingBytes = nil, 0
	h.mu.Unlock()
	if len(lines) == 0 {
		return
	}
	if err := h.w.cp.st.AppendTaskLogs(ctx, h.task.ID, lines, h.w.opts.MaxLogLines); err != nil {
		h.w.log.Warn("task worker: log lines dropped", "task_id", h.task.ID, "lines", len(lines),
			"code", demiurge.ErrorCode(err), "error", demiurge.ErrorMessage(err))
	}
}

// close stops accepting lines and writes the ones still buffered.
func (h *Handle) close(ctx context.Context) {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.flush(ctx)
	h.w.logMu.Lock()
	delete(h.w.dirty, h)
	h.w.logMu.Unlock()
}

// RecordProcess records (event task.process_recorded) the process the task
// now runs, identified by its pid and start marker (process.StartMarker),
// so that after a crash restart recovery can end its group if, and only
// if, the marker still matches. It fails with EINVALID for a non-positive
// pid or an empty marker, and with ECONFLICT once the task ended.
func (h *Handle) RecordProcess(pid int, marker string) error {
	if pid <= 0 || marker == "" {
		return demiurge.Errorf(demiurge.EINVALID, "task %s: a process record needs a pid and a start marker", h.task.ID)
	}
	if err := h.live(); err != nil {
		return err
	}
	ctx, cancel := h.w.writeCtx()
	defer cancel()
	ev := demiurge.NewEvent(demiurge.AggTask, h.task.ID, demiurge.TaskProcessRecordedPayload{
		PID: pid, Marker: marker, HostID: h.w.opts.HostID})
	ev.CreatedAt = h.w.cp.now()
	evs, err := h.w.cp.st.Append(ctx, []demiurge.Event{ev}, "", nil)
	if err != nil {
		return err
	}
	// The guard of the terminal write checks this seq; had another writer
	// appended in between, that write falls back to reading the state.
	h.run.moved("", evs[0].Seq)
	return nil
}

// Block moves the task to blocked_needs_user (event task.blocked with
// summary); the runner keeps running and its result still ends the task.
// It fails with ECONFLICT when the task is not running.
func (h *Handle) Block(summary string) error {
	if err := h.live(); err != nil {
		return err
	}
	ctx, cancel := h.w.writeCtx()
	defer cancel()
	_, err := h.w.writeEvent(ctx, h.run, demiurge.EvTaskBlocked, demiurge.TaskChange{Summary: summary}, false)
	return err
}

// live fails once the task's end is being written.
func (h *Handle) live() error {
	h.run.mu.Lock()
	defer h.run.mu.Unlock()
	if h.run.finalizing {
		return demiurge.Errorf(demiurge.ECONFLICT, "task %s has ended", h.task.ID)
	}
	return nil
}

// flushLoop writes buffered log lines every logFlushInterval, or at once
// when a task has logFlushLines lines waiting.
func (w *Worker) flushLoop() {
	defer w.loops.Done()
	t := time.NewTicker(logFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-w.ctx.Done():
			w.flushAll()
			return
		case <-t.C:
		case <-w.flushKick:
		}
		w.flushAll()
	}
}

func (w *Worker) flushAll() {
	w.logMu.Lock()
	if len(w.dirty) == 0 {
		w.logMu.Unlock()
		return
	}
	hs := make([]*Handle, 0, len(w.dirty))
	for h := range w.dirty {
		hs = append(hs, h)
	}
	clear(w.dirty)
	w.logMu.Unlock()
	ctx, cancel := w.writeCtx()
	defer cancel()
	for _, h := range hs {
		h.flush(ctx)
	}
}
