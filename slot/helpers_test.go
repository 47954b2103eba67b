package slot_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/slot"
	"github.com/demiurge/demiurge/starlark"
)

// fixture returns the absolute path of a file under testdata.
func fixture(t testing.TB, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// spec builds a slot spec that runs function fn of a fixture file. The slot
// id is the function name.
func spec(t testing.TB, phase, lane, file, fn string) demiurge.SlotSpec {
	t.Helper()
	return demiurge.SlotSpec{
		ID:         fn,
		Phase:      phase,
		Lane:       lane,
		RelPath:    "agent/" + phase + "/" + fn,
		ModulePath: fixture(t, file),
		Function:   fn,
	}
}

func hard(s demiurge.SlotSpec) demiurge.SlotSpec {
	s.FailurePolicy = demiurge.FailHard
	return s
}

func newRuntime(opts starlark.Options) *slot.Runtime {
	return slot.NewRuntime(starlark.NewRuntime(opts), slot.Options{})
}

// lineOf returns the 1-based line of file that carries "# @marker".
func lineOf(t testing.TB, file, marker string) int {
	t.Helper()
	f, err := os.Open(fixture(t, file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.Contains(sc.Text(), "# @"+marker) {
			return n
		}
	}
	t.Fatalf("%s has no marker @%s", file, marker)
	return 0
}

// at renders the position prefix of an error raised at marker in file.
func at(t testing.TB, file, marker string) string {
	t.Helper()
	return fmt.Sprintf("%s:%d: ", fixture(t, file), lineOf(t, file, marker))
}

func events(evs []demiurge.SlotEvent, typ, slotID string) []demiurge.SlotEvent {
	var out []demiurge.SlotEvent
	for _, e := range evs {
		if e.Type == typ && e.SlotID == slotID {
			out = append(out, e)
		}
	}
	return out
}

// failure returns the Error of the slot's module.failed event.
func failure(t testing.TB, evs []demiurge.SlotEvent, slotID string) string {
	t.Helper()
	f := events(evs, demiurge.SlotEventFailed, slotID)
	if len(f) != 1 {
		t.Fatalf("slot %s: %d module.failed events, want 1 (events: %+v)", slotID, len(f), evs)
	}
	return f[0].Error
}

func completed(t testing.TB, evs []demiurge.SlotEvent, slotID string) {
	t.Helper()
	if len(events(evs, demiurge.SlotEventCompleted, slotID)) != 1 {
		t.Fatalf("slot %s did not complete (events: %+v)", slotID, evs)
	}
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := demiurge.ErrorCode(err); got != code {
		t.Fatalf("code=%q, want %q (err: %v)", got, code, err)
	}
}

func testTurn() demiurge.TurnInfo {
	return demiurge.TurnInfo{
		SessionID:    "sess_1",
		TurnID:       "turn_1",
		CoreID:       "assistant",
		CoreRevision: "rev_abc",
		UserInput:    "hello there",
		Metadata:     map[string]any{"channel": "cli", "n": 2},
	}
}

// history is a HistoryReader over a fixed transcript with the reader
// contract (kind message, roles, last limit). Calls with limit 7 wait at a
// two-party barrier, which only a concurrent second caller can open.
type history struct {
	msgs []demiurge.Message

	mu      sync.Mutex // guards calls, arrived
	calls   []string
	arrived int
	open    chan struct{}
}

func newHistory(msgs ...demiurge.Message) *history {
	return &history{msgs: msgs, open: make(chan struct{})}
}

func (h *history) RecentMessages(ctx context.Context, limit int, roles []string) ([]demiurge.Message, error) {
	h.mu.Lock()
	h.calls = append(h.calls, fmt.Sprintf("%d:%s", limit, strings.Join(roles, ",")))
	if limit == 7 {
		h.arrived++
		if h.arrived == 2 {
			close(h.open)
		}
	}
	h.mu.Unlock()
	if limit == 7 {
		select {
		case <-h.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	allowed := map[string]bool{}
	for _, r := range roles {
		allowed[r] = true
	}
	var out []demiurge.Message
	for _, m := range h.msgs {
		if m.Content.Kind == "message" && allowed[m.Role] {
			out = append(out, m)
		}
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

func (h *history) callLog() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

func message(id, role, text string, meta map[string]any) demiurge.Message {
	return demiurge.Message{
		ID: id, SessionID: "sess_1", TurnID: "turn_0", Role: role, Visible: role != demiurge.RoleTool,
		Content:   demiurge.MessageContent{Text: text, Kind: "message", ModelVisible: true, Metadata: meta},
		CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 6_000_000, time.UTC),
	}
}
