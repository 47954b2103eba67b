package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// queueDelivery appends delivery.queued for id (session session_1) and,
// when work is set, its delivery.send work item with next_attempt_at.
func queueDelivery(tb testing.TB, db *store.DB, id string, work bool, next time.Time) {
	tb.Helper()
	evs := []demiurge.Event{ev(demiurge.AggDelivery, id, demiurge.EvDeliveryQueued, map[string]any{
		"owner_turn_id": "turn_1", "channel": "cli",
		"payload": map[string]any{"session_id": "session_1", "message_id": "", "history_text": "hi"}})}
	if work {
		p := map[string]any{"kind": demiurge.WorkKindDeliverySend, "owner_session_id": "session_1", "payload": map[string]any{"delivery_id": id}}
		if !next.IsZero() {
			p["next_attempt_at"] = next
		}
		evs = append(evs, ev(demiurge.AggWork, id, demiurge.EvWorkEnqueued, p))
	}
	mustAppend(tb, db, "", evs...)
}

func mustWork(tb testing.TB, db *store.DB, id string) demiurge.WorkItem {
	tb.Helper()
	w, err := db.WorkItem(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

func mustDelivery(tb testing.TB, db *store.DB, id string) demiurge.Delivery {
	tb.Helper()
	d, err := db.Delivery(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func TestStartDeliverySendDirect(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		setup   func(t *testing.T, db *store.DB, clock *demiurgetest.Clock, id string)
		started bool
		status  string // outbox status afterwards
	}{
		{"queued in its handoff window", func(t *testing.T, db *store.DB, c *demiurgetest.Clock, id string) {
			queueDelivery(t, db, id, true, c.Now().Add(time.Hour))
		}, true, "sending"},
		{"work item missing", func(t *testing.T, db *store.DB, c *demiurgetest.Clock, id string) {
			queueDelivery(t, db, id, false, time.Time{})
		}, true, "sending"},
		{"retry not due", func(t *testing.T, db *store.DB, c *demiurgetest.Clock, id string) {
			queueDelivery(t, db, id, true, time.Time{})
			w, _, _ := db.ClaimWork(ctx, id, "w", time.Minute)
			if _, err := db.TransitionWork(ctx, id, w.ClaimID, demiurge.WorkFailed, demiurge.WorkFields{RetryAt: c.Now().Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}, false, "queued"},
		{"retry due", func(t *testing.T, db *store.DB, c *demiurgetest.Clock, id string) {
			queueDelivery(t, db, id, true, time.Time{})
			w, _, _ := db.ClaimWork(ctx, id, "w", time.Minute)
			if _, err := db.TransitionWork(ctx, id, w.ClaimID, demiurge.WorkFailed, demiurge.WorkFields{RetryAt: c.Now().Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
			c.Advance(time.Minute)
		}, true, "sending"},
		{"claimed under a live lease", func(t *testing.T, db *store.DB, c *demiurgetest.Clock, id string) {
			queueDelivery(t, db, id, true, time.Time{})
			db.ClaimWork(ctx, id, "w", time.Minute)
		}, false, "queued"},
		{"claim lapsed", func(t *testing.T, db *store.DB, c *demiurgetest.Clock, id string) {
			queueDelivery(t, db, id, true, time.Time{})
			db.ClaimWork(ctx, id, "w", time.Minute)
			c.Advance(2 * time.Minute)
		}, true, "sending"},
		{"work sending", func(t *testing.T, db *store.DB, c *demiurgetest.Clock, id string) {
			queueDelivery(t, db, id, true, time.Time{})
			w, _, _ := db.ClaimWork(ctx, id, "w", time.Millisecond)
			db.TransitionWork(ctx, id, w.ClaimID, demiurge.WorkSending, demiurge.WorkFields{})
			c.Advance(time.Hour)
		}, false, "queued"},
		{"outbox already sent", func(t *testing.T, db *store.DB, c *demiurgetest.Clock, id string) {
			queueDelivery(t, db, id, true, time.Time{})
			mustAppend(t, db, "", ev(demiurge.AggDelivery, id, demiurge.EvDeliverySent, nil))
		}, false, "sent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newClock()
			db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
			const id = "delivery_1"
			tt.setup(t, db, clock, id)
			before, _ := db.WorkItem(ctx, id)
			d, w, started, err := db.StartDeliverySend(ctx, id, "", "host.delivery_runtime", "host_1", 90*time.Second)
			if err != nil || started != tt.started {
				t.Fatalf("StartDeliverySend started=%v, %v; want %v", started, err, tt.started)
			}
			if d.Status != tt.status || mustDelivery(t, db, id).Status != tt.status {
				t.Fatalf("outbox status=%q, want %q", d.Status, tt.status)
			}
			if !started {
				if after, _ := db.WorkItem(ctx, id); after.Status != before.Status || after.ClaimID != before.ClaimID {
					t.Fatalf("work changed without a start: %+v → %+v", before, after)
				}
				return
			}
			if w.Status != demiurge.WorkSending || w.ClaimID == "" || w.ClaimID == before.ClaimID ||
				w.OwnerID != "host.delivery_runtime" || w.Attempts != before.Attempts+1 || !w.NextAttemptAt.IsZero() ||
				!w.LeaseExpiresAt.Equal(clock.Now().Add(90*time.Second)) {
				t.Fatalf("work=%+v (before %+v)", w, before)
			}
			if d.Attempts != w.Attempts {
				t.Fatalf("outbox attempts=%d, work attempts=%d", d.Attempts, w.Attempts)
			}
			var host string
			if err := rawDB(t, db.OpenedWith()).QueryRow(`SELECT host_id FROM outbox WHERE delivery_id = ?`, id).Scan(&host); err != nil || host != "host_1" {
				t.Fatalf("outbox host_id=%q (%v), want host_1", host, err)
			}
			// Started once: a second start is refused.
			if _, _, again, err := db.StartDeliverySend(ctx, id, "", "host.delivery_runtime", "", time.Minute); err != nil || again {
				t.Fatalf("second start=%v, %v; want refused", again, err)
			}
		})
	}
}

func TestStartDeliverySendWithClaim(t *testing.T) {
	ctx := context.Background()
	const owner = "host.delivery_runtime"
	claimOne := func(t *testing.T, db *store.DB) demiurge.WorkItem {
		t.Helper()
		items, err := db.ClaimDueWork(ctx, demiurge.WorkKindDeliverySend, owner, time.Minute, 1)
		if err != nil || len(items) != 1 {
			t.Fatalf("ClaimDueWork=%v, %v", items, err)
		}
		return items[0]
	}

	t.Run("its claim starts it", func(t *testing.T) {
		db := demiurgetest.MustOpenDB(t)
		queueDelivery(t, db, "delivery_1", true, time.Time{})
		c := claimOne(t, db)
		if _, _, ok, err := db.StartDeliverySend(ctx, "delivery_1", "claim_other", owner, "", time.Minute); err != nil || ok {
			t.Fatalf("start with a foreign claim=%v, %v; want refused", ok, err)
		}
		_, w, ok, err := db.StartDeliverySend(ctx, "delivery_1", c.ClaimID, owner, "", time.Minute)
		if err != nil || !ok || w.Status != demiurge.WorkSending || w.ClaimID != c.ClaimID || w.Attempts != 1 {
			t.Fatalf("start=%v, %v, work %+v", ok, err, w)
		}
	})

	settled := []struct{ outbox, work string }{
		{demiurge.DeliverySent, demiurge.WorkSucceeded},
		{demiurge.DeliveryUnrouted, demiurge.WorkSucceeded},
		{demiurge.DeliveryFailed, demiurge.WorkFailed},
		{demiurge.DeliveryUnknown, demiurge.WorkUnknown},
		{demiurge.DeliverySending, demiurge.WorkUnknown},
	}
	for _, tt := range settled {
		t.Run("outbox "+tt.outbox, func(t *testing.T) {
			db := demiurgetest.MustOpenDB(t)
			queueDelivery(t, db, "delivery_1", true, time.Time{})
			mustAppend(t, db, "", ev(demiurge.AggDelivery, "delivery_1", "delivery."+tt.outbox, map[string]any{"last_error": "earlier"}))
			c := claimOne(t, db)
			_, w, ok, err := db.StartDeliverySend(ctx, "delivery_1", c.ClaimID, owner, "", time.Minute)
			if err != nil || ok {
				t.Fatalf("start=%v, %v; want not started", ok, err)
			}
			if w.Status != tt.work || w.LastError != "earlier" {
				t.Fatalf("work=%+v, want %s", w, tt.work)
			}
			if items, _ := db.ClaimDueWork(ctx, demiurge.WorkKindDeliverySend, owner, time.Minute, 1); len(items) != 0 {
				t.Fatalf("a settled item was claimed again: %+v", items)
			}
		})
	}

	t.Run("outbox row missing", func(t *testing.T) {
		db := demiurgetest.MustOpenDB(t)
		enqueue(t, db, "delivery_ghost", demiurge.WorkKindDeliverySend)
		c := claimOne(t, db)
		_, _, ok, err := db.StartDeliverySend(ctx, "delivery_ghost", c.ClaimID, owner, "", time.Minute)
		wantCode(t, err, demiurge.ENOTFOUND)
		if ok || err.Error() != "delivery not found: delivery_ghost" {
			t.Fatalf("start=%v, %v", ok, err)
		}
		if w := mustWork(t, db, "delivery_ghost"); w.Status != demiurge.WorkFailed || w.LastError != "delivery not found: delivery_ghost" {
			t.Fatalf("work=%+v, want failed", w)
		}
	})
}

func TestFinishDeliverySend(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		status, lastErr string
		retry           bool
		workStatus      string
		final           bool // work completed_at set
	}{
		{demiurge.DeliverySent, "", false, demiurge.WorkSucceeded, true},
		{demiurge.DeliveryUnrouted, "no_interactive_route", false, demiurge.WorkSucceeded, true},
		{demiurge.DeliveryFailed, "refused", false, demiurge.WorkFailed, true},
		{demiurge.DeliveryUnknown, "timed out", false, demiurge.WorkUnknown, false},
		{demiurge.DeliveryQueued, "offline", true, demiurge.WorkRetryScheduled, false},
	}
	for _, tt := range tests {
		t.Run(tt.status, func(t *testing.T) {
			clock := newClock()
			db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
			queueDelivery(t, db, "delivery_1", true, time.Time{})
			_, w, ok, err := db.StartDeliverySend(ctx, "delivery_1", "", "o", "", time.Minute)
			if err != nil || !ok {
				t.Fatal(ok, err)
			}
			var retryAt time.Time
			if tt.retry {
				retryAt = clock.Now().Add(4 * time.Second)
			}
			wantCode(t, func() error {
				_, err := db.FinishDeliverySend(ctx, "delivery_1", "claim_stale", tt.status, tt.lastErr, retryAt)
				return err
			}(), demiurge.ECONFLICT)

			d, err := db.FinishDeliverySend(ctx, "delivery_1", w.ClaimID, tt.status, tt.lastErr, retryAt)
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != tt.status || d.LastError != tt.lastErr || d.Attempts != 1 || (tt.status == demiurge.DeliverySent) == d.SentAt.IsZero() {
				t.Fatalf("outbox=%+v", d)
			}
			got := mustWork(t, db, "delivery_1")
			if got.Status != tt.workStatus || got.LastError != tt.lastErr || got.CompletedAt.IsZero() == tt.final {
				t.Fatalf("work=%+v, want %s", got, tt.workStatus)
			}
			if tt.retry && (got.ClaimID != "" || !got.NextAttemptAt.Equal(retryAt)) {
				t.Fatalf("retry work=%+v, want claim cleared and next attempt %v", got, retryAt)
			}
			// An outcome is recorded once.
			_, err = db.FinishDeliverySend(ctx, "delivery_1", w.ClaimID, demiurge.DeliverySent, "", time.Time{})
			wantCode(t, err, demiurge.ECONFLICT)
		})
	}

	t.Run("bad outcomes write nothing", func(t *testing.T) {
		db := demiurgetest.MustOpenDB(t)
		queueDelivery(t, db, "delivery_1", true, time.Time{})
		_, w, _, _ := db.StartDeliverySend(ctx, "delivery_1", "", "o", "", time.Minute)
		_, err := db.FinishDeliverySend(ctx, "delivery_1", w.ClaimID, "delivered", "", time.Time{})
		wantCode(t, err, demiurge.EINVALID)
		_, err = db.FinishDeliverySend(ctx, "delivery_1", w.ClaimID, demiurge.DeliveryQueued, "offline", time.Time{})
		wantCode(t, err, demiurge.EINVALID)
		if d := mustDelivery(t, db, "delivery_1"); d.Status != demiurge.DeliverySending {
			t.Fatalf("outbox=%q after refused outcomes, want sending", d.Status)
		}
		_, err = db.FinishDeliverySend(ctx, "delivery_missing", w.ClaimID, demiurge.DeliverySent, "", time.Time{})
		wantCode(t, err, demiurge.ENOTFOUND)
	})
}

func TestDeliveryFailedAnnotatesMessage(t *testing.T) {
	ctx := context.Background()
	db := demiurgetest.MustOpenDB(t)
	createSession(t, db, "session_1", map[string]any{"owner": operatorOwner()})
	persist := func(id string, content map[string]any) {
		mustAppend(t, db, "", ev(demiurge.AggMessage, id, demiurge.EvMessagePersisted, map[string]any{
			"session_id": "session_1", "role": demiurge.RoleAssistant, "content": content}))
	}
	persist("msg_meta", map[string]any{"text": "the answer is 42", "model_visible": false,
		"metadata": map[string]any{"delivery_id": "delivery_1", "delivery_status": "queued"}})
	persist("msg_bare", map[string]any{"text": "no metadata"})
	persist("msg_odd", map[string]any{"text": "odd metadata", "metadata": "not an object"})
	persist("msg_corrupt", map[string]any{"text": "x"})
	if _, err := rawDB(t, db.OpenedWith()).Exec(`UPDATE messages SET content_json = '{broken' WHERE message_id = 'msg_corrupt'`); err != nil {
		t.Fatal(err)
	}
	edits := func() int64 {
		s, err := db.Session(ctx, "session_1")
		if err != nil {
			t.Fatal(err)
		}
		return s.MessageEdits
	}
	fail := func(deliveryID string, p map[string]any) {
		mustAppend(t, db, "", ev(demiurge.AggDelivery, deliveryID, demiurge.EvDeliveryQueued, nil),
			ev(demiurge.AggDelivery, deliveryID, demiurge.EvDeliveryFailed, p))
	}
	message := func(id string) demiurge.Message {
		ms, err := db.RecentMessages(ctx, "session_1", demiurge.MessageFilter{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.ID == id {
				return m
			}
		}
		t.Fatalf("message %s not found", id)
		return demiurge.Message{}
	}

	fail("delivery_1", map[string]any{"last_error": "refused", "message_id": "msg_meta", "failure_text": "[not delivered]"})
	m := message("msg_meta")
	if m.Content.Text != "the answer is 42" || m.Content.ModelVisible {
		t.Fatalf("content changed: %+v", m.Content)
	}
	want := map[string]any{"delivery_id": "delivery_1", "delivery_status": "failed", "delivery_error": "refused", "delivery_failure_text": "[not delivered]"}
	for k, v := range want {
		if m.Content.Metadata[k] != v {
			t.Fatalf("metadata=%v, want %v", m.Content.Metadata, want)
		}
	}
	if got := edits(); got != 1 {
		t.Fatalf("message_edits=%d, want 1", got)
	}

	fail("delivery_2", map[string]any{"last_error": "gone", "message_id": "msg_bare"})
	if m := message("msg_bare"); m.Content.Text != "no metadata" || m.Content.Metadata["delivery_error"] != "gone" ||
		m.Content.Metadata["delivery_status"] != "failed" || m.Content.Metadata["delivery_failure_text"] != nil {
		t.Fatalf("bare message=%+v", m.Content)
	}
	fail("delivery_3", map[string]any{"last_error": "odd", "message_id": "msg_odd"})
	if m := message("msg_odd"); m.Content.Text != "odd metadata" || m.Content.Metadata["delivery_error"] != "odd" {
		t.Fatalf("odd message=%+v", m.Content)
	}
	before := edits()
	// A corrupt row, a missing message and a failure without a message are
	// recorded without touching any message.
	fail("delivery_4", map[string]any{"last_error": "x", "message_id": "msg_corrupt"})
	fail("delivery_5", map[string]any{"last_error": "x", "message_id": "msg_missing"})
	fail("delivery_6", map[string]any{"last_error": "x"})
	if got := edits(); got != before {
		t.Fatalf("message_edits=%d, want %d", got, before)
	}
	var raw string
	if err := rawDB(t, db.OpenedWith()).QueryRow(`SELECT content_json FROM messages WHERE message_id = 'msg_corrupt'`).Scan(&raw); err != nil || raw != "{broken" {
		t.Fatalf("corrupt row=%q (%v)", raw, err)
	}
	for _, id := range []string{"delivery_4", "delivery_5", "delivery_6"} {
		if d := mustDelivery(t, db, id); d.Status != demiurge.DeliveryFailed {
			t.Fatalf("%s=%q, want failed", id, d.Status)
		}
	}
}
