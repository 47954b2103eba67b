package terminal

import (
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/redact"
)

// DefaultArtifactLimit bounds each stream's output artifact when
// Deps.ArtifactLimit is zero: 256 MiB.
const DefaultArtifactLimit int64 = 256 << 20

// artifactLimit is the per-stream artifact bound the Host configured.
func (d Deps) artifactLimit() int64 {
	if d.ArtifactLimit > 0 {
		return d.ArtifactLimit
	}
	return DefaultArtifactLimit
}

// outputDiscovery finds secrets in a command's own output (a config file it
// printed, a token it echoed) as the output streams by. Each joins the
// turn's secret set, when there is a turn, so every later view redacts it
// too, and is replaced in the tail, the artifact and the task log from the
// line it was found in on.
func outputDiscovery(turn *effect.Secrets) func(text string) map[string]string {
	return func(text string) map[string]string {
		found := redact.Discover(text)
		if len(found) == 0 {
			return nil
		}
		if turn != nil {
			turn.Add(found...)
		}
		return redact.Replacements(found)
	}
}
