package slash

import (
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	got := table{title: "T", headers: []string{"#", "name"}, rows: [][]string{
		{"1", "a | b"},
		{"2", "line one\nline   two"},
		{"3", strings.Repeat("x", 100)},
	}}.String()
	want := "## T\n\n" +
		"| #   | name" + strings.Repeat(" ", 68) + " |\n" +
		"| --- | " + strings.Repeat("-", 72) + " |\n" +
		"| 1   | a \\| b" + strings.Repeat(" ", 66) + " |\n" +
		"| 2   | line one line two" + strings.Repeat(" ", 55) + " |\n" +
		"| 3   | " + strings.Repeat("x", 58) + "...[truncated] |"
	if got != want {
		t.Fatalf("table:\n%s\nwant:\n%s", got, want)
	}
	if got := (table{title: "One", level: 1, headers: []string{"a", "b"}}).String(); got != "# One\n\n| a   | b   |\n| --- | --- |" {
		t.Fatalf("level-1 title, no rows: %q", got)
	}
	if got := keyValues("KV", [][2]string{{"k", "v"}}); got != "## KV\n\n| key | value |\n| --- | ----- |\n| k   | v     |" {
		t.Fatalf("key/value: %q", got)
	}
}

func TestShortenAndEscapes(t *testing.T) {
	for _, c := range []struct {
		in    string
		limit int
		want  string
	}{
		{"short", 10, "short"},
		{"a  b\n\tc", 10, "a b c"},
		{"abcdefghij", 8, "abcde..."},
		{"äöüäöüäöü", 6, "äöü..."},
		{"abcdef", 2, "ab"},
	} {
		if got := shorten(c.in, c.limit, "..."); got != c.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", c.in, c.limit, got, c.want)
		}
	}
	if got := escapeInline("*a* [b](c) `d` #1"); got != `\*a\* \[b\]\(c\) \`+"`"+`d\`+"`"+` \#1` {
		t.Errorf("escapeInline = %q", got)
	}
	if got := code("a`b"); got != "``a`b``" {
		t.Errorf("code = %q", got)
	}
	if got := code("`a"); got != "`` `a ``" {
		t.Errorf("code = %q", got)
	}
	if got := fence(".go", "x\n```\ny\n"); got != "````go\nx\n```\ny\n````" {
		t.Errorf("fence = %q", got)
	}
}
