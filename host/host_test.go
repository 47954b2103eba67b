package host_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/store"
	"github.com/demiurge/demiurge/turn"
)

func mustOpen(tb testing.TB) *host.Host {
	tb.Helper()
	h, err := host.Open(context.Background(), host.Options{Home: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			tb.Error(err)
		}
	})
	return h
}

// TestConcurrentSessionsSerialisedTurns runs 8 sessions × 50 turns in
// parallel: no message is lost or duplicated, and the turns of one session
// never overlap (each turn.started is followed by its own terminal event
// before the next turn of the session starts).
func TestConcurrentSessionsSerialisedTurns(t *testing.T) {
	const sessions, turns = 8, 50
	h := mustOpen(t)
	ctx := context.Background()

	ids := make([]string, sessions)
	for i := range ids {
		res, err := h.Run(ctx, turn.Request{Text: "open", NewSession: true, Channel: "test", ConversationKey: fmt.Sprintf("test:c:%d", i)})
		if err != nil || res.Outcome != turn.OutcomeCompleted {
			t.Fatalf("open session %d: %v %+v", i, err, res)
		}
		ids[i] = res.SessionID
	}
	var wg sync.WaitGroup
	errs := make(chan error, sessions*turns*2)
	for i, id := range ids {
		// Two goroutines per session compete for it, so serialisation is exercised.
		for half := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := half; n < turns; n += 2 {
					res, err := h.Run(ctx, turn.Request{Text: fmt.Sprintf("s%d m%d", i, n), SessionID: id, Channel: "test", ConversationKey: fmt.Sprintf("test:c:%d", i)})
					if err != nil {
						errs <- err
						return
					}
					if res.Outcome != turn.OutcomeCompleted || res.SessionID != id {
						errs <- fmt.Errorf("turn %+v", res)
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	for i, id := range ids {
		msgs, err := h.Transcript(ctx, id, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(msgs), 2*(turns+1); got != want {
			t.Fatalf("session %d has %d messages, want %d", i, got, want)
		}
		seen := map[string]int{}
		for j := 0; j < len(msgs); j += 2 {
			u, a := msgs[j], msgs[j+1]
			if u.Role != "user" || a.Role != "assistant" || a.Content.Text != "[fake] "+u.Content.Text || u.TurnID != a.TurnID {
				t.Fatalf("session %d: pair %d is %s:%q / %s:%q", i, j/2, u.Role, u.Content.Text, a.Role, a.Content.Text)
			}
			seen[u.Content.Text]++
		}
		for n := range turns {
			if c := seen[fmt.Sprintf("s%d m%d", i, n)]; c != 1 {
				t.Fatalf("session %d message m%d seen %d times", i, n, c)
			}
		}
	}
	assertTurnsSerialised(t, host.StoreOf(h), sessions*(turns+1))
}

// assertTurnsSerialised reads every turn event of db and fails when a turn
// of a session started while another of the same session ran, or when
// there are not want turns.
func assertTurnsSerialised(t *testing.T, db *store.DB, want int) {
	t.Helper()
	ctx := context.Background()
	running := map[string]string{} // session → running turn
	sessionOf := map[string]string{}
	var after int64
	for {
		evs, err := db.Events(ctx, demiurge.EventFilter{AggregateType: demiurge.AggTurn, AfterSeq: after, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		for _, e := range evs {
			after = e.Seq
			switch e.Type {
			case demiurge.EvTurnStarted:
				sid, _ := payloadOf(t, e)["session_id"].(string)
				if prev := running[sid]; prev != "" {
					t.Fatalf("turn %s started while %s was running in session %s", e.AggregateID, prev, sid)
				}
				running[sid] = e.AggregateID
				sessionOf[e.AggregateID] = sid
			default:
				sid := sessionOf[e.AggregateID]
				if running[sid] != e.AggregateID {
					t.Fatalf("terminal %s for %s, but %q was running", e.Type, e.AggregateID, running[sid])
				}
				running[sid] = ""
			}
		}
	}
	if len(sessionOf) != want {
		t.Fatalf("saw %d turns, want %d", len(sessionOf), want)
	}
}

func TestCancelRunningTurnIsTerminalOnce(t *testing.T) {
	arrived := make(chan struct{}, 4)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // lets the server notice the client hanging up
		arrived <- struct{}{}
		select { // never answers
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	env := map[string]string{"OPENAI_API_KEY": "sk-test-cancel-0000", "OPENAI_BASE_URL": srv.URL + "/v1"}
	h, err := host.Open(context.Background(), host.Options{Home: t.TempDir(), Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())

	admitted := make(chan string, 1)
	done := make(chan turn.Result, 1)
	go func() {
		res, err := h.Run(context.Background(), turn.Request{
			Text: "x", NewSession: true, Provider: "openai",
			OnAdmitted: func(_, turnID string) { admitted <- turnID },
		})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	id := <-admitted
	<-arrived
	foreign := demiurge.PrincipalScope{PrincipalID: "principal:conversation:x:y", Authority: demiurge.AuthorityConversation, Channel: "x", ConversationKey: "x:y", SessionID: "session_other", AllowedSessionIDs: []string{"session_other"}}
	if got := h.CancelTurn(id, foreign); got != "not_found" {
		t.Fatalf("foreign cancel = %q, want not_found", got)
	}
	if got := h.CancelTurn(id, demiurge.OperatorScope("")); got != string(demiurge.TurnCancelled) {
		t.Fatalf("operator cancel = %q", got)
	}
	res := <-done
	if res.Outcome != turn.OutcomeCancelled || res.Error == nil || res.Error.Message != "turn cancelled" {
		t.Fatalf("result %+v", res)
	}
	tr, err := host.StoreOf(h).Turn(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Status != demiurge.TurnCancelled {
		t.Fatalf("stored status %q", tr.Status)
	}
	if got := h.CancelTurn(id, demiurge.OperatorScope("")); got != "not_found" {
		t.Fatalf("cancel after the end = %q", got)
	}
}

func TestDeliveryWithoutLiveRouteIsUnrouted(t *testing.T) {
	h := mustOpen(t)
	res, err := h.Run(context.Background(), turn.Request{Text: "nobody listens"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deliveries) != 1 || res.Deliveries[0].Status != demiurge.DeliveryUnrouted {
		t.Fatalf("deliveries %+v, want one unrouted", res.Deliveries)
	}
	d, err := host.StoreOf(h).Delivery(context.Background(), res.Deliveries[0].DeliveryID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != demiurge.DeliveryUnrouted || d.LastError != "no_interactive_route" {
		t.Fatalf("outbox row %+v", d)
	}
	// The reply is still in the transcript: history does not depend on a route.
	msgs, err := h.Transcript(context.Background(), res.SessionID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if last := msgs[len(msgs)-1]; last.Role != "assistant" || last.Content.Text != "[fake] nobody listens" {
		t.Fatalf("last message %+v", last)
	}
}

// payloadOf decodes the payload of e as a map, the way a generic reader
// sees it.
func payloadOf(t testing.TB, e demiurge.Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := e.Decode(&m); err != nil {
		t.Fatalf("payload of %s: %v", e.Type, err)
	}
	return m
}
