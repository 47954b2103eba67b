package core

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/yamlx"
)

// Pipelines is <surface>/pipelines.yaml: per phase, the slot ids of the
// serial and parallel lanes. Bootstrap has a serial lane only.
type Pipelines struct {
	SchemaVersion int   `yaml:"schema_version"` // must be 1
	Bootstrap     Lanes `yaml:"bootstrap"`
	Input         Lanes `yaml:"input"`
	Output        Lanes `yaml:"output"`
}

// Lanes are the slot ids of one phase, in order.
type Lanes struct {
	Serial   []string `yaml:"serial"`
	Parallel []string `yaml:"parallel"`
}

// Phase returns the lanes of phase.
func (p Pipelines) Phase(phase string) Lanes {
	switch phase {
	case PhaseBootstrap:
		return p.Bootstrap
	case PhaseInput:
		return p.Input
	case PhaseOutput:
		return p.Output
	}
	return Lanes{}
}

// loadSlots reads pipelines.yaml, discovers the slots of every phase and
// orders them by the pipelines.
func (l *loader) loadSlots(c *Core) error {
	path := filepath.Join(c.SurfaceRoot, "pipelines.yaml")
	data, err := l.read(path, yamlx.MaxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return demiurge.Errorf(demiurge.ECONFIG, "%s: missing pipelines.yaml: %s", l.shown, l.rel(path))
	}
	if err != nil {
		return l.readErr(path, err)
	}
	doc, err := yamlx.Parse(l.show(path), data)
	if err != nil {
		return err
	}
	if doc.Has("bootstrap", "parallel") {
		return doc.Errorf(doc.Line("bootstrap", "parallel"), "bootstrap.parallel is not supported: bootstrap slots run serially (use bootstrap.serial)")
	}
	if err := doc.Decode(&c.Pipelines); err != nil {
		return err
	}
	switch {
	case !doc.Has("schema_version"):
		return doc.Errorf(0, "schema_version must be 1 (missing)")
	case c.Pipelines.SchemaVersion != 1:
		return doc.Errorf(doc.Line("schema_version"), "schema_version must be 1, got %d", c.Pipelines.SchemaVersion)
	}

	c.AllSlots = map[string][]Slot{}
	seen := map[string]string{} // slot id -> RelPath, across phases
	for _, phase := range Phases {
		slots, err := l.discoverSlots(c, phase)
		if err != nil {
			return err
		}
		for _, s := range slots {
			if prior, dup := seen[s.ID]; dup {
				return demiurge.Errorf(demiurge.ECONFIG, "%s: duplicate slot id %s: %s, %s", l.show(filepath.Join(s.Dir, "slot.yaml")), s.ID, prior, s.RelPath)
			}
			seen[s.ID] = s.RelPath
		}
		c.AllSlots[phase] = slots
	}

	c.Slots = map[string][]Slot{}
	for _, phase := range Phases {
		ordered, err := orderPhase(doc, phase, c.Pipelines.Phase(phase), c.AllSlots[phase])
		if err != nil {
			return err
		}
		c.Slots[phase] = ordered
	}
	c.BootstrapEnabled = len(c.AllSlots[PhaseBootstrap]) > 0 || len(c.Pipelines.Bootstrap.Serial) > 0
	return nil
}

// orderPhase resolves the lanes of one phase against its discovered slots.
func orderPhase(doc *yamlx.Document, phase string, lanes Lanes, slots []Slot) ([]Slot, error) {
	byID := map[string]Slot{}
	for _, s := range slots {
		byID[s.ID] = s
	}
	var out []Slot
	inLane := map[string]string{}
	for _, lane := range []struct {
		name string
		ids  []string
	}{{LaneSerial, lanes.Serial}, {LaneParallel, lanes.Parallel}} {
		for i, id := range lane.ids {
			line := doc.Line(phase, lane.name, itoa(i))
			if strings.TrimSpace(id) == "" {
				return nil, doc.Errorf(line, "%s.%s[%d]: slot id must not be empty", phase, lane.name, i)
			}
			if prior, dup := inLane[id]; dup {
				return nil, doc.Errorf(line, "duplicate %s pipeline slot %s: %s, %s", phase, id, prior, lane.name)
			}
			s, ok := byID[id]
			if !ok {
				return nil, doc.Errorf(line, "unknown %s pipeline slot: %s", phase, id)
			}
			inLane[id] = lane.name
			s.Lane = lane.name
			out = append(out, s)
		}
	}
	return out, nil
}

// discoverSlots loads every <surface>/<phase>/<id>/slot.yaml, sorted by id.
// Directories without slot.yaml, and hidden ones, are not slots.
func (l *loader) discoverSlots(c *Core, phase string) ([]Slot, error) {
	root := filepath.Join(c.SurfaceRoot, phase)
	if ok, err := isDir(root); err != nil {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "%s: %s slot root is not a directory", l.show(root), phase)
	} else if !ok {
		return nil, nil
	}
	if problem := l.contained(root); problem != "" {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "%s: %s", l.show(root), problem)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, l.readErr(root, err)
	}
	var slots []Slot
	for _, e := range entries {
		name := e.Name()
		dir := filepath.Join(root, name)
		if strings.HasPrefix(name, ".") {
			continue
		}
		if ok, _ := isDir(dir); !ok {
			continue
		}
		manifest := filepath.Join(dir, "slot.yaml")
		if _, err := os.Lstat(manifest); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if !ValidID(name) {
			return nil, demiurge.Errorf(demiurge.ECONFIG, "%s: invalid slot id %s: use letters, digits, '_' and '-' (at most 64)", l.show(manifest), quoteShort(name))
		}
		s, err := l.loadSlot(phase, name, dir, manifest)
		if err != nil {
			return nil, err
		}
		slots = append(slots, s)
	}
	sort.Slice(slots, func(i, j int) bool { return slots[i].ID < slots[j].ID })
	return slots, nil
}
