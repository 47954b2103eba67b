package slash

import (
	"context"

	"github.com/demiurge/demiurge"
)

// handler runs one command with its arguments (Parse's args).
type handler func(ctx context.Context, env Env, args string) (Outcome, error)

// handlers are the commands by name; every Spec has one (a test checks).
var handlers = map[string]handler{
	"help":         cmdHelp,
	"status":       cmdStatus,
	"core":         cmdCore,
	"versions":     cmdVersions,
	"provider":     cmdProvider,
	"doctor":       cmdDoctor,
	"tools":        cmdTools,
	"skills":       cmdSkills,
	"skill":        cmdSkill,
	"tool-display": cmdToolDisplay,
	"sessions":     cmdSessions,
	"subagents":    cmdSubagents,
	"resume":       cmdResume,
	"new":          cmdNew,
	"compact":      cmdCompact,
	"last":         cmdLast,
	"trace":        cmdTrace,
	"events":       cmdEvents,
	"busy":         cmdBusy,
	"interrupt":    cmdInterrupt,
	"stop":         cmdStop,
	"queue":        cmdQueue,
	"evolve":       cmdEvolve,
	"rollback":     cmdRollback,
	"exit":         exitAs("exit"),
	"quit":         exitAs("quit"),
}

// Dispatch runs one slash command line and returns what the UI is to show
// and do. A line that is not a command is an EINVALID error; an unknown
// command or arguments that do not fit its usage a *UsageError; a failure
// of the Host the error it reported.
//
// Dispatch may block for as long as the command works (/evolve runs the
// evolver's turn, /doctor checks the home): the UI calls it off its own
// goroutine and cancels ctx to abandon it. It never asks the user
// anything itself: a question is an Outcome's Picker or Confirm.
func Dispatch(ctx context.Context, env Env, line string) (Outcome, error) {
	name, args, ok := Parse(line)
	if !ok {
		return Outcome{}, demiurge.Errorf(demiurge.EINVALID, "not a slash command: %q", line)
	}
	h, ok := handlers[name]
	if !ok {
		return Outcome{}, &UsageError{Command: name}
	}
	return h(ctx, env, args)
}

// notice is an Outcome showing markdown as command output.
func notice(text string) Outcome { return Outcome{Notice: text} }

// warning is an Outcome showing text as a warning.
func warning(text string) Outcome { return Outcome{Notice: text, Level: LevelWarning} }

// noArgs refuses arguments to a command that takes none.
func noArgs(name, args string) error {
	if args != "" {
		return usageBecause(name, "takes no arguments")
	}
	return nil
}
