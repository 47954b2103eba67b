package store

import (
	"strings"
	"testing"
)

// A URL url.Parse refuses or misreads is still named by host, port and
// database, and its password never shows.
func TestDescribeURLOfBadURLs(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://alice:s3cret@127.0.0.1:port/ledger":      "postgres://127.0.0.1:port/ledger",
		"postgres://alice:pa/s3cret@db.example/ledger":       "postgres://db.example:5432/ledger",
		"postgres://alice:123/s3cret@db.example:6543/ledger": "postgres://db.example:6543/ledger",
		"postgres://alice:pa#s3cret@db.example/ledger?x=1":   "postgres://db.example:5432/ledger",
		"postgres://alice:s3cret@[::1]/ledger":               "postgres://::1:5432/ledger",
		"postgres://alice:s3cret@db.example:5x":              "postgres://db.example:5x/",
	} {
		got := DescribeURL(in)
		if got != want || strings.Contains(got, "s3cret") {
			t.Errorf("DescribeURL(%q) = %q, want %q", in, got, want)
		}
	}
}
