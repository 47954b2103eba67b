package tui

import (
	"strings"
	"testing"
)

// Code blocks are highlighted: the patched chroma (third_party/chroma)
// loads its lexers on first use, and glamour's own style colours them.
func TestMarkdownHighlightsCodeBlocks(t *testing.T) {
	m := &markdown{}
	out := strings.Join(m.render("```python\ndef main():\n    return 1\n```\n", 80), "\n")
	if !strings.Contains(out, "def") || !strings.Contains(out, "\x1b[") {
		t.Fatalf("code block not highlighted: %q", out)
	}
	plain := strings.Join(m.render("```\ndef main():\n    return 1\n```\n", 80), "\n")
	if out == plain {
		t.Fatal("a python block renders like an unlabelled one: no lexer was found")
	}
}
