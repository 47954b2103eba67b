package turn_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/turn"
)

// Every event a turn's end writes, after its last tool started, has its
// encoder among those built while the model works (warm.go), for a turn
// with a tool call and one without.
func TestEndPayloadsCoverATurnsEnd(t *testing.T) {
	ctx := context.Background()
	h, err := host.Open(ctx, host.Options{Home: t.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	payloadOf := map[string]reflect.Type{}
	for _, p := range demiurge.EventPayloads() {
		payloadOf[p.Type()] = reflect.TypeOf(p)
	}
	warmed := map[reflect.Type]bool{}
	for _, p := range turn.EndPayloads {
		warmed[reflect.TypeOf(p)] = true
	}
	for _, text := range []string{"please tools_list", "hello", "please tools_list"} {
		res, err := h.Run(ctx, turn.Request{Text: text})
		if err != nil || res.Outcome != turn.OutcomeCompleted {
			t.Fatalf("turn %q: %+v, %v", text, res, err)
		}
		evs, err := h.TurnEvents(ctx, res.TurnID)
		if err != nil {
			t.Fatal(err)
		}
		end := 0
		for i, e := range evs {
			if e.Type == demiurge.EvTurnStarted || e.Type == demiurge.EvToolCallStarted {
				end = i + 1
			}
		}
		if end == len(evs) {
			t.Fatalf("turn %q wrote nothing after it started: %d events", text, len(evs))
		}
		for _, e := range evs[end:] {
			if !warmed[payloadOf[e.Type]] {
				t.Errorf("turn %q ends with %s, whose payload is not in endPayloads", text, e.Type)
			}
		}
	}
}
