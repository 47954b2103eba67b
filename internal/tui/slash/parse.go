package slash

import "strings"

// Parse splits a composer line into a command name and its arguments the
// way the original does (spec surfaces §2.11): the line is trimmed and
// must start with "/"; the name runs to the first space (only U+0020
// splits, so "/queue\nx" is the command "queue\nx"), loses an "@suffix"
// and is lower-cased; the arguments are the rest, trimmed. "/" alone or an
// empty name ("/@bot") is not a command.
func Parse(line string) (name, args string, ok bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "/") {
		return "", "", false
	}
	head, rest, _ := strings.Cut(line[1:], " ")
	head, _, _ = strings.Cut(head, "@")
	if head == "" {
		return "", "", false
	}
	return strings.ToLower(head), strings.TrimSpace(rest), true
}

// IsCommand reports whether line is a slash command (Parse accepts it).
func IsCommand(line string) bool {
	_, _, ok := Parse(line)
	return ok
}
