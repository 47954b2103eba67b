package turn

import (
	"context"

	"github.com/demiurge/demiurge"
)

// StateReader reads the stored authored state documents (the store).
type StateReader interface {
	StateDocument(ctx context.Context, scope, owner string) (map[string]any, error)
}

// slotState is ctx.state of a turn's slots: each document is read from the
// store once, the turn's writes are applied to that copy (so a later read
// of the same turn sees them) and recorded as state.module_updated events
// that ride with the turn's next write.
type slotState struct{ s *slotServices }

func (t *turnRun) state() demiurge.StateStore {
	if t.x.d.State == nil {
		return nil
	}
	t.services.t = t
	return slotState{&t.services}
}

func (st slotState) owner(scope string) string {
	if scope == demiurge.StateScopeCore {
		return st.s.t.snap.Core.ID
	}
	return st.s.t.session.ID
}

// document returns the turn's copy of scope's document; the caller holds mu.
func (st slotState) document(ctx context.Context, scope string) (map[string]any, error) {
	if doc, ok := st.s.docs[scope]; ok {
		return doc, nil
	}
	doc, err := st.s.t.x.d.State.StateDocument(ctx, scope, st.owner(scope))
	if err != nil {
		return nil, err
	}
	if st.s.docs == nil {
		st.s.docs = map[string]map[string]any{}
	}
	st.s.docs[scope] = doc
	return doc, nil
}

func (st slotState) Document(ctx context.Context, scope string) (map[string]any, error) {
	st.s.mu.Lock()
	defer st.s.mu.Unlock()
	return st.document(ctx, scope)
}

func (st slotState) Write(ctx context.Context, scope, slotPath, target, op string, patch any) (any, error) {
	st.s.mu.Lock()
	defer st.s.mu.Unlock()
	doc, err := st.document(ctx, scope)
	if err != nil {
		return nil, err
	}
	next, value, err := demiurge.ApplyStateOperation(doc, target, op, patch)
	if err != nil {
		return nil, err
	}
	t := st.s.t
	owner := st.owner(scope)
	t.record(demiurge.EventBatch{Events: []demiurge.Event{demiurge.NewEvent(demiurge.AggAuthoredState, demiurge.StateAggregateID(scope, owner), demiurge.StateModuleUpdatedPayload{
		TurnID: t.turnID, Slot: slotPath, Scope: scope, Owner: owner, ProposalID: demiurge.NewID("proposal"),
		Target: target, Operation: op, Patch: patch,
	})}})
	st.s.docs[scope] = next
	return value, nil
}
