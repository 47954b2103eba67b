package host

import (
	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin/terminal"
	"github.com/demiurge/demiurge/starlark"
	"github.com/demiurge/demiurge/turn"
)

// LimitsConfig is the limits section: bounds on what one model step and
// one command may cost. Zero means the default; only the operator's
// config.yaml sets them.
type LimitsConfig struct {
	// ToolCallsPerStep bounds the tool calls run for one model step
	// (default 32); the calls past it are answered without running.
	ToolCallsPerStep int `yaml:"tool_calls_per_step"`
	// ArtifactMBPerStream bounds each stream of a terminal command's
	// output artifact, in MiB (default 256).
	ArtifactMBPerStream int `yaml:"artifact_mb_per_stream"`
	// AuthoredMemoryMBPerCall is the allocation budget of one authored slot
	// or tool call (and of a module's top level), in MiB (default 256).
	AuthoredMemoryMBPerCall int `yaml:"authored_memory_mb_per_call"`
}

// validate checks the section's ranges.
func (c LimitsConfig) validate(path string) error {
	if c.ToolCallsPerStep < 0 || c.ToolCallsPerStep > 10000 {
		return demiurge.Errorf(demiurge.ECONFIG, "%s: limits.tool_calls_per_step must be between 1 and 10000 (0 for the default %d), got %d", path, turn.DefaultMaxToolCallsPerStep, c.ToolCallsPerStep)
	}
	if c.ArtifactMBPerStream < 0 || c.ArtifactMBPerStream > 1<<20 {
		return demiurge.Errorf(demiurge.ECONFIG, "%s: limits.artifact_mb_per_stream must be between 1 and 1048576 MiB (0 for the default %d), got %d", path, terminal.DefaultArtifactLimit>>20, c.ArtifactMBPerStream)
	}
	if c.AuthoredMemoryMBPerCall < 0 || c.AuthoredMemoryMBPerCall > 1<<20 {
		return demiurge.Errorf(demiurge.ECONFIG, "%s: limits.authored_memory_mb_per_call must be between 1 and 1048576 MiB (0 for the default %d), got %d", path, starlark.DefaultMemoryLimit>>20, c.AuthoredMemoryMBPerCall)
	}
	return nil
}

// authoredMemoryLimit is the authored-code allocation budget in bytes (0: the default).
func (c LimitsConfig) authoredMemoryLimit() int64 { return int64(c.AuthoredMemoryMBPerCall) << 20 }

// artifactLimit is the per-stream artifact bound in bytes (0: the default).
func (c LimitsConfig) artifactLimit() int64 { return int64(c.ArtifactMBPerStream) << 20 }
