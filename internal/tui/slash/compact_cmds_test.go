package slash_test

import (
	"context"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/internal/tui/slash"
)

// /compact summarises the session through the Host: nothing before a
// session exists, a skip while the session has no more turns than it
// protects, then a durable summary and cutoff.
func TestCompactCommand(t *testing.T) {
	h := newHost(t)
	env := newEnv(t, h)
	if got := run(t, env, "/compact"); got.Level != slash.LevelWarning || !strings.Contains(got.Notice, "nothing to compact") {
		t.Fatalf("/compact without a session = %+v", got)
	}
	env.turn(t, "first")
	if got := run(t, env, "/compact").Notice; got != "Nothing compacted: not enough history to compact." {
		t.Fatalf("/compact with one turn = %q", got)
	}
	for i := 0; i < 7; i++ {
		env.turn(t, "more")
	}
	got := run(t, env, "/compact the first turn")
	if !strings.HasPrefix(got.Notice, "Compacted 4 older messages into one summary") {
		t.Fatalf("/compact = %+v", got)
	}
	s, err := h.Session(context.Background(), env.session)
	if err != nil || s.CompactionSummaryID == "" || s.CompactedUntilMessageID == "" {
		t.Fatalf("session after /compact: %+v %v", s, err)
	}
	env.busy = true
	if _, err := slash.Dispatch(context.Background(), env, "/compact"); err == nil {
		t.Fatal("/compact while a turn runs was accepted")
	}
}
