package controlplane

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/demiurge/demiurge"
)

// Bounds of the operator log tail.
const (
	TailLines = 40
	TailChars = 8000
)

// LogLine is one task.log line.
type LogLine struct {
	Seq       int64
	Stream    string
	Text      string
	CreatedAt time.Time
}

// AppendLog appends text to the log of task id, one task.log event per
// line, atomically. Empty text is one empty line; a trailing newline does
// not add one. stream defaults to stdout.
func (cp *ControlPlane) AppendLog(ctx context.Context, id, text, stream string) error {
	if _, err := cp.st.Task(ctx, id); err != nil {
		return err
	}
	if stream == "" {
		stream = "stdout"
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := []string{""}
	if text != "" {
		lines = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	}
	now := cp.now()
	events := make([]demiurge.Event, len(lines))
	for i, l := range lines {
		events[i] = demiurge.Event{
			AggregateType: demiurge.AggTask, AggregateID: id, Type: demiurge.EvTaskLog,
			CreatedAt: now, Payload: map[string]any{"stream": stream, "text": l},
		}
	}
	_, err := cp.st.Append(ctx, events, "", nil)
	return err
}

// LogTail returns the newest n log lines of task id in order, n capped at
// the retention MaxLogLines and at MaxEventLimit-1.
//
// The event stream only reads forwards, so the start of the tail is found by
// bisecting the seq range with probes of at most n+1 events: the cost is
// O(n·log seq), whatever the length of the log.
func (cp *ControlPlane) LogTail(ctx context.Context, id string, n int) ([]LogLine, error) {
	n = min(n, cp.maxLogLines, demiurge.MaxEventLimit-1)
	if n <= 0 {
		return nil, nil
	}
	hi, err := cp.st.LastSeq(ctx, demiurge.AggTask, id)
	if err != nil {
		return nil, err
	}
	filter := func(after int64, limit int) demiurge.EventFilter {
		return demiurge.EventFilter{AggregateType: demiurge.AggTask, AggregateID: id,
			Type: demiurge.EvTaskLog, AfterSeq: after, Limit: limit}
	}
	// Invariant: at least n lines follow lo, fewer than n follow hi.
	lo := int64(0)
	evs, err := cp.st.Events(ctx, filter(0, n+1))
	if err != nil {
		return nil, err
	}
	if len(evs) > n {
		for lo+1 < hi {
			mid := lo + (hi-lo)/2
			probe, err := cp.st.Events(ctx, filter(mid, n+1))
			if err != nil {
				return nil, err
			}
			if len(probe) >= n {
				lo = mid
			} else {
				hi = mid
			}
		}
		if evs, err = cp.st.Events(ctx, filter(lo, n)); err != nil {
			return nil, err
		}
	}
	out := make([]LogLine, len(evs))
	for i, e := range evs {
		out[i] = LogLine{Seq: e.Seq, Stream: str(e.Payload, "stream"), Text: str(e.Payload, "text"), CreatedAt: e.CreatedAt}
	}
	return out, nil
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
