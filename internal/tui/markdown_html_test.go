package tui

import (
	"strings"
	"testing"
)

// HTML in a reply is shown as its text (third_party/glamour reduces it
// without bluemonday): tags go, character references are decoded, and the
// content of script and style elements is never shown. Tables, task lists
// and links (the patched goldmark's lazily compiled patterns) still render.
func TestMarkdownReducesHTMLToText(t *testing.T) {
	m := &markdown{}
	render := func(md string) string { return stripANSI(strings.Join(m.render(md, 80), "\n")) }

	inline := render("Say <b>bold</b> &amp; <i>tom &lt;3</i> <span title=\"x\">done</span>\n")
	for _, want := range []string{"Say", "bold", "& ", "tom <3", "done"} {
		if !strings.Contains(inline, want) {
			t.Errorf("inline HTML: %q lacks %q", inline, want)
		}
	}
	for _, unwanted := range []string{"<b>", "</i>", "&amp;", "title="} {
		if strings.Contains(inline, unwanted) {
			t.Errorf("inline HTML: %q still shows %q", inline, unwanted)
		}
	}

	block := render("<div>\n<script>alert('x')</script><style>p{}</style><p>kept &copy;</p>\n</div>\n")
	if !strings.Contains(block, "kept ©") || strings.Contains(block, "alert") || strings.Contains(block, "p{}") {
		t.Errorf("HTML block: %q", block)
	}

	rich := render("| a | b |\n|:--|--:|\n| 1 | 2 |\n\n- [x] done\n- [ ] open\n\nsee https://example.com/x now\n")
	for _, want := range []string{"a", "b", "1", "2", "[✓] done", "[ ] open", "https://example.com/x"} {
		if !strings.Contains(rich, want) {
			t.Errorf("table, task list, link: %q lacks %q", rich, want)
		}
	}
	if strings.Contains(rich, "|:--") {
		t.Errorf("table delimiter row shown as text: %q", rich)
	}
}
