package effect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/policy"
)

// TurnContext is the frozen identity a call executes under. It is built by
// the turn engine at admission; nothing in it comes from the model.
type TurnContext struct {
	SessionID    string
	TurnID       string
	StepID       string
	CoreID       string
	CoreRevision string
	Workspace    string
	Scope        demiurge.PrincipalScope
	Grants       policy.Grants
	Approver     Approver // nil: no operator can answer, so a prompt is a denial
}

// ApprovalRequest is what an operator is asked.
type ApprovalRequest struct {
	SessionID  string
	TurnID     string
	CallID     string
	Tool       string
	Provenance string
	Risk       string
	Capability string
	Summary    string
}

// Decisions an Approver returns.
const (
	DecisionAllowOnce    = "allow_once"
	DecisionAllowSession = "always_allow_for_session"
	DecisionDeny         = "deny"
)

// Approver asks an operator. It returns one of the Decision values; an error
// or a cancelled context is a denial.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (string, error)
}

// Options configure a Runtime.
type Options struct {
	// Timeout bounds one adapter invocation (default 120 s).
	Timeout time.Duration
}

// Runtime dispatches bound requests. It is safe for concurrent use.
type Runtime struct {
	timeout time.Duration
}

// NewRuntime returns a Runtime.
func NewRuntime(opts Options) *Runtime {
	if opts.Timeout <= 0 {
		opts.Timeout = 120 * time.Second
	}
	return &Runtime{timeout: opts.Timeout}
}

// NotFound returns the result for a call whose name the catalog does not offer.
func NotFound(cat *Catalog, name string) demiurge.EffectResult {
	msg := "tool not found or not allowed: " + name
	prov := cat.unresolvedProvenance(name)
	return demiurge.EffectResult{
		Status: demiurge.EffectNotFound, Provenance: prov, ModelView: msg, OperatorView: msg,
		Data:  map[string]any{"executionStarted": false},
		Error: &demiurge.EffectError{Code: demiurge.EffectNotFound, Message: msg, Provenance: prov},
	}
}

// Execute runs req, which must have been bound by cat.Bind. The order of
// checks is fixed: binding, capability, approval, adapter under deadline,
// then result normalisation. No adapter code runs before the capability and
// approval checks pass.
func (r *Runtime) Execute(ctx context.Context, cat *Catalog, req demiurge.EffectRequest, tc TurnContext) demiurge.EffectResult {
	entry, ok := req.Entry.(*Entry)
	if !ok || entry == nil || cat.byName[req.Name] != entry {
		return NotFound(cat, req.Name)
	}
	if entry.CoreID != tc.CoreID || entry.CoreRevision != tc.CoreRevision {
		return finish(entry, Outcome{IsError: true, Content: "resolved effect entry does not match the active core snapshot"})
	}
	if entry.Capability != "" && !tc.Grants.Can(entry.Capability, "") {
		return finish(entry, Outcome{
			IsError: true, Denial: "capability",
			Content: fmt.Sprintf("capability denied: %s for host", entry.Capability),
		})
	}
	if out, denied := r.approve(ctx, entry, req, tc); denied {
		return finish(entry, out)
	}

	callCtx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	out, err := entry.adapter.Invoke(callCtx, Invocation{CallID: req.CallID, Args: req.Arguments, Entry: entry, Catalog: cat, Turn: tc})
	switch {
	case err == nil:
	case errors.Is(callCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		res := finish(entry, Outcome{IsError: true, ExecutionStarted: true, Content: fmt.Sprintf("tool %s timed out after %s", entry.Name, r.timeout)})
		return withStatus(res, demiurge.EffectTimedOut)
	case ctx.Err() != nil:
		res := finish(entry, Outcome{IsError: true, ExecutionStarted: true, Content: "tool call cancelled"})
		return withStatus(res, demiurge.EffectCancelled)
	default:
		out = Outcome{IsError: true, ExecutionStarted: true, Content: demiurge.ErrorMessage(err)}
	}
	return finish(entry, out)
}

func (r *Runtime) approve(ctx context.Context, e *Entry, req demiurge.EffectRequest, tc TurnContext) (Outcome, bool) {
	deny := func(reason string) (Outcome, bool) {
		return Outcome{IsError: true, Denial: "approval", Content: fmt.Sprintf("approval denied: Call %s tool %s (%s)", e.Source, e.Name, reason)}, true
	}
	switch e.ApprovalPolicy {
	case ApprovalAuto:
		return Outcome{}, false
	case ApprovalDeny:
		return deny("policy deny")
	}
	if tc.Approver == nil {
		return deny("no operator can answer")
	}
	decision, err := tc.Approver.Approve(ctx, ApprovalRequest{
		SessionID: tc.SessionID, TurnID: tc.TurnID, CallID: req.CallID, Tool: e.Name,
		Provenance: e.Provenance, Risk: e.Risk, Capability: e.Capability,
		Summary: fmt.Sprintf("Call %s tool %s", e.Source, e.Name),
	})
	if err != nil || ctx.Err() != nil {
		return deny("no answer")
	}
	if decision == DecisionAllowOnce || decision == DecisionAllowSession {
		return Outcome{}, false
	}
	return deny("operator denied")
}

// finish derives the typed status and the views of an outcome.
func finish(e *Entry, out Outcome) demiurge.EffectResult {
	data := copyMap(out.Data)
	if data == nil {
		data = map[string]any{}
	}
	data["executionStarted"] = out.ExecutionStarted
	if out.Denial != "" {
		data["denial"] = out.Denial
	}
	model := out.ModelOutput
	if model == "" {
		model = out.Content
	}
	status := demiurge.EffectSucceeded
	if out.IsError {
		switch {
		case out.Denial != "":
			status = demiurge.EffectDenied
		case out.ExecutionStarted:
			status = demiurge.EffectFailed
		default:
			status = demiurge.EffectInvalid
		}
	}
	res := demiurge.EffectResult{
		Status: status, ExecutionStarted: out.ExecutionStarted, Source: e.Source, Provenance: e.Provenance,
		ModelView: model, OperatorView: out.Content, Data: data, Terminate: out.Terminate,
	}
	durable := map[string]any{"content": out.Content, "data": data, "is_error": out.IsError, "terminate": out.Terminate}
	res.EventView, res.DurableView, res.DebugView = durable, durable, durable
	if out.IsError {
		res.Error = &demiurge.EffectError{Code: status, Message: out.Content, ExecutionStarted: out.ExecutionStarted, Provenance: e.Provenance}
	}
	return res
}

func withStatus(r demiurge.EffectResult, status string) demiurge.EffectResult {
	r.Status = status
	if r.Error != nil {
		r.Error.Code = status
	}
	return r
}

// freeze returns a deep copy of args through JSON, so an adapter cannot mutate
// what the caller recorded.
func freeze(args map[string]any) map[string]any {
	if args == nil {
		return map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return map[string]any{}
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
