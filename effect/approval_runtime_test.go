package effect_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

// scriptedAsker answers every question with answer (or err) and counts.
type scriptedAsker struct {
	answer string
	err    error
	asked  atomic.Int32
	mu     sync.Mutex
	last   effect.ApprovalRequest
}

func (a *scriptedAsker) Approve(ctx context.Context, req effect.ApprovalRequest) (string, error) {
	a.asked.Add(1)
	a.mu.Lock()
	a.last = req
	a.mu.Unlock()
	return a.answer, a.err
}

// gateAsker blocks every question until release is closed (or its context
// ends), then answers.
type gateAsker struct {
	answer  string
	asked   atomic.Int32
	release chan struct{}
	ctxDone atomic.Int32
}

func newGate(answer string) *gateAsker {
	return &gateAsker{answer: answer, release: make(chan struct{})}
}

func (a *gateAsker) Approve(ctx context.Context, req effect.ApprovalRequest) (string, error) {
	a.asked.Add(1)
	select {
	case <-a.release:
		return a.answer, nil
	case <-ctx.Done():
		a.ctxDone.Add(1)
		return "", ctx.Err()
	}
}

// approverFunc adapts a function to effect.Approver.
type approverFunc func(ctx context.Context, req effect.ApprovalRequest) (string, error)

func (f approverFunc) Approve(ctx context.Context, req effect.ApprovalRequest) (string, error) {
	return f(ctx, req)
}

// fakeClock is an injected clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newRuntime(t *testing.T) (*effect.ApprovalRuntime, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	rt := effect.NewApprovalRuntime(effect.ApprovalOptions{Now: clock.Now})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return rt, clock
}

func question() effect.ApprovalQuestion {
	return effect.ApprovalQuestion{
		PrincipalID: demiurge.OperatorPrincipalID, SessionID: "ses_1", TurnID: "turn_1", CallID: "call_1",
		Tool: "write_file", Action: "write", Target: "notes.txt", Summary: "Write notes.txt",
		Risk: "medium", Capability: "fs.write", Provenance: "builtin:write_file",
		Policy: policy.Prompt, CoreID: "assistant", CoreRevision: "rev1",
		CapabilityFingerprint: policy.NewGrants([]string{"fs.write"}, nil).Fingerprint(),
		AdapterKey:            "builtin:write_file", RuleKey: "write_file:fs.write:write:notes.txt",
	}
}

func decide(t *testing.T, rt *effect.ApprovalRuntime, q effect.ApprovalQuestion, asker effect.Approver) effect.Decision {
	t.Helper()
	d, err := rt.Decide(context.Background(), q, asker)
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	if d.Allowed != (d.Value == effect.DecisionAllowOnce || d.Value == effect.DecisionAllowSession) {
		t.Fatalf("Allowed=%v disagrees with Value=%q", d.Allowed, d.Value)
	}
	return d
}

func TestDecidePolicyAndAnswers(t *testing.T) {
	tests := []struct {
		name       string
		policy     policy.Policy
		asker      *scriptedAsker
		nilAsker   bool
		wantAllow  bool
		wantBy     string
		wantReason string
		wantAsked  int32
	}{
		{"deny policy never asks", policy.Deny, &scriptedAsker{answer: effect.DecisionAllowOnce}, false, false, effect.DecidedByPolicy, effect.ReasonPolicyDeny, 0},
		{"auto policy never asks", policy.Auto, &scriptedAsker{answer: effect.DecisionDeny}, false, true, effect.DecidedByPolicy, effect.ReasonPolicyAuto, 0},
		{"invalid policy denies", "sometimes", &scriptedAsker{answer: effect.DecisionAllowOnce}, false, false, effect.DecidedByPolicy, "invalid approval policy: sometimes", 0},
		{"empty policy denies", "", &scriptedAsker{answer: effect.DecisionAllowOnce}, false, false, effect.DecidedByPolicy, "invalid approval policy: ", 0},
		{"prompt allow once", policy.Prompt, &scriptedAsker{answer: effect.DecisionAllowOnce}, false, true, effect.DecidedByOperator, effect.ReasonApprovedOnce, 1},
		{"prompt allow session", policy.Prompt, &scriptedAsker{answer: effect.DecisionAllowSession}, false, true, effect.DecidedByOperator, effect.ReasonApprovedSession, 1},
		{"prompt deny", policy.Prompt, &scriptedAsker{answer: effect.DecisionDeny}, false, false, effect.DecidedByOperator, effect.ReasonDenied, 1},
		{"unknown answer denies", policy.Prompt, &scriptedAsker{answer: "allow"}, false, false, effect.DecidedByOperator, "invalid approval decision: allow", 1},
		{"empty answer denies", policy.Prompt, &scriptedAsker{answer: ""}, false, false, effect.DecidedByOperator, "invalid approval decision: ", 1},
		{"asker error denies even with an allow", policy.Prompt, &scriptedAsker{answer: effect.DecisionAllowOnce, err: errors.New("tty gone")}, false, false, effect.DecidedByNoOperator, "approval provider failed: internal error", 1},
		{"nil asker denies", policy.Prompt, nil, true, false, effect.DecidedByNoOperator, effect.ReasonNoOperator, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, _ := newRuntime(t)
			q := question()
			q.Policy = tt.policy
			var asker effect.Approver = tt.asker
			if tt.nilAsker {
				asker = nil
			}
			d := decide(t, rt, q, asker)
			if d.Allowed != tt.wantAllow || d.DecidedBy != tt.wantBy || d.Reason != tt.wantReason {
				t.Fatalf("got allowed=%v by=%q reason=%q, want %v %q %q", d.Allowed, d.DecidedBy, d.Reason, tt.wantAllow, tt.wantBy, tt.wantReason)
			}
			if tt.asker != nil {
				if got := tt.asker.asked.Load(); got != tt.wantAsked {
					t.Fatalf("asked %d times, want %d", got, tt.wantAsked)
				}
			}
			if wantAuto := tt.wantBy == effect.DecidedByPolicy; d.Automatic != wantAuto {
				t.Fatalf("Automatic=%v, want %v", d.Automatic, wantAuto)
			}
			if d.PolicyFingerprint == "" || len(d.KeyFingerprint) != 16 {
				t.Fatalf("fingerprints missing: %+v", d)
			}
		})
	}
}

func TestOperatorRequestComesFromQuestion(t *testing.T) {
	rt, _ := newRuntime(t)
	a := &scriptedAsker{answer: effect.DecisionAllowOnce}
	q := question()
	q.Summary = "Deploy with token=" + "s3cr3t-value" + " " + strings.Repeat("x", 600)
	decide(t, rt, q, a)
	a.mu.Lock()
	req := a.last
	a.mu.Unlock()
	if req.SessionID != "ses_1" || req.TurnID != "turn_1" || req.CallID != "call_1" || req.Tool != "write_file" ||
		req.Provenance != "builtin:write_file" || req.Risk != "medium" || req.Capability != "fs.write" {
		t.Fatalf("request=%+v", req)
	}
	if strings.Contains(req.Summary, "s3cr3t-value") || !strings.HasPrefix(req.Summary, "Deploy with token=<redacted>") {
		t.Fatalf("summary not redacted: %q", req.Summary)
	}
	if !strings.HasSuffix(req.Summary, "chars]") || len([]rune(req.Summary)) > 500+len("...[truncated 000 chars]") {
		t.Fatalf("summary not bounded: %d chars", len(req.Summary))
	}
}

func TestSessionGrantIdentity(t *testing.T) {
	otherGrants := policy.NewGrants([]string{"fs.write", "terminal.exec"}, nil).Fingerprint()
	tests := []struct {
		name      string
		change    func(*effect.ApprovalQuestion)
		wantCache bool
	}{
		{"identical question", func(q *effect.ApprovalQuestion) {}, true},
		{"another call and turn of the session", func(q *effect.ApprovalQuestion) { q.CallID, q.TurnID = "call_9", "turn_9" }, true},
		{"display-only change", func(q *effect.ApprovalQuestion) { q.Summary, q.Target = "other words", "elsewhere" }, true},
		{"another core revision", func(q *effect.ApprovalQuestion) { q.CoreRevision = "rev2" }, false},
		{"another capability snapshot", func(q *effect.ApprovalQuestion) { q.CapabilityFingerprint = otherGrants }, false},
		{"another effective policy", func(q *effect.ApprovalQuestion) { q.Policy = "deny" }, false},
		{"another entry provenance", func(q *effect.ApprovalQuestion) { q.Provenance = "authored:agent/tools/write_file" }, false},
		{"another adapter key", func(q *effect.ApprovalQuestion) { q.AdapterKey = "mcp:conn:write_file" }, false},
		{"another rule key", func(q *effect.ApprovalQuestion) { q.RuleKey = "write_file:fs.write:write:other.txt" }, false},
		{"another action", func(q *effect.ApprovalQuestion) { q.Action = "delete" }, false},
		{"another risk", func(q *effect.ApprovalQuestion) { q.Risk = "high" }, false},
		{"another session", func(q *effect.ApprovalQuestion) { q.SessionID = "ses_2" }, false},
		{"another principal", func(q *effect.ApprovalQuestion) { q.PrincipalID = "principal:telegram:42" }, false},
		{"another core", func(q *effect.ApprovalQuestion) { q.CoreID = "evolver" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, _ := newRuntime(t)
			first := &scriptedAsker{answer: effect.DecisionAllowSession}
			if d := decide(t, rt, question(), first); !d.Allowed || d.GrantExpires.IsZero() {
				t.Fatalf("first decision %+v", d)
			}
			q := question()
			tt.change(&q)
			second := &scriptedAsker{answer: effect.DecisionDeny}
			d := decide(t, rt, q, second)
			if q.Policy == policy.Deny {
				// The policy itself denies; the grant of the prompt policy does
				// not leak into a deny policy.
				if d.Allowed || d.DecidedBy != effect.DecidedByPolicy {
					t.Fatalf("deny policy answered by %q", d.DecidedBy)
				}
				return
			}
			if tt.wantCache {
				if !d.Allowed || !d.Cached || d.DecidedBy != effect.DecidedByCache || second.asked.Load() != 0 {
					t.Fatalf("want cache hit, got %+v asked=%d", d, second.asked.Load())
				}
				return
			}
			if d.Cached || d.Allowed || second.asked.Load() != 1 {
				t.Fatalf("want the operator asked again, got %+v asked=%d", d, second.asked.Load())
			}
		})
	}
}

func TestDefaultRuleKeyIsToolName(t *testing.T) {
	q := question()
	q.RuleKey = ""
	if q.EffectiveRuleKey() != "write_file" {
		t.Fatalf("default rule key %q", q.EffectiveRuleKey())
	}
	rt, _ := newRuntime(t)
	decide(t, rt, q, &scriptedAsker{answer: effect.DecisionAllowSession})
	withKey := q
	withKey.RuleKey = "write_file"
	if d := decide(t, rt, withKey, nil); !d.Cached {
		t.Fatalf("explicit tool-name rule key should share the default grant: %+v", d)
	}
}

func TestAllowOnceIsNotCached(t *testing.T) {
	rt, _ := newRuntime(t)
	a := &scriptedAsker{answer: effect.DecisionAllowOnce}
	decide(t, rt, question(), a)
	decide(t, rt, question(), a)
	if a.asked.Load() != 2 {
		t.Fatalf("allow_once was reused: asked %d times", a.asked.Load())
	}
	if s := rt.Stats(); s.Grants != 0 {
		t.Fatalf("grants=%d", s.Grants)
	}
}

func TestGrantExpiresAfterTTL(t *testing.T) {
	rt, clock := newRuntime(t)
	d := decide(t, rt, question(), &scriptedAsker{answer: effect.DecisionAllowSession})
	if want := clock.Now().Add(8 * time.Hour); !d.GrantExpires.Equal(want) {
		t.Fatalf("expires %v, want %v", d.GrantExpires, want)
	}
	clock.Advance(8*time.Hour - time.Second)
	if d := decide(t, rt, question(), nil); !d.Cached {
		t.Fatalf("grant gone before its TTL: %+v", d)
	}
	clock.Advance(time.Second)
	a := &scriptedAsker{answer: effect.DecisionDeny}
	if d := decide(t, rt, question(), a); d.Cached || d.Allowed || a.asked.Load() != 1 {
		t.Fatalf("grant outlived its TTL: %+v", d)
	}
	if s := rt.Stats(); s.Grants != 0 {
		t.Fatalf("expired grant kept: %+v", s)
	}
}

func TestCustomTTL(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	rt := effect.NewApprovalRuntime(effect.ApprovalOptions{Now: clock.Now, TTL: time.Minute})
	defer rt.Shutdown(context.Background())
	decide(t, rt, question(), &scriptedAsker{answer: effect.DecisionAllowSession})
	clock.Advance(time.Minute)
	if d := decide(t, rt, question(), nil); d.Cached {
		t.Fatal("grant outlived a one-minute TTL")
	}
}

func TestInvalidation(t *testing.T) {
	tests := []struct {
		name       string
		invalidate func(*effect.ApprovalRuntime) int
		keepsOther bool // the grant of the unrelated question survives
	}{
		{"session", func(rt *effect.ApprovalRuntime) int { return rt.InvalidateSession("ses_1") }, true},
		{"core", func(rt *effect.ApprovalRuntime) int { return rt.InvalidateCore("assistant") }, true},
		{"principal", func(rt *effect.ApprovalRuntime) int { return rt.InvalidatePrincipal(demiurge.OperatorPrincipalID) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, _ := newRuntime(t)
			other := question()
			other.SessionID, other.CoreID, other.PrincipalID = "ses_2", "evolver", "principal:telegram:42"
			decide(t, rt, question(), &scriptedAsker{answer: effect.DecisionAllowSession})
			second := question()
			second.RuleKey = "write_file:fs.write:write:b.txt"
			decide(t, rt, second, &scriptedAsker{answer: effect.DecisionAllowSession})
			decide(t, rt, other, &scriptedAsker{answer: effect.DecisionAllowSession})

			if n := tt.invalidate(rt); n != 2 {
				t.Fatalf("dropped %d grants, want 2", n)
			}
			a := &scriptedAsker{answer: effect.DecisionDeny}
			if d := decide(t, rt, question(), a); d.Cached || a.asked.Load() != 1 {
				t.Fatalf("grant survived invalidation: %+v", d)
			}
			if d := decide(t, rt, other, nil); d.Cached != tt.keepsOther {
				t.Fatalf("unrelated grant cached=%v, want %v", d.Cached, tt.keepsOther)
			}
		})
	}
}

func TestInvalidationDeniesPendingQuestion(t *testing.T) {
	rt, _ := newRuntime(t)
	gate := newGate(effect.DecisionAllowSession)
	result := make(chan effect.Decision, 1)
	go func() {
		d, _ := rt.Decide(context.Background(), question(), gate)
		result <- d
	}()
	waitFor(t, func() bool { return rt.Stats().Waiters == 1 })
	rt.InvalidateSession("ses_2") // unrelated: nothing happens
	if rt.Stats().Pending != 1 {
		t.Fatal("unrelated invalidation settled the question")
	}
	rt.InvalidateCore("assistant")
	d := recv(t, result)
	if d.Allowed || d.Reason != effect.ReasonInvalidated || d.DecidedBy != effect.DecidedByRuntime {
		t.Fatalf("got %+v", d)
	}
	waitFor(t, func() bool { return gate.ctxDone.Load() == 1 }) // the prompt was withdrawn
	close(gate.release)
	// Nothing was cached by the late answer.
	a := &scriptedAsker{answer: effect.DecisionDeny}
	if d := decide(t, rt, question(), a); d.Cached || a.asked.Load() != 1 {
		t.Fatalf("invalidated prompt stored a grant: %+v", d)
	}
}

func TestShutdown(t *testing.T) {
	rt, _ := newRuntime(t)
	decide(t, rt, question(), &scriptedAsker{answer: effect.DecisionAllowSession})
	gate := newGate(effect.DecisionAllowOnce)
	pendingQ := question()
	pendingQ.RuleKey = "other"
	result := make(chan effect.Decision, 1)
	go func() {
		d, _ := rt.Decide(context.Background(), pendingQ, gate)
		result <- d
	}()
	waitFor(t, func() bool { return rt.Stats().Waiters == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if d := recv(t, result); d.Allowed || d.Reason != effect.ReasonClosed {
		t.Fatalf("pending question got %+v", d)
	}
	if gate.ctxDone.Load() != 1 {
		t.Fatal("shutdown returned before the prompt goroutine ended")
	}
	for _, p := range []policy.Policy{policy.Auto, policy.Prompt} {
		q := question()
		q.Policy = p
		a := &scriptedAsker{answer: effect.DecisionAllowOnce}
		d := decide(t, rt, q, a)
		if d.Allowed || d.Reason != effect.ReasonClosed || d.DecidedBy != effect.DecidedByRuntime || a.asked.Load() != 0 {
			t.Fatalf("%s after shutdown: %+v asked=%d", p, d, a.asked.Load())
		}
	}
	if s := rt.Stats(); s.Grants != 0 || s.Pending != 0 {
		t.Fatalf("state kept after shutdown: %+v", s)
	}
}

// An Approver that ignores its context cannot make Shutdown hang past the
// caller's deadline, and its waiters are still released at once.
func TestShutdownBoundedByContext(t *testing.T) {
	rt := effect.NewApprovalRuntime(effect.ApprovalOptions{})
	stuck := make(chan struct{})
	defer close(stuck)
	asker := approverFunc(func(ctx context.Context, req effect.ApprovalRequest) (string, error) {
		<-stuck
		return effect.DecisionAllowOnce, nil
	})
	result := make(chan effect.Decision, 1)
	go func() {
		d, _ := rt.Decide(context.Background(), question(), asker)
		result <- d
	}()
	waitFor(t, func() bool { return rt.Stats().Waiters == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := rt.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shutdown err=%v, want deadline exceeded", err)
	}
	if d := recv(t, result); d.Allowed {
		t.Fatal("stuck prompt allowed")
	}
}

func TestOneShotNeverCached(t *testing.T) {
	rt, _ := newRuntime(t)
	q := question()
	q.Options.OneShot = true
	a := &scriptedAsker{answer: effect.DecisionAllowSession}
	d := decide(t, rt, q, a)
	if !d.Allowed || d.Value != effect.DecisionAllowOnce || d.Reason != effect.ReasonOneShotSession || !d.GrantExpires.IsZero() {
		t.Fatalf("one-shot always answer: %+v", d)
	}
	decide(t, rt, q, a)
	if a.asked.Load() != 2 || rt.Stats().Grants != 0 {
		t.Fatalf("one-shot answer reused: asked=%d stats=%+v", a.asked.Load(), rt.Stats())
	}
	// An existing grant for the same identity does not answer a one-shot question.
	plain := question()
	decide(t, rt, plain, &scriptedAsker{answer: effect.DecisionAllowSession})
	b := &scriptedAsker{answer: effect.DecisionDeny}
	if d := decide(t, rt, q, b); d.Allowed || d.Cached || b.asked.Load() != 1 {
		t.Fatalf("grant answered a one-shot question: %+v", d)
	}
	if v := q.AuditView(); v["session_cacheable"] != false {
		t.Fatalf("audit view session_cacheable=%v", v["session_cacheable"])
	}
}

// One-shot questions never share a pending prompt: each is asked.
func TestOneShotNotSingleFlight(t *testing.T) {
	rt, _ := newRuntime(t)
	gate := newGate(effect.DecisionAllowOnce)
	q := question()
	q.Options.OneShot = true
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rt.Decide(context.Background(), q, gate)
		}()
	}
	waitFor(t, func() bool { return rt.Stats().Pending == 3 })
	close(gate.release)
	wg.Wait()
	if gate.asked.Load() != 3 {
		t.Fatalf("asked %d times, want 3", gate.asked.Load())
	}
}

func TestSingleFlight(t *testing.T) {
	for _, answer := range []string{effect.DecisionAllowOnce, effect.DecisionAllowSession, effect.DecisionDeny} {
		t.Run(answer, func(t *testing.T) {
			rt, _ := newRuntime(t)
			gate := newGate(answer)
			const n = 16
			results := make(chan effect.Decision, n)
			for i := range n {
				go func() {
					q := question()
					q.CallID = "call_" + string(rune('a'+i))
					d, err := rt.Decide(context.Background(), q, gate)
					if err != nil {
						t.Error(err)
					}
					results <- d
				}()
			}
			// Every caller is queued on the one pending prompt before it is answered.
			waitFor(t, func() bool { s := rt.Stats(); return s.Waiters == n && s.Pending == 1 })
			close(gate.release)
			for range n {
				d := recv(t, results)
				if d.Value != answer || d.DecidedBy != effect.DecidedByOperator {
					t.Fatalf("waiter got %+v, want %s by operator", d, answer)
				}
			}
			if got := gate.asked.Load(); got != 1 {
				t.Fatalf("operator asked %d times, want 1", got)
			}
		})
	}
}

func TestDifferentKeysDoNotWait(t *testing.T) {
	rt, _ := newRuntime(t)
	blocked := newGate(effect.DecisionAllowOnce)
	defer close(blocked.release)
	go rt.Decide(context.Background(), question(), blocked)
	waitFor(t, func() bool { return rt.Stats().Pending == 1 })

	other := question()
	other.RuleKey = "write_file:fs.write:write:other.txt"
	done := make(chan effect.Decision, 1)
	go func() {
		d, _ := rt.Decide(context.Background(), other, &scriptedAsker{answer: effect.DecisionAllowOnce})
		done <- d
	}()
	select {
	case d := <-done:
		if !d.Allowed {
			t.Fatalf("got %+v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a question with another key waited for a pending prompt")
	}
}

func TestCancelledWaiters(t *testing.T) {
	rt, _ := newRuntime(t)
	gate := newGate(effect.DecisionAllowSession)
	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	r1, r2 := make(chan effect.Decision, 1), make(chan effect.Decision, 1)
	go func() { d, _ := rt.Decide(ctx1, question(), gate); r1 <- d }()
	go func() { d, _ := rt.Decide(ctx2, question(), gate); r2 <- d }()
	waitFor(t, func() bool { return rt.Stats().Waiters == 2 })

	// The first caller leaves: it is denied, the prompt stays for the other.
	cancel1()
	if d := recv(t, r1); d.Allowed || d.Reason != effect.ReasonWaitCancelled {
		t.Fatalf("cancelled waiter got %+v", d)
	}
	if s := rt.Stats(); s.Pending != 1 || s.Waiters != 1 || gate.ctxDone.Load() != 0 {
		t.Fatalf("prompt withdrawn while a caller still waits: %+v", s)
	}
	// The last caller leaves: the prompt is withdrawn and nothing is cached.
	cancel2()
	if d := recv(t, r2); d.Allowed {
		t.Fatalf("got %+v", d)
	}
	waitFor(t, func() bool { return gate.ctxDone.Load() == 1 })
	if s := rt.Stats(); s.Pending != 0 || s.Grants != 0 {
		t.Fatalf("state after withdrawal: %+v", s)
	}
	// A caller whose context is already done is denied without a prompt.
	a := &scriptedAsker{answer: effect.DecisionAllowOnce}
	d, _ := rt.Decide(ctx1, question(), a)
	if d.Allowed || a.asked.Load() != 0 {
		t.Fatalf("done context: %+v asked=%d", d, a.asked.Load())
	}
}

func TestAskerPanicDenies(t *testing.T) {
	rt, _ := newRuntime(t)
	asker := approverFunc(func(ctx context.Context, req effect.ApprovalRequest) (string, error) {
		panic("boom")
	})
	if d := decide(t, rt, question(), asker); d.Allowed || d.DecidedBy != effect.DecidedByNoOperator {
		t.Fatalf("got %+v", d)
	}
}

func TestMalformedQuestion(t *testing.T) {
	rt, _ := newRuntime(t)
	for name, change := range map[string]func(*effect.ApprovalQuestion){
		"principal":  func(q *effect.ApprovalQuestion) { q.PrincipalID = "" },
		"session":    func(q *effect.ApprovalQuestion) { q.SessionID = "" },
		"core":       func(q *effect.ApprovalQuestion) { q.CoreID = "" },
		"revision":   func(q *effect.ApprovalQuestion) { q.CoreRevision = "" },
		"snapshot":   func(q *effect.ApprovalQuestion) { q.CapabilityFingerprint = "" },
		"tool":       func(q *effect.ApprovalQuestion) { q.Tool = "" },
		"entry":      func(q *effect.ApprovalQuestion) { q.Provenance, q.AdapterKey = "", "" },
		"auto still": func(q *effect.ApprovalQuestion) { q.SessionID, q.Policy = "", policy.Auto },
	} {
		q := question()
		change(&q)
		a := &scriptedAsker{answer: effect.DecisionAllowOnce}
		d, err := rt.Decide(context.Background(), q, a)
		if err == nil || demiurge.ErrorCode(err) != demiurge.EINVALID || d.Allowed || a.asked.Load() != 0 {
			t.Errorf("%s: d=%+v err=%v asked=%d", name, d, err, a.asked.Load())
		}
	}
}

func TestAuditView(t *testing.T) {
	q := question()
	q.Preview = map[string]any{"path": "notes.txt", "password": "hunter2-secret"}
	q.Target = "https://x/?token=abc123"
	v := q.AuditView()
	raw := strings.Join([]string{v["target"].(string)}, "")
	if strings.Contains(raw, "abc123") {
		t.Fatalf("target not redacted: %q", raw)
	}
	if p := v["arguments_preview"].(map[string]any); p["password"] != "<redacted>" || p["path"] != "notes.txt" {
		t.Fatalf("preview=%v", p)
	}
	if v["policy_fingerprint"] != q.PolicyFingerprint() || len(v["cache_key_fingerprint"].(string)) != 16 {
		t.Fatalf("fingerprints: %v", v)
	}
	for _, k := range []string{"tool_name", "tool_call_id", "turn_id", "session_id", "principal_id", "core_id", "core_revision", "capability", "action", "risk", "summary", "policy", "session_cacheable"} {
		if _, ok := v[k]; !ok {
			t.Errorf("audit view lacks %s", k)
		}
	}
	if _, ok := v["rule_key"]; ok {
		t.Error("audit view exposes the raw rule key")
	}
}

func TestConcurrentMixedLoad(t *testing.T) {
	rt, _ := newRuntime(t)
	a := &scriptedAsker{answer: effect.DecisionAllowSession}
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := question()
			q.SessionID = []string{"ses_a", "ses_b", "ses_c"}[i%3]
			q.RuleKey = effect.RuleKey([]string{"r1", "r2"}[i%2])
			if d, _ := rt.Decide(context.Background(), q, a); !d.Allowed && d.Reason != effect.ReasonInvalidated {
				t.Errorf("unexpected denial %+v", d)
			}
			if i%7 == 0 {
				rt.InvalidateSession(q.SessionID)
			}
			_ = rt.Stats()
		}()
	}
	wg.Wait()
}

// recv returns the next decision from ch, failing the test after 5 s.
func recv(t *testing.T, ch <-chan effect.Decision) effect.Decision {
	t.Helper()
	select {
	case d := <-ch:
		return d
	case <-time.After(5 * time.Second):
		t.Fatal("no decision within 5s")
		return effect.Decision{}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
