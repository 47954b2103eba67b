package turn

import (
	"testing"

	"github.com/demiurge/demiurge/core"
)

// Activated skills known to the core join the system context as
// "## Skill <name>" sections without their frontmatter; unknown names are
// ignored.
func TestActivatedSkills(t *testing.T) {
	c := &core.Core{Skills: []core.Skill{{ID: "debugging", Name: "debugging", Content: "---\nname: debugging\n---\n# Debugging\n\nReproduce first.\n"}}}
	got := activatedSkills(c, []string{"nope", "debugging"})
	if want := "## Skill debugging\n\n# Debugging\n\nReproduce first."; got != want {
		t.Errorf("activatedSkills = %q, want %q", got, want)
	}
	if got := activatedSkills(c, nil); got != "" {
		t.Errorf("no skills: %q", got)
	}
}
