package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

func envelope(key, conv, text string) demiurge.InboundEnvelope {
	return demiurge.InboundEnvelope{CoreID: "assistant", Channel: "webhook", EventKey: key,
		ConversationKey: conv, PrincipalKey: "configured-token", Source: "s", Text: text}
}

// The same platform message is accepted once; its receipt names the first
// inbound. A bad envelope commits nothing of its batch.
func TestAcceptInboundDedup(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	r1, err := db.AcceptInbound(ctx, []demiurge.InboundEnvelope{envelope("m1", "webhook:source:a", "hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := db.AcceptInbound(ctx, []demiurge.InboundEnvelope{envelope("m1", "webhook:source:a", "hi again"), envelope("m2", "webhook:source:a", "two")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r2[0], (demiurge.InboxReceipt{InboundID: r1[0].InboundID, Duplicate: true}); got != want {
		t.Fatalf("duplicate receipt %+v, want %+v", got, want)
	}
	if r2[1].Duplicate || r2[1].InboundID == r1[0].InboundID {
		t.Fatalf("second message receipt %+v", r2[1])
	}
	in, err := db.Inbound(ctx, r1[0].InboundID)
	if err != nil {
		t.Fatal(err)
	}
	if in.Text != "hi" || in.Status != demiurge.InboundQueued {
		t.Fatalf("inbound %+v", in)
	}
	bad := envelope("", "webhook:source:a", "x")
	if _, err := db.AcceptInbound(ctx, []demiurge.InboundEnvelope{envelope("m3", "k", "x"), bad}, nil); demiurge.ErrorCode(err) != demiurge.EINVALID {
		t.Fatalf("bad envelope: %v", err)
	}
	all, _ := db.Inbounds(ctx, store.InboundFilter{})
	if len(all) != 2 {
		t.Fatalf("%d inbounds, want 2", len(all))
	}
}

// Only the head of each conversation is claimed; the next is claimable
// once the head is done; a retry waits for its time; a dead letter keeps
// its reason; a stale claim is refused.
func TestClaimInboundsLifecycle(t *testing.T) {
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	self := startHost(t, db, store.HostInfo{})
	rs, err := db.AcceptInbound(ctx, []demiurge.InboundEnvelope{
		envelope("a1", "conv-a", "1"), envelope("a2", "conv-a", "2"), envelope("b1", "conv-b", "1"),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := db.ClaimInbounds(ctx, self.ID(), 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(claimed) != 2 || claimed[0].ID != rs[0].InboundID || claimed[1].ID != rs[2].InboundID {
		t.Fatalf("claimed %v", inboundIDs(claimed))
	}
	if again, _ := db.ClaimInbounds(ctx, self.ID(), 10, nil); len(again) != 0 {
		t.Fatalf("claimed twice: %v", inboundIDs(again))
	}
	a := claimed[0]
	if err := db.StartInbound(ctx, a.ID, "claim_other", "turn_x"); demiurge.ErrorCode(err) != demiurge.ECONFLICT {
		t.Fatalf("stale claim: %v", err)
	}
	if err := db.StartInbound(ctx, a.ID, a.ClaimID, "turn_1"); err != nil {
		t.Fatal(err)
	}
	if err := db.CompleteInbound(ctx, a.ID, a.ClaimID, demiurge.InboundResultTurn, "session_1", "turn_1"); err != nil {
		t.Fatal(err)
	}
	if err := db.CompleteInbound(ctx, a.ID, a.ClaimID, demiurge.InboundResultTurn, "", ""); demiurge.ErrorCode(err) != demiurge.ECONFLICT {
		t.Fatalf("complete twice: %v", err)
	}
	b := claimed[1]
	if err := db.RetryInbound(ctx, b.ID, b.ClaimID, "store is busy", clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	next, _ := db.ClaimInbounds(ctx, self.ID(), 10, nil)
	if len(next) != 1 || next[0].ID != rs[1].InboundID {
		t.Fatalf("after completing a1: %v", inboundIDs(next))
	}
	clock.Advance(time.Minute)
	retried, _ := db.ClaimInbounds(ctx, self.ID(), 10, nil)
	if len(retried) != 1 || retried[0].ID != b.ID || retried[0].Attempts != 2 {
		t.Fatalf("retry: %+v", retried)
	}
	if err := db.DeadLetterInbound(ctx, b.ID, retried[0].ClaimID, "session not found: x"); err != nil {
		t.Fatal(err)
	}
	dead, _ := db.Inbounds(ctx, store.InboundFilter{Status: demiurge.InboundDeadLetter})
	if len(dead) != 1 || dead[0].LastError != "session not found: x" || dead[0].Attempts != 2 {
		t.Fatalf("dead letters %+v", dead)
	}
	counts, _ := db.InboxCounts(ctx)
	if len(counts) != 3 {
		t.Fatalf("counts %+v", counts)
	}
}

// An inbound claimed (or running) by a Host that died is claimed again,
// keeping the turn id that Host reserved; one held by a live Host is not.
func TestClaimInboundsFromGoneHost(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	self := startHost(t, db, store.HostInfo{})
	pid, marker := deadChild(t)
	dead := startHost(t, db, store.HostInfo{PID: pid, StartMarker: marker})
	other := startHost(t, db, store.HostInfo{})
	if _, err := db.AcceptInbound(ctx, []demiurge.InboundEnvelope{envelope("a", "conv-a", "1"), envelope("b", "conv-b", "1")}, nil); err != nil {
		t.Fatal(err)
	}
	byOther, _ := db.ClaimInbounds(ctx, other.ID(), 1, nil)
	byDead, _ := db.ClaimInbounds(ctx, dead.ID(), 1, nil)
	if len(byDead) != 1 || len(byOther) != 1 {
		t.Fatalf("claims %v %v", inboundIDs(byDead), inboundIDs(byOther))
	}
	if err := db.StartInbound(ctx, byDead[0].ID, byDead[0].ClaimID, "turn_reserved"); err != nil {
		t.Fatal(err)
	}
	got, err := db.ClaimInbounds(ctx, self.ID(), 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != byDead[0].ID || got[0].TurnID != "turn_reserved" || got[0].Attempts != 2 {
		t.Fatalf("reclaimed %+v", got)
	}
}

// A channel's poller lease is held by one live Host; the cursor moves only
// under the lease, in the accept's transaction.
func TestChannelLease(t *testing.T) {
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	a := startHost(t, db, store.HostInfo{})
	b := startHost(t, db, store.HostInfo{})
	st := demiurge.ChannelState{CoreID: "assistant", Channel: "telegram", Type: "telegram", State: demiurge.ChannelRunning}
	st.HostID = a.ID()
	if ok, err := db.AcquireChannel(ctx, st, time.Minute); !ok || err != nil {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	st.HostID = b.ID()
	if ok, err := db.AcquireChannel(ctx, st, time.Minute); ok || err != nil {
		t.Fatalf("second gateway acquired a held lease: %v %v", ok, err)
	}
	env := envelope("u1", "telegram:dm:1", "hi")
	if _, err := db.AcceptInbound(ctx, []demiurge.InboundEnvelope{env}, &demiurge.ChannelCursor{CoreID: "assistant", Channel: "telegram", HostID: b.ID(), Cursor: "2"}); demiurge.ErrorCode(err) != demiurge.ECONFLICT {
		t.Fatalf("cursor without the lease: %v", err)
	}
	if all, _ := db.Inbounds(ctx, store.InboundFilter{}); len(all) != 0 {
		t.Fatalf("a refused batch was accepted: %d", len(all))
	}
	if _, err := db.AcceptInbound(ctx, []demiurge.InboundEnvelope{env}, &demiurge.ChannelCursor{CoreID: "assistant", Channel: "telegram", HostID: a.ID(), Cursor: "2"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	if ok, err := db.AcquireChannel(ctx, st, time.Minute); !ok || err != nil {
		t.Fatalf("take over an expired lease: %v %v", ok, err)
	}
	c, err := db.Channel(ctx, "assistant", "telegram")
	if err != nil || c.Cursor != "2" || c.HostID != b.ID() {
		t.Fatalf("channel %+v %v", c, err)
	}
	if err := db.ReleaseChannel(ctx, "assistant", "telegram", b.ID(), demiurge.ChannelStopped, ""); err != nil {
		t.Fatal(err)
	}
	chs, _ := db.Channels(ctx)
	if len(chs) != 1 || chs[0].State != demiurge.ChannelStopped || chs[0].HostID != "" {
		t.Fatalf("channels %+v", chs)
	}
}

func inboundIDs(ins []demiurge.Inbound) []string {
	var out []string
	for _, in := range ins {
		out = append(out, fmt.Sprintf("%s(%s)", in.ID, in.EventKey))
	}
	return out
}
