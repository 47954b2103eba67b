package slot

import (
	"cmp"

	"github.com/demiurge/demiurge"
)

// DefaultFunction is the entry function of a slot module.
const DefaultFunction = "process"

func lane(s demiurge.SlotSpec) string { return cmp.Or(s.Lane, demiurge.LaneSerial) }

func function(s demiurge.SlotSpec) string { return cmp.Or(s.Function, DefaultFunction) }

func hard(s demiurge.SlotSpec) bool { return s.FailurePolicy == demiurge.FailHard }

// modulePath is the name the module carries in errors.
func modulePath(s demiurge.SlotSpec) string {
	return cmp.Or(s.ModulePath, s.RelPath+"/module.star")
}

// validate checks the specs of one phase run before anything executes, so a
// misconfigured pipeline fails as a whole instead of half-way through.
func validate(phase string, specs []demiurge.SlotSpec) error {
	seen := make(map[string]bool, len(specs))
	for _, s := range specs {
		switch {
		case s.ID == "":
			return demiurge.Errorf(demiurge.EINVALID, "%s slot id must not be empty", phase)
		case seen[s.ID]:
			return demiurge.Errorf(demiurge.EINVALID, "duplicate %s pipeline slot: %s", phase, s.ID)
		case s.Phase != "" && s.Phase != phase:
			return demiurge.Errorf(demiurge.EINVALID, "slot %s belongs to the %s phase, not %s", s.ID, s.Phase, phase)
		case lane(s) != demiurge.LaneSerial && lane(s) != demiurge.LaneParallel:
			return demiurge.Errorf(demiurge.EINVALID, "slot %s: invalid lane: %s", s.ID, s.Lane)
		case phase == demiurge.PhaseBootstrap && lane(s) == demiurge.LaneParallel:
			return demiurge.Errorf(demiurge.EINVALID, "bootstrap slot %s cannot run in the parallel lane", s.ID)
		case s.FailurePolicy != "" && s.FailurePolicy != demiurge.FailSoft && s.FailurePolicy != demiurge.FailHard:
			return demiurge.Errorf(demiurge.EINVALID, "slot %s: invalid failure_policy: %s", s.ID, s.FailurePolicy)
		case s.HistoryPolicy != "" && !demiurge.ValidHistoryPolicy(s.HistoryPolicy):
			return demiurge.Errorf(demiurge.EINVALID, "slot %s: invalid history policy: %s", s.ID, s.HistoryPolicy)
		case s.ModulePath == "" && s.Source == nil:
			return demiurge.Errorf(demiurge.EINVALID, "slot %s has no module path", s.ID)
		case s.Timeout < 0:
			return demiurge.Errorf(demiurge.EINVALID, "slot %s: negative timeout", s.ID)
		}
		seen[s.ID] = true
	}
	return nil
}
