package core

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/yamlx"
)

// slotFile is slot.yaml; its keys are exactly these.
type slotFile struct {
	Entrypoint       string         `yaml:"entrypoint"`
	Description      string         `yaml:"description"`
	InputSchema      map[string]any `yaml:"input_schema"`
	Capabilities     []string       `yaml:"capabilities"`
	TimeoutSeconds   *float64       `yaml:"timeout_seconds"`
	FailurePolicy    string         `yaml:"failure_policy"`
	DefaultPlacement string         `yaml:"default_placement"`
	HistoryPolicy    string         `yaml:"history_policy"`
}

var (
	failurePolicies = []string{FailureSoft, FailureHard}
	historyPolicies = []string{HistoryPersist, HistoryModelHidden, HistoryTransient}
	placements      = []string{PlacementPreCurrentUser, PlacementPostCurrentUser}
)

// loadSlot reads one slot.yaml and resolves its entrypoint.
func (l *loader) loadSlot(phase, id, dir, manifest string) (Slot, error) {
	doc, err := l.parseComponent(manifest)
	if err != nil {
		return Slot{}, err
	}
	rel := l.rel(dir)
	var f slotFile
	if err := doc.Decode(&f); err != nil {
		return Slot{}, componentKeyError(doc, "slot.yaml", l.rel(manifest), err)
	}
	s := Slot{
		ID:               id,
		Phase:            phase,
		Dir:              dir,
		RelPath:          rel,
		Description:      strings.TrimSpace(f.Description),
		InputSchema:      f.InputSchema,
		Capabilities:     f.Capabilities,
		TimeoutSeconds:   DefaultSlotTimeoutSeconds,
		FailurePolicy:    cmp.Or(f.FailurePolicy, FailureSoft),
		DefaultPlacement: cmp.Or(f.DefaultPlacement, PlacementPreCurrentUser),
		HistoryPolicy:    f.HistoryPolicy, // "" when undeclared: each phase applies its own default
	}
	if s.InputSchema == nil {
		s.InputSchema = map[string]any{}
	}
	if s.Capabilities == nil {
		s.Capabilities = []string{}
	}
	if !slices.Contains(failurePolicies, s.FailurePolicy) {
		return Slot{}, doc.Errorf(doc.Line("failure_policy"), "invalid %s module failure_policy for %s: %s (expected soft or hard)", phase, rel, s.FailurePolicy)
	}
	if s.HistoryPolicy != "" && !slices.Contains(historyPolicies, s.HistoryPolicy) {
		return Slot{}, doc.Errorf(doc.Line("history_policy"), "invalid %s module history_policy for %s: %s (expected one of: %s)", phase, rel, s.HistoryPolicy, strings.Join(historyPolicies, ", "))
	}
	if !slices.Contains(placements, s.DefaultPlacement) {
		return Slot{}, doc.Errorf(doc.Line("default_placement"), "invalid %s module default_placement for %s: %s (expected one of: %s)", phase, rel, s.DefaultPlacement, strings.Join(placements, ", "))
	}
	if t := f.TimeoutSeconds; t != nil {
		if !(*t > 0 && *t <= MaxSlotTimeoutSeconds) {
			return Slot{}, doc.Errorf(doc.Line("timeout_seconds"), "timeout_seconds must be greater than 0 and at most %d, got %v", MaxSlotTimeoutSeconds, *t)
		}
		s.TimeoutSeconds = *t
	}
	if err := checkCapabilityList(doc, s.Capabilities); err != nil {
		return Slot{}, err
	}
	s.ModulePath, s.Function, err = l.entrypoint(doc, f.Entrypoint, "module:process", dir)
	if err != nil {
		return Slot{}, err
	}
	return s, nil
}

// parseComponent reads and parses a slot.yaml or tool.yaml.
func (l *loader) parseComponent(path string) (*yamlx.Document, error) {
	data, err := l.read(path, yamlx.MaxBytes)
	if err != nil {
		return nil, l.readErr(path, err)
	}
	return yamlx.Parse(l.show(path), data)
}

// componentKeyError renders an unknown top-level key of slot.yaml or
// tool.yaml in the original's words ("invalid slot.yaml <rel> key(s): …",
// every unknown key, sorted) followed by what is expected.
func componentKeyError(doc *yamlx.Document, kind, rel string, err error) error {
	var ke *yamlx.KeyError
	if !errors.As(err, &ke) || ke.Duplicate || ke.Parent != "" {
		return err
	}
	var unknown []string
	for _, k := range doc.Keys() {
		if !slices.Contains(ke.Expected, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for i, k := range unknown {
		unknown[i] = quoteShort(k)
		if strings.Trim(unknown[i], `"`) == k {
			unknown[i] = k // plain keys read better unquoted
		}
	}
	return &demiurge.Error{
		Code:    demiurge.ECONFIG,
		Message: fmt.Sprintf("%s:%d: invalid %s %s key(s): %s (expected one of: %s)", doc.Path(), ke.Line, kind, rel, strings.Join(unknown, ", "), strings.Join(ke.Expected, ", ")),
		Err:     ke,
	}
}

// checkCapabilityList checks the capabilities list of a slot or tool.
func checkCapabilityList(doc *yamlx.Document, caps []string) error {
	for i, c := range caps {
		if problem := checkCapability(c); problem != "" {
			return doc.Errorf(cmp.Or(doc.Line("capabilities", itoa(i)), doc.Line("capabilities")), "invalid capabilities[%d]: %s", i, problem)
		}
	}
	return nil
}
