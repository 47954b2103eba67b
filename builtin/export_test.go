package builtin

import "github.com/demiurge/demiurge/effect"

// ScheduleApprovalFacts are the facts schedule_manage asks the operator
// about for args, whatever its Prepare would make of them.
func ScheduleApprovalFacts(args map[string]any) effect.ApprovalFacts {
	a, out := effect.DecodeArgs(effect.Invocation{Args: args}, scheduleArgs{})
	if out != nil {
		panic(out.Content)
	}
	return scheduleFacts(a)
}
