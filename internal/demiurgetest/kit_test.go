package demiurgetest_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/provider"
	"github.com/demiurge/demiurge/store"
)

// A script is what the fake provider loads, item for item.
func TestScriptLoadsAsWritten(t *testing.T) {
	path := demiurgetest.Script(t, demiurgetest.Call("read_file", map[string]any{"path": "a.txt"}), demiurgetest.Reply("done"))
	got, err := provider.LoadFakeScript(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []demiurge.ModelResponse{
		{ToolCalls: []demiurge.ToolCall{{ID: "fake_tool_call_1", Name: "read_file", Arguments: map[string]any{"path": "a.txt"}}}},
		{Content: "done"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded %+v, want %+v", got, want)
	}
}

func TestClock(t *testing.T) {
	start := time.Date(2026, 7, 4, 1, 0, 0, 0, time.UTC)
	c := demiurgetest.NewClock(start)
	c.Advance(time.Minute)
	if got := c.Now(); !got.Equal(start.Add(time.Minute)) {
		t.Fatalf("advanced clock reads %v", got)
	}
	c.Set(start)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("set clock reads %v", got)
	}
	tick := demiurgetest.NewTickingClock(start, time.Second)
	if a, b := tick.Now(), tick.Now(); !a.Equal(start.Add(time.Second)) || !b.Equal(start.Add(2*time.Second)) {
		t.Fatalf("ticking clock reads %v then %v", a, b)
	}
}

func TestApproverAnswersAndRecords(t *testing.T) {
	a := demiurgetest.NewApprover(effect.DecisionDeny)
	for _, tool := range []string{"write_file", "terminal"} {
		if d, err := a.Approve(context.Background(), effect.ApprovalRequest{Tool: tool}); d != effect.DecisionDeny || err != nil {
			t.Fatalf("answer %q, %v", d, err)
		}
	}
	if reqs := a.Requests(); a.Asked() != 2 || reqs[0].Tool != "write_file" || reqs[1].Tool != "terminal" {
		t.Fatalf("recorded %+v", reqs)
	}
}

// The store reads the clock it is given.
func TestMustOpenDBWithClock(t *testing.T) {
	clock := demiurgetest.NewClock(time.Date(2026, 7, 4, 1, 0, 0, 0, time.UTC))
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	created := demiurge.NewEvent(demiurge.AggSession, "session_kit", demiurge.SessionCreatedPayload{CoreID: "assistant"})
	if _, err := db.Append(ctx, []demiurge.Event{created}, "", nil); err != nil {
		t.Fatal(err)
	}
	evs, err := db.Events(ctx, demiurge.EventFilter{AggregateID: "session_kit", Limit: 10})
	if err != nil || len(evs) != 1 || !evs[0].CreatedAt.Equal(clock.Now()) {
		t.Fatalf("events %+v, %v", evs, err)
	}
}
