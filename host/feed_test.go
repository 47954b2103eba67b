package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/turn"
)

// feedDeadline bounds every wait for a feed item: generous, since the
// items come from real tasks on a loaded machine.
const feedDeadline = 60 * time.Second

// collectUntil reads f until done says the items so far are enough, and
// returns them; it fails the test at the deadline or when f closes first.
func collectUntil(t *testing.T, f *host.Feed, done func([]host.FeedItem) bool) []host.FeedItem {
	t.Helper()
	var items []host.FeedItem
	timer := time.NewTimer(feedDeadline)
	defer timer.Stop()
	for !done(items) {
		select {
		case it, ok := <-f.C():
			if !ok {
				t.Fatalf("feed closed after %d items: %s", len(items), types(items))
			}
			items = append(items, it)
		case <-timer.C:
			t.Fatalf("feed gave %d items in %s: %s", len(items), feedDeadline, types(items))
		}
	}
	return items
}

func types(items []host.FeedItem) string {
	var out []string
	for _, it := range items {
		out = append(out, string(it.Source)+":"+it.Event.Type)
	}
	return strings.Join(out, " ")
}

func hasType(items []host.FeedItem, typ string) bool {
	for _, it := range items {
		if it.Event.Type == typ {
			return true
		}
	}
	return false
}

// The feed of a session delivers its turn's events and its background
// task's, in commit order, with the task's completion as a notice, and
// nothing of another session.
func TestFeedSessionAndBackgroundTask(t *testing.T) {
	h := openScripted(t,
		demiurgetest.Call("terminal", map[string]any{"command": "echo from the background", "background": true}),
		demiurgetest.Reply("started it"),
	)
	ctx := context.Background()
	sid := demiurge.NewID("session")
	f, err := h.Subscribe(ctx, sid, host.FeedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := h.Run(ctx, turn.Request{Text: "start it", NewSession: true, NewSessionID: sid,
		Approver: demiurgetest.NewApprover(effect.DecisionAllowOnce)})
	if err != nil || res.Outcome != turn.OutcomeCompleted || res.SessionID != sid {
		t.Fatalf("turn: %v %+v", err, res)
	}
	// Another session's turn is not in this feed.
	other, err := h.Run(ctx, turn.Request{Text: "elsewhere", NewSession: true})
	if err != nil {
		t.Fatal(err)
	}
	items := collectUntil(t, f, func(items []host.FeedItem) bool {
		_, _, notice := lastNotice(items)
		return notice && hasType(items, demiurge.EvTaskCompletionAcknowledged)
	})
	var last int64
	for _, it := range items {
		if it.Event.Seq <= last {
			t.Fatalf("out of commit order at %s (seq %d after %d)", it.Event.Type, it.Event.Seq, last)
		}
		last = it.Event.Seq
		if it.SessionID == other.SessionID || it.Event.AggregateID == other.SessionID {
			t.Fatalf("another session's event %s", it.Event.Type)
		}
		if it.Dropped != 0 {
			t.Fatalf("dropped %d", it.Dropped)
		}
		switch {
		case strings.HasPrefix(it.Event.Type, "task."):
			if it.Source != host.FeedTask {
				t.Fatalf("%s has source %s", it.Event.Type, it.Source)
			}
		case strings.HasPrefix(it.Event.Type, "turn."), strings.HasPrefix(it.Event.Type, "tool.call."):
			if it.Source != host.FeedSession || it.SessionID != sid {
				t.Fatalf("%s has source %s session %s", it.Event.Type, it.Source, it.SessionID)
			}
		}
	}
	for _, want := range []string{demiurge.EvSessionCreated, demiurge.EvTurnStarted, demiurge.EvToolCallStarted, demiurge.EvToolCallCompleted,
		demiurge.EvTurnCompleted, demiurge.EvTaskSubmitted, demiurge.EvTaskSucceeded, demiurge.EvMessagePersisted} {
		if !hasType(items, want) {
			t.Fatalf("no %s in %s", want, types(items))
		}
	}
	text, level, _ := lastNotice(items)
	if !strings.HasPrefix(text, "background task task_") || !strings.Contains(text, " succeeded") || level != host.NoticeInfo {
		t.Fatalf("notice %q %s", text, level)
	}
}

func lastNotice(items []host.FeedItem) (string, string, bool) {
	for i := len(items) - 1; i >= 0; i-- {
		if text, level, ok := items[i].Notice(); ok {
			return text, level, true
		}
	}
	return "", "", false
}

// A subscriber that does not read loses items, counted, and never holds
// up the turn; Close ends its channel; Host.Close ends every feed.
func TestFeedSlowSubscriberDropsAndCloses(t *testing.T) {
	h := openScripted(t)
	ctx := context.Background()
	sid := demiurge.NewID("session")
	slow, err := h.Subscribe(ctx, sid, host.FeedOptions{Buffer: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		req := turn.Request{Text: "hello", SessionID: sid}
		if i == 0 {
			req = turn.Request{Text: "hello", NewSession: true, NewSessionID: sid}
		}
		if res, err := h.Run(ctx, req); err != nil || res.Outcome != turn.OutcomeCompleted {
			t.Fatalf("turn %d: %v %+v", i, err, res)
		}
	}
	first := <-slow.C()
	if first.Dropped != 0 {
		t.Fatalf("the first item reports %d dropped", first.Dropped)
	}
	// The next commit reaches the reader with the count of what it lost.
	if _, err := h.Run(ctx, turn.Request{Text: "again", SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	next := collectUntil(t, slow, func(items []host.FeedItem) bool { return len(items) > 0 })
	if next[0].Dropped == 0 {
		t.Fatalf("after a full buffer the next item reports no loss: %s", next[0].Event.Type)
	}
	slow.Close()
	slow.Close()
	for range slow.C() {
	}

	open, err := h.Subscribe(ctx, sid, host.FeedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(feedDeadline)
	for {
		select {
		case _, ok := <-open.C():
			if !ok {
				if _, err := h.Subscribe(ctx, sid, host.FeedOptions{}); err == nil {
					t.Fatal("Subscribe after Close succeeded")
				}
				return
			}
		case <-deadline:
			t.Fatal("Host.Close left the feed open")
		}
	}
}

// A schedule run of the session's core reaches the feed as a notice.
func TestFeedScheduleRunNotice(t *testing.T) {
	h := openScripted(t, demiurgetest.Reply("hi"), demiurgetest.Reply("scheduled answer"))
	ctx := context.Background()
	res, err := h.Run(ctx, turn.Request{Text: "hi", NewSession: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(h.Home().CoreDir(res.CoreID), "agent", "schedules")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "daily.yaml"), []byte("schedule: \"0 9 * * *\"\nprompt: \"daily check-in\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := h.Subscribe(ctx, res.SessionID, host.FeedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := h.RunSchedule(ctx, res.CoreID, "daily"); err != nil {
		t.Fatal(err)
	}
	items := collectUntil(t, f, func(items []host.FeedItem) bool { return hasType(items, demiurge.EvSchedulerCompleted) })
	it := items[len(items)-1]
	text, level, ok := it.Notice()
	if it.Source != host.FeedSchedule || !ok || text != "schedule "+res.CoreID+"/daily run completed" || level != host.NoticeInfo {
		t.Fatalf("schedule item %s %s: %q %s %v", it.Source, it.Event.Type, text, level, ok)
	}
	for _, it := range items {
		if it.Source != host.FeedSchedule {
			t.Fatalf("the schedule run's own session reached the feed: %s %s", it.Source, it.Event.Type)
		}
	}
}
