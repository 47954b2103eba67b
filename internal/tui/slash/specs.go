package slash

import "strings"

// Spec is one command of the catalog: its name (without the slash), its
// usage line, a one-line description and the help group it is listed in.
type Spec struct {
	Name        string
	Usage       string
	Description string
	Group       string
}

// TakesArguments reports whether the command's usage names arguments, so
// a completion of its name ends with a space.
func (s Spec) TakesArguments() bool { return strings.Contains(s.Usage, " ") }

// Help groups, in help order.
const (
	GroupCore     = "Core"
	GroupTools    = "Tools"
	GroupSessions = "Sessions"
	GroupTrace    = "Trace"
	GroupControl  = "Control"
)

// specs is the catalog in help order. Usages and descriptions are the
// original's (spec surfaces §2.11) where it has the command on the terminal
// UI; /stop and /queue come from its channels, and /queue also lists the
// waiting messages here; /subagents covers every background task of the
// session, not only child agents.
var specs = []Spec{
	{"help", "/help", "Show command groups", GroupCore},
	{"status", "/status", "Show runtime status", GroupCore},
	{"core", "/core", "Show active core", GroupCore},
	{"versions", "/versions", "List core revisions", GroupCore},
	{"provider", "/provider", "Show provider", GroupCore},
	{"doctor", "/doctor", "Check runtime/source drift", GroupCore},
	{"tools", "/tools", "Show visible tools", GroupTools},
	{"skills", "/skills [category]", "Show skill index", GroupTools},
	{"skill", "/skill <name> [file_path]", "View a skill or linked file", GroupTools},
	{"tool-display", "/tool-display quiet|summary|full", "Show or change tool display", GroupTools},
	{"sessions", "/sessions [limit]", "List recent sessions", GroupSessions},
	{"subagents", "/subagents [task_id|cancel <task_id>]", "List, inspect, or cancel this session's background tasks", GroupSessions},
	{"resume", "/resume [session_id|number]", "Resume by id or numbered list entry", GroupSessions},
	{"new", "/new", "Start a new session", GroupSessions},
	{"compact", "/compact [focus]", "Compact older session history", GroupSessions},
	{"last", "/last", "Show previous turn trace", GroupTrace},
	{"trace", "/trace [turn_id|last]", "Show a turn trace", GroupTrace},
	{"events", "/events [type] [limit]", "Show recent events", GroupTrace},
	{"busy", "/busy interrupt|queue", "Set running-input behavior", GroupControl},
	{"interrupt", "/interrupt", "Soft-cancel the current turn", GroupControl},
	{"stop", "/stop", "Stop the current turn and clear queued input", GroupControl},
	{"queue", "/queue [prompt]", "Show queued input, or queue a prompt for the next turn", GroupControl},
	{"evolve", "/evolve <goal>|review <run_id>|promote <run_id> [manual_review_token]|discard <run_id>", "Manage evolve runs", GroupControl},
	{"rollback", "/rollback [target]", "Create a rollback commit for the next turn", GroupControl},
	{"exit", "/exit", "Quit", GroupControl},
	{"quit", "/quit", "Quit", GroupControl},
}

// Specs returns the catalog in help order.
func Specs() []Spec { return append([]Spec(nil), specs...) }

// lookup finds a command by name.
func lookup(name string) (Spec, bool) {
	for _, s := range specs {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}
