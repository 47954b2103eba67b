package core

import "strings"

// Body is the skill's text without its frontmatter, trimmed: what an
// activated skill adds to the system context.
func (s Skill) Body() string {
	_, body, _ := splitFrontmatter(s.Content)
	return strings.TrimSpace(body)
}
