package tui

import (
	"context"
	"strings"
)

// commands runs the slash commands other than the UI's own /exit and
// /quit, and completes their names.
type commands struct {
	b *bridge
}

func newCommands(b *bridge) commands { return commands{b: b} }

// ownCommands are the commands the model handles itself.
var ownCommands = []string{"/exit", "/quit"}

func (c commands) dispatch(_ context.Context, line string) (outcome, error) {
	name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	return outcome{notice: "unknown command: " + name, level: levelWarning}, nil
}

func (c commands) complete(input string) []string {
	var out []string
	for _, name := range ownCommands {
		if strings.HasPrefix(name, input) {
			out = append(out, name)
		}
	}
	return out
}
