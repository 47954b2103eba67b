package host_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/turn"
)

// Environment of the crash child: the home and the session to compact.
const (
	compactChildHome    = "DEMIURGE_COMPACT_CRASH_HOME"
	compactChildSession = "DEMIURGE_COMPACT_CRASH_SESSION"
)

// A Host killed (SIGKILL) while it compacts leaves the session as it was
// before the compaction: no summary, no cutoff, every message; the lease
// it held is taken over, and the next compaction writes summary and
// cutoff together.
func TestCompactionSurvivesSIGKILL(t *testing.T) {
	if home := os.Getenv(compactChildHome); home != "" {
		h, err := host.Open(context.Background(), host.Options{Home: home})
		if err != nil {
			t.Fatal(err)
		}
		res, err := h.CompactSession(context.Background(), turn.CompactRequest{SessionID: os.Getenv(compactChildSession)})
		t.Fatalf("the compaction returned (%+v, %v) instead of being killed", res, err)
	}
	ctx := context.Background()
	s := newWindowServer(t, 16384, false)
	h, ws := openWindowed(t, s, "openai-chat", "gpt-4o-loop", 1024, "o200k_base")
	var sessionID string
	for i := 0; i < 8; i++ { // fewer than an automatic compaction needs
		res, err := h.Run(ctx, turn.Request{Text: "turn", SessionID: sessionID, NewSession: sessionID == "", Workspace: ws, Model: "gpt-4o-loop"})
		if err != nil || res.Outcome != turn.OutcomeCompleted {
			t.Fatalf("turn %d: %+v %v", i, res, err)
		}
		sessionID = res.SessionID
	}
	before, err := h.Transcript(ctx, sessionID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if s0, _ := h.Session(ctx, sessionID); s0.CompactionSummaryID != "" {
		t.Fatal("the session was compacted before the test began")
	}
	home := h.Home().Dir
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}

	held := make(chan struct{}, 1)
	s.mu.Lock()
	s.held = held
	s.mu.Unlock()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCompactionSurvivesSIGKILL$", "-test.count=1")
	cmd.Env = append(os.Environ(), compactChildHome+"="+home, compactChildSession+"="+sessionID)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-held: // the child is inside its summarising request
	case err := <-exited:
		t.Fatalf("the child ended (%v) before asking for a summary:\n%s", err, out.String())
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("the child never asked for a summary:\n%s", out.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := <-exited; !errors.As(err, &exit) {
		t.Fatalf("child: %v, want killed", err)
	}
	s.mu.Lock()
	s.held = nil
	s.mu.Unlock()

	h2, err := host.Open(ctx, host.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h2.Close(ctx) })
	sess, err := h2.Session(ctx, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	after, err := h2.Transcript(ctx, sessionID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if sess.CompactionSummaryID != "" || sess.CompactedUntilMessageID != "" || len(after) != len(before) {
		t.Fatalf("after the kill: summary %q cutoff %q, %d messages (before %d)", sess.CompactionSummaryID, sess.CompactedUntilMessageID, len(after), len(before))
	}
	res, err := h2.CompactSession(ctx, turn.CompactRequest{SessionID: sessionID, Focus: "the reads"})
	if err != nil || res.Skipped {
		t.Fatalf("compaction after restart: %+v %v", res, err)
	}
	sess, _ = h2.Session(ctx, sessionID)
	if sess.CompactionSummaryID != res.SummaryMessageID || sess.CompactedUntilMessageID != res.UntilMessageID || res.Compacted != 2*4 {
		t.Fatalf("after compaction: session %+v, result %+v", sess, res)
	}
}
