package demiurge

import "time"

// TimeLayout is the wire and storage form of every timestamp: UTC, RFC 3339,
// milliseconds. Ordering never relies on it alone (sequence numbers break ties).
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in TimeLayout.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime parses a TimeLayout (or any RFC 3339) timestamp; the zero time on error.
func ParseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}
