package telegram

import (
	"strings"
	"testing"
)

// The spec's MarkdownV2 examples (surfaces §3.8.10), and a few more.
func TestFormatMarkdownV2(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Hello. World!", `Hello\. World\!`},
		{"## Title", `*Title*`},
		{"# **Big**", `*Big*`},
		{"**bold** and *it*", `*bold* and _it_`},
		{"a_b (c) [x]", `a\_b \(c\) \[x\]`},
		{"1+1=2 #tag", `1\+1\=2 \#tag`},
		{"[docs](https://e.com/a_(b))", `[docs](https://e.com/a_(b\))`},
		{"| a | b |\n|---|---|\n| x | y |\n| | z |", "*x*\n\\- b: y\n\n*z*\n\\- a: "},
		{"use `a_b()` now", "use `a_b()` now"},
		{"~~gone~~ ok.", `~gone~ ok\.`},
		{"```go\nx := `a\\b`.\n```\nend.", "```go\nx := \\`a\\\\b\\`.\n```\nend\\."},
		{"| only | one |\n|---|---|", `\| only \| one \|` + "\n" + `\|\-\-\-\|\-\-\-\|`},
	} {
		if got := FormatMarkdownV2(tt.in); got != tt.want {
			t.Errorf("FormatMarkdownV2(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestStripMDV2(t *testing.T) {
	if got, want := stripMDV2(`*Title* and _it_ \(x\)\.`), "Title and it (x)."; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// The spec's split example: 5000 x's are 4080 + 920 with (i/n) suffixes;
// an open fence is closed and reopened; emoji count as two units.
func TestSplitMessage(t *testing.T) {
	got := SplitMessage(strings.Repeat("x", 5000), MessageLimit, false)
	if len(got) != 2 || got[0] != strings.Repeat("x", 4080)+" (1/2)" || got[1] != strings.Repeat("x", 920)+" (2/2)" {
		t.Fatalf("chunks %d: %d %d", len(got), len(got[0]), len(got[1]))
	}
	md := SplitMessage(strings.Repeat("word ", 1000), MessageLimit, true)
	if len(md) != 2 || !strings.HasSuffix(md[0], `word \(1/2\)`) {
		t.Fatalf("mdv2 chunks %q", md[0][len(md[0])-20:])
	}
	code := "```\n" + strings.Repeat("line of code\n", 400) + "```"
	parts := SplitMessage(code, MessageLimit, false)
	if len(parts) != 2 || !strings.HasSuffix(strings.TrimSuffix(parts[0], " (1/2)"), "\n```") || !strings.HasPrefix(parts[1], "```\n") {
		t.Fatalf("fence not carried: %q … %q", parts[0][len(parts[0])-20:], parts[1][:20])
	}
	for _, p := range append(parts, got...) {
		if units(p) > MessageLimit {
			t.Fatalf("chunk of %d units", units(p))
		}
	}
	if n := units("a😀"); n != 3 {
		t.Fatalf("units = %d", n)
	}
}
