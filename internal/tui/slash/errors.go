package slash

// UsageError is a command line that does not run: an unknown command, or
// arguments the command does not take. Its message names the command and,
// for a known one, its usage (the unknown-command text is the original's,
// spec surfaces §2.11). Dispatch's other errors come from the Host.
type UsageError struct {
	Command string // the name as typed, without the slash
	Usage   string // "" for an unknown command
	Reason  string // what is wrong with the arguments ("" : they do not fit the usage)
}

func (e *UsageError) Error() string {
	switch {
	case e.Usage == "":
		return "unknown command: /" + e.Command
	case e.Reason != "":
		return "/" + e.Command + ": " + e.Reason + "; usage: " + e.Usage
	}
	return "usage: " + e.Usage
}

func usage(name string) error {
	s, _ := lookup(name)
	return &UsageError{Command: name, Usage: s.Usage}
}

func usageBecause(name, reason string) error {
	s, _ := lookup(name)
	return &UsageError{Command: name, Usage: s.Usage, Reason: reason}
}
