package controlplane_test

import (
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
)

func TestTransitionTable(t *testing.T) {
	const (
		q, r, b = demiurge.TaskQueued, demiurge.TaskRunning, demiurge.TaskBlocked
		s, f, c = demiurge.TaskSucceeded, demiurge.TaskFailed, demiurge.TaskCancelled
		l       = demiurge.TaskLost
	)
	events := []string{demiurge.EvTaskStarted, demiurge.EvTaskSucceeded, demiurge.EvTaskFailed,
		demiurge.EvTaskCancelled, demiurge.EvTaskBlocked, demiurge.EvTaskLost}
	// want[from][event] = to; a missing entry is a refused move.
	want := map[string]map[string]string{
		q: {demiurge.EvTaskStarted: r, demiurge.EvTaskCancelled: c, demiurge.EvTaskLost: l},
		r: {demiurge.EvTaskSucceeded: s, demiurge.EvTaskFailed: f, demiurge.EvTaskCancelled: c,
			demiurge.EvTaskBlocked: b, demiurge.EvTaskLost: l},
		b: {demiurge.EvTaskSucceeded: s, demiurge.EvTaskFailed: f, demiurge.EvTaskCancelled: c, demiurge.EvTaskLost: l},
		s: {}, f: {}, c: {}, l: {},
		"bogus": {},
	}
	for from, row := range want {
		for _, ev := range events {
			to, ok := controlplane.Transition(from, ev)
			wantTo, wantOK := row[ev]
			if ok != wantOK || to != wantTo {
				t.Errorf("Transition(%s, %s) = %q, %v; want %q, %v", from, ev, to, ok, wantTo, wantOK)
			}
		}
		if got := demiurge.TaskActive(from); got != (len(row) > 0) {
			t.Errorf("Running(%s) = %v", from, got)
		}
	}
}
