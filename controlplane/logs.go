package controlplane

import (
	"cmp"
	"context"
	"strings"
	"unicode/utf8"

	"github.com/demiurge/demiurge"
)

// Bounds of the operator log tail.
const (
	TailLines = 40
	TailChars = 8000
)

// MaxLogLineBytes bounds one stored log line; a longer one keeps its first
// bytes and ends with a "..." marker.
const MaxLogLineBytes = 16 << 10

// LogLine is one retained task log line.
type LogLine = demiurge.TaskLogLine

// AppendLog appends text to the log of task id, one line per line of text,
// atomically, and drops the lines beyond the newest MaxLogLines in the same
// transaction. Empty text is one empty line; a trailing newline does not
// add one. stream defaults to stdout. Lines are stored as task_logs rows,
// not as task.log events, so a task's log never holds more than
// MaxLogLines rows (ENOTFOUND "task not found: <id>" for a missing task).
func (cp *ControlPlane) AppendLog(ctx context.Context, id, text, stream string) error {
	return cp.st.AppendTaskLogs(ctx, id, splitLog(text, stream, nil), cp.maxLogLines)
}

// splitLog appends the lines of text to dst, each cut to MaxLogLineBytes.
// Their times are left zero: the store stamps them.
func splitLog(text, stream string, dst []LogLine) []LogLine {
	stream = cmp.Or(stream, "stdout")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if text == "" {
		return append(dst, LogLine{Stream: stream})
	}
	for l := range strings.SplitSeq(strings.TrimSuffix(text, "\n"), "\n") {
		if len(l) > MaxLogLineBytes {
			l = headBytes(l, MaxLogLineBytes-3) + "..."
		}
		dst = append(dst, LogLine{Stream: stream, Text: l})
	}
	return dst
}

// LogTail returns the newest n retained log lines of task id in order, n
// capped at MaxLogLines. A missing task has no lines. Reads cost O(n)
// whatever the length of the log.
func (cp *ControlPlane) LogTail(ctx context.Context, id string, n int) ([]LogLine, error) {
	n = min(n, cp.maxLogLines)
	if n <= 0 {
		return nil, nil
	}
	return cp.st.TaskLogTail(ctx, id, n)
}

// boundChars drops the oldest lines until the texts fit in limit chars; the
// newest line is always kept, cut from the front with a "..." marker if it
// alone is too long.
func boundChars(lines []LogLine, limit int) []LogLine {
	total := 0
	for i := len(lines) - 1; i >= 0; i-- {
		total += len(lines[i].Text)
		if total > limit {
			if i == len(lines)-1 {
				l := lines[i]
				l.Text = "..." + tailBytes(l.Text, limit-3)
				return []LogLine{l}
			}
			return lines[i+1:]
		}
	}
	return lines
}

// tailBytes returns the last at most n bytes of s, starting on a rune.
func tailBytes(s string, n int) string {
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// headBytes returns the first at most n bytes of s, ending on a rune.
func headBytes(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
