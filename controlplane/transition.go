package controlplane

import "github.com/demiurge/demiurge"

// transitions is the task state machine of the spec, keyed by
// the current status and the event type that moves it. Terminal statuses
// have no entry: they are sticky.
var transitions = map[string]map[string]string{
	demiurge.TaskQueued: {
		demiurge.EvTaskStarted:   demiurge.TaskRunning,
		demiurge.EvTaskCancelled: demiurge.TaskCancelled,
		demiurge.EvTaskLost:      demiurge.TaskLost,
	},
	demiurge.TaskRunning: {
		demiurge.EvTaskSucceeded: demiurge.TaskSucceeded,
		demiurge.EvTaskFailed:    demiurge.TaskFailed,
		demiurge.EvTaskCancelled: demiurge.TaskCancelled,
		demiurge.EvTaskBlocked:   demiurge.TaskBlocked,
		demiurge.EvTaskLost:      demiurge.TaskLost,
	},
	demiurge.TaskBlocked: {
		demiurge.EvTaskSucceeded: demiurge.TaskSucceeded,
		demiurge.EvTaskFailed:    demiurge.TaskFailed,
		demiurge.EvTaskCancelled: demiurge.TaskCancelled,
		demiurge.EvTaskLost:      demiurge.TaskLost,
	},
}

// Transition reports the status a task in status from reaches through the
// task event type event, and whether that move is allowed at all. It is
// pure: the control plane and the worker share it as the one definition of
// the task state machine.
func Transition(from, event string) (to string, ok bool) {
	to, ok = transitions[from][event]
	return to, ok
}
