package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

func stateEvent(scope, owner, target, op string, patch any) demiurge.Event {
	return demiurge.NewEvent(demiurge.AggAuthoredState, demiurge.StateAggregateID(scope, owner), demiurge.StateModuleUpdatedPayload{
		TurnID: "turn_1", Slot: "agent/input/x", Scope: scope, Owner: owner, ProposalID: demiurge.NewID("proposal"),
		Target: target, Operation: op, Patch: patch,
	})
}

// state.module_updated events build the document by applying their
// operations in order; scopes and owners are separate documents, and a
// write that no longer applies leaves the document as it was.
func TestStateDocumentProjection(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	doc, err := db.StateDocument(ctx, demiurge.StateScopeSession, "s1")
	if err != nil || len(doc) != 1 || doc["schema_version"] != json.Number("1") {
		t.Fatalf("fresh document %v %v", doc, err)
	}
	if _, err := db.Append(ctx, []demiurge.Event{
		stateEvent("session", "s1", "a.b", demiurge.StateSet, 1),
		stateEvent("session", "s1", "a.list", demiurge.StateAppend, "x"),
		stateEvent("session", "s1", "a", demiurge.StateMerge, map[string]any{"c": true}),
		stateEvent("session", "s1", "a.b.deeper", demiurge.StateSet, 2), // a.b is not an object
		stateEvent("core", "assistant", "n", demiurge.StateSet, "core value"),
	}, "", nil); err != nil {
		t.Fatal(err)
	}
	doc, err = db.StateDocument(ctx, demiurge.StateScopeSession, "s1")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(doc)
	if want := `{"a":{"b":1,"c":true,"list":["x"]},"schema_version":1}`; string(got) != want {
		t.Errorf("session document %s, want %s", got, want)
	}
	core, err := db.StateDocument(ctx, demiurge.StateScopeCore, "assistant")
	if err != nil || core["n"] != "core value" {
		t.Errorf("core document %v %v", core, err)
	}
}
