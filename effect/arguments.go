package effect

import "github.com/demiurge/demiurge/policy"

// ArgumentMessenger is implemented by adapters whose tool names its own
// argument errors ("unsupported context_mode: shared", "task_id is
// required"). The schema still decides whether the
// arguments are acceptable; when it refuses them, the runtime asks the
// adapter for the sentence the tool itself gives for the same arguments,
// and the model sees exactly that sentence. "" keeps the schema's message
// ("invalid arguments for <tool>: at /path: …").
//
// ArgumentError runs before the capability check and approval, so it must
// be pure: it reads args (a copy the runtime owns) and nothing else.
// schemaMsg is the schema's own one-line reason, for a tool that wants to
// name only some failures.
type ArgumentMessenger interface {
	ArgumentError(args map[string]any, schemaMsg string) string
}

// raisedRisk is the risk an approval question carries: the entry's, or
// the adapter's (ApprovalFacts.Risk) when that is higher. An adapter can
// raise the risk of one call (a read outside the workspace is high) but
// never lower what the entry and its metadata overrides say; an unknown
// level counts as critical.
func raisedRisk(entry, adapter string) string {
	if adapter == "" {
		return entry
	}
	r := policy.Risk(adapter)
	if !r.Valid() {
		r = policy.RiskCritical
	}
	if r.Compare(policy.Risk(entry)) > 0 {
		return string(r)
	}
	return entry
}
