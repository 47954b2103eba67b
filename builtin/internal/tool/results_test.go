package tool

import (
	"testing"
)

func TestTruncateText(t *testing.T) {
	for _, tt := range []struct {
		s     string
		limit int
		want  string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc\n...[truncated 1 chars]"},
		{"ééé", 2, "éé\n...[truncated 1 chars]"},
		{"", 0, ""},
		{"ab", 0, "\n...[truncated 2 chars]"},
	} {
		if got := TruncateText(tt.s, tt.limit); got != tt.want {
			t.Errorf("truncateText(%q, %d)=%q, want %q", tt.s, tt.limit, got, tt.want)
		}
	}
}

// TestPositive: an absent (zero) or negative argument takes the default,
// a large one the maximum. Arguments that are not integers never get here:
// the schema refuses them and typed decoding would not accept them.
func TestPositive(t *testing.T) {
	for _, tt := range []struct{ v, want int64 }{{0, 50}, {-3, 50}, {7, 7}, {30, 30}, {500, 200}} {
		if got := Positive(tt.v, 50, 200); got != tt.want {
			t.Errorf("positive(%d)=%d, want %d", tt.v, got, tt.want)
		}
	}
}
