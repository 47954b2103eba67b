package terminal

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/redact"
)

// terminalOutputChars is the tail of each stream a result shows (spec
// tool-runtime §7.7, DEFAULT_TOOL_OUTPUT_LIMIT_CHARS).
const terminalOutputChars = tool.OutputChars

// timeoutExitCode is the exit code a timed-out command reports, as
// coreutils timeout(1) does (spec tool-runtime §7.6).
const timeoutExitCode = 124

// renderedStream is one stream as a result shows it.
type renderedStream struct {
	text     string // what the content shows
	retained int    // characters of output text shows
}

// renderStream bounds one stream to limit characters (spec tool-runtime
// §7.7): the whole text when it fits, else a note of how many characters
// were left out followed by the end of the output, the two together
// exactly limit characters long. tail is the end of the (already
// redacted) output, totalChars the length of all of it.
func renderStream(tail string, totalChars int64, limit int) renderedStream {
	n := utf8.RuneCountInString(tail)
	if totalChars <= int64(limit) && int64(n) >= totalChars {
		return renderedStream{text: tail, retained: n}
	}
	// The note's length depends on the count it names: settle on the
	// number of characters kept so that note + kept == limit.
	keep := limit
	var note string
	for range 8 {
		note = fmt.Sprintf("...[truncated %d chars; showing tail]\n", totalChars-int64(keep))
		next := max(limit-utf8.RuneCountInString(note), 0)
		if next == keep {
			break
		}
		keep = next
	}
	keep = min(keep, n)
	note = fmt.Sprintf("...[truncated %d chars; showing tail]\n", totalChars-int64(keep))
	return renderedStream{text: note + lastChars(tail, keep), retained: keep}
}

// lastChars returns the last n characters of s.
func lastChars(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

// terminalOutput is a finished command as the model and the audit see it.
type terminalOutput struct {
	content  string
	exitCode int
	timedOut bool
	stdout   map[string]any
	stderr   map[string]any
}

// formatTerminalResult renders res (spec tool-runtime §7.7):
//
//	exit_code: N
//	timed_out: true      (only when the timeout killed it)
//	killed_by: sandbox <limit>  (only when a sandbox limit's signal ended it)
//	stdout:
//	<bounded stdout>     (only when the command wrote to stdout)
//	stderr:
//	<bounded stderr>     (only when the command wrote to stderr)
//
// A timed-out command reports exit code 124 whatever the signal that
// ended it. replacements (bound secret value → marker) are applied to the
// tails once more, so that no bound value is shown even if it slipped past
// the process manager's stream redaction.
func formatTerminalResult(res process.Result, replacements map[string]string) terminalOutput {
	out := terminalOutput{exitCode: res.ExitCode, timedOut: res.TimedOut}
	if res.TimedOut {
		out.exitCode = timeoutExitCode
	}
	var b strings.Builder
	fmt.Fprintf(&b, "exit_code: %d", out.exitCode)
	if out.timedOut {
		b.WriteString("\ntimed_out: true")
	}
	if res.Limit != "" {
		fmt.Fprintf(&b, "\nkilled_by: sandbox %s", res.Limit)
	}
	render := func(name string, s process.Stream) map[string]any {
		tail := s.Tail
		if len(replacements) > 0 {
			tail = redact.ReplaceAll(tail, replacements)
		}
		r := renderStream(tail, s.TotalChars, terminalOutputChars)
		if s.TotalChars > 0 || r.text != "" {
			fmt.Fprintf(&b, "\n%s:\n%s", name, r.text)
		}
		stats := map[string]any{
			"total_bytes": s.TotalBytes, "total_chars": s.TotalChars,
			"retained_chars": r.retained, "truncated": s.TotalChars > int64(r.retained),
		}
		if s.ArtifactPath != "" {
			stats["artifact_path"] = s.ArtifactPath
			stats["artifact_truncated"] = s.ArtifactTruncated
		}
		return stats
	}
	out.stdout = render("stdout", res.Stdout)
	out.stderr = render("stderr", res.Stderr)
	out.content = b.String()
	return out
}
