package delivery_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/delivery"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/session"
	"github.com/demiurge/demiurge/store"
)

// The real RuntimeStore satisfies the port the delivery runtime declares.
var _ delivery.Store = (*store.DB)(nil)

// fixture is a store with one session and one running turn.
type fixture struct {
	db        *store.DB
	router    *delivery.Router
	rt        *delivery.Runtime
	sessions  *session.Runtime
	sessionID string
	turnID    string
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	return newFixtureWith(tb, demiurgetest.MustOpenDB(tb), delivery.Options{HostID: "host_test"})
}

// newFixtureWith is newFixture over db, with a Runtime configured by opts.
func newFixtureWith(tb testing.TB, db *store.DB, opts delivery.Options) *fixture {
	tb.Helper()
	ctx := context.Background()
	sessions := session.NewRuntime(db, session.Options{})
	c := session.CLIConversationKey("assistant")
	s, _, err := sessions.Resolve(ctx, demiurge.SessionRequest{CoreID: "assistant", Channel: c.Channel, ConversationKey: c.Key, Scope: demiurge.OperatorScope("")})
	if err != nil {
		tb.Fatal(err)
	}
	turnID := demiurge.NewID("turn")
	if err := sessions.StartTurn(ctx, demiurge.TurnStart{TurnID: turnID, SessionID: s.ID, CoreID: "assistant"}); err != nil {
		tb.Fatal(err)
	}
	router := delivery.NewRouter()
	return &fixture{
		db: db, router: router, rt: delivery.NewRuntime(db, router, opts),
		sessions: sessions, sessionID: s.ID, turnID: turnID,
	}
}

func (f *fixture) intent(text, policy string) demiurge.DeliveryIntent {
	return demiurge.DeliveryIntent{
		SessionID: f.sessionID, TurnID: f.turnID, Channel: "cli", ConversationKey: "cli:operator:local",
		Source: "local", Text: text, Visible: true, HistoryPolicy: policy,
	}
}

func (f *fixture) enqueue(tb testing.TB, in demiurge.DeliveryIntent) string {
	tb.Helper()
	id, err := f.rt.Enqueue(context.Background(), in)
	if err != nil {
		tb.Fatalf("enqueue: %v", err)
	}
	return id
}

func (f *fixture) outbox(tb testing.TB, id string) demiurge.Delivery {
	tb.Helper()
	d, err := f.db.Delivery(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func (f *fixture) work(tb testing.TB, id string) demiurge.WorkItem {
	tb.Helper()
	w, err := f.db.WorkItem(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// messageEdits returns the session's count of message edits.
func (f *fixture) messageEdits(tb testing.TB) int64 {
	tb.Helper()
	s, err := f.db.Session(context.Background(), f.sessionID)
	if err != nil {
		tb.Fatal(err)
	}
	return s.MessageEdits
}

// transcript returns every message of the session, model-visible or not.
func (f *fixture) transcript(tb testing.TB) []demiurge.Message {
	tb.Helper()
	ms, err := f.db.RecentMessages(context.Background(), f.sessionID, demiurge.MessageFilter{Limit: demiurge.MaxMessageLimit})
	if err != nil {
		tb.Fatal(err)
	}
	return ms
}

func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := demiurge.ErrorCode(err); got != code {
		tb.Fatalf("error code=%q (%v), want %q", got, err, code)
	}
}

func TestEnqueuePersistIsOneBatch(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	id := f.enqueue(t, f.intent("hello", demiurge.HistoryPersist))
	if got, want := demiurge.IDPrefix(id), "delivery"; got != want {
		t.Fatalf("delivery id %q prefix=%q, want %q", id, got, want)
	}
	evs, err := f.db.Events(ctx, demiurge.EventFilter{Limit: demiurge.MaxEventLimit})
	if err != nil {
		t.Fatal(err)
	}
	var batch []demiurge.Event
	for _, e := range evs {
		if e.IdempotencyKey == "delivery:"+id+":message_outbox" {
			batch = append(batch, e)
		}
	}
	if len(batch) != 3 || batch[0].Type != demiurge.EvMessagePersisted || batch[1].Type != demiurge.EvDeliveryQueued || batch[2].Type != demiurge.EvWorkEnqueued {
		t.Fatalf("batch=%v, want message.persisted + delivery.queued + work.enqueued under one key", types(batch))
	}

	d := f.outbox(t, id)
	msgID, _ := d.Payload["message_id"].(string)
	if d.Status != demiurge.DeliveryQueued || d.OwnerTurnID != f.turnID || d.Channel != "cli" ||
		d.Target["conversation_key"] != "cli:operator:local" || msgID == "" ||
		d.Payload["history_policy"] != "persist" || d.Payload["fallback_text"] != "hello" || d.Payload["visible"] != true {
		t.Fatalf("outbox row=%+v", d)
	}
	w := f.work(t, id)
	if w.Kind != delivery.WorkKind || w.Status != demiurge.WorkQueued || w.OwnerSessionID != f.sessionID || w.OwnerTurnID != f.turnID {
		t.Fatalf("work item=%+v", w)
	}
	ms := f.transcript(t)
	if len(ms) != 1 || ms[0].ID != msgID || ms[0].Role != demiurge.RoleAssistant || !ms[0].Content.ModelVisible || ms[0].Content.Text != "hello" {
		t.Fatalf("transcript=%+v", ms)
	}
	h, err := f.sessions.History(ctx, f.sessionID, 0)
	if err != nil || len(h) != 1 {
		t.Fatalf("persisted delivery text missing from history: %v %v", h, err)
	}
}

func TestEnqueuePolicies(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	hidden := f.enqueue(t, f.intent("for people", demiurge.HistoryModelHidden))
	transient := f.enqueue(t, f.intent("passing", demiurge.HistoryTransient))

	ms := f.transcript(t)
	if len(ms) != 1 || ms[0].Content.Text != "for people" || ms[0].Content.ModelVisible {
		t.Fatalf("transcript=%+v: want one model-hidden message", ms)
	}
	if h, _ := f.sessions.History(ctx, f.sessionID, 0); len(h) != 0 {
		t.Fatalf("model_hidden text reached history: %+v", h)
	}
	if d := f.outbox(t, transient); d.Payload["message_id"] != "" || d.Status != demiurge.DeliveryQueued {
		t.Fatalf("transient outbox=%+v", d)
	}
	if d := f.outbox(t, hidden); d.Payload["message_id"] != ms[0].ID {
		t.Fatalf("model_hidden outbox message_id=%v, want %s", d.Payload["message_id"], ms[0].ID)
	}
	if f.work(t, transient).Status != demiurge.WorkQueued {
		t.Fatal("transient delivery has no queued work item")
	}
}

func TestEnqueueValidation(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name string
		mod  func(*demiurge.DeliveryIntent)
		code string
		msg  string
	}{
		{"bad policy", func(in *demiurge.DeliveryIntent) { in.HistoryPolicy = "forever" }, demiurge.EINVALID, "invalid history policy: forever"},
		{"no policy", func(in *demiurge.DeliveryIntent) { in.HistoryPolicy = "" }, demiurge.EINVALID, "delivery history policy is required: persist, model_hidden or transient"},
		{"invisible transient", func(in *demiurge.DeliveryIntent) { in.Visible = false; in.HistoryPolicy = demiurge.HistoryTransient },
			demiurge.EINVALID, "send with visible=False and write_history=False has no effect"},
		{"non-text history", func(in *demiurge.DeliveryIntent) {
			in.Text = ""
			in.Blocks = []demiurge.DeliveryBlock{{Type: demiurge.BlockImage, URI: "artifact://a", Caption: "a cat"}}
		}, demiurge.EINVALID, "non-text send_* with write_history=True requires history_text"},
		{"bad kind", func(in *demiurge.DeliveryIntent) { in.Kind = "shout" }, demiurge.EINVALID, "invalid delivery kind: shout"},
		{"persistent progress", func(in *demiurge.DeliveryIntent) { in.Kind = demiurge.DeliveryKindProgress }, demiurge.EINVALID, "progress deliveries are always transient"},
		{"text and blocks", func(in *demiurge.DeliveryIntent) {
			in.Blocks = []demiurge.DeliveryBlock{{Type: demiurge.BlockText, Text: "y"}}
		}, demiurge.EINVALID, "delivery takes text or blocks, not both"},
		{"bad block", func(in *demiurge.DeliveryIntent) {
			in.Text = ""
			in.Blocks = []demiurge.DeliveryBlock{{Type: "hologram"}}
		}, demiurge.EINVALID, `delivery block 0: unknown block type "hologram"`},
		{"no turn", func(in *demiurge.DeliveryIntent) { in.TurnID = "" }, demiurge.EINVALID, "delivery requires a turn_id"},
		{"missing session", func(in *demiurge.DeliveryIntent) { in.SessionID = "session_missing" }, demiurge.ENOTFOUND, "session not found: session_missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := f.intent("x", demiurge.HistoryPersist)
			tt.mod(&in)
			_, err := f.rt.Enqueue(context.Background(), in)
			wantCode(t, err, tt.code)
			if got := err.Error(); got != tt.msg {
				t.Fatalf("error=%q, want %q", got, tt.msg)
			}
		})
	}
	if n, err := f.db.Deliveries(context.Background(), demiurge.DeliveryFilter{}); err != nil || len(n) != 0 {
		t.Fatalf("rejected intents left %d outbox rows (%v)", len(n), err)
	}
	// A media send with history text and a caption is fine; its fallback
	// text is the caption.
	in := f.intent("", demiurge.HistoryPersist)
	in.Blocks = []demiurge.DeliveryBlock{{Type: demiurge.BlockText, Text: "look"}, {Type: demiurge.BlockImage, URI: "artifact://a", Caption: "a cat"}}
	in.HistoryText = "[image: a cat]"
	id := f.enqueue(t, in)
	if d := f.outbox(t, id); d.Payload["fallback_text"] != "look\n\na cat" || d.Payload["history_text"] != "[image: a cat]" {
		t.Fatalf("media outbox payload=%v", d.Payload)
	}
}

func TestDispatchSent(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	route := &recordingRoute{}
	f.router.Bind(f.sessionID, route)
	id := f.enqueue(t, f.intent("hello", demiurge.HistoryPersist))

	status, err := f.rt.Dispatch(ctx, id)
	if err != nil || status != demiurge.DeliverySent {
		t.Fatalf("Dispatch=%q, %v; want sent", status, err)
	}
	outs := route.outbounds()
	if len(outs) != 1 {
		t.Fatalf("route got %d outbounds, want 1", len(outs))
	}
	o := outs[0]
	if o.DeliveryID != id || o.SessionID != f.sessionID || o.TurnID != f.turnID || o.Text != "hello" || !o.Visible ||
		o.Kind != demiurge.DeliveryKindMessage || o.Channel != "cli" || o.ConversationKey != "cli:operator:local" ||
		len(o.Blocks) != 1 || o.Blocks[0].Text != "hello" {
		t.Fatalf("outbound=%+v", o)
	}
	d := f.outbox(t, id)
	if d.Status != demiurge.DeliverySent || d.Attempts != 1 || d.SentAt.IsZero() || d.LastError != "" {
		t.Fatalf("outbox=%+v", d)
	}
	if w := f.work(t, id); w.Status != demiurge.WorkSucceeded || w.CompletedAt.IsZero() {
		t.Fatalf("work=%+v", w)
	}
	// Dispatching again never sends again.
	status, err = f.rt.Dispatch(ctx, id)
	if err != nil || status != demiurge.DeliverySent || len(route.outbounds()) != 1 {
		t.Fatalf("second Dispatch=%q, %v, sends=%d; want sent and no new send", status, err, len(route.outbounds()))
	}
}

func TestDispatchUnrouted(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	id := f.enqueue(t, f.intent("nobody listens", demiurge.HistoryTransient))
	status, err := f.rt.Dispatch(ctx, id)
	if err != nil || status != demiurge.DeliveryUnrouted {
		t.Fatalf("Dispatch=%q, %v; want unrouted", status, err)
	}
	d := f.outbox(t, id)
	if d.Status != demiurge.DeliveryUnrouted || d.LastError != delivery.NoInteractiveRoute || d.Attempts != 1 {
		t.Fatalf("outbox=%+v", d)
	}
	if w := f.work(t, id); w.Status != demiurge.WorkSucceeded {
		t.Fatalf("work status=%q, want succeeded", w.Status)
	}
}

// A permanent route failure ends the delivery failed and annotates its
// history message; the message text stays what the turn said.
func TestDispatchPermanentFailureAnnotatesHistory(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	route := &recordingRoute{fail: demiurge.Errorf(demiurge.EUNAUTHORIZED, "chat adapter refused the message")}
	f.router.Bind(f.sessionID, route)
	in := f.intent("the answer is 42", demiurge.HistoryPersist)
	in.FailureHistoryText = "[not delivered] the answer is 42"
	id := f.enqueue(t, in)
	edits := f.messageEdits(t)

	status, err := f.rt.Dispatch(ctx, id)
	if err != nil || status != demiurge.DeliveryFailed {
		t.Fatalf("Dispatch=%q, %v; want failed without error", status, err)
	}
	if got := len(route.outbounds()); got != 1 {
		t.Fatalf("route calls=%d, want 1 (a permanent failure is not retried)", got)
	}
	d := f.outbox(t, id)
	if d.Status != demiurge.DeliveryFailed || d.LastError != "chat adapter refused the message" || d.Attempts != 1 {
		t.Fatalf("outbox=%+v", d)
	}
	if w := f.work(t, id); w.Status != demiurge.WorkFailed || w.LastError != "chat adapter refused the message" || w.CompletedAt.IsZero() {
		t.Fatalf("work=%+v", w)
	}
	ms := f.transcript(t)
	if len(ms) != 1 {
		t.Fatalf("transcript=%+v, want one message", ms)
	}
	c := ms[0].Content
	if c.Text != "the answer is 42" || !c.ModelVisible || c.Source != "local" || c.Kind != "message" {
		t.Fatalf("history message content changed: %+v", c)
	}
	for k, want := range map[string]any{
		"delivery_status":       demiurge.DeliveryFailed,
		"delivery_error":        "chat adapter refused the message",
		"delivery_failure_text": "[not delivered] the answer is 42",
		"delivery_id":           id,
		"history_policy":        demiurge.HistoryPersist,
	} {
		if got := c.Metadata[k]; got != want {
			t.Fatalf("metadata[%s]=%v, want %v (metadata %v)", k, got, want, c.Metadata)
		}
	}
	if got := f.messageEdits(t); got != edits+1 {
		t.Fatalf("session message_edits=%d, want %d: cached history windows must see the annotation", got, edits+1)
	}
	if updates, err := f.db.Events(ctx, demiurge.EventFilter{Type: demiurge.EvMessageUpdated}); err != nil || len(updates) != 0 {
		t.Fatalf("message.updated events=%d (%v): the body must not be rewritten", len(updates), err)
	}
	// The turn is not failed by a delivery failure.
	if tr, _ := f.db.Turn(ctx, f.turnID); tr.Status != demiurge.TurnRunning {
		t.Fatalf("turn status=%q after a failed delivery, want running", tr.Status)
	}
}

func TestDispatchFailureDefaultsAndSecrets(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	// An uncoded route error may carry a credential: only "internal error"
	// reaches the rows.
	route := &recordingRoute{fail: errors.New("POST https://api.example/bot123456:SECRET/send: EOF")}
	f.router.Bind(f.sessionID, route)
	id := f.enqueue(t, f.intent("hi", demiurge.HistoryModelHidden))
	status, err := f.rt.Dispatch(ctx, id)
	if err != nil || status != demiurge.DeliveryFailed {
		t.Fatalf("Dispatch=%q, %v", status, err)
	}
	if d := f.outbox(t, id); d.LastError != "internal error" {
		t.Fatalf("last_error=%q, want internal error", d.LastError)
	}
	if w := f.work(t, id); w.LastError != "internal error" {
		t.Fatalf("work last_error=%q", w.LastError)
	}
	// Failure history text defaults to the history text (so it is not
	// repeated in the metadata); model visibility follows the policy.
	ms := f.transcript(t)
	if len(ms) != 1 || ms[0].Content.Text != "hi" || ms[0].Content.ModelVisible || ms[0].Content.Metadata["delivery_status"] != "failed" ||
		ms[0].Content.Metadata["delivery_error"] != "internal error" {
		t.Fatalf("transcript=%+v", ms)
	}
	if _, ok := ms[0].Content.Metadata["delivery_failure_text"]; ok {
		t.Fatalf("metadata=%v: a failure text equal to the body is not repeated", ms[0].Content.Metadata)
	}
}

func TestDispatchCancelled(t *testing.T) {
	f := newFixture(t)
	route := &recordingRoute{block: true, entered: make(chan struct{})}
	f.router.Bind(f.sessionID, route)
	id := f.enqueue(t, f.intent("slow", demiurge.HistoryPersist))

	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		status string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		s, err := f.rt.Dispatch(ctx, id)
		done <- result{s, err}
	}()
	select {
	case <-route.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("route never called")
	}
	if d := f.outbox(t, id); d.Status != demiurge.DeliverySending {
		t.Fatalf("outbox while sending=%q, want sending", d.Status)
	}
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Dispatch did not return after cancel")
	}
	if r.status != demiurge.DeliveryFailed {
		t.Fatalf("status=%q, want failed", r.status)
	}
	wantCode(t, r.err, demiurge.ECANCELED)
	d := f.outbox(t, id)
	if d.Status != demiurge.DeliveryFailed || d.LastError != delivery.Cancelled {
		t.Fatalf("outbox=%+v, want failed %q", d, delivery.Cancelled)
	}
	if w := f.work(t, id); w.Status != demiurge.WorkFailed || w.LastError != delivery.Cancelled {
		t.Fatalf("work=%+v", w)
	}

	// A context cancelled before dispatch claims nothing.
	id2 := f.enqueue(t, f.intent("never", demiurge.HistoryTransient))
	_, err := f.rt.Dispatch(ctx, id2)
	wantCode(t, err, demiurge.ECANCELED)
	if d := f.outbox(t, id2); d.Status != demiurge.DeliveryQueued {
		t.Fatalf("outbox after pre-cancelled dispatch=%q, want queued", d.Status)
	}
	if w := f.work(t, id2); w.Status != demiurge.WorkQueued {
		t.Fatalf("work after pre-cancelled dispatch=%q, want queued", w.Status)
	}
}

func TestDispatchClaimRefused(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	route := &recordingRoute{}
	f.router.Bind(f.sessionID, route)
	id := f.enqueue(t, f.intent("held", demiurge.HistoryTransient))
	if _, ok, err := f.db.ClaimWork(ctx, id, "someone.else", time.Minute); err != nil || !ok {
		t.Fatalf("pre-claim: %v %v", ok, err)
	}
	status, err := f.rt.Dispatch(ctx, id)
	if err != nil || status != demiurge.DeliveryUnknown {
		t.Fatalf("Dispatch=%q, %v; want unknown", status, err)
	}
	if len(route.outbounds()) != 0 {
		t.Fatal("a delivery whose claim was refused was sent")
	}
	if d := f.outbox(t, id); d.Status != demiurge.DeliveryQueued {
		t.Fatalf("outbox=%q, want queued (nothing recorded)", d.Status)
	}
}

func TestDispatchRouteOfOtherSessionRefused(t *testing.T) {
	f := newFixture(t)
	other := &recordingRoute{}
	token := f.router.Bind("session_other", other)
	ctx := demiurge.WithRouteToken(context.Background(), token)
	id := f.enqueue(t, f.intent("private", demiurge.HistoryTransient))
	status, err := f.rt.Dispatch(ctx, id)
	if err != nil || status != demiurge.DeliveryFailed {
		t.Fatalf("Dispatch=%q, %v; want failed", status, err)
	}
	if len(other.outbounds()) != 0 {
		t.Fatal("another session's route received the outbound")
	}
	want := "route bound to session `session_other` received outbound for `" + f.sessionID + "`"
	if d := f.outbox(t, id); d.LastError != want {
		t.Fatalf("last_error=%q, want %q", d.LastError, want)
	}
}

func TestDispatchNeverSendsTwice(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	route := &recordingRoute{}
	f.router.Bind(f.sessionID, route)

	// Many dispatchers race for one delivery: one send.
	id := f.enqueue(t, f.intent("once", demiurge.HistoryTransient))
	const n = 8
	statuses := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rt := delivery.NewRuntime(f.db, f.router, delivery.Options{})
			s, err := rt.Dispatch(ctx, id)
			if err != nil {
				t.Errorf("dispatcher %d: %v", i, err)
			}
			statuses[i] = s
		}()
	}
	wg.Wait()
	if got := len(route.outbounds()); got != 1 {
		t.Fatalf("sends=%d under %d racing dispatchers, want 1 (statuses %v)", got, n, statuses)
	}
	for i, s := range statuses {
		switch s {
		case demiurge.DeliverySent, demiurge.DeliveryUnknown, demiurge.DeliverySending:
		default:
			t.Fatalf("dispatcher %d status=%q", i, s)
		}
	}

	// A row left sending by a crashed Host is never picked up again, even
	// after its claim's lease has run out.
	id2 := f.enqueue(t, f.intent("crashed mid-send", demiurge.HistoryTransient))
	item, ok, err := f.db.ClaimWork(ctx, id2, delivery.OwnerID, time.Millisecond)
	if err != nil || !ok {
		t.Fatal(err)
	}
	if _, err := f.db.Append(ctx, []demiurge.Event{{AggregateType: demiurge.AggDelivery, AggregateID: id2,
		Type: demiurge.EvDeliverySending, Payload: []byte(`{"attempts":1,"status":"sending"}`)}}, "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.TransitionWork(ctx, id2, item.ClaimID, demiurge.WorkSending, demiurge.WorkFields{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // let the 1 ms lease lapse
	before := len(route.outbounds())
	status, err := f.rt.Dispatch(ctx, id2)
	if err != nil || status != demiurge.DeliverySending {
		t.Fatalf("Dispatch of a crashed send=%q, %v; want its status left as sending", status, err)
	}
	// The work item alone in sending (a crash between the two records) is
	// not re-sent either.
	id3 := f.enqueue(t, f.intent("half recorded", demiurge.HistoryTransient))
	item, _, err = f.db.ClaimWork(ctx, id3, delivery.OwnerID, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.TransitionWork(ctx, id3, item.ClaimID, demiurge.WorkSending, demiurge.WorkFields{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	status, err = f.rt.Dispatch(ctx, id3)
	if err != nil || status != demiurge.DeliveryUnknown {
		t.Fatalf("Dispatch with work in sending=%q, %v; want unknown", status, err)
	}
	if got := len(route.outbounds()); got != before {
		t.Fatalf("a crashed send was sent again (%d → %d sends)", before, got)
	}
}

func TestDispatchTurnInOrder(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	route := &recordingRoute{}
	f.router.Bind(f.sessionID, route)
	var ids []string
	for _, text := range []string{"one", "two", "three"} {
		ids = append(ids, f.enqueue(t, f.intent(text, demiurge.HistoryPersist)))
	}
	results, err := f.rt.DispatchTurn(ctx, f.turnID)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 {
		t.Fatalf("results=%v, want 3", results)
	}
	outs := route.outbounds()
	for i, want := range []string{"one", "two", "three"} {
		if outs[i].Text != want || results[i].DeliveryID != ids[i] || results[i].Status != demiurge.DeliverySent {
			t.Fatalf("dispatch %d: text %q result %+v, want %q sent in creation order", i, outs[i].Text, results[i], want)
		}
	}
	if again, err := f.rt.DispatchTurn(ctx, f.turnID); err != nil || len(again) != 0 {
		t.Fatalf("second DispatchTurn=%v, %v; want nothing left", again, err)
	}
}

func types(evs []demiurge.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func TestDispatchInvisibleNeverReachesRoute(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	route := &recordingRoute{}
	f.router.Bind(f.sessionID, route)
	in := f.intent("remember this quietly", demiurge.HistoryPersist)
	in.Visible = false
	id := f.enqueue(t, in)
	status, err := f.rt.Dispatch(ctx, id)
	if err != nil || status != demiurge.DeliveryUnrouted {
		t.Fatalf("Dispatch=%q, %v; want unrouted", status, err)
	}
	if len(route.outbounds()) != 0 {
		t.Fatal("an invisible delivery reached the route")
	}
	if d := f.outbox(t, id); d.LastError != delivery.NotVisible {
		t.Fatalf("last_error=%q, want %q", d.LastError, delivery.NotVisible)
	}
	ms := f.transcript(t)
	if len(ms) != 1 || ms[0].Visible || ms[0].Content.Text != "remember this quietly" {
		t.Fatalf("transcript=%+v: want one hidden history message", ms)
	}
}
