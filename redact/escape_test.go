package redact

import (
	"slices"
	"testing"
)

func TestBeforeEscape(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{`s3cr3t-value\n`, "s3cr3t-value", true},
		{`abc\tdef`, "abc", true},
		{`no-escape-here`, "", false},
		{`ends-with-backslash\`, "", false},
		{`C:\Users\me\n`, `C:\Users\me`, true},
		{`a\qb\"c`, `a\qb`, true},
	}
	for _, tt := range tests {
		got, ok := beforeEscape(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("beforeEscape(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestDiscoverRecordsTheValueBeforeAnEscape: the value a printf command
// prints is the part before its \n, and a later bare occurrence of it is
// known too.
func TestDiscoverRecordsTheValueBeforeAnEscape(t *testing.T) {
	found := Discover(`printf 'aws_secret_access_key=wJalrXUtnFEMIK7MDENG\n' > creds`)
	var values []string
	for _, s := range found {
		values = append(values, s.Value)
	}
	for _, want := range []string{`wJalrXUtnFEMIK7MDENG\n`, "wJalrXUtnFEMIK7MDENG"} {
		if !slices.Contains(values, want) {
			t.Fatalf("discovered %q, want %q among them", values, want)
		}
	}
	if got := New(found...).String("later: wJalrXUtnFEMIK7MDENG\n", Operator); got != "later: <redacted:AWS_SECRET_ACCESS_KEY>\n" {
		t.Fatalf("later bare occurrence: %q", got)
	}
	// A short head is not a secret of its own.
	for _, s := range Discover(`password=ab\ncdefghijkl`) {
		if s.Value == "ab" {
			t.Fatalf("recorded the two-character head %q", s.Value)
		}
	}
}
