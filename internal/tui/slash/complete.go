package slash

import (
	"context"
	"slices"
	"strings"

	"github.com/demiurge/demiurge"
)

// maxSuggestions is how many commands the suggestion panel lists.
const maxSuggestions = 8

// Complete returns what Tab may turn the composer line input into, each a
// whole line, best first: command names for "/na", then the enumerable
// first argument of the command ("/tool-display s" gives "/tool-display
// summary"; /busy modes, /resume session ids, /skill names, /skills
// categories, /trace last, /subagents cancel and its task ids, /evolve's
// actions, /rollback previous). A name completion of a command that takes
// arguments ends with a space. env may be nil: what needs the Host (session
// ids, skills, tasks) is then not offered. A line that is not a command,
// or whose argument is not enumerable, has no completion.
func Complete(ctx context.Context, env Env, input string) []string {
	if !strings.HasPrefix(input, "/") {
		return nil
	}
	head, rest, spaced := strings.Cut(input[1:], " ")
	if !spaced {
		var out []string
		for _, s := range specs {
			if strings.HasPrefix(s.Name, strings.ToLower(head)) {
				line := "/" + s.Name
				if s.TakesArguments() {
					line += " "
				}
				out = append(out, line)
			}
		}
		return out
	}
	name := strings.ToLower(head)
	if _, ok := lookup(name); !ok {
		return nil
	}
	words := strings.Split(rest, " ")
	if len(words) > 2 {
		return nil
	}
	prefix := "/" + name + " "
	if len(words) == 2 {
		if name != "subagents" || words[0] != "cancel" {
			return nil
		}
		prefix += "cancel "
	}
	partial := words[len(words)-1]
	var out []string
	for _, c := range argumentChoices(ctx, env, name, len(words) == 2) {
		if strings.HasPrefix(c, partial) && c != partial {
			out = append(out, prefix+c)
		}
	}
	return out
}

// argumentChoices are the values a command's first argument (or, with
// second, /subagents cancel's task id) may take.
func argumentChoices(ctx context.Context, env Env, name string, second bool) []string {
	switch name {
	case "tool-display":
		return []string{string(ToolQuiet), string(ToolSummary), string(ToolFull)}
	case "busy":
		return []string{string(BusyInterrupt), string(BusyQueue)}
	case "trace":
		return []string{"last"}
	case "evolve":
		return []string{"review", "promote", "discard"}
	case "rollback":
		return []string{"previous"}
	case "subagents":
		if env == nil && !second {
			return []string{"cancel"}
		}
	}
	if env == nil {
		return nil
	}
	switch name {
	case "resume":
		list, err := env.Host().ListSessions(ctx, env.CoreID(), pickerSessions)
		if err != nil {
			return nil
		}
		ids := make([]string, 0, len(list))
		for _, s := range list {
			ids = append(ids, s.ID)
		}
		return ids
	case "skill", "skills":
		skills, err := coreSkills(ctx, env)
		if err != nil {
			return nil
		}
		var out []string
		for _, s := range skills {
			v := s.Name
			if name == "skills" {
				v = s.Category
			}
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		return out
	case "subagents":
		var out []string
		if !second {
			out = append(out, "cancel")
		}
		if env.SessionID() == "" {
			return out
		}
		tasks, err := env.Host().SessionTasks(ctx, env.SessionID(), listedTasks)
		if err != nil {
			return out
		}
		for _, t := range tasks {
			if !second || demiurge.TaskActive(t.Status) {
				out = append(out, t.ID)
			}
		}
		return out
	}
	return nil
}

// Suggest ranks the catalog for the suggestion panel while the composer
// holds the partial command token (with or without its slash): exact
// name, then name prefix, then name substring, then a match in the usage
// or description; at most eight. An empty token lists the catalog from
// the top.
func Suggest(token string) []Spec {
	q := strings.ToLower(strings.TrimPrefix(token, "/"))
	var ranks [4][]Spec
	for _, s := range specs {
		switch {
		case q == "":
			ranks[1] = append(ranks[1], s)
		case s.Name == q:
			ranks[0] = append(ranks[0], s)
		case strings.HasPrefix(s.Name, q):
			ranks[1] = append(ranks[1], s)
		case strings.Contains(s.Name, q):
			ranks[2] = append(ranks[2], s)
		case strings.Contains(strings.ToLower(s.Usage), q) || strings.Contains(strings.ToLower(s.Description), q):
			ranks[3] = append(ranks[3], s)
		}
	}
	out := slices.Concat(ranks[0], ranks[1], ranks[2], ranks[3])
	return out[:min(len(out), maxSuggestions)]
}
