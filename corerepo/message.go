package corerepo

import (
	"path"
	"sort"
	"strings"

	"github.com/demiurge/demiurge/coretree"
)

// Commit messages of saved local edits: a summary
// line, then the source, changed scopes, changed paths, detected agent.yaml
// key changes and the gate verdict.

// globalScope names the global fallback agents/agent.yaml in scopes.
const globalScope = "global fallback"

// scopeOf is the scope of a changed path: its core (top directory), or
// "global fallback" for agents/agent.yaml.
func scopeOf(p string) string {
	top, _, nested := strings.Cut(p, "/")
	if !nested && top == "agent.yaml" {
		return globalScope
	}
	return top
}

func scopesOf(changes []coretree.Change) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range changes {
		if s := scopeOf(c.Path); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// componentDirs are the surface directories whose edits get their own
// summary.
var componentDirs = []struct{ dir, word string }{
	{"tools", "tool"}, {"skills", "skill"}, {"bootstrap", "bootstrap"}, {"schedules", "schedule"},
}

// commitSummary is the summary line for a set of changed paths; detected
// holds the flattened agent.yaml key changes.
func commitSummary(changes []coretree.Change, detected []string) string {
	scopes := scopesOf(changes)
	switch {
	case len(scopes) != 1:
		return "save local agent edits"
	case scopes[0] == globalScope:
		return "update global fallback config"
	}
	c := scopes[0]
	all := func(pred func(p string) bool) bool {
		for _, ch := range changes {
			if !pred(ch.Path) {
				return false
			}
		}
		return true
	}
	if all(func(p string) bool { return p == c+"/agent.yaml" }) {
		model := len(detected) > 0
		for _, d := range detected {
			_, rest, _ := strings.Cut(d, ": ")
			key := rest[:max(strings.LastIndexByte(rest, ' '), 0)]
			if key != "model" && !strings.HasPrefix(key, "model.") {
				model = false
			}
		}
		if model {
			return "update " + c + " model config"
		}
		return "update " + c + " config"
	}
	if all(func(p string) bool { return path.Base(p) == "SOUL.md" }) {
		return "save " + c + " authored prompt edits"
	}
	for _, cd := range componentDirs {
		if all(func(p string) bool { return strings.Contains("/"+p+"/", "/"+cd.dir+"/") }) {
			return "save " + c + " " + cd.word + " edits"
		}
	}
	return "save " + c + " agent edits"
}

// commitMessage renders the whole message.
func commitMessage(summary, reason string, changes []coretree.Change, detected []string) string {
	var b strings.Builder
	b.WriteString(summary + "\n\nSource: external edit of runtime agents tree\n")
	if reason != "" {
		b.WriteString("Reason: " + reason + "\n")
	}
	b.WriteString("Changed scopes:\n")
	for _, s := range scopesOf(changes) {
		b.WriteString("- " + s + "\n")
	}
	b.WriteString("Changed paths:\n")
	for _, c := range changes {
		b.WriteString("- " + c.Path + "\n")
	}
	if len(detected) > 0 {
		b.WriteString("Detected changes:\n")
		for _, d := range detected {
			b.WriteString("- " + d + "\n")
		}
	}
	b.WriteString("Gates: passed\n")
	return b.String()
}
