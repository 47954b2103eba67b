package delivery_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/delivery"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/store"
)

// crashChildEnv names the database the crash child uses.
const crashChildEnv = "DELIVERY_CRASH_CHILD_DB"

// crashingRoute ends the process in the middle of a send, as a crash would.
type crashingRoute struct{}

func (crashingRoute) Deliver(context.Context, demiurge.Outbound) error {
	os.Exit(3)
	return nil
}

// crashChild is the Host process that crashes: it registers a Host,
// enqueues one delivery and dies inside the route.
func crashChild(t *testing.T, path string) {
	ctx := context.Background()
	db := demiurgetest.MustOpenPath(t, path, store.Options{})
	marker, _ := process.StartMarker(os.Getpid())
	host, err := db.StartHost(ctx, store.HostInfo{StartMarker: marker})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureWith(t, db, delivery.Options{HostID: host.ID()})
	f.router.Bind(f.sessionID, crashingRoute{})
	id := f.enqueue(t, f.intent("in flight", demiurge.HistoryPersist))
	f.rt.Dispatch(ctx, id)
	t.Fatal("the route did not crash the process")
}

// A Host that crashes mid-send leaves its delivery sending; reconciliation
// by another Host makes it unknown, and nothing ever sends it again.
func TestCrashMidSendBecomesUnknown(t *testing.T) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(t, path)
		return
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashMidSendBecomesUnknown$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("crash child: %v, want exit status 3; output:\n%s", err, out)
	}

	db := demiurgetest.MustOpenPath(t, path, store.Options{})
	sending, err := db.Deliveries(ctx, demiurge.DeliveryFilter{Status: demiurge.DeliverySending})
	if err != nil || len(sending) != 1 {
		t.Fatalf("sending deliveries after the crash=%d (%v), want 1", len(sending), err)
	}
	id := sending[0].ID
	if w, err := db.WorkItem(ctx, id); err != nil || w.Status != demiurge.WorkSending {
		t.Fatalf("work after the crash=%+v (%v), want sending", w, err)
	}

	// The next Host starts and reconciles.
	host, err := db.StartHost(ctx, store.HostInfo{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := db.Reconcile(ctx, host.ID())
	if err != nil {
		t.Fatal(err)
	}
	if rep.DeliveriesUnknown != 1 {
		t.Fatalf("reconcile report=%+v, want one delivery made unknown", rep)
	}
	d, err := db.Delivery(ctx, id)
	if err != nil || d.Status != demiurge.DeliveryUnknown || d.LastError != store.UnknownDeliveryMessage {
		t.Fatalf("outbox after reconcile=%+v (%v)", d, err)
	}
	if w, _ := db.WorkItem(ctx, id); w.Status != demiurge.WorkUnknown {
		t.Fatalf("work after reconcile=%q, want unknown", w.Status)
	}

	// A live route on the new Host never sees it: not by Dispatch, not by
	// DispatchTurn, not by the retry loop.
	router := delivery.NewRouter()
	route := &recordingRoute{}
	sessionID, _ := d.Payload["session_id"].(string)
	router.Bind(sessionID, route)
	opts := loopOptions()
	opts.Handoff = time.Nanosecond
	rt := delivery.NewRuntime(db, router, opts)
	if s, err := rt.Dispatch(ctx, id); err != nil || s != demiurge.DeliveryUnknown {
		t.Fatalf("Dispatch=%q, %v; want unknown", s, err)
	}
	if rs, err := rt.DispatchTurn(ctx, d.OwnerTurnID); err != nil || len(rs) != 0 {
		t.Fatalf("DispatchTurn=%v, %v; want nothing", rs, err)
	}
	stop := runLoop(t, rt)
	time.Sleep(100 * time.Millisecond)
	stop()
	if n := len(route.outbounds()); n != 0 {
		t.Fatalf("a crashed send was sent again (%d sends)", n)
	}
	// The transcript keeps what the turn said.
	ms, err := db.RecentMessages(ctx, sessionID, demiurge.MessageFilter{})
	if err != nil || len(ms) != 1 || ms[0].Content.Text != "in flight" {
		t.Fatalf("transcript=%+v (%v)", ms, err)
	}
}

// A live send that outlasts its record (reconciliation made it unknown
// meanwhile) keeps that record: the late outcome is not written over it.
func TestLateOutcomeKeepsReconciledRecord(t *testing.T) {
	ctx := context.Background()
	f := newFixtureWith(t, demiurgetest.MustOpenDB(t), delivery.Options{HostID: "host_gone"}) // a Host no one registered
	route := &hangingRoute{release: make(chan struct{})}
	f.router.Bind(f.sessionID, route)
	id := f.enqueue(t, f.intent("late", demiurge.HistoryTransient))
	done := make(chan string, 1)
	go func() {
		s, err := f.rt.Dispatch(ctx, id)
		if err != nil {
			t.Errorf("Dispatch: %v", err)
		}
		done <- s
	}()
	waitStatus(t, f, id, demiurge.DeliverySending)
	if rep, err := f.db.Reconcile(ctx, "host_other"); err != nil || rep.DeliveriesUnknown != 1 {
		t.Fatalf("Reconcile=%+v, %v", rep, err)
	}
	close(route.release)
	if s := <-done; s != demiurge.DeliveryUnknown {
		t.Fatalf("Dispatch=%q, want the reconciled unknown", s)
	}
	if got := terminalEvents(t, f, id); len(got) != 1 || got[0] != demiurge.EvDeliveryUnknown {
		t.Fatalf("terminal events=%v, want one delivery.unknown", got)
	}
}
