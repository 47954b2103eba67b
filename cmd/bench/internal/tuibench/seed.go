package tuibench

import (
	"context"
	"fmt"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/store"
	"github.com/demiurge/demiurge/turn"
)

// seedTurnsPerBatch is how many seeded turns (four events each) go into
// one Append.
const seedTurnsPerBatch = 100

// SeedSession makes a session of at least messages messages in the home
// (initialised if needed) and returns its id and the text of its newest
// message. One real turn on the fake provider creates the session as chat
// would; the rest are appended through the store as completed turns of a
// user line and a short markdown answer each, with the Host closed.
func SeedSession(ctx context.Context, home string, messages int) (sessionID, newest string, err error) {
	h, err := host.Open(ctx, host.Options{Home: home, Getenv: func(string) string { return "" }})
	if err != nil {
		return "", "", fmt.Errorf("open host on %s: %w", home, err)
	}
	res, err := h.Run(ctx, turn.Request{Text: "hello"})
	dbPath := h.Home().DBPath()
	if cerr := h.Close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
		err = fmt.Errorf("close host: %w", cerr)
	}
	if err != nil {
		return "", "", fmt.Errorf("the session's first turn: %w", err)
	}
	if res.Outcome != turn.OutcomeCompleted {
		return "", "", fmt.Errorf("the session's first turn: outcome %q (%v), want %q", res.Outcome, res.Error, turn.OutcomeCompleted)
	}

	db, err := store.Open(ctx, dbPath, store.Options{})
	if err != nil {
		return "", "", fmt.Errorf("open the store %s: %w", dbPath, err)
	}
	defer db.Close()
	pairs := (messages + 1) / 2
	for first := 0; first < pairs; first += seedTurnsPerBatch {
		var evs []demiurge.Event
		for i := first; i < min(first+seedTurnsPerBatch, pairs); i++ {
			var text string
			evs, text = seededTurn(evs, res, i+1)
			newest = text
		}
		if _, err := db.Append(ctx, evs, "", nil); err != nil {
			return "", "", fmt.Errorf("append seeded turns %d-%d: %w", first+1, first+seedTurnsPerBatch, err)
		}
	}
	return res.SessionID, newest, nil
}

// seededTurn appends turn n of the seeded session to evs: started, the
// user's line, the answer, completed. It returns the answer's first line,
// which names n.
func seededTurn(evs []demiurge.Event, first turn.Result, n int) ([]demiurge.Event, string) {
	turnID := demiurge.NewID("turn")
	add := func(agg, id string, p demiurge.EventPayload) {
		ev := demiurge.NewEvent(agg, id, p)
		ev.Actor = map[string]any{"actor": "host.turn"}
		evs = append(evs, ev)
	}
	yes := true
	msg := func(role, text string) {
		add(demiurge.AggMessage, demiurge.NewID("msg"), demiurge.MessagePersistedPayload{
			SessionID: first.SessionID, TurnID: turnID, Role: role,
			Content: &demiurge.MessageBody{Text: text, Kind: "message", ModelVisible: &yes, Channel: "cli"},
		})
	}
	headline := fmt.Sprintf("answer %05d of the seeded session", n)
	add(demiurge.AggTurn, turnID, demiurge.TurnStartedPayload{
		SessionID: first.SessionID, CoreID: first.CoreID, CoreRevision: first.CoreRevision})
	msg(demiurge.RoleUser, fmt.Sprintf("question %05d: what does the workspace hold?", n))
	msg(demiurge.RoleAssistant, headline+"\n\n"+strings.Repeat("The workspace holds **two Go files** and a `README.md`. ", 3))
	add(demiurge.AggTurn, turnID, demiurge.TurnCompletedPayload{SessionID: first.SessionID})
	return evs, headline
}
