package host_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/turn"
)

// longSessionTurns is the length of the long-session tests: 300 turns,
// each reading a 20 KiB file; under the race detector, which slows the
// tokenizers on both ends about tenfold, 60 (still a dozen compactions).
var longSessionTurns = 300

func init() {
	if raceEnabled {
		longSessionTurns = 60
	}
}

// openWindowed opens a Host whose default provider is the loopback
// server, through a custom profile with the server's window.
func openWindowed(t *testing.T, s *windowServer, mode, model string, maxOut int, tokenizer string) (*host.Host, string) {
	t.Helper()
	home := t.TempDir()
	if _, err := host.Init(home, ""); err != nil {
		t.Fatal(err)
	}
	base := s.srv.URL + "/v1"
	cfg := fmt.Sprintf("providers:\n  default: loop\n  custom:\n    loop:\n      api_mode: %s\n      base_url: %s\n      api_key: sk-loop-0123456789\n      context_window: %d\n      max_output_tokens: %d\n",
		mode, base, cmp.Or(s.claimed, s.window), maxOut)
	if tokenizer != "" {
		cfg += "      tokenizer: " + tokenizer + "\n"
	}
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := host.Open(context.Background(), host.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	ws := filepath.Join(home, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "big.txt"), []byte(bigText(20<<10)), 0o600); err != nil {
		t.Fatal(err)
	}
	return h, ws
}

// bigText is n bytes of varied words (deterministic).
func bigText(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"alpha", "kernel", "window", "budget", "token", "river", "x9", "compaction", "summary", "42", "zebra", "Ω", "data", "μ-op"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		if r.IntN(9) == 0 {
			b.WriteString(".\n")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()[:n]
}

// longSession runs longSessionTurns turns of one session against s and
// checks that no request was refused, that the session was compacted,
// and that the newest turns reached the model whole.
func longSession(t *testing.T, s *windowServer, h *host.Host, ws, model string) {
	ctx := context.Background()
	var sessionID string
	for i := 0; i < longSessionTurns; i++ {
		res, err := h.Run(ctx, turn.Request{Text: fmt.Sprintf("turn %d: read big.txt", i), SessionID: sessionID, NewSession: sessionID == "", Workspace: ws, Model: model})
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != turn.OutcomeCompleted {
			t.Fatalf("turn %d: %s %+v", i, res.Outcome, res.Error)
		}
		if want := fmt.Sprintf("read it; turn %d: read big.txt", i); res.Text != want {
			t.Fatalf("turn %d answered %q, want %q", i, res.Text, want)
		}
		if len(res.ToolCalls) != 1 || res.ToolCalls[0].IsError {
			t.Fatalf("turn %d tool calls %+v", i, res.ToolCalls)
		}
		sessionID = res.SessionID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rejected) > 0 {
		t.Fatalf("%d of %d requests refused as over the window, first: %s", len(s.rejected), s.requests, s.rejected[0])
	}
	if s.summaries == 0 {
		t.Fatalf("no compaction request in %d requests", s.requests)
	}
	if s.noLimit > 0 {
		t.Fatalf("%d requests without an output limit", s.noLimit)
	}
	// The newest turns are intact: the last request carried the previous
	// turn's user message, its whole tool result and the current one.
	var users, results []string
	for _, m := range s.last {
		if m.Role == "user" && m.Results == 0 {
			users = append(users, m.Text)
		}
		if m.Results > 0 || m.Role == "tool" {
			results = append(results, m.Text)
		}
	}
	n := longSessionTurns
	if len(users) < 2 || users[len(users)-1] != fmt.Sprintf("turn %d: read big.txt", n-1) || users[len(users)-2] != fmt.Sprintf("turn %d: read big.txt", n-2) {
		t.Fatalf("the last request's user messages end with %q", users[max(len(users)-3, 0):])
	}
	if len(results) < 2 || strings.Contains(results[len(results)-1], "pruned") || strings.Contains(results[len(results)-2], "pruned") {
		t.Fatalf("the newest tool results were pruned: %d results", len(results))
	}
	sess, err := h.Session(ctx, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	if sess.CompactionSummaryID == "" || sess.CompactedUntilMessageID == "" {
		t.Fatalf("session has no compaction summary: %+v", sess)
	}
	msgs, err := h.Transcript(ctx, sessionID, 5000)
	if err != nil {
		t.Fatal(err)
	}
	summaries := 0
	for _, m := range msgs {
		if m.Content.Kind == demiurge.KindCompactionSummary {
			summaries++
			if m.Visible || !m.Content.ModelVisible || m.Role != demiurge.RoleSystem || !strings.HasPrefix(m.Content.Text, "[CONTEXT COMPACTION - REFERENCE ONLY]") {
				t.Fatalf("summary message %+v", m)
			}
		}
	}
	if summaries < 2 {
		t.Fatalf("%d compaction summaries in the transcript, want several", summaries)
	}
	u, steps, err := h.SessionUsageSteps(ctx, sessionID)
	if err != nil || steps != int64(2*longSessionTurns) || u.InputTokens == 0 || u.CachedTokens == 0 && !s.anthropic {
		t.Fatalf("session usage %+v over %d steps (%v)", u, steps, err)
	}
	t.Logf("%d requests, %d summaries, largest prompt %d of %d", s.requests, s.summaries, s.maxPrompt, s.window)
}

// A long session with large tool results against an OpenAI-compatible
// server that enforces its window: every request fits, older history is
// compacted, the newest turns stay whole, the prefix is keyed for the
// cache.
func TestLongSessionFitsOpenAIWindow(t *testing.T) {
	s := newWindowServer(t, 16384, false)
	h, ws := openWindowed(t, s, "openai-chat", "gpt-4o-loop", 1024, "o200k_base")
	longSession(t, s, h, ws, "gpt-4o-loop")
	if len(s.cacheKeys) != 1 {
		t.Fatalf("prompt_cache_key values %v, want the one session", s.cacheKeys)
	}
}

// The same against an Anthropic-shaped server, whose model the client
// counts with the calibrated estimate (the server counts with a BPE).
func TestLongSessionFitsAnthropicWindow(t *testing.T) {
	s := newWindowServer(t, 16384, true)
	h, ws := openWindowed(t, s, "anthropic-messages", "claude-loop", 1024, "")
	longSession(t, s, h, ws, "claude-loop")
	if s.marked != s.requests {
		t.Fatalf("%d of %d requests carried cache_control breakpoints", s.marked, s.requests)
	}
}

// A provider that refuses a request as too long (the model's window is
// smaller than the profile says) gets one forced compaction and one retry:
// every turn completes, each refusal is followed by a summarising request,
// and nothing is refused twice in a row.
func TestContextLengthRefusalForcesOneCompactionAndRetry(t *testing.T) {
	// One big.txt result is about 4,400 tokens: two do not fit.
	s := newWindowServer(t, 7000, false)
	s.claimed = 64000
	h, ws := openWindowed(t, s, "openai-chat", "gpt-4o-loop", 1024, "o200k_base")
	ctx := context.Background()
	var sessionID string
	for i := range 5 {
		s.mu.Lock()
		before := len(s.rejected)
		s.mu.Unlock()
		res, err := h.Run(ctx, turn.Request{Text: fmt.Sprintf("turn %d: read big.txt", i), SessionID: sessionID, NewSession: sessionID == "", Workspace: ws, Model: "gpt-4o-loop"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != turn.OutcomeCompleted {
			t.Fatalf("turn %d: %s %+v", i, res.Outcome, res.Error)
		}
		sessionID = res.SessionID
		s.mu.Lock()
		refused := len(s.rejected) - before
		s.mu.Unlock()
		if refused > 2 {
			t.Fatalf("turn %d was refused %d times: a refusal must be followed by a compaction and a request that fits", i, refused)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rejected) == 0 {
		t.Fatalf("the server never refused a request (%d requests, largest prompt %d): the test did not reach the window", s.requests, s.maxPrompt)
	}
	if s.summaries < 1 {
		t.Fatalf("%d refusals and no compaction", len(s.rejected))
	}
}
