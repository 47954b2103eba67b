package slash_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/internal/tui/slash"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		line, name, args string
		ok               bool
	}{
		{"/help", "help", "", true},
		{"  /Help  ", "help", "", true},
		{"/resume  session_1 ", "resume", "session_1", true},
		{"/evolve make it   terse", "evolve", "make it   terse", true},
		{"/status@demiurge_bot", "status", "", true},
		{"/queue\nx", "queue\nx", "", true}, // only a space splits
		{"/tool-display\tfull", "tool-display\tfull", "", true},
		{"/", "", "", false},
		{"/@bot", "", "", false},
		{"help", "", "", false},
		{"", "", "", false},
		{" hello /help", "", "", false},
	} {
		name, args, ok := slash.Parse(c.line)
		if name != c.name || args != c.args || ok != c.ok {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q, %q, %v", c.line, name, args, ok, c.name, c.args, c.ok)
		}
		if slash.IsCommand(c.line) != c.ok {
			t.Errorf("IsCommand(%q) = %v", c.line, !c.ok)
		}
	}
}

func TestCatalogMatchesTheIssue(t *testing.T) {
	want := strings.Fields("help status core versions provider doctor tools skills skill tool-display sessions subagents resume new compact last trace events busy interrupt stop queue evolve rollback exit quit")
	var got []string
	for _, s := range slash.Specs() {
		got = append(got, s.Name)
		if !strings.HasPrefix(s.Usage, "/"+s.Name) || s.Description == "" || s.Group == "" {
			t.Errorf("spec %+v is incomplete", s)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("catalog = %v\nwant      %v", got, want)
	}
}

func TestHelpText(t *testing.T) {
	help := slash.HelpText()
	contains(t, "help", help,
		"# Commands\n\n## Core\n- `/help` - Show command groups\n- `/status` - Show runtime status\n",
		"\n\n## Tools\n- `/tools` - Show visible tools\n",
		"- `/tool-display quiet|summary|full` - Show or change tool display\n\n## Sessions\n",
		"\n\n## Trace\n", "\n\n## Control\n",
		"- `/quit` - Quit\n\nEnter submits. Ctrl-C interrupts a running turn.")
	if strings.HasSuffix(help, "\n") {
		t.Fatal("help ends with a newline")
	}
	out := run(t, &fakeEnv{}, "/help")
	if out.Notice != help || out.Action != slash.ActionNone {
		t.Fatalf("/help = %+v", out)
	}
}

// TestUsageErrors: an unknown command and every malformed argument list
// is an error naming the command and its usage, and changes nothing.
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"/nope", "unknown command: /nope"},
		{"/STOPP now", "unknown command: /stopp"},
		{"/ask hello", "unknown command: /ask"},
		{"/help me", "/help: takes no arguments; usage: /help"},
		{"/status now", "/status: takes no arguments; usage: /status"},
		{"/tool-display loud", "usage: /tool-display quiet|summary|full"},
		{"/busy sometimes", "usage: /busy interrupt|queue"},
		{"/skill", "usage: /skill <name> [file_path]"},
		{"/skill a b c", "usage: /skill <name> [file_path]"},
		{"/skills a b", "/skills: takes one category at most; usage: /skills [category]"},
		{"/sessions many", "/sessions: the limit is a number of sessions, at least 1; usage: /sessions [limit]"},
		{"/sessions 0", "usage: /sessions [limit]"},
		{"/sessions -3", "usage: /sessions [limit]"},
		{"/events 0", "/events: the limit is a number from 1 to 1000; usage: /events [type] [limit]"},
		{"/events turn.started x", "usage: /events [type] [limit]"},
		{"/events a 1 2", "usage: /events [type] [limit]"},
		{"/trace a b", "usage: /trace [turn_id|last]"},
		{"/subagents cancel", "/subagents: cancel takes one task id; usage: /subagents [task_id|cancel <task_id>]"},
		{"/subagents a b", "usage: /subagents [task_id|cancel <task_id>]"},
		{"/evolve", "usage: /evolve <goal>|review <run_id>|promote <run_id> [manual_review_token]|discard <run_id>"},
		{"/evolve review", "/evolve: review takes one run id"},
		{"/evolve promote", "/evolve: promote takes a run id"},
		{"/evolve discard a b", "/evolve: discard takes one run id"},
		{"/rollback a b", "/rollback: takes one target revision at most; usage: /rollback [target]"},
		{"/new now", "usage: /new"},
		{"/interrupt now", "usage: /interrupt"},
		{"/stop all", "usage: /stop"},
		{"/exit now", "/exit: takes no arguments; usage: /exit"},
		{"/quit now", "/quit: takes no arguments; usage: /quit"},
	} {
		env := &fakeEnv{busyMode: slash.BusyQueue, display: slash.ToolFull}
		_, err := slash.Dispatch(context.Background(), env, c.line)
		if err == nil || !usageErr(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want a usage error with %q", c.line, err, c.want)
		}
		if env.busyMode != slash.BusyQueue || env.display != slash.ToolFull {
			t.Errorf("%s changed the UI state", c.line)
		}
	}
	if _, err := slash.Dispatch(context.Background(), &fakeEnv{}, "hello"); err == nil || usageErr(err) {
		t.Fatalf("plain text: %v, want a not-a-command error", err)
	}
}

func TestModes(t *testing.T) {
	for in, want := range map[string]slash.ToolDisplay{
		"quiet": slash.ToolQuiet, "OFF": slash.ToolQuiet, "none": slash.ToolQuiet, "Hidden": slash.ToolQuiet,
		"summary": slash.ToolSummary, "brief": slash.ToolSummary, "full": slash.ToolFull, "VERBOSE": slash.ToolFull,
	} {
		if got, ok := slash.ParseToolDisplay(in); !ok || got != want {
			t.Errorf("ParseToolDisplay(%q) = %q, %v", in, got, ok)
		}
	}
	if _, ok := slash.ParseToolDisplay("loud"); ok {
		t.Error("loud is a tool display")
	}
	for in, want := range map[string]slash.BusyMode{"interrupt": slash.BusyInterrupt, "Queue": slash.BusyQueue} {
		if got, ok := slash.ParseBusyMode(in); !ok || got != want {
			t.Errorf("ParseBusyMode(%q) = %q, %v", in, got, ok)
		}
	}
	if _, ok := slash.ParseBusyMode("wait"); ok {
		t.Error("wait is a busy mode")
	}
}
