package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/delivery"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/session"
	"github.com/demiurge/demiurge/store"
)

// acceptRoute takes every outbound.
type acceptRoute struct{}

func (acceptRoute) Deliver(context.Context, demiurge.Outbound) error { return nil }

// After PrepareTurnEnd, the end of a turn as the turn engine writes it (the
// user's message, the model step's usage, the answer delivered within the
// turn, the terminal event with the lease's release) and the Host's stop
// prepare no statement: PrepareTurnEnd prepared them all.
func TestPrepareTurnEndCoversATurnEnd(t *testing.T) {
	demiurgetest.SQLiteOnly(t, "the writer's prepared statements")
	ctx := context.Background()
	db := demiurgetest.MustOpenPath(t, filepath.Join(t.TempDir(), "runtime.sqlite3"), store.Options{})
	host, err := db.StartHost(ctx, store.HostInfo{})
	if err != nil {
		t.Fatal(err)
	}
	rt := session.NewRuntime(db, session.Options{})
	key := session.CLIConversationKey("assistant")
	s, _, err := rt.Resolve(ctx, demiurge.SessionRequest{CoreID: key.CoreID, CoreRevision: "rev1", Channel: key.Channel,
		ConversationKey: key.Key, Scope: demiurge.OperatorScope(""), Workspace: "/w", Provider: "fake", Model: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	turnID := demiurge.NewID("turn")
	started, err := rt.TurnStarted(demiurge.TurnStart{TurnID: turnID, SessionID: s.ID, CoreID: "assistant", CoreRevision: "rev1", HostID: host.ID()})
	if err != nil {
		t.Fatal(err)
	}
	admitted, err := db.AcquireSessionLeaseWith(ctx, s.ID, turnID, host.ID(), []demiurge.EventBatch{started})
	if err != nil {
		t.Fatal(err)
	}

	if err := db.PrepareTurnEnd(ctx); err != nil {
		t.Fatal(err)
	}
	prepared := store.WriteStatements(db)

	user, _, err := rt.Message(demiurge.MessageInput{SessionID: s.ID, TurnID: turnID, Role: demiurge.RoleUser, Text: "hello", Visible: true, ModelVisible: true, Source: "local"})
	if err != nil {
		t.Fatal(err)
	}
	step := demiurge.EventBatch{Events: []demiurge.Event{demiurge.NewEvent(demiurge.AggModelStep, turnID+"_step_1",
		demiurge.ModelStepCompletedPayload{SessionID: s.ID, TurnID: turnID, StepID: turnID + "_step_1", Model: "m1", InputTokens: 10, OutputTokens: 2})}}
	router := delivery.NewRouter()
	token := router.Bind(s.ID, acceptRoute{})
	deliveries := delivery.NewRuntime(db, router, delivery.Options{HostID: host.ID()})
	id, status, record, err := deliveries.Send(demiurge.WithRouteToken(ctx, token), demiurge.DeliveryIntent{
		SessionID: s.ID, TurnID: turnID, Text: "hi there", Visible: true, HistoryPolicy: demiurge.HistoryPersist,
	})
	if err != nil || status != demiurge.DeliverySent {
		t.Fatalf("send %s: %s, %v", id, status, err)
	}
	end := append([]demiurge.EventBatch{user, step}, record...)
	commit := func(ctx context.Context, batches []demiurge.EventBatch) ([][]demiurge.Event, error) {
		return db.ReleaseSessionLeaseWith(ctx, s.ID, turnID, host.ID(), batches)
	}
	if err := rt.FinishStartedTurnWith(ctx, admitted[0][0], s.ID, demiurge.TurnCompleted, nil, end, commit); err != nil {
		t.Fatal(err)
	}
	if err := host.Close(ctx); err != nil {
		t.Fatal(err)
	}

	if tr, err := db.Turn(ctx, turnID); err != nil || tr.Status != demiurge.TurnCompleted {
		t.Fatalf("turn %+v, %v", tr, err)
	}
	if d, err := db.Delivery(ctx, id); err != nil || d.Status != demiurge.DeliverySent {
		t.Fatalf("delivery %+v, %v", d, err)
	}
	if got := store.WriteStatements(db); got != prepared {
		t.Fatalf("the turn's end and the Host's stop prepared %d statements PrepareTurnEnd had not", got-prepared)
	}
}
