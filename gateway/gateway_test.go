package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/gateway"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/store"
)

// runner is a behavioural fake of the Host's side: every turn is recorded,
// and run (when set) decides what a turn does.
type runner struct {
	mu       sync.Mutex
	turns    []demiurge.Inbound
	turnIDs  []string
	started  map[string]bool
	run      func(ctx context.Context, in demiurge.Inbound) error
	sessions []demiurge.Session
	current  string
}

func (r *runner) RunInbound(ctx context.Context, in demiurge.Inbound, turnID string, route demiurge.Route) (gateway.TurnOutcome, error) {
	if r.run != nil {
		if err := r.run(ctx, in); err != nil {
			if ctx.Err() != nil {
				r.mu.Lock()
				r.turns = append(r.turns, in)
				r.mu.Unlock()
				return gateway.TurnOutcome{SessionID: "session_1", TurnID: turnID, Outcome: demiurge.TurnCancelled}, nil
			}
			return gateway.TurnOutcome{}, err
		}
	}
	r.mu.Lock()
	r.turns = append(r.turns, in)
	r.turnIDs = append(r.turnIDs, turnID)
	r.mu.Unlock()
	if route != nil {
		if err := route.Deliver(ctx, demiurge.Outbound{Text: "echo: " + in.Text, Visible: true}); err != nil {
			return gateway.TurnOutcome{}, err
		}
	}
	return gateway.TurnOutcome{SessionID: "session_1", TurnID: turnID, Outcome: demiurge.TurnCompleted}, nil
}

func (r *runner) TurnExists(_ context.Context, turnID string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started[turnID], nil
}

func (r *runner) NewSession(context.Context, demiurge.Inbound) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := fmt.Sprintf("session_%d", len(r.sessions)+1)
	r.sessions = append([]demiurge.Session{{ID: id}}, r.sessions...)
	r.current = id
	return id, nil
}

func (r *runner) Sessions(context.Context, demiurge.Inbound, int) ([]demiurge.Session, string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]demiurge.Session(nil), r.sessions...), r.current, nil
}

func (r *runner) Resume(_ context.Context, _ demiurge.Inbound, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.sessions {
		if s.ID == id {
			r.current = id
			return nil
		}
	}
	return demiurge.Errorf(demiurge.ENOTFOUND, "session not found: %s", id)
}

func (r *runner) texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, in := range r.turns {
		out = append(out, in.Text)
	}
	return out
}

// pushChannel is a channel whose messages the test pushes; it records what
// it was sent.
type pushChannel struct {
	name  string
	inbox chan gateway.Inbox
	mu    sync.Mutex
	sent  []string
}

func newPush(name string) *pushChannel {
	return &pushChannel{name: name, inbox: make(chan gateway.Inbox, 1)}
}

func (p *pushChannel) channel(busy string) gateway.Channel {
	return gateway.Channel{CoreID: "assistant", Name: p.name, Type: "webhook", BusyMode: busy,
		Run: func(ctx context.Context, in gateway.Inbox) error {
			select {
			case p.inbox <- in:
			default:
			}
			<-ctx.Done()
			return nil
		},
		Send: func(_ context.Context, to demiurge.Inbound, out demiurge.Outbound) error {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.sent = append(p.sent, to.ConversationKey+" "+out.Text)
			return nil
		}}
}

func (p *pushChannel) replies() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.sent...)
}

func (p *pushChannel) push(t *testing.T, in gateway.Inbox, key, conv, text string) demiurge.InboxReceipt {
	t.Helper()
	rs, err := in.Accept(context.Background(), []demiurge.InboundEnvelope{{EventKey: key, ConversationKey: conv,
		PrincipalKey: "p", Text: text}}, "")
	if err != nil {
		t.Fatal(err)
	}
	return rs[0]
}

type fixture struct {
	db   *store.DB
	host *store.Host
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	db := demiurgetest.MustOpenDB(t)
	marker, _ := process.StartMarker(os.Getpid())
	h, err := db.StartHost(context.Background(), store.HostInfo{PID: os.Getpid(), StartMarker: marker})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return fixture{db: db, host: h}
}

func (f fixture) start(t *testing.T, r gateway.Runner, opts gateway.Options, chans ...gateway.Channel) *gateway.Gateway {
	t.Helper()
	opts.HostID = f.host.ID()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testLog{t}, nil))
	}
	if opts.Poll == 0 {
		opts.Poll = 10 * time.Millisecond
	}
	g, err := gateway.New(f.db, r, chans, opts)
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return g
}

// testLog writes the gateway's log to the test's log.
type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f fixture) status(t *testing.T, id string) demiurge.Inbound {
	t.Helper()
	in, err := f.db.Inbound(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// A message is admitted once however often it is accepted, in order per
// conversation, and the reply goes back to its conversation.
func TestGatewayAdmitsOnceInOrder(t *testing.T) {
	f := newFixture(t)
	r := &runner{}
	p := newPush("hook")
	f.start(t, r, gateway.Options{}, p.channel("queue"))
	in := <-p.inbox
	first := p.push(t, in, "m1", "conv-a", "one")
	if dup := p.push(t, in, "m1", "conv-a", "one again"); !dup.Duplicate || dup.InboundID != first.InboundID {
		t.Fatalf("duplicate receipt %+v", dup)
	}
	last := p.push(t, in, "m2", "conv-a", "two")
	waitFor(t, "both turns", func() bool { return f.status(t, last.InboundID).Status == demiurge.InboundDone })
	if got, want := strings.Join(r.texts(), ","), "one,two"; got != want {
		t.Fatalf("turns %q, want %q", got, want)
	}
	if got, want := strings.Join(p.replies(), ","), "conv-a echo: one,conv-a echo: two"; got != want {
		t.Fatalf("replies %q, want %q", got, want)
	}
	done := f.status(t, first.InboundID)
	if done.Result != demiurge.InboundResultTurn || done.SessionID != "session_1" || done.TurnID == "" {
		t.Fatalf("inbound %+v", done)
	}
}

// An admission that keeps failing is retried with backoff and then
// dead-lettered with its reason, secrets redacted; an invalid one at once.
func TestGatewayRetriesThenDeadLetters(t *testing.T) {
	f := newFixture(t)
	var attempts sync.Map
	r := &runner{run: func(_ context.Context, in demiurge.Inbound) error {
		n, _ := attempts.LoadOrStore(in.ID, new(int))
		*n.(*int)++
		if in.Text == "bad" {
			return demiurge.Errorf(demiurge.EINVALID, "turn text is empty")
		}
		return demiurge.Errorf(demiurge.EUNAVAILABLE, "provider down (key sk-secret-1)")
	}}
	p := newPush("hook")
	f.start(t, r, gateway.Options{MaxAttempts: 3, RetryBase: time.Millisecond, RetryMax: 5 * time.Millisecond,
		Redact: func(s string) string { return strings.ReplaceAll(s, "sk-secret-1", "[REDACTED]") }}, p.channel(""))
	in := <-p.inbox
	flaky := p.push(t, in, "m1", "conv-a", "hello")
	bad := p.push(t, in, "m2", "conv-b", "bad")
	waitFor(t, "dead letters", func() bool {
		return f.status(t, flaky.InboundID).Status == demiurge.InboundDeadLetter && f.status(t, bad.InboundID).Status == demiurge.InboundDeadLetter
	})
	dl := f.status(t, flaky.InboundID)
	if dl.Attempts != 3 || dl.LastError != "provider down (key [REDACTED])" {
		t.Fatalf("dead letter %+v", dl)
	}
	if b := f.status(t, bad.InboundID); b.Attempts != 1 || b.LastError != "turn text is empty" {
		t.Fatalf("invalid inbound %+v", b)
	}
}

// CH-04: a channel whose Run keeps failing is retried on its own schedule
// and recorded as retrying with its (redacted) error, while another
// channel's messages are admitted.
func TestGatewayFailingChannelStallsNothing(t *testing.T) {
	f := newFixture(t)
	r := &runner{}
	p := newPush("hook")
	var runs sync.WaitGroup
	runs.Add(3)
	var n int
	var mu sync.Mutex
	broken := gateway.Channel{CoreID: "assistant", Name: "telegram", Type: "telegram",
		Run: func(context.Context, gateway.Inbox) error {
			mu.Lock()
			n++
			if n <= 3 {
				runs.Done()
			}
			mu.Unlock()
			return errors.New("telegram getUpdates failed (500): bot123:SECRET down")
		},
		Send: func(context.Context, demiurge.Inbound, demiurge.Outbound) error { return nil }}
	f.start(t, r, gateway.Options{ChannelBackoff: time.Millisecond, ChannelBackoffMax: 10 * time.Millisecond,
		Redact: func(s string) string { return strings.ReplaceAll(s, "bot123:SECRET", "bot[REDACTED]") }},
		broken, p.channel(""))
	in := <-p.inbox
	got := p.push(t, in, "m1", "conv-a", "hello")
	waitFor(t, "the healthy channel's turn", func() bool { return f.status(t, got.InboundID).Status == demiurge.InboundDone })
	runs.Wait()
	st, err := f.db.Channel(context.Background(), "assistant", "telegram")
	if err != nil {
		t.Fatal(err)
	}
	if st.LastError != "telegram getUpdates failed (500): bot[REDACTED] down" || st.HostID != f.host.ID() {
		t.Fatalf("broken channel state %+v", st)
	}
}

// A Host that died after reserving a turn: when that turn started, the
// inbound is done as recovered and nothing runs or answers again; when it
// never started, it runs now under the reserved id.
func TestGatewayRecoversReservedTurns(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	pid, marker := deadProcess(t)
	dead, err := f.db.StartHost(ctx, store.HostInfo{PID: pid, StartMarker: marker})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := f.db.AcceptInbound(ctx, []demiurge.InboundEnvelope{
		{CoreID: "assistant", Channel: "hook", EventKey: "a", ConversationKey: "conv-a", PrincipalKey: "p", Text: "ran"},
		{CoreID: "assistant", Channel: "hook", EventKey: "b", ConversationKey: "conv-b", PrincipalKey: "p", Text: "never ran"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := f.db.ClaimInbounds(ctx, dead.ID(), 2, nil)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claims %v %v", claimed, err)
	}
	for i, c := range claimed {
		if err := f.db.StartInbound(ctx, c.ID, c.ClaimID, fmt.Sprintf("turn_reserved%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	r := &runner{started: map[string]bool{"turn_reserved0": true}}
	p := newPush("hook")
	f.start(t, r, gateway.Options{}, p.channel(""))
	waitFor(t, "recovery", func() bool {
		return f.status(t, rs[0].InboundID).Status == demiurge.InboundDone && f.status(t, rs[1].InboundID).Status == demiurge.InboundDone
	})
	if got := f.status(t, rs[0].InboundID); got.Result != demiurge.InboundResultRecovered || got.TurnID != "turn_reserved0" {
		t.Fatalf("started turn: %+v", got)
	}
	if got, want := strings.Join(r.texts(), ","), "never ran"; got != want {
		t.Fatalf("turns %q, want %q", got, want)
	}
	if r.turnIDs[0] != "turn_reserved1" {
		t.Fatalf("turn id %q, want the reserved one", r.turnIDs[0])
	}
	if got, want := strings.Join(p.replies(), ","), "conv-b echo: never ran"; got != want {
		t.Fatalf("replies %q, want %q", got, want)
	}
}

// interrupt: a new message cancels the conversation's running turn, which
// is done as cancelled; queue: it waits. /stop cancels in both modes and
// clears what was queued before it.
func TestGatewayBusyModes(t *testing.T) {
	for _, mode := range []string{"interrupt", "queue"} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t)
			release := make(chan struct{})
			r := &runner{run: func(ctx context.Context, in demiurge.Inbound) error {
				if in.Text != "slow" {
					return nil
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-release:
					return nil
				}
			}}
			p := newPush("hook")
			f.start(t, r, gateway.Options{}, p.channel(mode))
			in := <-p.inbox
			slow := p.push(t, in, "m1", "conv-a", "slow")
			waitFor(t, "the slow turn", func() bool { return f.status(t, slow.InboundID).Status == demiurge.InboundRunning })
			next := p.push(t, in, "m2", "conv-a", "next")
			if mode == "queue" {
				time.Sleep(50 * time.Millisecond)
				if s := f.status(t, slow.InboundID).Status; s != demiurge.InboundRunning {
					t.Fatalf("queue mode: the running turn ended (%s)", s)
				}
				close(release)
			}
			waitFor(t, "the next turn", func() bool { return f.status(t, next.InboundID).Status == demiurge.InboundDone })
			want := demiurge.InboundResultTurn
			if mode == "interrupt" {
				want = demiurge.InboundResultCancelled
			}
			if got := f.status(t, slow.InboundID).Result; got != want {
				t.Fatalf("slow inbound result %q, want %q", got, want)
			}
		})
	}
	t.Run("stop", func(t *testing.T) {
		f := newFixture(t)
		r := &runner{run: func(ctx context.Context, in demiurge.Inbound) error {
			if in.Text == "slow" {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}}
		p := newPush("hook")
		f.start(t, r, gateway.Options{}, p.channel("queue"))
		in := <-p.inbox
		slow := p.push(t, in, "m1", "conv-a", "slow")
		waitFor(t, "the slow turn", func() bool { return f.status(t, slow.InboundID).Status == demiurge.InboundRunning })
		queued := p.push(t, in, "m2", "conv-a", "queued")
		stop := p.push(t, in, "m3", "conv-a", "/stop")
		waitFor(t, "the stop", func() bool { return f.status(t, stop.InboundID).Status == demiurge.InboundDone })
		if got := f.status(t, queued.InboundID); got.Result != demiurge.InboundResultCancelled {
			t.Fatalf("queued inbound %+v", got)
		}
		if got, want := strings.Join(p.replies(), ","), "conv-a Stopped current turn; cleared 1 queued message(s)."; got != want {
			t.Fatalf("replies %q, want %q", got, want)
		}
	})
}

// /new, /sessions and /resume act on the conversation's sessions and start
// no turn; an unknown command says so.
func TestGatewayCommands(t *testing.T) {
	f := newFixture(t)
	r := &runner{}
	p := newPush("hook")
	f.start(t, r, gateway.Options{}, p.channel(""))
	in := <-p.inbox
	var last demiurge.InboxReceipt
	for i, text := range []string{"/new", "/new", "/sessions", "/resume 2", "/resume 9", "/resume session_x", "/compact", "/help@bot"} {
		last = p.push(t, in, fmt.Sprint(i), "conv-a", text)
	}
	waitFor(t, "the commands", func() bool { return f.status(t, last.InboundID).Status == demiurge.InboundDone })
	got := p.replies()
	want := []string{
		"conv-a New session: `session_1`",
		"conv-a New session: `session_2`",
		"conv-a # Sessions\n1. * `session_2` - " + demiurge.FormatTime(time.Time{}) + " - 0 msg\n2.   `session_1` - " + demiurge.FormatTime(time.Time{}) + " - 0 msg",
		"conv-a Resumed session: `session_1`",
		"conv-a Session number out of range: 9",
		"conv-a Session not found or not authorized.",
		"conv-a Unknown command: /compact",
	}
	if len(got) != len(want)+1 {
		t.Fatalf("replies %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("reply %d = %q, want %q", i, got[i], want[i])
		}
	}
	if !strings.HasPrefix(got[len(want)], "conv-a # Commands") {
		t.Errorf("help %q", got[len(want)])
	}
	if len(r.texts()) != 0 {
		t.Fatalf("commands started turns: %q", r.texts())
	}
}

// Close drains: a running turn finishes (its inbound done), and no channel
// keeps its lease.
func TestGatewayCloseDrains(t *testing.T) {
	f := newFixture(t)
	started := make(chan struct{})
	r := &runner{run: func(ctx context.Context, in demiurge.Inbound) error {
		close(started)
		time.Sleep(100 * time.Millisecond)
		return nil
	}}
	p := newPush("hook")
	opts := gateway.Options{HostID: f.host.ID(), Poll: 10 * time.Millisecond}
	g, err := gateway.New(f.db, r, []gateway.Channel{p.channel("")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	in := <-p.inbox
	rc := p.push(t, in, "m1", "conv-a", "hello")
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.status(t, rc.InboundID); got.Result != demiurge.InboundResultTurn {
		t.Fatalf("drained inbound %+v", got)
	}
	st, err := f.db.Channel(ctx, "assistant", "hook")
	if err != nil || st.HostID != "" || st.State != demiurge.ChannelStopped {
		t.Fatalf("channel after close %+v %v", st, err)
	}
}

// deadProcess starts and reaps a real child process, returning its pid and
// the start marker it had: a Host registered under it is gone.
func deadProcess(tb testing.TB) (int, string) {
	tb.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	pid := cmd.Process.Pid
	marker, err := process.StartMarker(pid)
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	return pid, marker
}

// Concurrent accepts are group-committed: every message is committed and
// admitted once, a redelivery is a duplicate of the first, and an invalid
// envelope fails its own accept only.
func TestGatewayConcurrentAccepts(t *testing.T) {
	f := newFixture(t)
	r := &runner{}
	p := newPush("hook")
	f.start(t, r, gateway.Options{}, p.channel("queue"))
	in := <-p.inbox
	const n = 40
	ids := make([]string, 2*n)
	errs := make([]error, 2*n)
	var wg sync.WaitGroup
	for i := range 2 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Goroutines i and i+n post the same message, as a retrying
			// client would.
			m := i % n
			rs, err := in.Accept(context.Background(), []demiurge.InboundEnvelope{{EventKey: fmt.Sprintf("m%d", m),
				ConversationKey: fmt.Sprintf("conv-%d", m%7), PrincipalKey: "p", Text: fmt.Sprintf("text %d", m)}}, "")
			if err == nil {
				ids[i] = rs[0].InboundID
			}
			errs[i] = err
		}()
	}
	wg.Add(1)
	var invalid error
	go func() {
		defer wg.Done()
		_, invalid = in.Accept(context.Background(), []demiurge.InboundEnvelope{{EventKey: "bad", PrincipalKey: "p", Text: "no conversation"}}, "")
	}()
	wg.Wait()
	if demiurge.ErrorCode(invalid) != demiurge.EINVALID {
		t.Fatalf("invalid envelope: %v, want EINVALID", invalid)
	}
	for i := range n {
		if errs[i] != nil || errs[i+n] != nil {
			t.Fatalf("accept %d: %v, %v", i, errs[i], errs[i+n])
		}
		if ids[i] == "" || ids[i] != ids[i+n] {
			t.Fatalf("message %d accepted as %q and %q", i, ids[i], ids[i+n])
		}
	}
	waitFor(t, "every turn", func() bool { return len(r.texts()) == n })
	seen := map[string]bool{}
	for _, text := range r.texts() {
		if seen[text] {
			t.Fatalf("%q admitted twice", text)
		}
		seen[text] = true
	}
}

// The store's group commit answers each group: an invalid envelope fails
// its own group and nothing of it is committed; the same key twice in one
// commit is one inbound.
func TestAcceptInboundGroups(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	env := func(key, conv string) demiurge.InboundEnvelope {
		return demiurge.InboundEnvelope{CoreID: "assistant", Channel: "hook", EventKey: key, ConversationKey: conv, PrincipalKey: "p", Text: key}
	}
	calls := 0
	rs, errs, err := f.db.AcceptInboundGroups(ctx, func() [][]demiurge.InboundEnvelope {
		calls++
		return [][]demiurge.InboundEnvelope{{env("a", "c1")}, {env("b", "c1"), env("x", "")}, {env("a", "c1"), env("c", "c2")}}
	})
	if err != nil || calls != 1 {
		t.Fatalf("group commit: %v (next called %d times)", err, calls)
	}
	if errs[0] != nil || errs[2] != nil || demiurge.ErrorCode(errs[1]) != demiurge.EINVALID || len(rs[1]) != 0 {
		t.Fatalf("errors %v, receipts %+v", errs, rs)
	}
	if rs[0][0].Duplicate || !rs[2][0].Duplicate || rs[2][0].InboundID != rs[0][0].InboundID || rs[2][1].Duplicate {
		t.Fatalf("receipts %+v", rs)
	}
	all, err := f.db.Inbounds(ctx, store.InboundFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Fatalf("%d inbounds committed, want 2 (a, c)", len(all))
	}
}

// gatedStore holds every group accept until the test opens gate.
type gatedStore struct {
	*store.DB
	gate    chan struct{}
	arrived chan struct{}
}

func (s gatedStore) AcceptInboundGroups(ctx context.Context, next func() [][]demiurge.InboundEnvelope) ([][]demiurge.InboxReceipt, []error, error) {
	s.arrived <- struct{}{}
	<-s.gate
	return s.DB.AcceptInboundGroups(ctx, next)
}

// A /stop committed before (the Host crashed before its 2xx, or another
// Host took it) is redelivered while the worker handles the first commit:
// the redelivery is a duplicate, the /stop is answered all the same, and
// the gateway still closes.
func TestGatewayStopRedelivered(t *testing.T) {
	f := newFixture(t)
	p := newPush("hook")
	gs := gatedStore{DB: f.db, gate: make(chan struct{}), arrived: make(chan struct{}, 1)}
	g, err := gateway.New(gs, &runner{}, []gateway.Channel{p.channel("queue")},
		gateway.Options{HostID: f.host.ID(), Poll: 10 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(testLog{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	in := <-p.inbox
	env := demiurge.InboundEnvelope{CoreID: "assistant", Channel: "hook", EventKey: "s1", ConversationKey: "conv-a", PrincipalKey: "p", Text: "/stop"}
	redelivered := make(chan error, 1)
	go func() {
		rs, err := in.Accept(context.Background(), []demiurge.InboundEnvelope{env}, "")
		if err == nil && !rs[0].Duplicate {
			err = fmt.Errorf("the redelivery was accepted as new: %+v", rs[0])
		}
		redelivered <- err
	}()
	<-gs.arrived // the redelivery expects the /stop's outcome; its commit waits
	first, err := f.db.AcceptInbound(context.Background(), []demiurge.InboundEnvelope{env}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first commit claimed", func() bool { return f.status(t, first[0].InboundID).Status != demiurge.InboundQueued })
	close(gs.gate)
	if err := <-redelivered; err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the /stop answered", func() bool { return f.status(t, first[0].InboundID).Status == demiurge.InboundDone })
	if got, want := strings.Join(p.replies(), ","), "conv-a No running turn; cleared 0 queued message(s)."; got != want {
		t.Fatalf("replies %q, want %q", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// On a PostgreSQL ledger a message another Host accepted wakes this
// gateway's worker (LISTEN/NOTIFY): with polling off it runs the turn at
// once.
func TestGatewayWakesOnAnotherHostsAccept(t *testing.T) {
	where := demiurgetest.PostgresDatabase(t)
	db := demiurgetest.MustOpenPath(t, where, store.Options{})
	h, err := db.StartHost(context.Background(), store.HostInfo{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	f := fixture{db: db, host: h}
	r := &runner{}
	f.start(t, r, gateway.Options{Poll: time.Hour, Subscribe: db.Subscribe})
	time.Sleep(200 * time.Millisecond) // the listener is connected
	other := demiurgetest.MustOpenPath(t, where, store.Options{})
	rs, err := other.AcceptInbound(context.Background(), []demiurge.InboundEnvelope{
		{CoreID: "assistant", Channel: "hook", EventKey: "x", ConversationKey: "conv-x", PrincipalKey: "p", Text: "woken"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the turn of the other Host's message", func() bool { return f.status(t, rs[0].InboundID).Status == demiurge.InboundDone })
	if got := strings.Join(r.texts(), ","); got != "woken" {
		t.Fatalf("turns %q", got)
	}
}
