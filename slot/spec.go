package slot

import (
	"time"

	"github.com/demiurge/demiurge"
)

// Phases.
const (
	PhaseBootstrap = "bootstrap"
	PhaseInput     = "input"
	PhaseOutput    = "output"
)

// Lanes.
const (
	LaneSerial   = "serial"
	LaneParallel = "parallel"
)

// Failure policies.
const (
	FailSoft = "soft" // record the failure and continue the pipeline
	FailHard = "hard" // fail the phase (and the turn)
)

// History policies of prompt fragments and deliveries.
const (
	HistoryPersist     = "persist"      // written to history, visible to later model calls
	HistoryModelHidden = "model_hidden" // written to history, hidden from the model
	HistoryTransient   = "transient"    // never written to history
)

// DefaultFunction is the entry function of a slot module.
const DefaultFunction = "process"

// Spec is one slot as the core loader resolved it. The composition root
// converts the loader's types into Specs, so this package does not depend on
// the loader.
type Spec struct {
	ID               string
	Phase            string // PhaseBootstrap, PhaseInput, PhaseOutput ("" = the phase being run)
	Lane             string // LaneSerial or LaneParallel ("" = serial); bootstrap is serial only
	RelPath          string // core-relative slot path, e.g. "agent/input/base_input"; the capability subject
	ModulePath       string // absolute path of module.star; names the module in errors
	Source           []byte // module source; nil = read ModulePath at each invocation
	Function         string // entry function ("" = "process")
	FailurePolicy    string // FailSoft or FailHard ("" = soft)
	HistoryPolicy    string // slot default; "" when slot.yaml does not declare one (the phase default applies)
	DefaultPlacement string // carried for the context assembler; the runtime does not read it
	Timeout          time.Duration
	Capabilities     []string // grants declared by slot.yaml for RelPath
}

func (s Spec) lane() string {
	if s.Lane == "" {
		return LaneSerial
	}
	return s.Lane
}

func (s Spec) function() string {
	if s.Function == "" {
		return DefaultFunction
	}
	return s.Function
}

func (s Spec) hard() bool { return s.FailurePolicy == FailHard }

// modulePath is the name the module carries in errors.
func (s Spec) modulePath() string {
	if s.ModulePath != "" {
		return s.ModulePath
	}
	return s.RelPath + "/module.star"
}

// validHistoryPolicy reports whether p is one of the three history policies.
func validHistoryPolicy(p string) bool {
	return p == HistoryPersist || p == HistoryModelHidden || p == HistoryTransient
}

// validate checks the specs of one phase run before anything executes, so a
// misconfigured pipeline fails as a whole instead of half-way through.
func validate(phase string, specs []Spec) error {
	seen := make(map[string]bool, len(specs))
	for _, s := range specs {
		switch {
		case s.ID == "":
			return demiurge.Errorf(demiurge.EINVALID, "%s slot id must not be empty", phase)
		case seen[s.ID]:
			return demiurge.Errorf(demiurge.EINVALID, "duplicate %s pipeline slot: %s", phase, s.ID)
		case s.Phase != "" && s.Phase != phase:
			return demiurge.Errorf(demiurge.EINVALID, "slot %s belongs to the %s phase, not %s", s.ID, s.Phase, phase)
		case s.lane() != LaneSerial && s.lane() != LaneParallel:
			return demiurge.Errorf(demiurge.EINVALID, "slot %s: invalid lane: %s", s.ID, s.Lane)
		case phase == PhaseBootstrap && s.lane() == LaneParallel:
			return demiurge.Errorf(demiurge.EINVALID, "bootstrap slot %s cannot run in the parallel lane", s.ID)
		case s.FailurePolicy != "" && s.FailurePolicy != FailSoft && s.FailurePolicy != FailHard:
			return demiurge.Errorf(demiurge.EINVALID, "slot %s: invalid failure_policy: %s", s.ID, s.FailurePolicy)
		case s.HistoryPolicy != "" && !validHistoryPolicy(s.HistoryPolicy):
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
