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

// The Lisp lexers that remap their tokens (third_party/chroma builds them
// on first use instead of at package init) are found and highlight.
func TestMarkdownHighlightsLispBlocks(t *testing.T) {
	m := &markdown{}
	for _, lang := range []string{"elisp", "common-lisp"} {
		out := strings.Join(m.render("```"+lang+"\n(defun f (x) (car x))\n```\n", 80), "\n")
		plain := strings.Join(m.render("```\n(defun f (x) (car x))\n```\n", 80), "\n")
		if out == plain || !strings.Contains(stripANSI(out), "defun") {
			t.Fatalf("%s block not highlighted: %q", lang, out)
		}
	}
}
