package demiurge

// EffectStatus is the status of an effect result.
type EffectStatus string

// Effect result statuses.
const (
	EffectSucceeded     EffectStatus = "succeeded"
	EffectDenied        EffectStatus = "denied"
	EffectInvalid       EffectStatus = "invalid"
	EffectNotFound      EffectStatus = "not_found"
	EffectFailed        EffectStatus = "failed"
	EffectTimedOut      EffectStatus = "timed_out"
	EffectCancelled     EffectStatus = "cancelled"
	EffectIndeterminate EffectStatus = "indeterminate"
)

// Effect request origins.
const (
	OriginModel    = "model"
	OriginHost     = "host"
	OriginAuthored = "authored"
)

// EffectRequest asks the effect runtime to run one catalog entry. Entry is the
// opaque reference the catalog handed out; dispatch never looks a name up again.
type EffectRequest struct {
	CallID    string
	Name      string
	Entry     any
	Arguments map[string]any
	Origin    string
}

// EffectError is the typed error of a result that did not succeed.
type EffectError struct {
	Code             string `json:"code"`
	Message          string `json:"message"`
	ExecutionStarted bool   `json:"execution_started"`
	Provenance       string `json:"provenance"`
}

// EffectResult is the outcome of one effect. ModelView is what the model sees;
// the other views are redacted for their audience. Terminate ends the model
// loop (clarify); Data carries structured facts (needs_user, question, ...).
type EffectResult struct {
	Status           EffectStatus
	ExecutionStarted bool
	Error            *EffectError
	Source           string
	Provenance       string
	ModelView        string
	OperatorView     string
	EventView        map[string]any
	DurableView      map[string]any
	DebugView        map[string]any
	Data             map[string]any
	Terminate        bool
}

// IsError reports whether the result is not a success.
func (r EffectResult) IsError() bool { return r.Status != EffectSucceeded }
