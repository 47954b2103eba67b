package tuibench_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/demiurge/demiurge/cmd/bench/internal/tuibench"
	"github.com/demiurge/demiurge/host"
)

// The seeded session is a session of the home's default core with every
// seeded message in its transcript, the newest last.
func TestSeedSession(t *testing.T) {
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "home")
	id, newest, err := tuibench.SeedSession(ctx, home, 250)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Open(ctx, host.Options{Home: home, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	s, err := h.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if s.MessageCount < 250 {
		t.Fatalf("session has %d messages, want at least 250", s.MessageCount)
	}
	msgs, err := h.Transcript(ctx, id, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) < 250 {
		t.Fatalf("transcript has %d messages, want at least 250", len(msgs))
	}
	if last := msgs[len(msgs)-1].Content.Text; len(last) < len(newest) || last[:len(newest)] != newest {
		t.Fatalf("newest message %q, want it to start with %q", last, newest)
	}
}
