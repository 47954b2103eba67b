package host_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/turn"
)

// Close cancels a running turn and waits for it: the turn has returned,
// cancelled with its terminal state recorded, before Close does; after
// Close no turn starts.
func TestCloseWaitsForARunningTurn(t *testing.T) {
	arrived := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		<-r.Context().Done() // never answers
	}))
	defer srv.Close()
	env := map[string]string{"OPENAI_API_KEY": "sk-test-close-0000", "OPENAI_BASE_URL": srv.URL + "/v1"}
	h, err := host.Open(context.Background(), host.Options{Home: t.TempDir(), Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		res turn.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := h.Run(context.Background(), turn.Request{Text: "x", NewSession: true, Provider: "openai"})
		done <- outcome{res, err}
	}()
	<-arrived
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-done:
		// FinishTurn wrote to a store that was still open: no error.
		if o.err != nil || o.res.Outcome != turn.OutcomeCancelled {
			t.Fatalf("the running turn: %+v, %v", o.res, o.err)
		}
	default:
		t.Fatal("Close returned while a turn was still running")
	}
	if _, err := h.Run(context.Background(), turn.Request{Text: "late"}); demiurge.ErrorCode(err) != demiurge.EUNAVAILABLE {
		t.Fatalf("Run after Close: %v, want EUNAVAILABLE", err)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
