package core

import (
	"sort"
	"time"
)

// Phases of the slot pipelines.
const (
	PhaseBootstrap = "bootstrap"
	PhaseInput     = "input"
	PhaseOutput    = "output"
)

// Phases lists the slot phases in the order a turn meets them.
var Phases = []string{PhaseBootstrap, PhaseInput, PhaseOutput}

// Lanes of a phase pipeline.
const (
	LaneSerial   = "serial"
	LaneParallel = "parallel"
)

// Slot policies and their defaults.
const (
	FailureSoft = "soft"
	FailureHard = "hard"

	HistoryPersist     = "persist"
	HistoryModelHidden = "model_hidden"
	HistoryTransient   = "transient"

	PlacementPreCurrentUser  = "pre_current_user"
	PlacementPostCurrentUser = "post_current_user"

	DefaultSlotTimeoutSeconds = 10
	MaxSlotTimeoutSeconds     = 3600
	DefaultMaxModelSteps      = 90
	MaxModelStepsLimit        = 90
)

// Core is a loaded Agent Core. It is plain data, immutable after Load and
// safe for concurrent reads.
type Core struct {
	ID          string   // agent.id, equal to the directory name
	Dir         string   // absolute path of the core directory
	SurfaceRoot string   // absolute path of the authored surface (runtime.surface_root)
	Manifest    Manifest // agent.yaml as decoded, defaults applied
	Soul        string   // SOUL.md (+ slots.soul), trimmed, joined "\n\n"
	Pipelines   Pipelines

	// Slots holds, per phase, the slots named in pipelines.yaml in pipeline
	// order: the serial lane, then the parallel lane (Slot.Lane says which).
	Slots map[string][]Slot
	// AllSlots holds, per phase, every discovered slot sorted by id, listed
	// in the pipeline or not (Lane is "" for unlisted ones). Explicit slot
	// selection (schedules, delegated children) picks from these.
	AllSlots map[string][]Slot
	// BootstrapEnabled reports whether any bootstrap slot exists or the
	// bootstrap pipeline names one.
	BootstrapEnabled bool

	Tools         []AuthoredTool // sorted by name; empty unless slots.tools is set
	Skills        []Skill        // sorted by id
	Builtins      []string       // builtin tool names of the selected toolsets, catalog order
	MaxModelSteps int            // runtime.max_model_steps (1..90, default 90)

	display string // how errors name the core directory
}

// Slot is one authored bootstrap, input or output slot.
type Slot struct {
	ID               string
	Phase            string // PhaseBootstrap, PhaseInput or PhaseOutput
	Dir              string // absolute slot directory
	RelPath          string // core-relative slash path, e.g. "agent/input/base_input"; the slot_path of capability checks
	ModulePath       string // absolute path of the Starlark module
	Function         string // entrypoint function, default "process"
	Description      string
	InputSchema      map[string]any // authored metadata; {} when absent
	Capabilities     []string       // component grants from slot.yaml
	TimeoutSeconds   float64        // default 10
	FailurePolicy    string         // FailureSoft (default) or FailureHard
	DefaultPlacement string         // default PlacementPreCurrentUser
	HistoryPolicy    string         // as declared: HistoryPersist, HistoryModelHidden, HistoryTransient, or "" (the phase default applies)
	Lane             string         // LaneSerial or LaneParallel; "" when not in the pipeline
}

// Timeout returns the slot's deadline as a duration.
func (s Slot) Timeout() time.Duration {
	return time.Duration(s.TimeoutSeconds * float64(time.Second))
}

// AuthoredTool is one tool under slots.tools (<root>/<name>/tool.yaml).
type AuthoredTool struct {
	Name              string // directory name; the model-facing tool name
	Dir               string // absolute tool directory
	RelPath           string // core-relative slash path, e.g. "agent/tools/echo"
	ModulePath        string // absolute path of the Starlark module
	Function          string // entrypoint function, default "execute"
	Description       string
	InputSchema       map[string]any // default {"type":"object","properties":{}}
	Risk              string         // low|medium|high|critical, default medium
	Capability        string         // capability the call requires; "" for none
	ApprovalPolicy    string         // auto|prompt|deny, default prompt
	DisplayPolicy     string         // default summary
	ModelOutputPolicy string         // default content
	Capabilities      []string       // component grants from tool.yaml
}

// Provenance returns the catalog provenance of the tool, "authored:<RelPath>".
func (t AuthoredTool) Provenance() string { return "authored:" + t.RelPath }

// Skill is one entry of the skills index.
type Skill struct {
	ID          string              // file stem (<name>.md) or directory name (<id>/SKILL.md)
	Name        string              // frontmatter name, default ID
	Description string              // frontmatter description, else the first line of the body
	Category    string              // frontmatter category, else the parent directory, else "general"
	Path        string              // absolute path of the skill file
	RelPath     string              // core-relative slash path of the skill file
	Content     string              // the whole file, frontmatter included
	Packaged    bool                // a <id>/SKILL.md directory skill
	LinkedFiles map[string][]string // packaged only: references|templates|scripts|assets -> skill-relative files
}

// Slot returns the slot id of phase, listed in the pipeline or not.
func (c *Core) Slot(phase, id string) (Slot, bool) {
	for _, s := range c.Slots[phase] {
		if s.ID == id {
			return s, true
		}
	}
	for _, s := range c.AllSlots[phase] {
		if s.ID == id {
			return s, true
		}
	}
	return Slot{}, false
}

// Tool returns the authored tool called name.
func (c *Core) Tool(name string) (AuthoredTool, bool) {
	i := sort.Search(len(c.Tools), func(i int) bool { return c.Tools[i].Name >= name })
	if i < len(c.Tools) && c.Tools[i].Name == name {
		return c.Tools[i], true
	}
	return AuthoredTool{}, false
}

// Skill returns the skill whose id or name is name.
func (c *Core) Skill(name string) (Skill, bool) {
	for _, s := range c.Skills {
		if s.ID == name || s.Name == name {
			return s, true
		}
	}
	return Skill{}, false
}
