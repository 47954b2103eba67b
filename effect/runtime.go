package effect

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/redact"
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
	Secrets      *Secrets // the turn-wide secret set (nil: only what each call discovers)

	// ToolPolicy narrows the tools of a delegated child turn (nil: all).
	ToolPolicy *ToolPolicy
	// DelegationDepth is 0 for a top-level turn and parent+1 for a child.
	DelegationDepth int
	// TaskID is the task this turn runs for ("" for a foreground turn).
	TaskID string
	// ProtectedNames are file names this turn's file tools refuse to
	// write, beyond the Host's own list.
	ProtectedNames []string
	// OnRun, when set, is called once per call that passed its checks and
	// its approval, right before the adapter runs, with the call's id (the
	// turn engine's "running" observation). It must not block.
	OnRun func(callID string)
}

// ApprovalRequest is what an operator is asked. Every text in it is already
// redacted and bounded.
type ApprovalRequest struct {
	SessionID  string
	TurnID     string
	CallID     string
	Tool       string
	Action     string
	Target     string
	Provenance string
	Risk       string
	Capability string
	Summary    string
	Preview    map[string]any
	// Notes say how the effect is confined and what an "allow for this
	// session" answer would cover.
	Notes []string
}

// Decisions an Approver returns.
const (
	DecisionAllowOnce    = "allow_once"
	DecisionAllowSession = "always_allow_for_session"
	DecisionDeny         = "deny"
)

// Approver asks an operator. It returns one of the Decision values; an error
// or a cancelled context is a denial. An Approver that finds nobody to ask
// returns an error wrapping ErrNoOperator: the question is then denied
// exactly as if there were no Approver at all.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (string, error)
}

// ErrNoOperator is what an Approver returns (wrapped or not) when no
// operator is there to answer, such as a forwarding Approver with nothing
// attached.
var ErrNoOperator = errors.New("no interactive approval provider is attached")

// ApprovalFacts describe what the operator approves for one call.
type ApprovalFacts struct {
	Action  string
	Target  string
	Summary string
	RuleKey RuleKey
	// Baseline is combined with the entry's policy by Stricter; "" keeps the
	// entry's policy (adapters raise it, e.g. for a sensitive path).
	Baseline policy.Policy
	OneShot  bool
	// Safe marks a call the adapter judged harmless (a literal read-only
	// terminal command): it runs without asking unless the folded policy
	// is deny. Baseline, when set, still applies.
	Safe bool
	// Notes are shown to the operator with the question (see
	// ApprovalQuestion.Notes).
	Notes []string
	// Preview, when set, is what the operator sees of the arguments
	// instead of Preview(args) (web_extract shows its URL as scheme and
	// host only); it is bounded and redacted the same way.
	Preview map[string]any
	// Risk raises the question's risk above the entry's ("" keeps it; see
	// raisedRisk).
	Risk string
}

// preview is the argument preview of the question: the adapter's, else
// the arguments'.
func (f ApprovalFacts) preview(args map[string]any) map[string]any {
	if f.Preview != nil {
		return Preview(f.Preview, 0)
	}
	return Preview(args, 0)
}

// Options configure a Runtime.
type Options struct {
	// Timeout bounds one adapter invocation (default 120 s).
	Timeout time.Duration
	// Approvals decides prompts; nil means every prompt is a denial.
	Approvals *ApprovalRuntime
}

// Runtime dispatches bound requests. It is safe for concurrent use.
type Runtime struct {
	timeout   time.Duration
	approvals *ApprovalRuntime
}

// NewRuntime returns a Runtime.
func NewRuntime(opts Options) *Runtime {
	if opts.Timeout <= 0 {
		opts.Timeout = 120 * time.Second
	}
	return &Runtime{timeout: opts.Timeout, approvals: opts.Approvals}
}

// NotFound returns the result for a call whose name the catalog does not offer.
func NotFound(cat *Catalog, name string) demiurge.EffectResult {
	msg := "tool not found or not allowed: " + name
	prov := cat.unresolvedProvenance(name)
	return demiurge.EffectResult{
		Status: demiurge.EffectNotFound, Provenance: prov, ModelView: msg, OperatorView: msg,
		Data:      map[string]any{"executionStarted": false},
		Error:     &demiurge.EffectError{Code: string(demiurge.EffectNotFound), Message: msg, Provenance: prov},
		EventView: map[string]any{"content": msg, "data": map[string]any{"executionStarted": false}, "is_error": true, "terminate": false},
	}
}

// Execute runs req, which must have been bound by cat.Bind. The order is
// fixed: binding, argument schema, capability, the adapter's pure Host
// checks, approval, the adapter under its deadline, then bounding and
// redaction into the five views. No adapter code runs before the capability
// and approval checks pass.
func (r *Runtime) Execute(ctx context.Context, cat *Catalog, req demiurge.EffectRequest, tc TurnContext) demiurge.EffectResult {
	entry, ok := req.Entry.(*Entry)
	if !ok || entry == nil || cat.byName[req.Name] != entry || !tc.ToolPolicy.Allows(entry.Name, entry.Risk) {
		return NotFound(cat, req.Name)
	}
	red := tc.Secrets.Add(redact.Discover(map[string]any{"arguments": req.Arguments})...)
	finish := func(out Outcome) demiurge.EffectResult { return finish(entry, out, red, tc.Secrets) }

	if entry.CoreID != tc.CoreID || entry.CoreRevision != tc.CoreRevision {
		return finish(Outcome{IsError: true, Content: "resolved effect entry does not match the active core snapshot"})
	}
	if msg := argumentError(entry, req.Arguments); msg != "" {
		return finish(Outcome{IsError: true, Content: msg})
	}
	if entry.Capability != "" && !tc.Grants.Can(entry.Capability, entry.SlotPath) {
		return finish(Outcome{
			IsError: true, Denial: "capability",
			Content: fmt.Sprintf("capability denied: %s for %s", entry.Capability, cmp.Or(entry.SlotPath, "host")),
		})
	}
	inv := Invocation{CallID: req.CallID, Args: req.Arguments, Entry: entry, Catalog: cat, Turn: tc}
	call, refusal := entry.adapter.Prepare(ctx, inv)
	if refusal == nil && call == nil {
		refusal = &Outcome{Content: "tool " + entry.Name + " prepared no call"}
	}
	if refusal != nil {
		return finish(refused(*refusal))
	}
	asked, out, denied := r.approve(ctx, entry, inv, call.ApprovalFacts())
	if denied {
		return finish(out)
	}
	// What can change while the operator decides is checked again now; a
	// call nobody was asked about runs as it was prepared.
	if rc, ok := call.(Rechecker); ok && asked {
		if refusal := rc.Recheck(ctx); refusal != nil {
			return finish(refused(*refusal))
		}
	}

	if tc.OnRun != nil {
		tc.OnRun(req.CallID)
	}
	callCtx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	out, err := call.Run(callCtx)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return withStatus(finish(Outcome{IsError: true, ExecutionStarted: true, Content: "tool call cancelled"}), demiurge.EffectCancelled)
	case errors.Is(callCtx.Err(), context.DeadlineExceeded):
		return withStatus(finish(Outcome{IsError: true, ExecutionStarted: true, Content: fmt.Sprintf("tool %s timed out after %s", entry.Name, r.timeout)}), demiurge.EffectTimedOut)
	default:
		out = Outcome{IsError: true, ExecutionStarted: true, Content: redact.Error(err, red, redact.Model)}
	}
	return finish(out)
}

// approve decides the call's approval from its facts. asked reports that
// the question went to the approval runtime (the policy was not auto);
// denied reports a refusal, with the outcome to return.
func (r *Runtime) approve(ctx context.Context, e *Entry, inv Invocation, facts ApprovalFacts) (asked bool, out Outcome, denied bool) {
	if facts.Action == "" {
		facts.Action, facts.Target = "effect.call", cmp.Or(facts.Target, e.Provenance)
	}
	if facts.Summary == "" {
		facts.Summary = fmt.Sprintf("Call %s tool %s", e.Source, e.Name)
	}
	effective := policy.Policy(e.ApprovalPolicy)
	if facts.Safe && effective.Valid() && effective != policy.Deny {
		effective = policy.Auto
	}
	if facts.Baseline != "" {
		effective = policy.Stricter(effective, facts.Baseline)
	}
	if effective == policy.Auto {
		return false, Outcome{}, false
	}
	var d Decision
	if r.approvals == nil {
		d = Decision{Value: DecisionDeny, Reason: ReasonNoOperator}
		if effective == policy.Deny {
			d.Reason = ReasonPolicyDeny
		}
	} else {
		capability := e.Capability
		if capability == "" {
			capability = "tool.call:" + e.Name
		}
		var err error
		d, err = r.approvals.Decide(ctx, ApprovalQuestion{
			PrincipalID: inv.Turn.Scope.PrincipalID, SessionID: inv.Turn.SessionID, TurnID: inv.Turn.TurnID, CallID: inv.CallID,
			Tool: e.Name, Action: facts.Action, Target: facts.Target, Summary: facts.Summary,
			Risk: raisedRisk(e.Risk, facts.Risk), Capability: capability, Provenance: e.Provenance, Preview: facts.preview(inv.Args), Notes: facts.Notes,
			Policy: effective, CoreID: e.CoreID, CoreRevision: e.CoreRevision,
			CapabilityFingerprint: inv.Turn.Grants.Fingerprint(), AdapterKey: e.AdapterKey, RuleKey: facts.RuleKey,
			Options: QuestionOptions{OneShot: facts.OneShot},
		}, inv.Turn.Approver)
		if err != nil {
			d = Decision{Value: DecisionDeny, Reason: demiurge.ErrorMessage(err)}
		}
	}
	if d.Allowed {
		return true, Outcome{}, false
	}
	return true, Outcome{
		IsError: true, Denial: "approval",
		Content: "approval denied: " + facts.Summary,
		Data:    map[string]any{"approval": map[string]any{"value": cmp.Or(d.Value, DecisionDeny), "reason": d.Reason}},
	}, true
}

// refused is an adapter's refusal before it ran: an error that never
// started.
func refused(out Outcome) Outcome {
	out.IsError, out.ExecutionStarted = true, false
	return out
}

// finish derives the typed status and the five redacted views of an outcome.
// Secrets discovered in the result join the turn's set, so a value found
// once (password=… in one file) is redacted wherever it appears later.
func finish(e *Entry, out Outcome, red *redact.Redactor, turn *Secrets) demiurge.EffectResult {
	data := maps.Clone(out.Data)
	if data == nil {
		data = map[string]any{}
	}
	data["executionStarted"] = out.ExecutionStarted
	if out.Denial != "" {
		data["denial"] = out.Denial
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
	views, err := redact.Redact(redact.ToolResult{
		Content: out.Content, Data: data, IsError: out.IsError, Terminate: out.Terminate, ModelOutput: out.ModelOutput,
	}, red)
	if err != nil && status == demiurge.EffectSucceeded {
		status = demiurge.EffectFailed // every view is already the fixed failed result
	}
	turn.Add(views.Discovered...)
	model := views.Model.ModelOutput
	if model == "" {
		model = views.Model.Content
	}
	operator := views.Operator.Content
	if out.DisplayOutput != "" && err == nil {
		operator = red.String(out.DisplayOutput, redact.Operator)
	}
	res := demiurge.EffectResult{
		Status: status, ExecutionStarted: out.ExecutionStarted, Source: e.Source, Provenance: e.Provenance,
		ModelView: model, OperatorView: operator, Data: views.Model.Data, Terminate: out.Terminate,
		EventView: viewMap(views.Event), DurableView: viewMap(views.Durable), DebugView: viewMap(views.Debug),
	}
	if status != demiurge.EffectSucceeded {
		res.Error = &demiurge.EffectError{Code: string(status), Message: views.Durable.Content, ExecutionStarted: out.ExecutionStarted, Provenance: e.Provenance}
	}
	return res
}

func viewMap(r redact.ToolResult) map[string]any {
	m := map[string]any{"content": r.Content, "data": r.Data, "is_error": r.IsError, "terminate": r.Terminate}
	if r.ModelOutput != "" {
		m["model_output"] = r.ModelOutput
	}
	return m
}

func withStatus(r demiurge.EffectResult, status demiurge.EffectStatus) demiurge.EffectResult {
	r.Status = status
	if r.Error != nil {
		r.Error.Code = string(status)
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
