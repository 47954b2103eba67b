package delivery_test

import (
	"context"
	"sync"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/delivery"
)

// recordingRoute records every outbound it is given; fail, when set, is
// returned instead; block, when set, makes Deliver wait for ctx to end.
type recordingRoute struct {
	mu    sync.Mutex // guards got
	got   []demiurge.Outbound
	fail  error
	block bool
	// entered is closed when the first Deliver starts (block mode).
	entered chan struct{}
	once    sync.Once
}

func (r *recordingRoute) Deliver(ctx context.Context, out demiurge.Outbound) error {
	r.mu.Lock()
	r.got = append(r.got, out)
	r.mu.Unlock()
	if r.block {
		r.once.Do(func() { close(r.entered) })
		<-ctx.Done()
		return ctx.Err()
	}
	return r.fail
}

func (r *recordingRoute) outbounds() []demiurge.Outbound {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]demiurge.Outbound(nil), r.got...)
}

func TestRouterPicksNewestRoute(t *testing.T) {
	ctx := context.Background()
	router := delivery.NewRouter()
	res, err := router.Deliver(ctx, demiurge.Outbound{SessionID: "s1", Text: "x"})
	if err != nil || res != delivery.Unrouted {
		t.Fatalf("no route: %v %v, want unrouted", res, err)
	}
	older, newer := &recordingRoute{}, &recordingRoute{}
	tOld := router.Bind("s1", older)
	tNew := router.Bind("s1", newer)
	if tOld == tNew || tOld == "" {
		t.Fatalf("tokens %q %q must be distinct and non-empty", tOld, tNew)
	}
	if res, err := router.Deliver(ctx, demiurge.Outbound{SessionID: "s1", Text: "a"}); err != nil || res != delivery.Delivered {
		t.Fatalf("deliver: %v %v", res, err)
	}
	if len(newer.outbounds()) != 1 || len(older.outbounds()) != 0 {
		t.Fatalf("newer got %d, older got %d: want the newest route", len(newer.outbounds()), len(older.outbounds()))
	}
	router.Unbind(tNew)
	if _, err := router.Deliver(ctx, demiurge.Outbound{SessionID: "s1", Text: "b"}); err != nil || len(older.outbounds()) != 1 {
		t.Fatalf("after unbind the older route should receive: %v, %d", err, len(older.outbounds()))
	}
	router.Unbind(tOld)
	router.Unbind(tOld) // unknown tokens are ignored
	if router.Bound("s1") {
		t.Fatal("Bound(s1) after unbinding everything")
	}
	if res, _ := router.Deliver(ctx, demiurge.Outbound{SessionID: "s1"}); res != delivery.Unrouted {
		t.Fatalf("after unbind: %v, want unrouted", res)
	}
	// Another session's route is never used.
	router.Bind("s2", older)
	if res, _ := router.Deliver(ctx, demiurge.Outbound{SessionID: "s1"}); res != delivery.Unrouted {
		t.Fatalf("s1 with only an s2 route: %v, want unrouted", res)
	}
}

func TestRouterTurnTokenIsExclusive(t *testing.T) {
	router := delivery.NewRouter()
	admitted, later := &recordingRoute{}, &recordingRoute{}
	token := router.Bind("s1", admitted)
	router.Bind("s1", later)
	ctx := demiurge.WithRouteToken(context.Background(), token)
	if res, err := router.Deliver(ctx, demiurge.Outbound{SessionID: "s1"}); err != nil || res != delivery.Delivered {
		t.Fatalf("deliver: %v %v", res, err)
	}
	if len(admitted.outbounds()) != 1 || len(later.outbounds()) != 0 {
		t.Fatal("a turn's deliveries must go to its admitted route, not the newest one")
	}
	router.Unbind(token)
	if res, err := router.Deliver(ctx, demiurge.Outbound{SessionID: "s1"}); err != nil || res != delivery.Unrouted {
		t.Fatalf("admitted route gone: %v %v, want unrouted (never another adapter)", res, err)
	}
	if len(later.outbounds()) != 0 {
		t.Fatal("the other route received a delivery meant for the turn's route")
	}
}

func TestRouterRefusesOtherSession(t *testing.T) {
	router := delivery.NewRouter()
	route := &recordingRoute{}
	token := router.Bind("session_a", route)
	ctx := demiurge.WithRouteToken(context.Background(), token)
	_, err := router.Deliver(ctx, demiurge.Outbound{SessionID: "session_b"})
	if got, want := demiurge.ErrorCode(err), demiurge.EUNAUTHORIZED; got != want {
		t.Fatalf("code=%q (%v), want %q", got, err, want)
	}
	if got, want := err.Error(), "route bound to session `session_a` received outbound for `session_b`"; got != want {
		t.Fatalf("error=%q, want %q", got, want)
	}
	if len(route.outbounds()) != 0 {
		t.Fatal("the route received another session's outbound")
	}
}

func TestRouterConcurrentUse(t *testing.T) {
	router := delivery.NewRouter()
	route := &recordingRoute{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				tok := router.Bind("s", route)
				if _, err := router.Deliver(context.Background(), demiurge.Outbound{SessionID: "s"}); err != nil {
					t.Errorf("goroutine %d: %v", i, err)
				}
				router.Unbind(tok)
			}
		}()
	}
	wg.Wait()
	if router.Bound("s") {
		t.Fatal("routes left bound")
	}
	if got := len(route.outbounds()); got == 0 {
		t.Fatal("no delivery reached the route")
	}
}
