package effect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/policy"
)

// DefaultGrantTTL is how long an "always allow for this session" answer
// stands.
const DefaultGrantTTL = 8 * time.Hour

// Who decided an approval question, for the audit trail.
const (
	DecidedByPolicy     = "policy"      // the effective policy was auto or deny (or invalid: deny)
	DecidedByCache      = "cache"       // a live session grant answered
	DecidedByOperator   = "operator"    // the Approver answered
	DecidedByNoOperator = "no_operator" // no Approver, or it failed to answer
	DecidedByRuntime    = "runtime"     // runtime closed, scope invalidated, caller gone, bad question
)

// Decision reasons that callers and tests may rely on.
const (
	ReasonClosed          = "approval runtime is closed"
	ReasonPolicyDeny      = "denied by approval policy"
	ReasonPolicyAuto      = "auto-approved by host policy"
	ReasonSessionGrant    = "session allowlist"
	ReasonNoOperator      = "no interactive approval provider configured"
	ReasonApprovedOnce    = "approved by operator"
	ReasonApprovedSession = "approved by operator for this session"
	ReasonDenied          = "denied by operator"
	ReasonOneShotSession  = "approved once; session caching is disabled for this request"
	ReasonInvalidated     = "approval scope invalidated while decision was pending"
	ReasonWaitCancelled   = "approval wait cancelled"
)

// ApprovalOptions configure an ApprovalRuntime.
type ApprovalOptions struct {
	Now func() time.Time // clock; default time.Now
	TTL time.Duration    // lifetime of a session grant; ≤ 0 means DefaultGrantTTL
}

// RuleKey names what one session grant covers within an effect entry. Each
// adapter supplies its own: the terminal a command rule key,
// file tools "<tool>:<cap>:<action>:<target>", and so on. Two questions
// share a grant only if their rule keys are equal. Empty means the tool name.
type RuleKey string

// QuestionOptions modify how one question is decided.
type QuestionOptions struct {
	// OneShot marks a question whose answer must never be reused (secret
	// bindings): no session grant answers it, an "always allow for this
	// session" answer counts once and stores nothing, and it never shares a
	// pending prompt with another call.
	OneShot bool
}

// ApprovalQuestion is one approval decision to make. Every field comes from
// the Host (the turn's scope and the resolved entry), never from the model.
type ApprovalQuestion struct {
	// Who asks, and where. PrincipalID and SessionID are part of the grant
	// identity; TurnID and CallID only correlate.
	PrincipalID string
	SessionID   string
	TurnID      string
	CallID      string

	// What the operator is shown. Summary and Target are redacted and
	// bounded by the runtime (500 and 1,000 characters); Preview should be
	// built with Preview(args, 0) and is redacted and bounded again.
	Tool       string
	Action     string
	Target     string
	Summary    string
	Risk       string
	Capability string
	Provenance string
	Preview    map[string]any
	// Notes are facts the operator should weigh, in words: how the effect
	// is confined, what an "allow for this session" answer covers.
	Notes []string

	// Policy is the effective (folded) policy of this call.
	Policy policy.Policy

	// Grant identity besides principal and session. A session grant answers
	// a later question only if all of these, the policy and the tool,
	// capability, action and risk are equal.
	CoreID                string
	CoreRevision          string
	CapabilityFingerprint string // policy.Grants.Fingerprint of the turn's snapshot
	AdapterKey            string // with Provenance: the entry's identity
	RuleKey               RuleKey

	Options QuestionOptions
}

// Decision is the outcome of one question.
type Decision struct {
	Allowed   bool
	Value     string // DecisionAllowOnce, DecisionAllowSession or DecisionDeny
	DecidedBy string // DecidedBy*
	Reason    string
	Automatic bool // decided by policy or runtime state, without grant or operator
	Cached    bool // a session grant answered

	// GrantExpires is set when this decision stored a session grant.
	GrantExpires time.Time

	// PolicyFingerprint and KeyFingerprint identify the grant in audit
	// records without exposing the identity itself.
	PolicyFingerprint string
	KeyFingerprint    string
}

// AuditFields are the decision's fields for approval.decided/denied events.
func (d Decision) AuditFields() map[string]any {
	m := map[string]any{
		"decision": d.Value, "reason": d.Reason, "decided_by": d.DecidedBy,
		"cached": d.Cached, "automatic": d.Automatic,
	}
	if !d.GrantExpires.IsZero() {
		m["grant_expires_at"] = demiurge.FormatTime(d.GrantExpires)
	}
	return m
}

// ApprovalStats is a point-in-time view of the runtime, for status pages.
type ApprovalStats struct {
	Grants  int // live session grants
	Pending int // questions waiting for an operator
	Waiters int // calls waiting on those questions
}

// ApprovalRuntime decides approval questions: the effective
// policy first, then a live session grant, then the operator. It is safe
// for concurrent use.
//
// Identical pending questions (same grant identity) are asked once: the
// first caller starts the prompt and every caller that arrives while it is
// pending receives the same answer. Questions with different identities
// never wait for each other. Every failure denies: no Approver, an Approver
// error or unknown answer, a cancelled caller, an invalidation while the
// question is pending, or a closed runtime.
//
// The runtime owns one goroutine per pending prompt. It runs the Approver
// under a context that is cancelled when every caller waiting for it has
// gone, when its scope is invalidated, or at Shutdown; an Approver must
// return promptly once that context is done. Callers are released as soon
// as the question is settled, even if the Approver has not returned yet.
type ApprovalRuntime struct {
	now func() time.Time
	ttl time.Duration
	wg  sync.WaitGroup // one per running prompt goroutine

	mu      sync.Mutex // guards closed, grants, flights, byKey
	closed  bool
	grants  map[grantKey]time.Time // expiry of each session grant
	flights map[*flight]struct{}   // every pending prompt
	byKey   map[grantKey]*flight   // pending prompts other callers may join
}

// grantKey is the full identity of a session grant.
type grantKey struct {
	Principal   string  `json:"principal_id"`
	Session     string  `json:"session_id"`
	Core        string  `json:"core_id"`
	Fingerprint string  `json:"policy_fingerprint"`
	Rule        RuleKey `json:"rule_key"`
}

// flight is one pending operator prompt and the callers waiting for it.
type flight struct {
	key     grantKey
	oneShot bool
	cancel  context.CancelFunc
	done    chan struct{} // closed when settled
	waiters int
	settled bool
	result  Decision
}

// NewApprovalRuntime returns an empty runtime.
func NewApprovalRuntime(opts ApprovalOptions) *ApprovalRuntime {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultGrantTTL
	}
	return &ApprovalRuntime{
		now: opts.Now, ttl: opts.TTL,
		grants:  make(map[grantKey]time.Time),
		flights: make(map[*flight]struct{}),
		byKey:   make(map[grantKey]*flight),
	}
}

// Decide answers q. The order is fixed: closed runtime → deny; invalid
// question → deny with an EINVALID error; policy deny → deny; policy auto →
// allow; a live session grant for q's identity → allow; no asker → deny;
// otherwise the asker is asked (once for all identical pending questions)
// and its answer applies: DecisionAllowOnce allows, DecisionAllowSession
// allows and stores a grant for the TTL (not for a one-shot question),
// anything else denies.
//
// The returned error is non-nil only for a malformed question (a bug in the
// caller); the Decision is a denial then too, so ignoring the error is safe.
func (r *ApprovalRuntime) Decide(ctx context.Context, q ApprovalQuestion, asker Approver) (Decision, error) {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return Decision{Value: DecisionDeny, DecidedBy: DecidedByRuntime, Reason: ReasonClosed, Automatic: true}, nil
	}
	if err := q.validate(); err != nil {
		return Decision{Value: DecisionDeny, DecidedBy: DecidedByRuntime, Reason: demiurge.ErrorMessage(err), Automatic: true}, err
	}
	key := q.key()
	stamp := func(d Decision) Decision {
		d.PolicyFingerprint, d.KeyFingerprint = key.Fingerprint, key.short()
		d.Automatic = d.DecidedBy == DecidedByPolicy || d.DecidedBy == DecidedByRuntime
		return d
	}
	switch q.Policy {
	case policy.Deny:
		return stamp(deny(DecidedByPolicy, ReasonPolicyDeny)), nil
	case policy.Auto:
		return stamp(Decision{Allowed: true, Value: DecisionAllowOnce, DecidedBy: DecidedByPolicy, Reason: ReasonPolicyAuto}), nil
	case policy.Prompt:
	default:
		return stamp(deny(DecidedByPolicy, "invalid approval policy: "+string(q.Policy))), nil
	}

	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return stamp(deny(DecidedByRuntime, ReasonClosed)), nil
	}
	if !q.Options.OneShot && r.liveGrantLocked(key) {
		r.mu.Unlock()
		return stamp(Decision{Allowed: true, Value: DecisionAllowSession, DecidedBy: DecidedByCache, Reason: ReasonSessionGrant, Cached: true}), nil
	}
	if asker == nil {
		r.mu.Unlock()
		return stamp(deny(DecidedByNoOperator, ReasonNoOperator)), nil
	}
	if err := ctx.Err(); err != nil {
		r.mu.Unlock()
		return stamp(deny(DecidedByRuntime, ReasonWaitCancelled)), nil
	}
	var f *flight
	if !q.Options.OneShot {
		f = r.byKey[key]
	}
	if f == nil {
		f = r.startFlightLocked(ctx, key, q, asker)
	}
	f.waiters++
	r.mu.Unlock()

	select {
	case <-f.done:
		return stamp(f.result), nil
	case <-ctx.Done():
		r.mu.Lock()
		f.waiters--
		if f.waiters == 0 && !f.settled {
			// Nobody wants the answer any more: withdraw the prompt.
			r.settleLocked(f, deny(DecidedByRuntime, ReasonWaitCancelled))
			f.cancel()
		}
		r.mu.Unlock()
		return stamp(deny(DecidedByRuntime, ReasonWaitCancelled)), nil
	}
}

// startFlightLocked registers a prompt for key and starts its goroutine.
// The prompt keeps the first caller's context values but not its
// cancellation: later callers may still want the answer.
func (r *ApprovalRuntime) startFlightLocked(ctx context.Context, key grantKey, q ApprovalQuestion, asker Approver) *flight {
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f := &flight{key: key, oneShot: q.Options.OneShot, cancel: cancel, done: make(chan struct{})}
	r.flights[f] = struct{}{}
	if !f.oneShot {
		r.byKey[key] = f
	}
	req := q.operatorRequest()
	r.wg.Add(1)
	go r.ask(fctx, f, asker, req)
	return f
}

// ask runs one prompt and settles its flight with the answer, unless the
// flight was settled meanwhile (withdrawn, invalidated, shut down).
func (r *ApprovalRuntime) ask(ctx context.Context, f *flight, asker Approver, req ApprovalRequest) {
	defer r.wg.Done()
	defer f.cancel()
	answer, err := safeApprove(ctx, asker, req)

	r.mu.Lock()
	defer r.mu.Unlock()
	if f.settled {
		return
	}
	var d Decision
	switch {
	case ctx.Err() != nil:
		d = deny(DecidedByRuntime, ReasonWaitCancelled)
	case errors.Is(err, ErrNoOperator):
		d = deny(DecidedByNoOperator, ReasonNoOperator)
	case err != nil:
		d = deny(DecidedByNoOperator, "approval provider failed: "+demiurge.ErrorMessage(err))
	case answer == DecisionAllowOnce:
		d = Decision{Allowed: true, Value: DecisionAllowOnce, DecidedBy: DecidedByOperator, Reason: ReasonApprovedOnce}
	case answer == DecisionAllowSession && f.oneShot:
		d = Decision{Allowed: true, Value: DecisionAllowOnce, DecidedBy: DecidedByOperator, Reason: ReasonOneShotSession}
	case answer == DecisionAllowSession:
		expires := r.now().Add(r.ttl)
		r.pruneGrantsLocked()
		r.grants[f.key] = expires
		d = Decision{Allowed: true, Value: DecisionAllowSession, DecidedBy: DecidedByOperator, Reason: ReasonApprovedSession, GrantExpires: expires}
	case answer == DecisionDeny:
		d = deny(DecidedByOperator, ReasonDenied)
	default:
		d = deny(DecidedByOperator, "invalid approval decision: "+TruncateText(answer, 64))
	}
	r.settleLocked(f, d)
}

// safeApprove calls the asker; a panic in it is a failed answer, not a crash
// and never an approval.
func safeApprove(ctx context.Context, asker Approver, req ApprovalRequest) (answer string, err error) {
	defer func() {
		if p := recover(); p != nil {
			answer, err = "", fmt.Errorf("approver panicked: %v", p)
		}
	}()
	return asker.Approve(ctx, req)
}

// settleLocked records f's result, releases its waiters and forgets it.
func (r *ApprovalRuntime) settleLocked(f *flight, d Decision) {
	if f.settled {
		return
	}
	f.settled, f.result = true, d
	close(f.done)
	delete(r.flights, f)
	if r.byKey[f.key] == f {
		delete(r.byKey, f.key)
	}
}

// liveGrantLocked reports whether a grant for key exists and has not
// expired; an expired grant is dropped.
func (r *ApprovalRuntime) liveGrantLocked(key grantKey) bool {
	expires, ok := r.grants[key]
	if !ok {
		return false
	}
	if !r.now().Before(expires) {
		delete(r.grants, key)
		return false
	}
	return true
}

func (r *ApprovalRuntime) pruneGrantsLocked() {
	now := r.now()
	for k, expires := range r.grants {
		if !now.Before(expires) {
			delete(r.grants, k)
		}
	}
}

// InvalidateSession drops every grant of sessionID and denies its pending
// questions (a new or replaced session). It returns the grants dropped.
func (r *ApprovalRuntime) InvalidateSession(sessionID string) int {
	return r.invalidate(func(k grantKey) bool { return k.Session == sessionID })
}

// InvalidateCore drops every grant bound to coreID and denies its pending
// questions (a promotion or rollback changed what the core may do). It
// returns the grants dropped.
func (r *ApprovalRuntime) InvalidateCore(coreID string) int {
	return r.invalidate(func(k grantKey) bool { return k.Core == coreID })
}

// InvalidatePrincipal drops every grant of principalID and denies its
// pending questions (revocation). It returns the grants dropped.
func (r *ApprovalRuntime) InvalidatePrincipal(principalID string) int {
	return r.invalidate(func(k grantKey) bool { return k.Principal == principalID })
}

func (r *ApprovalRuntime) invalidate(match func(grantKey) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for k := range r.grants {
		if match(k) {
			delete(r.grants, k)
			n++
		}
	}
	for f := range r.flights {
		if match(f.key) {
			r.settleLocked(f, deny(DecidedByRuntime, ReasonInvalidated))
			f.cancel()
		}
	}
	return n
}

// Shutdown closes the runtime: every grant is dropped, every pending
// question is denied, and every later Decide denies with ReasonClosed. It
// then waits for the running prompts to return, or for ctx, whose error it
// returns. Calling it again is harmless.
func (r *ApprovalRuntime) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	clear(r.grants)
	for f := range r.flights {
		r.settleLocked(f, deny(DecidedByRuntime, ReasonClosed))
		f.cancel()
	}
	r.mu.Unlock()

	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stats returns the runtime's current counts.
func (r *ApprovalRuntime) Stats() ApprovalStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pruneGrantsLocked()
	s := ApprovalStats{Grants: len(r.grants), Pending: len(r.flights)}
	for f := range r.flights {
		s.Waiters += f.waiters
	}
	return s
}

func deny(by, reason string) Decision {
	return Decision{Value: DecisionDeny, DecidedBy: by, Reason: reason}
}

// validate checks that q carries its whole grant identity. A question
// without one could share a grant it was never given.
func (q ApprovalQuestion) validate() error {
	missing := ""
	switch {
	case q.PrincipalID == "":
		missing = "principal id"
	case q.SessionID == "":
		missing = "session id"
	case q.CoreID == "":
		missing = "core id"
	case q.CoreRevision == "":
		missing = "core revision"
	case q.CapabilityFingerprint == "":
		missing = "capability snapshot fingerprint"
	case q.Tool == "":
		missing = "tool name"
	case q.Provenance == "" && q.AdapterKey == "":
		missing = "entry identity (provenance or adapter key)"
	}
	if missing != "" {
		return demiurge.Errorf(demiurge.EINVALID, "approval question for tool %q has no %s", q.Tool, missing)
	}
	return nil
}

// EffectiveRuleKey returns q's rule key, the tool name when none is set.
func (q ApprovalQuestion) EffectiveRuleKey() RuleKey {
	if q.RuleKey == "" {
		return RuleKey(q.Tool)
	}
	return q.RuleKey
}

// PolicyFingerprint is the hex SHA-256 of everything a session grant is
// bound to besides principal, session, core id and rule key: the core
// revision, the capability snapshot, the effective policy and the entry
// (provenance, adapter key, tool, capability, action, risk).
func (q ApprovalQuestion) PolicyFingerprint() string {
	raw, _ := json.Marshal(map[string]any{ // strings only: cannot fail
		"core_id":             q.CoreID,
		"core_revision":       q.CoreRevision,
		"capability_snapshot": q.CapabilityFingerprint,
		"effective_policy":    string(q.Policy),
		"effect_entry": map[string]string{
			"provenance": q.Provenance, "adapter_key": q.AdapterKey,
			"tool_name": q.Tool, "capability": q.Capability, "action": q.Action, "risk": q.Risk,
		},
	})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

func (q ApprovalQuestion) key() grantKey {
	return grantKey{
		Principal: q.PrincipalID, Session: q.SessionID, Core: q.CoreID,
		Fingerprint: q.PolicyFingerprint(), Rule: q.EffectiveRuleKey(),
	}
}

// short is the audit form of a grant identity: 16 hex chars of its digest.
func (k grantKey) short() string {
	raw, _ := json.Marshal(k)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// summary returns the redacted, bounded summary shown to the operator.
func (q ApprovalQuestion) summary() string {
	s := q.Summary
	if s == "" {
		s = "Call tool " + q.Tool
	}
	return TruncateText(RedactText(s), 500)
}

// operatorRequest is what the Approver is shown. The owner fields come from
// the question, which the Host built from the turn's scope.
func (q ApprovalQuestion) operatorRequest() ApprovalRequest {
	return ApprovalRequest{
		SessionID: q.SessionID, TurnID: q.TurnID, CallID: q.CallID,
		Tool: q.Tool, Provenance: q.Provenance, Risk: q.Risk, Capability: q.Capability,
		Summary: q.summary(), Action: q.Action, Target: TruncateText(RedactText(q.Target), 1000),
		Preview: sanitizePreview(q.Preview), Notes: q.notes(),
	}
}

// notes are the redacted, bounded Notes.
func (q ApprovalQuestion) notes() []string {
	if len(q.Notes) == 0 {
		return nil
	}
	out := make([]string, 0, len(q.Notes))
	for _, n := range q.Notes {
		out = append(out, TruncateText(RedactText(n), 500))
	}
	return out
}

// AuditView is the redacted form of q for approval.* events (the spec's
// redacted_view): no raw argument, no raw grant identity.
func (q ApprovalQuestion) AuditView() map[string]any {
	key := q.key()
	return map[string]any{
		"tool_name": q.Tool, "tool_call_id": q.CallID, "turn_id": q.TurnID,
		"session_id": q.SessionID, "principal_id": q.PrincipalID,
		"core_id": q.CoreID, "core_revision": q.CoreRevision,
		"policy_fingerprint": key.Fingerprint, "cache_key_fingerprint": key.short(),
		"capability": q.Capability, "action": q.Action, "risk": q.Risk,
		"provenance": q.Provenance,
		"summary":    q.summary(), "target": TruncateText(RedactText(q.Target), 1000),
		"arguments_preview": sanitizePreview(q.Preview),
		"policy":            string(q.Policy), "session_cacheable": !q.Options.OneShot,
		"notes": q.notes(),
	}
}
