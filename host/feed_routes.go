package host

import (
	"context"

	"github.com/demiurge/demiurge"
)

// feedRoutes is what the feed's goroutine remembers to tell which session
// an event is of: turn, task, delivery and work item ids seen begin, and
// child sessions seen spawned. Each map is bounded: past maxRoutes entries
// it starts afresh, and what it forgot is looked up again (turns, tasks,
// running children) or no longer routed (deliveries, work items of
// forgotten owners).
type feedRoutes struct {
	turns      boundedMap // turn id → session ("" : looked up, unknown)
	tasks      boundedMap // task id → owner session ("" : none)
	deliveries boundedMap // delivery id → session
	works      boundedMap // work item id → owner session
	parents    boundedMap // child session → parent session
}

// maxRoutes bounds each map of feedRoutes.
const maxRoutes = 4096

type boundedMap map[string]string

func (m *boundedMap) put(k, v string) {
	if k == "" {
		return
	}
	if len(*m) >= maxRoutes {
		*m = boundedMap{}
	}
	(*m)[k] = v
}

func newFeedRoutes() feedRoutes {
	return feedRoutes{turns: boundedMap{}, tasks: boundedMap{}, deliveries: boundedMap{}, works: boundedMap{}, parents: boundedMap{}}
}

// of returns the session e is of and how ("" when it is of none). Every
// event published by this process carries its payload value (Body); one
// that does not is decoded.
func (r *feedRoutes) of(ctx context.Context, l feedLookup, e demiurge.Event) (string, FeedSource) {
	switch {
	case e.AggregateType == demiurge.AggSession:
		return e.AggregateID, FeedSession
	case e.Type == demiurge.EvTurnStarted:
		p, _ := payload[demiurge.TurnStartedPayload](e)
		r.turns.put(e.AggregateID, p.SessionID)
		return p.SessionID, FeedSession
	case e.AggregateType == demiurge.AggTurn:
		sid := turnEnd(e).SessionID
		if sid == "" {
			sid = r.turnSession(ctx, l, e.AggregateID)
		}
		delete(r.turns, e.AggregateID)
		return sid, FeedSession
	case e.Type == demiurge.EvMessagePersisted:
		p, _ := payload[demiurge.MessagePersistedPayload](e)
		return p.SessionID, FeedSession
	case e.Type == demiurge.EvModelStepCompleted:
		p, _ := payload[demiurge.ModelStepCompletedPayload](e)
		return p.SessionID, FeedSession
	case e.Type == demiurge.EvToolCallStarted:
		p, _ := payload[demiurge.ToolCallStartedPayload](e)
		return r.turnSession(ctx, l, p.TurnID), FeedSession
	case e.AggregateType == demiurge.AggToolCall:
		return r.turnSession(ctx, l, toolCallEnd(e).TurnID), FeedSession
	case e.Type == demiurge.EvDeliveryQueued:
		p, _ := payload[demiurge.DeliveryQueuedPayload](e)
		sid, _ := p.Target["session_id"].(string)
		if sid == "" {
			sid = r.turnSession(ctx, l, p.OwnerTurnID)
		}
		r.deliveries.put(e.AggregateID, sid)
		return sid, FeedSession
	case e.AggregateType == demiurge.AggDelivery:
		return r.deliveries[e.AggregateID], FeedSession
	case e.Type == demiurge.EvWorkEnqueued:
		p, _ := payload[demiurge.WorkEnqueuedPayload](e)
		r.works.put(e.AggregateID, p.OwnerSessionID)
		return p.OwnerSessionID, FeedSession
	case e.AggregateType == demiurge.AggWork:
		return r.works[e.AggregateID], FeedSession
	case e.Type == demiurge.EvTaskSubmitted:
		p, _ := payload[demiurge.TaskSubmittedPayload](e)
		r.tasks.put(e.AggregateID, p.OwnerSessionID)
		if meta, ok := p.Action["metadata"].(map[string]any); ok && p.Kind == demiurge.TaskKindAgentSpawn {
			if child, _ := meta["child_session_id"].(string); child != "" && p.OwnerSessionID != "" {
				r.parents.put(child, p.OwnerSessionID)
			}
		}
		return p.OwnerSessionID, FeedTask
	case e.AggregateType == demiurge.AggTask:
		return r.taskOwner(ctx, l, e.AggregateID), FeedTask
	case e.Type == demiurge.EvTaskCompletionReady:
		p, _ := payload[demiurge.TaskCompletionReadyPayload](e)
		return p.OwnerSessionID, FeedTask
	case e.Type == demiurge.EvTaskCompletionAcknowledged:
		p, _ := payload[demiurge.TaskCompletionAcknowledgedPayload](e)
		return r.taskOwner(ctx, l, p.TaskID), FeedTask
	case e.AggregateType == demiurge.AggAgentSpawn:
		var p demiurge.AgentSpawnTrail
		_ = e.Decode(&p)
		if p.ChildSessionID != "" && p.ParentSessionID != "" {
			r.parents.put(p.ChildSessionID, p.ParentSessionID)
		}
		// The trail is the parent's: FeedChild for its subscribers, even
		// though the event is of the parent session.
		return p.ParentSessionID, FeedChild
	}
	return "", ""
}

// parentOf is the session that started child ("" for none).
func (r *feedRoutes) parentOf(l feedLookup, child string) string {
	if p, ok := r.parents[child]; ok {
		return p
	}
	if l.parent == nil {
		return ""
	}
	p := l.parent(child)
	if p != "" {
		r.parents.put(child, p)
	}
	return p
}

func (r *feedRoutes) turnSession(ctx context.Context, l feedLookup, turnID string) string {
	if turnID == "" {
		return ""
	}
	if sid, ok := r.turns[turnID]; ok {
		return sid
	}
	sid, err := l.turnSession(ctx, turnID)
	if err == nil || demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
		r.turns.put(turnID, sid) // unknown ones are not looked up again
	}
	return sid
}

func (r *feedRoutes) taskOwner(ctx context.Context, l feedLookup, taskID string) string {
	if taskID == "" {
		return ""
	}
	if sid, ok := r.tasks[taskID]; ok {
		return sid
	}
	sid, err := l.taskOwner(ctx, taskID)
	if err == nil || demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
		r.tasks.put(taskID, sid)
	}
	return sid
}

// scheduleCore is the core of a schedule run's event (scheduler.claimed,
// completed or error), whose aggregate is "<core>:<schedule>".
func scheduleCore(e demiurge.Event) (string, bool) {
	switch e.Type {
	case demiurge.EvSchedulerClaimed, demiurge.EvSchedulerCompleted, demiurge.EvSchedulerError:
		in := schedulerInstance(e)
		return in.CoreID, in.CoreID != ""
	}
	return "", false
}

// The family payloads of an event, from the value it was built with when
// it has one (no decoding), else decoded; a payload that does not decode
// reads as the zero value.

func turnEnd(e demiurge.Event) demiurge.TurnEnd {
	switch b := e.Body().(type) {
	case demiurge.TurnCompletedPayload:
		return demiurge.TurnEnd(b)
	case demiurge.TurnFailedPayload:
		return demiurge.TurnEnd(b)
	case demiurge.TurnCancelledPayload:
		return demiurge.TurnEnd(b)
	case demiurge.TurnLostPayload:
		return demiurge.TurnEnd(b)
	}
	var p demiurge.TurnEnd
	_ = e.Decode(&p)
	return p
}

func toolCallEnd(e demiurge.Event) demiurge.ToolCallEnd {
	switch b := e.Body().(type) {
	case demiurge.ToolCallCompletedPayload:
		return demiurge.ToolCallEnd(b)
	case demiurge.ToolCallFailedPayload:
		return demiurge.ToolCallEnd(b)
	}
	var p demiurge.ToolCallEnd
	_ = e.Decode(&p)
	return p
}

func schedulerInstance(e demiurge.Event) demiurge.SchedulerInstance {
	switch b := e.Body().(type) {
	case demiurge.SchedulerClaimedPayload:
		return demiurge.SchedulerInstance(b)
	case demiurge.SchedulerCompletedPayload:
		return demiurge.SchedulerInstance(b)
	case demiurge.SchedulerErrorPayload:
		return demiurge.SchedulerInstance(b)
	}
	var p demiurge.SchedulerInstance
	_ = e.Decode(&p)
	return p
}

// payload returns e's payload as T: the value the event was built with,
// else decoded.
func payload[T demiurge.EventPayload](e demiurge.Event) (T, bool) {
	if p, ok := e.Body().(T); ok {
		return p, true
	}
	p, err := demiurge.DecodePayload[T](e)
	return p, err == nil
}
